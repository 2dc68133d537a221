"""``evalkit baseline accept|show``: accept a run as its scope's baseline on purpose, and show the baselines."""

from __future__ import annotations

import click

from ..wording import counted, path_named, quoted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .names import DeploymentName, PluginName, ProviderName, RunId, SetIdentifier
from .params import global_options, non_empty, non_empty_path


@click.group(
    "baseline",
    cls=EvalkitGroup,
    help=(
        "A run is compared with the baseline of its scope: the most recently accepted run of the same set and "
        "serving identity and grader (retrieval: set, retriever and deployment). A run is accepted automatically "
        "when it is the first of its scope, or significantly better than the accepted baseline and worse on no gated "
        "metric; a run that passes but is worse, one better by luck, a regressed, inconclusive, not comparable or "
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
@click.option("--model", metavar="ALIAS", help="only scopes of this model alias", callback=non_empty("a model alias"))
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


@command.command(
    "export",
    cls=EvalkitCommand,
    short_help="write a scope's baseline run to a file, for CI without a shared database",
    help=(
        "Write the accepted baseline of one scope of SET to a JSON file (e.g. evals/baselines/NAME.json, "
        "committed with the code), so that `evalkit run SET --baseline-file FILE` (or `evalkit retrieval`) "
        "gates in a job whose store starts empty. The file holds the run, its serving identity, the set's and "
        "each case's fingerprints, how it was accepted and a digest; answer text only as far as --privacy "
        "allows (default: the run's own level). The options must narrow the set's baselines to one scope. "
        "Written atomically."
    ),
)
@click.argument("set", metavar="SET", type=SetIdentifier("prompt", "question"), help="golden set identifier")
@click.option("-o", "--output", required=True, metavar="PATH", help="the file to write (replaced whole, atomically)", callback=non_empty_path)
@click.option("--provider", metavar="NAME", type=ProviderName(), help="the scope's provider instance")
@click.option("--model", metavar="ALIAS", help="the scope's model alias", callback=non_empty("a model alias"))
@click.option("--grader", metavar="NAME", type=PluginName("evalkit.graders"), help="the scope's grader")
@click.option("--retriever", metavar="ID", type=PluginName("evalkit.retrievers"), help="the retrieval scope's retriever")
@click.option("--deployment", metavar="NAME", type=DeploymentName(), help="the retrieval scope's deployment")
@click.option(
    "--run", "run_id", metavar="RUN_ID", type=RunId(),
    help="export this complete run of the set instead of a scope's accepted baseline",
)
@click.option(
    "--privacy", type=click.Choice(("metadata", "redacted", "full")), metavar="{metadata,redacted,full}",
    help="how much answer text the file keeps (default: as the run was stored; never more)",
)
@global_options()
def export(**params: Any) -> Arguments:
    """Parsed ``evalkit baseline export``."""
    return arguments(handle_export, params)


def handle_export(args: Arguments) -> int:
    """Write the baseline file; exit 2 when no single scope's baseline matches."""
    from ..baseline_file import baseline_document, write_baseline_file
    from ..baselines import current_baselines
    from ..errors import UsageError, write_failed
    from ..run_lookup import stored_run
    from ..storage import capabilities, close_repository
    from .console import console
    from .stored import open_store

    repository = open_store(args)
    try:
        if args.run_id is not None:
            run = stored_run(repository, args.run_id, option="--run", of_set=args.set)
            baselines = capabilities(repository).baselines
            acceptance = baselines.acceptances_for([run.id]).get(run.id) if baselines is not None else None
        else:
            found = current_baselines(
                repository, args.set, provider_instance=args.provider, model_alias=args.model, grader=args.grader,
                retriever=args.retriever, deployment=args.deployment,
            )  # fmt: skip
            if not found:
                from ..printable import hidden_escaped

                shown = f"`evalkit baseline show {hidden_escaped(args.set)}`"
                raise UsageError(f"no accepted baseline of set {quoted(args.set)} matches (see {shown}).")
            if len(found) > 1:
                scopes = "; ".join(b.scope.describe() for b in found[:5])
                raise UsageError(
                    f'{counted(len(found), "scope")} of set {quoted(args.set)} match ({scopes}); narrow them with '
                    "--provider, --model, --grader, --retriever or --deployment"
                )
            run = repository.get_run(found[0].run.id)
            acceptance = found[0].acceptance
        if run is None:
            raise UsageError(f"the baseline of set {quoted(args.set)} is no longer in the store")
        document = baseline_document(run, acceptance, args.privacy)
    finally:
        close_repository(repository)
    try:
        write_baseline_file(args.output, document)
    except OSError as exc:
        raise write_failed(f"baseline file {path_named(args.output)}: cannot be written ({exc.strerror or exc})", exc) from None
    console().print(
        f"Baseline run {run.id} of {document['scope']['description']} written to {path_named(args.output)} "
        f"({counted(len(run.cases), 'case')}, answers at the {document['privacy']} level)."
    )
    return 0


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

    repository = open_store(args, writing=True)
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
        out.print(f"No accepted baseline of set {quoted(args.set)} matches.")
        return 0
    out.print(f'Baselines of set {quoted(args.set)} ({counted(len(baselines), "scope")})')
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
