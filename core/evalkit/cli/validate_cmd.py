"""``evalkit validate [PATH|SET]…``: check set files, installed sets, deployments and
provider instances without running them."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, arguments
from .params import CONFIG_HELP, global_options

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _targets(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str]:
    """The targets as a list; an empty or blank one (``evalkit validate "$CHANGED"`` with nothing
    in the variable) is refused: read as a path it was the working directory, checked instead."""
    if any(not target.strip() for target in value):
        raise click.UsageError("a TARGET is empty; name a set file, a folder or a set identifier, or give none to check everything", ctx)
    return list(value)


@click.command(
    "validate",
    cls=EvalkitCommand,
    help=(
        "Check each TARGET without calling anything: a set file (YAML, JSON, JSONL, TOML), a folder of them, "
        "or the identifier of an installed set. Without TARGET: every file the configuration's [sets] paths "
        "name, every installed set, every deployment and every provider instance ([providers.NAME]; each that cannot "
        "run here, as `evalkit list deployments` and `evalkit list providers` say it, without importing any retriever "
        "or adapter). Every problem is printed at once, with file, line, column and JSON "
        "path where known; exit 2 when there is one. Fit for a pre-commit hook."
    ),
)
@click.argument(
    "targets", nargs=-1, metavar="[PATH|SET]...", callback=_targets,
    help="set files, folders or set identifiers (default: everything)",
)
@global_options(
    config=CONFIG_HELP, database=None,
    json="print one JSON document",
)
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit validate``."""
    return arguments(handle, params)


def handle(args: Arguments) -> int:
    """Check, report, and return 0 (all valid) or 2."""
    from ..config import load_config
    from ..set_checks import check_everything, check_targets
    from .render import SetCheckDisplay

    config = load_config(args.config)
    checking = SetCheckDisplay(enabled=not args.json)  # a set of a million streamed prompts takes a while
    try:
        report = check_targets(args.targets, config, checking) if args.targets else check_everything(config, checking)
    finally:
        checking.stop()
    if args.json:
        from .json_output import print_json

        print_json(report.as_dict())
    else:
        _print(report)
    return 2 if report.problems else 0


def _print(report: Any) -> None:
    """One line per checked item on stdout, every problem on stderr, then a count."""
    from .console import console

    out, err = console(), console(stderr=True)
    for line in report.checked:
        out.plain(f"ok  {line}")
    for skipped in report.skipped:
        out.plain(f"skip  {skipped}")
    for problem in report.problems:
        err.plain(problem)
    if report.problems:
        from ..shapes import counted_problems

        err.plain(f"evalkit: {counted_problems(report.problems)}; nothing was run")
    elif not report.checked and not report.skipped:
        out.plain("nothing to check: no [sets] paths are configured and no sets are installed")
