"""``evalkit validate [PATH|SET]…``: check set files and installed sets without running them."""

from __future__ import annotations

import argparse

from ..wording import counted
from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``validate`` command."""
    parser = subparsers.add_parser(
        "validate",
        help="check set files and installed sets without running them (exit 0 or 2)",
        description=(
            "Check each TARGET without calling anything: a set file (YAML, JSON, JSONL, TOML), a folder of them, "
            "or the identifier of an installed set. Without TARGET: every file the configuration's [sets] paths "
            "name and every installed set. Every problem is printed at once, with file, line, column and JSON "
            "path where known; exit 2 when there is one. Fit for a pre-commit hook."
        ),
    )
    parser.add_argument("targets", nargs="*", metavar="PATH|SET", help="set files, folders or set identifiers (default: everything)")
    parser.add_argument("--config", metavar="PATH", help="configuration file (default: ./evalkit.toml or [tool.evalkit] in ./pyproject.toml)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Check, report, and return 0 (all valid) or 2."""
    from ..config import load_config
    from ..set_checks import check_everything, check_targets

    config = load_config(args.config)
    report = check_targets(args.targets, config) if args.targets else check_everything(config)
    if args.json:
        from .common import print_json

        print_json(report.as_dict())
    else:
        _print(report)
    return 2 if report.problems else 0


def _print(report: Any) -> None:
    """One line per checked item on stdout, every problem on stderr, then a count."""
    import sys

    from ..printable import visible
    from ..shapes import clipped_lines

    for line in report.checked:
        stdout().write(visible(clipped_lines(f"ok  {line}")) + "\n")
    for skipped in report.skipped:
        stdout().write(clipped_lines(f"skip  {skipped}") + "\n")
    for problem in report.problems:
        sys.stderr.write(f"{clipped_lines(str(problem))}\n")
    if report.problems:
        sys.stderr.write(f"evalkit: {counted(len(report.problems), 'problem')}; nothing was run\n")
    elif not report.checked:
        stdout().write("nothing to check: no [sets] paths are configured and no sets are installed\n")
