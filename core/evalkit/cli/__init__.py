"""The ``evalkit`` command line: a thin layer over the library, on click.

Start-up is kept cheap: the commands are declared in :mod:`evalkit.cli.app`, whose root group
imports a command's module only when that command runs, and each command imports what it needs
when it runs, so ``evalkit --help`` and ``evalkit list`` never load aiohttp, jsonschema, peewee or
plugin modules. :func:`main` is the console script and the library's entry: click parses, and the
command's handler runs here, with evalkit's own process behaviour around it (plugin output to
stderr, SIGTERM as Ctrl-C, closed standard streams, a full disk, exit codes).
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
from collections.abc import Callable, Iterator, Sequence

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..errors import EvalkitError
    from .app import Arguments, Printed

__all__ = ["entry", "main"]

#: The environment variable through which a shell's completion script asks for candidates
#: (click's convention: ``_{PROG}_COMPLETE``; see ``evalkit completion``).
COMPLETE_VAR = "_EVALKIT_COMPLETE"


def _never_fail_on_output() -> None:
    """Text that is not valid Unicode (a lone surrogate kept from undecodable bytes) is written as
    its escape (``\\udcff``) instead of raising mid-report or being sent as raw bytes."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # not when a caller swapped in a StringIO
            stream.reconfigure(errors="backslashreplace")


