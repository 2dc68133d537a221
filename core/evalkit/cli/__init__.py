"""The ``evalkit`` command line: a thin layer over the library.

Start-up is kept cheap: this module imports only argparse; each command imports what it needs
when it runs, so ``evalkit --help`` and ``evalkit list`` never load httpx, jsonschema, peewee or
plugin modules.
"""

from __future__ import annotations

import argparse
import errno
import io
import signal
import sys
from collections.abc import Sequence
from importlib import import_module

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, NoReturn

__all__ = ["main", "build_parser"]

#: Command modules, each with ``register(subparsers)``; their top level imports nothing heavy.
COMMAND_MODULES = ("run_cmd", "retrieval_cmd", "list_cmd", "models_cmd", "history_cmd", "show_cmd", "compare_cmd", "db_cmd")
COMMAND_MODULES += ("validate_cmd", "schema_cmd", "init_cmd")
COMMAND_MODULES += ("import_cmd",)
COMMAND_MODULES += ("report_cmd",)
COMMAND_MODULES += ("baseline_cmd",)
COMMAND_MODULES += ("completion_cmd",)
COMMAND_MODULES += ("view_cmd",)

#: Options accepted before the subcommand as well as after it: (flag, destination when given first).
GLOBAL_OPTIONS = (("--config", "global_config"), ("--database", "global_database"), ("--json", "global_json"), ("--traceback", "global_traceback"))

EPILOG = """exit codes: 0 done · 1 gate failed (regression, or not comparable under --fail-on-regression)
            2 bad usage or invalid input (nothing called, nothing stored) · 3 the run could not complete
            (or the output could not be written: a full disk)"""


class EvalkitArgumentParser(argparse.ArgumentParser):
    """argparse with a "did you mean" for a mistyped subcommand, choice or option."""

    def error(self, message: str) -> NoReturn:  # noqa: D102 - argparse's own contract
        if _one_command_parse:
            raise _OneCommandParseFailed(message)
        message += _suggestion(self, message)
        from ..printable import visible
        from ..shapes import clipped_lines

        # The words quoted back come from the command line (a pasted escape sequence, a NUL).
        super().error(clipped_lines(visible(message, keep="\n")))

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        if file is sys.stdout and message:
            file.write(message)  # argparse ignores a failed write; help into a full disk is reported (exit 3)
        else:
            super()._print_message(message, file)


class _OneCommandParseFailed(Exception):
    """A parser holding one command refused the arguments: the whole parser parses them again."""


#: True while a parser holding only the command named on the command line parses it (see :func:`main`).
_one_command_parse = False
#: The command the command line names (see :func:`_named_command`), for suggestions.
_command_named: str | None = None
#: The first option before the command that evalkit itself does not take, and the command word
#: after it, if any (see :func:`_option_before_command`), for the message when the parse fails.
_misplaced: tuple[str, str | None] | None = None


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    import re

    from ..suggestions import did_you_mean

    if _misplaced is not None and parser.prog == "evalkit":
        return _misplaced_hint(parser, *_misplaced)
    if message.startswith("the following arguments are required: SET"):
        return _installed_sets_hint(_SET_KINDS.get(parser.prog, ()))
    if re.match(r"the following arguments are required: (RUN_ID|BASE|RUN)\b", message):
        return "\nrun ids: `evalkit history SET` lists a set's stored runs"
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
    unknown = re.match(r"unrecognized arguments: (\S+)", message)
    if unknown and unknown.group(1).startswith("--"):
        return did_you_mean(unknown.group(1).split("=", 1)[0], _all_options(parser, _command_named))
    return ""


#: The kinds of set each command that takes a SET names.
_SET_KINDS = {"evalkit run": ("prompt",), "evalkit retrieval": ("question",), "evalkit history": ("prompt", "question")}
#: The most set identifiers a missing SET lists, and how long finding them may take (seconds).
_SETS_SHOWN, _SETS_FOUND_WITHIN_S = 8, 5.0


class _ListingTooSlow(BaseException):
    """The missing-SET hint's own limit passed (its own class: a provider's ``set_load_timeout``
    guard, nested inside, must not take it for its own)."""


