"""``evalkit baseline accept|show``: accept a run as its scope's baseline on purpose, and show the baselines."""

from __future__ import annotations

import click

from ..wording import counted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .names import DeploymentName, PluginName, ProviderName, RunId, SetIdentifier
from .params import global_options


@click.group(
    "baseline",
    cls=EvalkitGroup,
    help=(
        "A run is compared with the baseline of its scope: the most recently accepted run of the same set and "
        "serving identity and grader (retrieval: set, retriever and deployment). A run is accepted automatically "
        "when it is the first of its scope or its comparison found no regression; a regressed, not comparable or "
        "incomplete run is stored but never becomes the baseline by itself. Accept one on purpose when a change "
        "of behaviour is intended."
    ),
    subcommand_metavar="ACTION [ARGS]...",
)
@global_options(config=None, database=None)
def command(**params: Any) -> None:
    """``evalkit baseline`` alone: its help."""
    group_without_command()


@command.command(
    "accept",
    cls=EvalkitCommand,
    short_help="accept a stored run as the baseline of its scope (records who, when and why)",
    help=(
        "Make the stored complete run RUN_ID the baseline of its scope: later runs of that scope are compared "
        "with it. Who (from $USER), when and --reason are recorded and shown by `evalkit baseline show` and "
        "`evalkit history`."
    ),
)
@click.argument("run_id", metavar="RUN_ID", type=RunId(), help="a complete run (see `evalkit history SET`)")
@click.option("--reason", required=True, metavar="TEXT", help="why this run is the new baseline (required)")
@global_options(json="print one JSON document")
def accept(**params: Any) -> Arguments:
    """Parsed ``evalkit baseline accept``."""
    return arguments(handle_accept, params)


@command.command(
    "show",
    cls=EvalkitCommand,
    short_help="show the current baseline of each scope of a set, and why it is the baseline",
    help=(
        "Show the current baseline of every scope of SET (one per serving identity and grader, or per retriever "
        "and deployment): the run, how it was accepted, by whom, when and why. The options narrow the scopes."
    ),
)
@click.argument(
    "set", metavar="SET", type=SetIdentifier("prompt", "question"), help="golden set identifier (need not be installed any more)"
)
@click.option("--provider", metavar="NAME", type=ProviderName(), help="only scopes of this provider instance")
@click.option("--model", metavar="ALIAS", help="only scopes of this model alias")
@click.option(
    "--grader", metavar="NAME", type=PluginName("evalkit.graders"),
    help="only scopes graded by this grader (a yardstick or its grader name)",
)
@click.option("--retriever", metavar="ID", type=PluginName("evalkit.retrievers"), help="only retrieval scopes of this retriever")
@click.option("--deployment", metavar="NAME", type=DeploymentName(), help="only retrieval scopes of this deployment")
@global_options(json="print one JSON document")
def show(**params: Any) -> Arguments:
    """Parsed ``evalkit baseline show``."""
    return arguments(handle_show, params)


def _scope_document(scope: Any) -> dict[str, Any]:
    document: dict[str, Any] = {"kind": scope.kind.value, "set": scope.set_identifier}
    if scope.kind.value == "retrieval":
        document.update(retriever=scope.retriever, deployment=scope.deployment)
    else:
        document.update(
            provider_instance=scope.provider_instance, model_alias=scope.model_alias,
            reported_model=scope.reported_model, grader=scope.grader,
        )  # fmt: skip
    return document


def handle_accept(args: Arguments) -> int:
    """Accept the run; exit 2 when it cannot be (unknown, incomplete, without a scope)."""
    from ..baselines import BaselineScope, accept_run
    from ..storage import close_repository
    from .console import console
    from .json_output import print_json
    from .render import acceptance_document
    from .stored import format_date, open_store

    repository = open_store(args)
    try:
        run, acceptance = accept_run(repository, args.run_id, args.reason)
    finally:
        close_repository(repository)
    scope = BaselineScope.of_run(run)
    assert scope is not None
    if args.json:
        print_json({"run_id": run.id, "scope": _scope_document(scope), "acceptance": acceptance_document(acceptance)})
        return 0
    out = console()
    out.print(f"Run {run.id} is now the baseline of {scope.describe()}.")
    out.print(f"Accepted by {acceptance.by} on {format_date(acceptance.at)} UTC: {acceptance.reason}")
    return 0


def handle_show(args: Arguments) -> int:
    """Print the current baselines of the set (exit 0 even when there is none)."""
    from ..baselines import current_baselines
    from ..storage import close_repository
    from .console import console
    from .json_output import print_json
    from .render import acceptance_document
    from .stored import format_date, identity_label, open_store

    repository = open_store(args)
    try:
        baselines = current_baselines(
            repository, args.set, provider_instance=args.provider, model_alias=args.model, grader=args.grader,
            retriever=args.retriever, deployment=args.deployment,
        )  # fmt: skip
    finally:
        close_repository(repository)
    if args.json:
        print_json(
            {
                "set": args.set,
                "baselines": [
                    {
                        "scope": _scope_document(b.scope),
                        "run_id": b.run.id,
                        "started_at": b.run.started_at,
                        "pass_rate": float(b.run.pass_rate),
                        "mean_score": b.run.mean_score,
                        "acceptance": acceptance_document(b.acceptance),
                    }
                    for b in baselines
                ],
            }
        )
        return 0
    out = console()
    if not baselines:
        out.print(f'No accepted baseline of set "{args.set}" matches.')
        return 0
    out.print(f'Baselines of set "{args.set}" ({counted(len(baselines), "scope")})')
    for current in baselines:
        run = current.run
        who = run.retriever if run.kind.value == "retrieval" else identity_label(run)
        where = f" in deployment {run.deployment}" if run.kind.value == "retrieval" and run.deployment else ""
        grader = "" if run.kind.value == "retrieval" else f", grader {run.grader}"
        out.line()
        out.print(f"{who}{where}{grader}")
        out.print(f"  Baseline:  run {run.id} ({format_date(run.started_at)} UTC), pass rate {float(run.pass_rate) * 100:.1f}%")
        out.print(f"  Why:       {current.acceptance.describe()}")
        out.print(f"  Accepted:  {format_date(current.acceptance.at)} UTC")
    return 0
