"""``evalkit cache stats|clear``: what the answer cache (``--cache``) holds, and emptying it."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..wording import counted
from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .params import global_options


@click.group(
    "cache", cls=EvalkitGroup, help="Inspect or empty the answer cache of `evalkit run --cache`. See `evalkit cache SUBCOMMAND --help`.",
    subcommand_metavar="SUBCOMMAND [ARGS]...",
)
@global_options(config=None, database=None)
def command(**params: Any) -> None:
    """``evalkit cache`` alone: its help."""
    group_without_command()


@command.command(
    "stats",
    cls=EvalkitCommand,
    short_help="count the cached answers, per provider instance",
    help="Count the answers in the cache (full answer text, kept in the results store), per provider instance, with the oldest and newest.",
)
@global_options(json="print one JSON document")
def stats(**params: Any) -> Arguments:
    """Parsed ``evalkit cache stats``."""
    return arguments(_stats, params)


@command.command(
    "clear",
    cls=EvalkitCommand,
    short_help="delete cached answers (all, or those older than an age)",
    help="Delete the cached answers — all of them, or with --older-than those cached before now minus AGE — and say how many went.",
)
@click.option("--older-than", metavar="AGE", help="an age such as 30d, 12h, 45m or 2w: only answers cached before now minus AGE go")
@global_options(json="print one JSON document")
def clear(**params: Any) -> Arguments:
    """Parsed ``evalkit cache clear``."""
    return arguments(_clear, params)


def _cache(repository: Any) -> Any:
    from ..errors import UsageError
    from ..storage import capabilities, unwrapped

    cache = capabilities(repository).cache
    if cache is None:
        raise UsageError(
            f"the configured repository ({type(unwrapped(repository)).__name__}) keeps no answer cache: it lacks the AnswerCache capability"
        )
    return cache


def _stats(args: Arguments) -> int:
    from ..storage import close_repository
    from .console import console
    from .json_output import print_json
    from .stored import format_date, open_store

    repository = open_store(args)
    try:
        stats = _cache(repository).cache_stats()
    finally:
        close_repository(repository)
    if args.json:
        print_json(
            {
                "entries": stats.entries, "answer_chars": stats.answer_chars, "oldest": stats.oldest, "newest": stats.newest,
                "per_instance": dict(stats.per_instance),
            }
        )  # fmt: skip
        return 0
    out = console()
    if not stats.entries:
        out.print("The answer cache is empty.")
        return 0
    out.print(
        f"The answer cache holds {counted(stats.entries, 'answer')} ({stats.answer_chars:,} characters), "
        f"cached from {format_date(stats.oldest)} to {format_date(stats.newest)} UTC."
    )
    for instance, entries in sorted(stats.per_instance.items()):
        out.print(f"  {instance}: {counted(entries, 'answer')}")
    return 0


def _clear(args: Arguments) -> int:
    import time

    from ..storage import close_repository
    from .console import console
    from .db_cmd import parse_age
    from .json_output import print_json
    from .stored import format_date, open_store

    cutoff = time.time() - parse_age(args.older_than) if args.older_than is not None else None
    repository = open_store(args, writing=True)
    try:
        removed = _cache(repository).clear_cache(cutoff)
    finally:
        close_repository(repository)
    if args.json:
        print_json({"removed": removed, "older_than": args.older_than, "cutoff": cutoff})
        return 0
    where = f" cached before {format_date(cutoff)} UTC (older than {args.older_than})" if cutoff is not None else ""
    console().print(f"Removed {counted(removed, 'cached answer')}{where}.")
    return 0