def _installed_sets_hint(kinds: Sequence[str]) -> str:
    """The sets a command could name (``kinds``: prompt, question), as a line for its error; a
    pointer to `evalkit list sets` when they cannot be listed promptly (a provider that fails or
    stalls, a configuration with a mistake)."""
    from ..printable import visible
    from ..timeouts import alarm_bounded, alarms_reach_this_thread

    pointer = "`evalkit list sets` lists the installed sets"

    def identifiers() -> list[str]:
        from ..catalog import prompt_set_catalog, question_set_catalog
        from ..config import load_config
        from .stdout import plugin_output_to_stderr

        config = load_config()
        found: list[str] = []
        with plugin_output_to_stderr():  # a provider that prints must not write to standard output
            for kind in kinds:
                found += (prompt_set_catalog if kind == "prompt" else question_set_catalog)(config=config).identifiers()
        return found

    try:
        found = alarm_bounded(identifiers, (), _SETS_FOUND_WITHIN_S, _ListingTooSlow) if alarms_reach_this_thread() else identifiers()
    except (Exception, _ListingTooSlow):  # noqa: BLE001 - only a hint: the error itself stands
        return f"\n{pointer}"
    if not found:
        return f"\nno set is installed here; {pointer} and the plugins that ship them"
    shown = ", ".join(visible(name) for name in found[:_SETS_SHOWN])
    more = f" and {len(found) - _SETS_SHOWN} more" if len(found) > _SETS_SHOWN else ""
    return f"\nsets here: {shown}{more} ({pointer})"


def _misplaced_hint(parser: argparse.ArgumentParser, option: str, command: str | None) -> str:
    """Why an option before the command failed: it is a command's option (they go after the
    command), or no option at all (with the nearest ones)."""
    from ..suggestions import close_matches

    owners = _commands_taking(parser, option)
    if owners:
        takers = " and ".join(f'"evalkit {name}"' for name in owners)
        where = next((name for name in owners if name.split()[0] == command), owners[0])
        return f'\n{option} is an option of {takers}, not of evalkit itself: put it after the command ("evalkit {where} … {option}")'
    found = close_matches(option, _all_options(parser, command))
    if not found:
        return f"\nno command takes the option {option} (see evalkit --help, or evalkit {command or 'COMMAND'} --help)"
    hints = []
    for name in found:
        takers = _commands_taking(parser, name)
        hints.append(f'"{name}"' + (f" (an option of {' and '.join(f'evalkit {t}' for t in takers)}, after the command)" if takers else ""))
    return f"\nunknown option {option} before the command. Did you mean {' or '.join(hints)}?"


def _commands_taking(parser: argparse.ArgumentParser, option: str, prefix: str = "") -> list[str]:
    """The commands (``db prune`` for a subcommand's) that take ``option``; none when evalkit
    itself takes it, before any command."""
    if not prefix and option in parser._option_string_actions:
        return []
    found: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix}{name}"
                if option in sub._option_string_actions and path not in found:
                    found.append(path)
                found.extend(t for t in _commands_taking(sub, option, f"{path} ") if t not in found)
    return found


