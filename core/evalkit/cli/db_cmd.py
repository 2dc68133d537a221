"""``evalkit db upgrade|status|prune``: the results store's schema and retention."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..wording import counted, path_named
from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .params import global_options

#: The oldest ``--older-than`` reaches back: 50 years (never before 1970, when no run can have started).
MAX_AGE_S = 50 * 365 * 86400


@click.group("db", cls=EvalkitGroup, help="Maintain the results store. See `evalkit db SUBCOMMAND --help`.", subcommand_metavar="SUBCOMMAND [ARGS]...")
@global_options(config=None, database=None)
def command(**params: Any) -> None:
    """``evalkit db`` alone: its help."""
    group_without_command()


@command.command(
    "upgrade",
    cls=EvalkitCommand,
    short_help="apply the pending schema migrations",
    help=(
        "Apply the numbered schema migrations this evalkit knows and the database lacks, in one transaction. "
        "Stored runs are kept and stay readable; nothing is assigned to them retroactively. Safe to run while "
        "other processes use the database, and from several machines at once."
    ),
)
@global_options(json="print one JSON document")
def upgrade(**params: Any) -> Arguments:
    """Parsed ``evalkit db upgrade``."""
    return arguments(_upgrade, params)


@command.command(
    "status",
    cls=EvalkitCommand,
    short_help="show the schema version and the pending migrations",
    help="Show the database's schema version, the migrations applied and those pending (read only).",
)
@global_options(json="print one JSON document")
def status(**params: Any) -> Arguments:
    """Parsed ``evalkit db status``."""
    return arguments(_status, params)


@command.command(
    "prune",
    cls=EvalkitCommand,
    short_help="delete whole runs older than a given age",
    help=(
        "Delete every run (with all its cases) that started before now minus the given age, and report how "
        "many were deleted. Runs go whole: a kept run always has all its cases. Each scope's current "
        "baseline (its most recently accepted run) is kept however old, so the gate keeps its bar."
    ),
)
@click.option(
    "--older-than", required=True, metavar="AGE",
    help="an age such as 90d (days), 12h, 30m, 45s or 2w; runs started strictly before now minus AGE go",
)
@global_options(json="print one JSON document")
def prune(**params: Any) -> Arguments:
    """Parsed ``evalkit db prune``."""
    return arguments(_prune, params)


def parse_age(text: str) -> float:
    """``90d`` → seconds, by :mod:`evalkit.durations`' one rule with its unit required (a bare
    ``90`` meant as days would go as seconds), from 1 s to :data:`MAX_AGE_S`; a usage error naming
    ``--older-than`` otherwise."""
    from ..durations import read_duration
    from ..wording import argument

    return read_duration(text, argument("older_than"), least=1, most=MAX_AGE_S, unit_required=True)


def _url(args: Arguments) -> str:
    from ..config import load_config
    from .common import database_url

    return database_url(args, load_config(args.config))


def _status_document(status: Any) -> dict[str, Any]:
    return {
        "database": status.url,
        "engine": status.engine,
        "version": status.version,
        "latest": status.latest,
        "up_to_date": status.up_to_date,
        "applied": [{"version": m.version, "name": m.name, "applied_at": m.applied_at} for m in status.applied],
        "pending": [{"version": v, "name": n} for v, n in status.pending],
    }


def _print_status(status: Any) -> None:
    from .console import console
    from .stored import format_date

    out = console()
    out.print(f"Database: {status.url} ({status.engine})")
    if status.version > status.latest:
        state = f"version {status.version}, newer than this evalkit knows ({status.latest}): upgrade evalkit"
    elif status.pending:
        state = (
            f"version {status.version} of {status.latest}; {counted(len(status.pending), 'migration')} pending — "
            "run `evalkit db upgrade`"
        )
    else:
        state = f"version {status.version} (up to date)"
    out.print(f"Schema:   {state}")
    for migration in status.applied:
        out.print(f"  {migration.version:>3}  applied {format_date(migration.applied_at)} UTC  {migration.name}")
    for version, name in status.pending:
        out.print(f"  {version:>3}  pending                  {name}")


def _status(args: Arguments) -> int:
    from ..config import load_config
    from ..errors import UsageError
    from ..shapes import clipped
    from ..storage import missing_store, schema_status
    from .common import database_url
    from .json_output import print_json
    from .stored import store_origin

    config = load_config(args.config)
    url = database_url(args, config)
    path = missing_store(url)
    if path is not None:
        raise UsageError(
            f"There is no results store at {clipped(path_named(path))} yet: the first `evalkit run` will create it at the latest "
            f"schema version (nothing to upgrade). {store_origin(config, args.database)}"
        )
    status = schema_status(url)
    if args.json:
        print_json(_status_document(status))
    else:
        _print_status(status)
    return 0


def _upgrade(args: Arguments) -> int:
    from ..storage import check_database_url, schema_status, upgrade_schema
    from .console import console
    from .json_output import print_json

    url = _url(args)
    # An upgrade writes: a store that cannot be written is refused as such (what is wrong, what to
    # do) before it is read, not with a reader's advice or SQLite's "attempt to write a readonly database".
    check_database_url(url)
    before = schema_status(url).version
    status, applied = upgrade_schema(url)
    if args.json:
        print_json({**_status_document(status), "previous_version": before, "applied_now": applied})
        return 0
    out = console()
    if applied:
        out.print(f"Upgraded {status.url} from schema version {before} to {status.version} (applied {', '.join(map(str, applied))}).")
    else:
        out.print(f"{status.url} is at schema version {status.version}; nothing to upgrade.")
    return 0


def _prune(args: Arguments) -> int:
    import time

    from ..errors import UsageError
    from ..runs import RunStatus
    from ..storage import capabilities, close_repository, runs_started_before, unwrapped
    from .console import console
    from .json_output import print_json
    from .stored import format_date, open_store

    age = parse_age(args.older_than)
    cutoff = time.time() - age
    repository = open_store(args, writing=True)
    try:
        history = capabilities(repository).history
        if history is None:
            raise UsageError(
                f"the configured repository ({type(unwrapped(repository)).__name__}) cannot prune: it lacks the RunHistory "
                "capability (recent_runs, purge_older_than)"
            )
        pruned = history.purge_older_than(cutoff)
        # what is left from before the cutoff and still running: runs a live process answers, kept
        # and the rest from before it: each scope's current baseline, kept so the gate still has its bar
        left = runs_started_before(history, cutoff)
        kept = sum(count for status, count in left.items() if status is RunStatus.RUNNING)
        baselines = sum(left.values()) - kept
    finally:
        close_repository(repository)
    if args.json:
        print_json(
            {
                "pruned_runs": pruned,
                "kept_running_runs": kept,
                "kept_baselines": baselines,
                "older_than": args.older_than,
                "cutoff": cutoff,
            }
        )
        return 0
    kept_note = f" {counted(kept, 'run')} being answered now {'was' if kept == 1 else 'were'} kept." if kept else ""
    if baselines:
        kept_note += (
            f" {counted(baselines, 'current baseline')} {'was' if baselines == 1 else 'were'} kept "
            "(the runs the gate compares with; `evalkit baseline accept` a newer run to let one go)."
        )
    console().print(
        f"Pruned {counted(pruned, 'run')}, with their cases, started before {format_date(cutoff)} UTC (older than {args.older_than}).{kept_note}"
    )
    return 0
