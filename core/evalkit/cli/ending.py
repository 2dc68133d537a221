"""How the ``evalkit`` process ends, whatever its plugins left running (the console script only).

A hook plugin can keep a finished command's process alive: a thread it started that is not a
daemon (the interpreter waits for it at exit), an exit handler that never returns, code that
swallows ``BaseException`` and with it the ``KeyboardInterrupt`` SIGTERM raises, a ``SIGTERM``
handler of its own. A CI job then hangs after the result was printed and stored, until its
global timeout. So the console script (:func:`entry`, and ``python -m evalkit``) — never a library
call, never :func:`evalkit.cli.main` called in a process that is not evalkit's own:

- once the command returned and its output is flushed, runs the exit handlers for at most
  :data:`EXIT_HANDLERS_S` and ends the process with the command's exit code, naming the threads a
  plugin left running instead of waiting for them;
- owns ``SIGTERM`` (:mod:`evalkit.signal_claims`: a plugin's ``signal.signal`` for it is not
  applied). The first SIGTERM stops the command as Ctrl-C does (the run marks itself interrupted
  and prints how to resume it). When the process has not ended :data:`TERMINATE_GRACE_S` seconds
  later — a plugin swallowed the interrupt — or a second SIGTERM comes, it says what was stored
  and how to resume the run (with ``--json``, in the error object on standard output too:
  :func:`evalkit.cli.error_json.write_forced_end`), and ends (exit 3).

A run tells this module what it is answering (:func:`run_began`, :func:`case_committed`), and the
CLI which runs the command has in the store (:func:`command_stores`: the list
:func:`evalkit.run.stored_runs.recording` keeps, read here from the thread that ends the process,
which cannot see the command's context), so that the forced end can say it: a run is stored, and
its lease taken, before it begins answering.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["EXIT_HANDLERS_S", "TERMINATE_GRACE_S", "case_committed", "command_stores", "entry", "resume_of", "run_began"]

#: How long the first SIGTERM gives the command to stop by itself before the process is ended.
TERMINATE_GRACE_S = 5.0
#: How long the exit handlers (``atexit``: evalkit's, the interpreter's, plugins') may take.
EXIT_HANDLERS_S = 5.0
#: The exit code of a command that could not complete (an interrupt, a fault of the environment).
_INTERRUPTED = 3


class _RunInProgress:
    """What the forced end says about the run this process answers: its id, the command that
    resumes it, how many cases this process committed."""

    def __init__(self, run_id: str, resume: str) -> None:
        self.run_id = run_id
        self.resume = resume
        self.committed = 0


#: The run this process answers, once it began (``None``: none yet, or not the console script).
_run: _RunInProgress | None = None
#: The ids of the runs the command has in the store, as it notes them (``None``: no command began).
_stored: list[str] | None = None
#: Whether this process is the console script's (the only one this module ends).
_owned = False
#: Set once SIGTERM came (a second one ends the process at once).
_terminating = threading.Event()


def run_began(run_id: str, resume: str) -> None:
    """Note that this process answers run ``run_id``, resumed by the command ``resume``."""
    global _run
    _run = _RunInProgress(run_id, resume)


def resume_of(run_id: str) -> str | None:
    """The command that resumes run ``run_id`` as this command was given, when it is the run this
    process began answering (``None`` otherwise)."""
    return _run.resume if _run is not None and _run.run_id == run_id else None


def command_stores(stored: list[str]) -> None:
    """Note that a command begins, keeping in ``stored`` the ids of the runs it has in the store
    (the list itself, appended to as runs are stored, and still read once the command returned:
    the exit handlers run after it); no run of its began yet."""
    global _stored, _run
    _stored, _run = stored, None


def case_committed() -> None:
    """Note that one more case of the run is committed."""
    if _run is not None:
        _run.committed += 1


def entry() -> NoReturn:
    """The ``evalkit`` console script: :func:`evalkit.cli.main`, then the end of the process
    whatever plugins left running (see the module)."""
    global _owned
    from ..signal_claims import claim

    _owned = True
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
        claim(signal.SIGTERM)
    except ValueError:  # not the main thread (an embedding): signals are not this process's to take
        pass
    try:
        from . import main

        code = main()
    except BaseException:  # noqa: BLE001 - a second interrupt while main() was ending: still end
        code = _INTERRUPTED
    _end(code)


def _on_sigterm(signum: int, frame: Any) -> None:
    """The first SIGTERM: Ctrl-C's interrupt, and the process ended after the grace period; a
    second: ended now."""
    if _terminating.is_set():
        _forced_end("a second SIGTERM")
    _terminating.set()
    threading.Thread(target=_end_after_grace, name="evalkit-sigterm", daemon=True).start()
    raise KeyboardInterrupt


def _end_after_grace() -> None:
    threading.Event().wait(TERMINATE_GRACE_S)
    _forced_end(f"SIGTERM {TERMINATE_GRACE_S:g} s ago (a plugin kept the command from stopping)")


def _forced_end(why: str) -> NoReturn:
    """Say what was stored and how to go on, then end the process (exit 3). Written straight to
    the descriptor: the main thread may hold the stream's lock, stuck in a plugin."""
    from ..printable import visible

    run = _run
    stored = list(_stored or ())
    if run is not None:
        said = (
            f"evalkit: interrupted: {why}; run {run.run_id} keeps every case committed before it "
            f"({run.committed} from this process); continue it with `{run.resume}`"
        )
    elif stored:  # stored, its lease taken, before it began answering (the started hook, the slice)
        from . import _kept

        runs, kept = _kept(stored)
        said = f"evalkit: interrupted: {why}; {runs} stored before it: {kept}"
    else:
        said = f"evalkit: interrupted: {why}; no run had begun, nothing was stored"
    _write_stderr(visible(said) + "\n")  # every control character as its escape, as the console shows it
    from .error_json import write_forced_end

    write_forced_end(said, _INTERRUPTED)  # with --json, the error object a CI script parses
    os._exit(_INTERRUPTED)


def _end(code: int) -> NoReturn:
    """Flush the output, run the exit handlers (bounded), and end the process with ``code``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left, a closed stream: reported by main() already
            pass
    left = [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if left:
        from ..wording import counted
        from .console import console

        names = ", ".join(repr(name[:60]) for name in left[:5]) + (", …" if len(left) > 5 else "")
        try:
            console(stderr=True).message(
                f"evalkit: note: a plugin left {counted(len(left), 'thread')} running ({names}); "
                "the process ends without waiting for them"
            )
        except (OSError, ValueError):  # no standard error to say it on
            pass
    handlers = threading.Thread(target=_run_exit_handlers, name="evalkit-exit-handlers", daemon=True)
    try:
        handlers.start()
        handlers.join(EXIT_HANDLERS_S)
    except BaseException:  # noqa: BLE001,S110 - SIGTERM while the handlers ran: end all the same
        pass
    os._exit(code)


def _run_exit_handlers() -> None:
    import atexit

    atexit._run_exitfuncs()


def _write_stderr(text: str) -> None:
    try:
        os.write(2, text.encode("utf-8", "backslashreplace"))
    except OSError:  # no standard error to say it on
        pass
