"""The ``evalkit`` command line: a thin layer over the library.

Start-up is kept cheap: this module imports only argparse; each command imports what it needs
when it runs, so ``evalkit --help`` and ``evalkit list`` never load httpx, jsonschema, peewee or
plugin modules.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

__all__ = ["main", "build_parser"]

#: Command modules, each with ``register(subparsers)``; their top level imports nothing heavy.
COMMAND_MODULES = ("run_cmd", "retrieval_cmd", "list_cmd", "models_cmd", "history_cmd", "show_cmd", "compare_cmd", "db_cmd")
COMMAND_MODULES += ("validate_cmd", "schema_cmd", "init_cmd")
COMMAND_MODULES += ("report_cmd",)

EPILOG = """exit codes: 0 done · 1 gate failed (regression, or not comparable under --fail-on-regression)
            2 bad usage or invalid input (nothing called, nothing stored) · 3 the run could not complete"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command registered."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Evaluate LLM answers and retrieval against golden sets, store every run, flag regressions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"evalkit {_version()}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback on errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        import_module(f".{name}", __name__).register(subparsers)
    return parser


def _version() -> str:
    from .. import __version__

    return __version__


def _never_fail_on_output() -> None:
    """Text that is not valid Unicode (a lone surrogate kept from undecodable bytes) is written as
    its escape (``\\udcff``) instead of raising mid-report or being sent as raw bytes."""
    import io

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # not when a caller swapped in a StringIO
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see ``evalkit --help``)."""
    _never_fail_on_output()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return 3
    except Exception as exc:
        from ..errors import EvalkitError, SetValidationError
        from .render import literal

        def say(line: str) -> None:
            # A message quotes sets, plugins and endpoints: shown literally, secrets scrubbed.
            print(literal(line, markup=False, multiline=True), file=sys.stderr)

        if args.traceback or not isinstance(exc, EvalkitError):
            if not isinstance(exc, EvalkitError):
                say(f"evalkit: internal error: {type(exc).__name__}: {exc}")
            import traceback

            say(traceback.format_exc().rstrip("\n"))
            return getattr(exc, "exit_code", 2) if isinstance(exc, EvalkitError) else 2
        if isinstance(exc, SetValidationError):
            subject = getattr(exc, "subject", "the set is invalid")
            say(f"evalkit: error: {subject} ({len(exc.problems)} problem(s)):")
            for problem in exc.problems:
                say(f"  - {problem}")
        else:
            say(f"evalkit: error: {exc}")
        return exc.exit_code
