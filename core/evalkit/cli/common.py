"""Pieces several commands share: common options and their value types, the run-start hook.

What commands print goes through :mod:`.console` (people) and :mod:`.json_output` (``--json``)."""

from __future__ import annotations

import argparse

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["add_baseline_option", "add_report_option", "add_store_options", "add_tolerance_options", "positive_int", "run_started"]


#: The largest whole number a count option takes; longer text is refused before it is parsed.
MAX_COUNT = 1_000_000


def positive_int(text: str) -> int:
    """An argparse type: a whole number from 1 to :data:`MAX_COUNT`, refused at once otherwise."""
    shown = text if len(text) <= 20 else text[:20] + "…"
    if len(text.strip()) > len(str(MAX_COUNT)) + 2:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_COUNT}, got {shown!r}")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {shown!r}") from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_COUNT}, got {shown!r}")
    return value


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, a plain decimal number from 0 to 2."""
    if len(text) > 16:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text[:16]!r}…")
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text!r}") from None
    if not 0.0 <= value <= 2.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text!r}")
    return value


def run_started(progress_start: Callable[[Any, int], None]) -> Callable[[Any, int], None]:
    """``progress_start``, preceded by :func:`gc.freeze` and :func:`gc.enable`: called when every
    plugin is loaded and the first request is about to go out, so the objects built so far
    (modules, classes, plugins, the configuration) are left out of every later garbage collection
    — and out of the interpreter's collections at exit, which took 40-50 ms of a run's wall time
    walking them. Until then the collector is off (:func:`evalkit.cli.main` turns it off for a
    command that sets ``collects_garbage_from_run_start``): collections while ~400 modules are
    imported found nothing to free and cost ~30 ms of a run's start-up."""

    def start(run: Any, total: int) -> None:
        import gc

        gc.freeze()
        gc.enable()
        progress_start(run, total)

    return start


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--config`` and ``--database``."""
    parser.add_argument(
        "--config", metavar="PATH",
        help="configuration file (default: $EVALKIT_CONFIG, else the nearest evalkit.toml or [tool.evalkit] in pyproject.toml, here or in a parent folder)",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help="results database URL (default: EVALKIT_DATABASE_URL, the config's database, or .evalkit/results.db in the project root)",
    )


def add_tolerance_options(parser: argparse.ArgumentParser, first: str, second: str, what: tuple[str, str]) -> None:
    """Two tolerance options (kept as raw text so they are validated exactly) and the gate flag."""
    parser.add_argument(
        f"--{first}", default="0.1", metavar="X",
        help=f"largest accepted absolute drop of the {what[0]}, a finite number in 0..1 (default 0.1; a drop equal to it passes)",
    )
    parser.add_argument(
        f"--{second}", default="0.1", metavar="X",
        help=f"largest accepted absolute drop of the {what[1]}, a finite number in 0..1 (default 0.1)",
    )
    parser.add_argument(
        "--fail-on-regression", action="store_true",
        help="exit 1 on a regression, and when the run cannot be compared (for CI)",
    )
    parser.add_argument(
        "--fail-on-new-failures", action="store_true",
        help="exit 1 also when a case added to the set, or edited since the baseline, fails",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")


def add_baseline_option(parser: argparse.ArgumentParser) -> None:
    """``--baseline RUN_ID``: compare with a chosen stored run of the same scope."""
    parser.add_argument(
        "--baseline", metavar="RUN_ID",
        help="compare with this stored run instead of the scope's accepted baseline (refused, exit 2, when it is of another scope)",
    )


def database_url(args: argparse.Namespace, config: Any) -> str:
    """The database a command uses: --database, EVALKIT_DATABASE_URL, the config, then the default."""
    from ..storage import resolve_database_url

    return resolve_database_url(getattr(args, "database", None), config)


def add_report_option(parser: argparse.ArgumentParser) -> None:
    """``--report FORMAT[:PATH]``, repeatable (checked when the command runs, before anything is called)."""
    parser.add_argument(
        "--report", action="append", metavar="FORMAT[:PATH]",
        help="also write a report: junit, markdown, html, json or an installed reporter (see `evalkit list`); "
        'repeatable; PATH "-" is standard output; without a path markdown is appended to $GITHUB_STEP_SUMMARY '
        "when set, other formats print. A failing reporter is named on stderr and does not change the exit code",
    )