def entry() -> None:
    """The ``evalkit`` console script (and ``python -m evalkit``): :func:`main`, then the end of the
    process whatever a plugin left running (:mod:`evalkit.cli.ending`). Never returns."""
    from .ending import entry as ending_entry

    ending_entry()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see ``evalkit --help``)."""
    import gc

    _open_standard_streams()
    collecting = gc.isenabled()
    # Off while the command line is read; for a run, on but rare until the run starts
    # (common.collect_rarely_until_run_start); on for every other command's own work, and as it
    # was when main() returns.
    gc.disable()
    terminating = _stop_on_sigterm()
    from ..privacy import secrets_remembered_within
    from ..stray_errors import stray_errors_warned
    from ..wording import arguments_named

    try:
        # an error the library raises names what the command line gave: --run-id, not run_id (wording.argument);
        # a second main() in this process scrubs its own secrets, not these; the library's warnings said on stderr
        # (a stray error Python reports itself among them: evalkit.stray_errors)
        with secrets_remembered_within(), arguments_named(), _library_warnings_said(), stray_errors_warned():
            return _main(argv, collecting)
    finally:
        from .common import collect_as_usual

        collect_as_usual()
        (gc.enable if collecting else gc.disable)()
        if terminating is not None:
            signal.signal(signal.SIGTERM, terminating)


@contextlib.contextmanager
def _library_warnings_said() -> Iterator[None]:
    """Say each :class:`~evalkit.errors.EvalkitWarning` the library warns with on standard error,
    as ``evalkit: warning: …`` (as data, like every message); other warnings as Python shows them.

    The library never prints a warning (a library caller's filters decide what becomes of it):
    this is where the command line shows them. The filters are the interpreter's (``-W``,
    ``PYTHONWARNINGS``), and what ``warnings`` looked like before is restored when ``main`` returns.
    """
    import warnings

    from ..errors import EvalkitWarning

    with warnings.catch_warnings():
        shown_otherwise = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if not issubclass(category, EvalkitWarning):
                shown_otherwise(message, category, *args, **kwargs)
                return
            from .console import console

            console(stderr=True).message(f"evalkit: warning: {message}")

        warnings.showwarning = show
        yield


def _open_standard_streams() -> None:
    """Give a closed standard stream (``evalkit run >&-``, ``2>&-``) ``/dev/null``.

    Python then has no ``sys.stdout`` (every write was an internal error), and the next file
    opened takes the free number: the SQLite store would become fd 1 or 2 and receive whatever is
    printed. Output that nobody reads is discarded; the command runs and exits as it would.
    """
    import os

    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != descriptor:
                os.dup2(opened, descriptor)
                os.close(opened)
    if sys.stdout is None:
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def _stop_on_sigterm() -> object:
    """Make SIGTERM stop evalkit as Ctrl-C does, unless someone else already handles it.

    A CI job that times out, ``docker stop`` and ``kill`` send SIGTERM: its default would end the
    process at once, leaving a run "running" with up to 50 ms of finished cases uncommitted and no
    word on how to go on. As KeyboardInterrupt it commits what finished, marks the run interrupted
    and says how to resume it (exit 3). Returns the handler to restore, ``None`` when unchanged.
    """
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return None
        return signal.signal(signal.SIGTERM, signal.default_int_handler)
    except ValueError:  # not the main thread: signals cannot be handled here
        return None


def _main(argv: Sequence[str] | None, collecting: bool) -> int:
    """The command line ``argv`` read and run; its exit code. With ``--json``, an exit through the
    error path also ends standard output with the error object (:mod:`evalkit.cli.error_json`)."""
    from . import error_json

    argv = sys.argv[1:] if argv is None else list(argv)
    error_json.begin(error_json.asked_on(argv))
    code = _command(argv, collecting)
    if code and error_json.asked_on(argv):
        error_json.write_error_object(code)
    return code


def _command(argv: list[str], collecting: bool) -> int:
    import gc
    import os

    _never_fail_on_output()
    instruction = os.environ.get(COMPLETE_VAR)
    if instruction:  # a shell's completion script asking for candidates
        from .shell_completion import answer_completion_request

        return answer_completion_request(instruction)
    import click

    from .app import Printed, evalkit

    try:
        args = evalkit.parse(argv)
    except Printed as printed:
        if printed.code and not printed.stderr:
            from . import error_json

            if error_json.asked_on(argv):  # `evalkit --json`: no command, and the help is no JSON document
                printed.stderr = True
                error_json.said("no command given (the usage is on standard error)")
        return _print(printed)
    except click.UsageError as exc:
        from .usage import usage_failed

        return usage_failed(exc, argv)
    except click.ClickException as exc:  # none of evalkit's own: said as any error is
        _say(f"evalkit: error: {exc.format_message()}")
        return 2
    except click.Abort:  # Ctrl-C (or SIGTERM) while the command line was read
        _say("evalkit: interrupted")
        return 3
    except Exception as exc:  # raised by a type, a callback or what they read while click parsed
        # said as every error of a command is, with its code (an evalkit bug: its traceback): it
        # left main() unsaid, and the console script ended with 3
        return _failed(_unparsed(argv), exc)
    if collecting and args.collects_garbage_from_run_start:
        from .common import collect_rarely_until_run_start

        collect_rarely_until_run_start()
    elif collecting:
        gc.enable()
    from ..textfiles import outputs_relative_to, working_directory
    from .plugin_streams import plugin_streams_made_safe
    from .stdout import plugin_output_to_stderr

    # a plugin's print() never lands in evalkit's output, nor raw on the terminal (its secrets,
    # escape sequences and CI commands made safe), its os.chdir() never moves evalkit's files
    with plugin_output_to_stderr(), plugin_streams_made_safe(), outputs_relative_to(working_directory()):
        return _handle(args)


def _unparsed(argv: Sequence[str]) -> Arguments:
    """What :func:`_failed` reads of a command line that did not parse: whether it asked for the
    traceback (``--traceback``, or a unique prefix of it down to ``--trace`` as the parser takes),
    and no store opened."""
    from .app import Arguments

    asked = any(len(word) >= len("--trace") and "--traceback".startswith(word) for word in argv)
    return Arguments(handler=None, traceback=asked)


def _print(printed: Printed) -> int:
    """Print what the command line asked for (help, the version); its exit code once written,
    else as :func:`_output_failed` says."""
    stream = sys.stderr if printed.stderr else sys.stdout
    try:
        stream.write(printed.text + "\n")
    except OSError as exc:
        return _output_failed(exc, printed.code)
    return _printed(printed.code) if stream is sys.stdout else printed.code


def _handle(args: Arguments) -> int:
    """Run the command's handler; its exit code, every failure said on stderr (an evalkit bug
    naming the runs the command has in the store: :mod:`evalkit.run.stored_runs`)."""
    from ..run.stored_runs import recording
    from . import error_json
    from .ending import command_stores

    with recording() as stored:
        command_stores(stored)  # what a forced end (SIGTERM, another thread) says was stored
        error_json.runs_kept(stored)  # what --json's error object lists
        return _handled(args, stored)


def _handled(args: Arguments, stored: list[str]) -> int:
    from ..errors import PluginLoadInterrupted
    from .stdout import stdout

    try:
        code = int(args.handler(args) or 0)
        stdout().flush()  # a full disk or a vanished reader is reported here, not after exit
        return code
    except PluginLoadInterrupted as exc:
        _say(f"evalkit: {exc}")
        return 3
    except KeyboardInterrupt:
        _say("evalkit: interrupted")
        return 3
    except SystemExit as exc:  # no command of evalkit's raises it: a plugin called sys.exit()
        from ..shapes import short_repr

        _say(
            f"evalkit: error: a plugin ended the command with sys.exit({short_repr(exc.code)}); "
            "what it was doing did not complete (a CI gate must not read this as success)"
        )
        return 3
    except BrokenPipeError:  # `evalkit list | head`: the reader has what it wanted
        _discard_stdout()
        return 0
    except OSError as exc:
        # What standard output fails with when it cannot take the text (a full disk, an I/O error)
        # is said as such, exit 3, by the rule for every file a command writes; not as a crash.
        from ..errors import WRITE_FAULT_ERRNOS

        if exc.errno not in WRITE_FAULT_ERRNOS or _store_failed(exc, args.opened_stores):
            return _failed(args, _store_failure(exc, args.opened_stores), stored)
        return _unwritable(exc, " (anything the command stored is kept)")
    except Exception as exc:
        return _failed(args, _store_failure(exc, args.opened_stores), stored)
    except BaseException as exc:  # noqa: BLE001 - no command of evalkit's raises one: a plugin did
        from ..shapes import exception_text

        _say(
            f"evalkit: error: a plugin raised {exception_text(exc)}, which is no Exception; "
            "what it was doing did not complete (a CI gate must not read this as success)"
        )
        return 3


def _store_failed(exc: BaseException, stores: Sequence[object]) -> bool:
    """Whether ``exc`` was raised in or through the methods of one of the third-party ``stores`` the
    command opened (its full disk is not standard output's)."""
    from ..storage import plugin_store_failure

    return plugin_store_failure(exc, stores) is not None


def _store_failure(exc: Exception, stores: Sequence[object]) -> Exception:
    """``exc``, or — raised in or through the methods of one of the third-party ``stores`` the command opened (its
    disk, its client, outside a run: ``evalkit show``, ``compare``, ``report``, ``regrade`` reading
    it) — that store's failure, said as the built-in stores' are (exit 3, no traceback unless
    ``--traceback``), not as evalkit's internal error with its traceback."""
    from ..storage import store_failure_said

    return store_failure_said(exc, stores)


#: The exit code of an internal error (an evalkit bug), whatever the command and whether or not it
#: stored a run: the command could not complete, and it was no bad usage or input of the user's (2).
INTERNAL_ERROR_EXIT = 3


def _internal_error(exc: Exception, stored: Sequence[str]) -> str:
    """What an evalkit bug that ended the command says: what was raised and, when the command has
    runs in the store, that they are kept and how to see them; else that no run was stored. Its
    exit code is :data:`INTERNAL_ERROR_EXIT` either way."""
    from ..shapes import exception_text

    said = exception_text(exc)
    if not stored:
        return f"evalkit: internal error (an evalkit bug): {said} — no run was stored"
    runs, kept = _kept(stored)
    return f"evalkit: error: internal error (an evalkit bug) after {runs} stored: {said} — {kept}"


def _kept(stored: Sequence[str]) -> tuple[str, str]:
    """``run ID was`` (``runs A, B were``) and ``the run and its results are kept (see `evalkit show
    ID`)``: what an error that ends a command after it stored runs says of them."""
    if len(stored) == 1:
        runs, kept = f"run {stored[0]} was", "the run and its results are kept"
    else:
        runs, kept = f"runs {', '.join(stored)} were", "the runs and their results are kept"
    shown = ", ".join(f"`evalkit show {run_id}`" for run_id in stored)
    return runs, f"{kept} (see {shown})"


def _printed(code: int) -> int:
    """``code`` once what was printed (help, the version) is flushed; else as :func:`_output_failed`."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        return _output_failed(exc, code)
    return code


def _output_failed(exc: OSError, code: int) -> int:
    """Standard output refused help or the version: ``code`` when the reader left (``| head``), 3
    when it could not take the text (a full disk); anything else is not an output failure."""
    if isinstance(exc, BrokenPipeError):
        _discard_stdout()
        return code
    from ..errors import WRITE_FAULT_ERRNOS

    if exc.errno not in WRITE_FAULT_ERRNOS:
        raise exc
    return _unwritable(exc)


def _unwritable(exc: OSError, kept: str = "") -> int:
    """Say that standard output could not take the text (exit 3); it is not written again at exit."""
    from . import error_json
    from .console import console

    _discard_stdout()
    error_json.output_failed()  # no error object either
    console(stderr=True).message(f"evalkit: error: could not write the output: {exc.strerror or exc}{kept}")
    return 3


def _discard_stdout() -> None:
    """Point standard output's descriptor at ``/dev/null``: what is still buffered for it (written
    again when the stream is flushed or closed) is dropped instead of failing a second time."""
    import os

    from .stdout import stdout

    try:
        target = stdout().fileno()
        nothing = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):  # no file descriptor behind it (a StringIO)
        return
    try:
        os.dup2(nothing, target)
    except OSError:
        pass
    finally:
        os.close(nothing)  # main() may be called again in this process: no descriptor left open


def _failed(args: Arguments, exc: Exception, stored: Sequence[str] = ()) -> int:
    """Say why the command failed; its exit code. A message quotes sets, plugins and endpoints:
    the console shows it as data, each line cut, so a 100,000-character run id is not echoed whole.
    ``stored``: the runs the command has in the store, which an evalkit bug names (exit 3)."""
    from ..errors import EvalkitError, SetValidationError
    from .console import console

    say = _say

    if args.traceback or not isinstance(exc, EvalkitError) or getattr(exc, "shows_traceback", False):
        if not isinstance(exc, EvalkitError):
            say(_internal_error(exc, stored))
        elif not args.traceback:  # evalkit's own bug after the run was stored: the message, then the traceback
            say(f"evalkit: error: {exc}")
        import traceback

        console(stderr=True).message(traceback.format_exc().rstrip("\n"))  # not in --json's error object
        if isinstance(exc, EvalkitError):
            return _stored_before(exc, stored, say)
        return INTERNAL_ERROR_EXIT  # an evalkit bug is no bad input of the user's, stored runs or not
    if isinstance(exc, SetValidationError):
        from ..shapes import counted_problems

        subject = getattr(exc, "subject", "the set is invalid")
        # the line saying how many more were not kept counts as those problems, not as one
        say(f"evalkit: error: {subject} ({counted_problems(exc.problems)}):")
        for problem in exc.problems:
            say(f"  - {problem}")
    else:
        say(f"evalkit: error: {exc}")
    return _stored_before(exc, stored, say)


def _say(text: str) -> None:
    """Say ``text`` on standard error as the error exit does (as data, each line cut), recorded for
    the error object ``--json`` ends standard output with (:mod:`evalkit.cli.error_json`)."""
    from . import error_json
    from .console import console

    console(stderr=True).message(text)
    error_json.said(text)


def _stored_before(exc: EvalkitError, stored: Sequence[str], say: Callable[[str], None]) -> int:
    """``exc``'s exit code, but 3 when it is 2 ("nothing called, nothing stored") and the command has
    runs in the store: said, with how to see them. A store's failure names no run whatever its code
    (one the environment caused is exit 3 already: a connection lost while the outcome was read
    back), so it is said after one too; an exit-3 error of a run says what it kept itself.
    A run the error stopped, which the lifecycle marked interrupted (:func:`evalkit.run.stored_runs.stopped`),
    is said whatever the code, with the cases it keeps and the command that continues it."""
    from ..errors import StoreFailure
    from ..run.stored_runs import stopped_runs, stopped_sentence
    from .ending import resume_of

    code = exc.exit_code

    # the command as this one was given (its --database, --config…) once the run began answering
    stopped = {
        run_id: stopped_sentence(kept, resume_of(run_id) or command)
        for run_id, (kept, command) in stopped_runs().items()
        if run_id in stored
    }
    if (not (code == 2 or isinstance(exc, StoreFailure)) or not stored) and not stopped:
        return code
    if len(stored) == 1 and stopped:
        say(f"evalkit: run {stored[0]} was stored before this error: {stopped[stored[0]]}")
    else:
        runs, kept = _kept(stored)
        said = "".join(f"; run {run_id}: {what}" for run_id, what in stopped.items())
        say(f"evalkit: {runs} stored before this error: {kept}{said}")
    return 3 if code == 2 else code