def _all_options(parser: argparse.ArgumentParser, command: str | None = None) -> list[str]:
    """Every option string of ``parser`` and its subcommands (argparse reports strays from the
    top), or only of ``command`` (with the global ones) when the command line named one: `evalkit
    run --tolerance` must not suggest another command's ``--older-than``."""
    found = list(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(command) if command is not None else None
            for sub in [chosen] if chosen is not None else dict.fromkeys(action.choices.values()):
                found.extend(_all_options(sub))
    return found


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every command registered, or only ``command`` (one of
    :data:`COMMAND_MODULES` without ``_cmd``): all a run of that command parses, without importing
    the other commands' modules."""
    parser = EvalkitArgumentParser(
        prog="evalkit",
        description="Evaluate LLM answers and retrieval against golden sets, store every run, flag regressions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"evalkit {_version()}")
    parser.add_argument("--config", dest="global_config", metavar="PATH", help="configuration file (default: the nearest evalkit.toml or [tool.evalkit] in pyproject.toml, here or in a parent folder)")
    parser.add_argument("--database", dest="global_database", metavar="URL", help="results database URL (default: <project root>/.evalkit/results.db)")
    parser.add_argument("--json", dest="global_json", action="store_true", help="print one JSON document, for commands that can")
    parser.add_argument("--traceback", dest="global_traceback", action="store_true", help="show the full traceback on errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if command is None else (f"{command}_cmd",):
        import_module(f".{name}", __name__).register(subparsers)
    _accept_traceback_everywhere(parser)
    return parser


def _accept_traceback_everywhere(parser: argparse.ArgumentParser) -> None:
    """Let ``--traceback`` follow any (sub)command too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                if "--traceback" not in sub._option_string_actions:
                    sub.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS, help="show the full traceback on errors")
                _accept_traceback_everywhere(sub)


def _merge_global_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Fold the options given before the subcommand into the ones the subcommand reads."""
    command = getattr(args, "command", None) or "evalkit"
    for flag, dest in GLOBAL_OPTIONS:
        name = flag[2:]
        early = getattr(args, dest)
        delattr(args, dest)
        late = getattr(args, name, None)
        if name == "json" and early and not hasattr(args, "json"):
            parser.error(f"--json does not apply to `evalkit {command}`: it prints no JSON document")
        if early and late and early is not True and early != late:
            parser.error(f"{flag} is given twice with different values ({early} and {late})")
        setattr(args, name, late or early or (False if early is False else None))


def _parse(argv: list[str]) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The parser and the parsed arguments. When the command line names a command, a parser
    holding only that command parses it first (registering every command imports 14 modules, ~25
    ms of a run's start-up); help, a typo or anything that parser refuses goes to the whole parser,
    so every message and suggestion is the one the whole parser gives."""
    global _one_command_parse, _command_named, _misplaced

    command = _command_named = _named_command(argv)
    _misplaced = None
    if command is not None:
        parser = build_parser(command)
        _one_command_parse = True
        try:
            return parser, parser.parse_args(argv)
        except _OneCommandParseFailed:
            pass
        finally:
            _one_command_parse = False
    parser = build_parser()
    _misplaced = _option_before_command(argv)
    return parser, parser.parse_args(argv)


#: Options before the command that take a value as the next argument.
_VALUED_GLOBAL_OPTIONS = frozenset({"--config", "--database"})
#: Every option evalkit itself takes before the command.
_GLOBAL_FLAGS = frozenset(flag for flag, _ in GLOBAL_OPTIONS) | {"-h", "--help", "--version"}


def _named_command(argv: Sequence[str]) -> str | None:
    """The command the first positional argument names, or ``None`` (help or version asked
    before it, an unknown word, none at all)."""
    first, command, _ = _before_command(argv)
    return command if first == command else None


def _option_before_command(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """The first option before the command word that evalkit itself does not take (``evalkit
    --concurrency 3 run``), with the command word found after it, if any."""
    _, command, stray = _before_command(argv)
    return (stray, command) if stray else None


def _before_command(argv: Sequence[str]) -> tuple[str | None, str | None, str | None]:
    """What comes before the command: the first positional word, the first one that names a
    command (words between may be a stray option's value), and the first option evalkit itself
    does not take. All ``None`` once help or version is asked (or ``--``) before a command."""
    takes_value = False
    first = stray = None
    for token in argv:
        if takes_value:
            takes_value = False
        elif token in ("-h", "--help", "--version", "--"):
            return None, None, None
        elif token.startswith("-"):
            name = token.split("=", 1)[0]
            # argparse takes a unique prefix of a long option (--trace for --traceback)
            known = [flag for flag in _GLOBAL_FLAGS if flag == name or (len(name) > 2 and flag.startswith(name))]
            takes_value = "=" not in token and any(flag in _VALUED_GLOBAL_OPTIONS for flag in known)
            stray = stray or (None if known else name)
        else:
            first = first or token
            if f"{token}_cmd" in COMMAND_MODULES:
                return first, token, stray
    return first, None, stray


def _version() -> str:
    from .. import __version__

    return __version__


def _never_fail_on_output() -> None:
    """Text that is not valid Unicode (a lone surrogate kept from undecodable bytes) is written as
    its escape (``\\udcff``) instead of raising mid-report or being sent as raw bytes."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # not when a caller swapped in a StringIO
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see ``evalkit --help``)."""
    import gc

    _open_standard_streams()
    collecting = gc.isenabled()
    # Off while a run's modules and plugins are imported (common.run_started turns it back on when
    # the run starts); on for every other command's own work, and as it was when main() returns.
    gc.disable()
    terminating = _stop_on_sigterm()
    from ..privacy import secrets_remembered_within

    try:
        with secrets_remembered_within():  # a second main() in this process scrubs its own secrets, not these
            return _main(argv, collecting)
    finally:
        (gc.enable if collecting else gc.disable)()
        if terminating is not None:
            signal.signal(signal.SIGTERM, terminating)


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
    import gc

    _never_fail_on_output()
    try:
        parser, args = _parse(sys.argv[1:] if argv is None else list(argv))
    except SystemExit as exc:
        if exc.code in (0, None):  # --help or --version printed: it must have reached the output
            raise SystemExit(_printed(0)) from None
        raise
    except OSError as exc:  # help or the version could not be written
        return _output_failed(exc, 0)
    if collecting and not getattr(args, "collects_garbage_from_run_start", False):
        gc.enable()
    _merge_global_options(parser, args)
    if not getattr(args, "handler", None):
        try:
            parser.print_help()
        except OSError as exc:
            return _output_failed(exc, 2)
        return _printed(2)
    from .stdout import plugin_output_to_stderr

    with plugin_output_to_stderr():  # a plugin's print() never lands in evalkit's output
        return _handle(args)


def _handle(args: argparse.Namespace) -> int:
    """Run the command's handler; its exit code, every failure said on stderr."""
    from .stdout import stdout

    try:
        code = int(args.handler(args) or 0)
        stdout().flush()  # a full disk or a vanished reader is reported here, not after exit
        return code
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return 3
    except SystemExit as exc:  # no command of evalkit's raises it: a plugin called sys.exit()
        from ..shapes import short_repr

        print(
            f"evalkit: error: a plugin ended the command with sys.exit({short_repr(exc.code)}); "
            "what it was doing did not complete (a CI gate must not read this as success)",
            file=sys.stderr,
        )
        return 3
    except BrokenPipeError:  # `evalkit list | head`: the reader has what it wanted
        _discard_stdout()
        return 0
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            return _failed(args, exc)
        return _unwritable(exc, " (anything the command stored is kept)")
    except Exception as exc:
        return _failed(args, exc)


def _printed(code: int) -> int:
    """``code`` once what argparse printed (help, the version) is flushed; else as :func:`_output_failed`."""
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
    if exc.errno not in _OUTPUT_ERRNOS:
        raise exc
    return _unwritable(exc)


def _unwritable(exc: OSError, kept: str = "") -> int:
    """Say that standard output could not take the text (exit 3); it is not written again at exit."""
    _discard_stdout()
    print(f"evalkit: error: could not write the output: {exc.strerror or exc}{kept}", file=sys.stderr)
    return 3


#: What writing to standard output fails with when it cannot take the text: a full disk or
#: quota, a file grown past its limit, an I/O error. Reported as such (exit 3), not as a crash.
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


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


def _failed(args: argparse.Namespace, exc: Exception) -> int:
    """Say why the command failed (literally, secrets scrubbed); its exit code."""
    from ..errors import EvalkitError, SetValidationError
    from ..shapes import clipped_lines
    from .render import literal

    def say(text: str) -> None:
        # A message quotes sets, plugins and endpoints: shown literally, secrets scrubbed, and
        # each line cut, so a 100,000-character run id or set name is not echoed whole.
        print(literal(clipped_lines(text), markup=False, multiline=True), file=sys.stderr)

    if args.traceback or not isinstance(exc, EvalkitError):
        if not isinstance(exc, EvalkitError):
            say(f"evalkit: internal error: {type(exc).__name__}: {exc}")
        import traceback

        say(traceback.format_exc().rstrip("\n"))
        return getattr(exc, "exit_code", 2) if isinstance(exc, EvalkitError) else 2
    if isinstance(exc, SetValidationError):
        from ..wording import counted

        subject = getattr(exc, "subject", "the set is invalid")
        say(f"evalkit: error: {subject} ({counted(len(exc.problems), 'problem')}):")
        for problem in exc.problems:
            say(f"  - {problem}")
    else:
        say(f"evalkit: error: {exc}")
    return exc.exit_code
