"""With ``--json``, an error exit ends standard output with one JSON object saying why.

A CI script reads ``evalkit run … --json`` from standard output; an error (a usage error, exit
2; a run that could not complete, exit 3) was said only as text on standard error, among what
plugins print there, so the script had nothing to parse. Every message of the CLI's error exit
(:mod:`evalkit.cli`, :mod:`evalkit.cli.usage`) is recorded here as it is said on standard error,
and :func:`write_error_object` then writes, on a line of its own at the end of standard output::

    {"error": "…", "exit_code": 3, "runs_kept": ["…"], "details": ["…"]}

``error`` is the first message without its ``evalkit: error:`` prefix, ``details`` the lines said
after it (a set's problems, the runs kept), ``runs_kept`` the runs the command has in the store.
A command that ends with its own exit code (a failed gate, 1; ``evalkit list`` with a problem,
2) prints its own document and gets no error object; neither does an exit because standard output
itself could not be written. The text on standard error is unchanged. An end the console script
forces (a second SIGTERM, a plugin that kept the command from stopping: :mod:`evalkit.cli.ending`)
writes the object too (:func:`write_forced_end`); a command writes one object at most.
"""

from __future__ import annotations

import re
import threading

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["asked_on", "begin", "output_failed", "runs_kept", "said", "write_error_object", "write_forced_end"]

#: The messages said by the error exit of the command running now, in order.
_said: list[str] = []
#: The runs the command running now has in the store (the list it keeps them in).
_runs: list[str] = []
#: Standard output could not take text (a full disk): no error object is written to it.
_output_failed = False
#: The command running now gave ``--json``.
_asked = False
#: Held by whichever end writes the command's error object (the command's own, or a forced end).
_once = threading.Lock()

#: ``evalkit: error: ``, ``evalkit run: error: ``, ``evalkit: ``: what starts a message on stderr.
_PREFIX = re.compile(r"^evalkit(?: [^:\n]*)?: (?:error: )?")


def begin(asked: bool = False) -> None:
    """Forget what a previous command in this process said (``main`` may be called again);
    ``asked``: the command gives ``--json`` (:func:`asked_on`)."""
    global _output_failed, _runs, _asked, _once
    from .json_output import document_cut

    _said.clear()
    _runs = []
    _output_failed = False
    _asked = asked
    _once = threading.Lock()
    document_cut(forget=True)


def said(message: str) -> None:
    """Record ``message``, which the error exit has just said on standard error."""
    _said.append(message)


def runs_kept(stored: list[str]) -> None:
    """The list in which the command running now keeps the ids of the runs it stored
    (:func:`evalkit.run.stored_runs.recording`), read when the error object is written."""
    global _runs
    _runs = stored


def output_failed() -> None:
    """Record that standard output could not be written: no error object is tried on it."""
    global _output_failed
    _output_failed = True


def asked_on(argv: Sequence[str]) -> bool:
    """Whether the command line ``argv`` gives ``--json`` (or a prefix of it click takes,
    ``--js``), before or after the command: read from the words themselves, as a command line
    click refused was never parsed. Words after ``--`` are arguments, not options."""
    for word in argv:
        if word == "--":
            return False
        if word.startswith("--js") and "--json".startswith(word):
            return True
    return False


def write_error_object(code: int) -> None:
    """When the error exit said something, write the error object (see the module) for exit
    ``code`` on standard output, through the ``--json`` boundary (secrets scrubbed); a reader
    that has gone, or a disk that is full, leaves it unwritten (the text on stderr said it)."""
    if not _said or _output_failed or not _once.acquire(blocking=False):
        return
    from . import json_output
    from .stdout import stdout

    document: dict[str, object] = {"error": _PREFIX.sub("", _said[0], count=1), "exit_code": code, "runs_kept": list(_runs)}
    details = [line.strip().removeprefix("- ") for line in _said[1:] if line.strip()]  # a problem without its bullet
    if details:
        document["details"] = details
    try:
        stream = stdout()
        if json_output.document_cut():  # a streamed document the error cut short: the object starts a line
            stream.write("\n")
        json_output.print_json(document, compact=True)
        stream.flush()
    except (OSError, ValueError):  # the reader left, the disk is full, the stream was closed
        pass


def write_forced_end(message: str, code: int) -> None:
    """With ``--json``, the error object of an end forced from another thread or a signal handler
    (:mod:`evalkit.cli.ending`), ``message`` its error: written straight to standard output's
    descriptor — the main thread may hold the stream's lock, stuck in a plugin — secrets scrubbed,
    on a line of its own; nothing when the command's own object was written (or is being written)."""
    if not _asked or _output_failed or not _once.acquire(blocking=False):
        return
    import os

    from . import json_output
    from .stdout import stdout

    document = {"error": _PREFIX.sub("", message, count=1), "exit_code": code, "runs_kept": list(_runs)}
    text = json_output.json_line(document)
    try:
        descriptor = stdout().fileno()
        os.write(descriptor, (("\n" if json_output.document_cut() else "") + text).encode("utf-8", "backslashreplace"))
    except (OSError, ValueError, AttributeError):  # the reader left, the disk is full, no descriptor
        pass
