"""``evalkit models rank``: which configured provider instance to call, from measured quality."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .params import global_options, listed

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Kept in step with ``evalkit.routing.POLICIES`` (a test checks); not imported, to keep start-up cheap.
POLICY_NAMES = ("provider_priority", "balanced", "quality", "economy")

DESCRIPTION = """\
Rank the configured provider instances ([providers.NAME] in evalkit.toml) for an application to call.

Under --policy (default provider_priority) the order is provider priority first, then the policy's
score, then configuration order:

\b
- provider_priority  no measurement is used (quality is shown, not used)
- balanced           quality 0.4 · health 0.4 · cost 0.2 (cost only with --prefer-lowest-cost)
- quality            quality 0.7 · health 0.3
- economy            quality 0.1 · health 0.3 · cost 0.6

The score is the weighted mean of the signals that have data; none gives 0.5. Quality is the mean of
the latest verified, complete, deterministic-grader run per golden set for the instance and its model
alias; unmeasured is no signal, a measured 0.0 is a zero. evalkit has no health signal. The cost
signal is 1 - min(1, cost_per_1k_tokens / 0.1).

--min-quality Q ranks by measured quality alone instead (select_by_quality): measured candidates
first, best first, then unmeasured ones in configuration order; with Q > 0 candidates below Q or
unmeasured are excluded (equal to Q stays). It cannot be combined with --policy."""

EPILOG = "exit codes: 0 a candidate was selected · 1 no candidate qualifies · 2 bad usage or configuration"


@click.group(
    "models",
    cls=EvalkitGroup,
    help="Model selection from measured results. See `evalkit models rank --help`.",
    subcommand_metavar="SUBCOMMAND [ARGS]...",
)
@global_options(config=None, database=None)
def command(**params: Any) -> None:
    """``evalkit models`` alone: its help, on standard error."""
    group_without_command(stderr=True)


@command.command(
    "rank",
    cls=EvalkitCommand,
    short_help="rank the configured provider instances and say why each is where it is",
    help=DESCRIPTION,
    epilog=EPILOG,
)
@click.option("--policy", metavar="P", help=f"routing policy: {', '.join(POLICY_NAMES)} (default provider_priority)")
@click.option(
    "--capability", multiple=True, callback=listed, metavar="C",
    help="only instances offering this capability (repeat to require several; e.g. chat)",
)
@click.option(
    "--prefer-lowest-cost", is_flag=True,
    help="let cost join the balanced score and break ties (cheaper first, unpriced last)",
)
@click.option(
    "--min-quality", metavar="Q",
    help="rank by measured quality alone and exclude candidates below Q (a finite number in 0..1) or unmeasured",
)
@global_options(json="print one JSON document")
def rank(**params: Any) -> Arguments:
    """Parsed ``evalkit models rank``."""
    return arguments(handle_rank, params)


def handle_rank(args: Arguments) -> int:
    """Validate the options, rank, print; 0 when a candidate is selected, 1 when none qualifies."""
    from ..config import load_config
    from ..errors import UsageError
    from ..routing import DEFAULT_POLICY, ModelSelection, SelectionCriteria, parse_min_quality, parse_policy
    from ..storage import close_repository
    from ..wording import path_named
    from .common import database_url
    from .json_output import print_json

    policy = parse_policy(args.policy, "policy") if args.policy is not None else None
    min_quality = parse_min_quality(args.min_quality)
    if min_quality is not None and (policy is not None or args.prefer_lowest_cost):
        other = "--policy" if policy is not None else "--prefer-lowest-cost"
        raise UsageError(
            f"--min-quality ranks by measured quality alone (select_by_quality) and cannot be combined with {other}"
        )
    capabilities = [c.strip() for c in args.capability or ()]
    if any(not c for c in capabilities):
        raise UsageError("--capability needs a capability name, e.g. --capability chat")
    config = load_config(args.config)
    if not config.providers:
        where = f"in {path_named(config.path)}" if config.path else f"(no configuration file: {config.describe_search()})"
        raise UsageError(
            f"No provider instance is configured {where}: there is nothing to rank. "
            "Add [providers.NAME] tables with adapter and model to evalkit.toml."
        )
    criteria = SelectionCriteria(capabilities, args.prefer_lowest_cost)
    url = database_url(args, config)
    from ..storage import missing_store

    if missing_store(url) is not None:
        url = "sqlite:///:memory:"  # nothing measured yet: rank on configuration alone, create nothing
    from .stored import opened_for

    repository = opened_for(args, url)
    try:
        selection = ModelSelection(config, repository, policy or DEFAULT_POLICY)
        if min_quality is not None:
            ranking = selection.select_by_quality(criteria, min_quality)
        else:
            ranking = selection.rank(criteria, explain=True)
    finally:
        close_repository(repository)
    if args.json:
        print_json(ranking.as_dict())
    else:
        _render(ranking, configured=bool(config.providers))
    return 0 if ranking.selected is not None else 1


def _render(ranking: Any, *, configured: bool) -> None:
    from .console import console

    out = console()
    if ranking.method == "select_by_quality":
        out.plain(f"Ranking by measured quality: {ranking.describe()}")
    else:
        out.plain(f"Ranking under policy {ranking.policy}: {ranking.describe()}")
    if ranking.criteria.capabilities:
        out.plain(f"Required capabilities: {', '.join(ranking.criteria.capabilities)}")
    out.plain("")
    for entry in ranking.entries:
        out.plain(f"{entry.rank:>2}. {_line(entry)}  score {_number(entry.score)}")
        _details(out, entry)
    if ranking.excluded:
        out.plain("")
        out.plain("Excluded:")
        for entry in ranking.excluded:
            out.plain(f"  - {_line(entry)}")
            _details(out, entry)
    out.plain("")
    if ranking.selected is not None:
        out.plain(f"Selected: {ranking.selected.name}")
    elif not configured:
        out.plain("No provider instance is configured: add [providers.NAME] tables (adapter, model) to evalkit.toml.")
    else:
        out.plain("No candidate qualifies.")


def _line(entry: Any) -> str:
    candidate = entry.candidate
    cost = "—" if candidate.cost_per_1k_tokens is None else f"{candidate.cost_per_1k_tokens:g}"
    return (
        f"{candidate.name}  model {candidate.model or '(none)'}  adapter {candidate.adapter}  "
        f"priority {candidate.priority}  cost/1k {cost}  quality {_number(entry.quality.value)}"
    )


def _details(out: Any, entry: Any) -> None:
    if entry.quality.source != "none" or entry.quality.runs:
        runs = ", ".join(f"{r.run_id} ({r.set_identifier} {r.mean_score:.4f})" for r in entry.quality.runs)
        out.plain(f"      runs: {runs or 'none'}")
    out.plain(f"      why:  {entry.reason}")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"
