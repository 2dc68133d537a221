"""``evalkit plan SET``: what a run of the set would make and could detect, before anything is spent."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..wording import quoted
from .app import Arguments, EvalkitCommand, arguments
from .gate_options import gate_options, repeats_option
from .names import PluginName, ProviderName, SetIdentifier
from .params import MAX_REPEATS, PositiveInt, global_options, non_empty


@click.command(
    "plan",
    cls=EvalkitCommand,
    help=(
        "Without calling any generator or judge: the requests a run of SET would make, the smallest drop of its pass "
        "rate the gate can tell from noise as configured (cases, --repeats, [gate] alpha and tolerance; the pass rate of "
        "the scope's accepted baseline when the store has one), and what a target drop needs — cases at these "
        "repeats, or repeats with these cases."
    ),
)
@click.argument("set", metavar="SET", type=SetIdentifier("prompt"), help="golden prompt set identifier (see `evalkit list sets`)")
@click.option(
    "--provider", metavar="NAME", type=ProviderName(), help="the configured provider instance the run would use (for its baseline; default: the only one configured, as for evalkit run)"
)
@click.option("--model", metavar="ALIAS", help="the model alias the run would send", callback=non_empty("a model alias"))
@click.option(
    "--grader", default="deterministic", metavar="NAME", type=PluginName("evalkit.graders"), help="grader (default: deterministic)"
)
@click.option("--judge", metavar="NAME", type=ProviderName(), help="the provider instance a judge grader would ask")
@click.option("--judge-repeats", type=PositiveInt(MAX_REPEATS), metavar="K", help="judge calls per answer (default 1 for a judge grader)")
@repeats_option
@click.option("--target-drop", metavar="X", default=None, help="the drop of the pass rate to detect, 0..1 (default: the tolerance)")
@click.option("--rate", metavar="P", default=None, help="the pass rate to assume when no stored run gives one (default 0.8)")
@gate_options()
@click.option("--max-pass-rate-drop", metavar="X", default=None, help="the pass rate's tolerance (default: [gate], else 0.1)")
@global_options(json="print one JSON document instead of lines")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit plan``."""
    return arguments(handle, params)


def _fraction(text: str | None, option: str, *, above_zero: bool = True) -> float | None:
    from ..errors import UsageError
    from ..tolerance import parse_tolerance

    if text is None:
        return None
    value = float(parse_tolerance(text, option))
    if above_zero and value <= 0:
        raise UsageError(f"--{option} must be above 0, got {text!r}")
    return value


def _pass_value(run: Any) -> float:
    """A stored run's pass rate as the gate compares it: the mean pass fraction of a run whose cases
    were answered several times, else the share of cases that passed."""
    repeats = (run.metrics or {}).get("repeats")
    fraction = repeats.get("pass_fraction") if isinstance(repeats, dict) else None
    if isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and 0 <= fraction <= 1:
        return float(fraction)
    return float(run.pass_rate)


def _stored_rate(args: Arguments, config: Any, instance: str | None, alias: str | None) -> tuple[float | None, str]:
    """The pass rate of the scope's accepted baseline, else of the set's latest complete run of the
    provider, alias and grader the plan is for — from a store that exists (a plan never creates one).
    A run graded by another grader (or answered under another alias) measured something else: its
    rate is no figure for this plan."""
    from ..baselines import current_baselines, graded_by
    from ..storage import capabilities, close_repository, missing_store
    from .common import database_url
    from .stored import opened_for

    url = database_url(args, config)
    if missing_store(url) is not None or instance is None:
        return None, ""
    repository = opened_for(args, url)
    try:
        store = capabilities(repository)
        if store.baselines is not None:
            found = current_baselines(repository, args.set, provider_instance=instance, model_alias=alias, grader=args.grader)
            if found:
                run = found[0].run
                return _pass_value(run), f"the accepted baseline, run {run.id}"
        if store.history is not None:
            for run in store.history.recent_runs(args.set, limit=50):
                if (
                    run.status.value == "complete"
                    and run.provider_instance == instance
                    and (alias is None or run.model_alias == alias)
                    and graded_by(run.grader, args.grader)
                    and run.answered_count
                ):
                    return _pass_value(run), f"the latest complete run, {run.id}"
    finally:
        close_repository(repository)
    return None, ""


def handle(args: Arguments) -> int:
    """Print the plan; nothing is called, nothing is stored."""
    from .. import registry
    from ..catalog import prompt_set_catalog
    from ..components import JudgeGrader
    from ..config import load_config
    from ..errors import UsageError
    from ..plan_report import plan_for
    from .console import console
    from .gate_options import gate_of, repeats_of
    from .json_output import print_json

    config = load_config(args.config)
    golden_set = prompt_set_catalog(config=config).get(args.set).set
    factory = registry.load(registry.find("evalkit.graders", args.grader))
    judged = isinstance(factory, type) and issubclass(factory, JudgeGrader)
    if (args.judge or args.judge_repeats) and not judged:
        raise UsageError(f'--judge and --judge-repeats apply to judge graders; {quoted(args.grader)} asks no judge')
    if args.provider is not None and args.provider not in config.providers:
        from ..wording import did_you_mean

        hint = did_you_mean(args.provider, config.providers)
        raise UsageError(f"--provider {quoted(args.provider)} is not a configured provider instance.{hint}")
    tolerances, gate = gate_of(args, config)
    instance = args.provider
    if instance is None and len(config.providers) == 1:
        # the one instance `evalkit run SET` answers with when none is named (bind_generator): its
        # baseline was passed over, and the plan assumed a rate "no stored run of this scope gives"
        instance = next(iter(config.providers))
    alias = args.model or (config.providers[instance].model if instance is not None else None)
    rate, source = _stored_rate(args, config, instance, alias)
    if rate is None:
        rate = _fraction(args.rate, "rate", above_zero=False)
        source = "given with --rate" if rate is not None else ""
    # the judge calls an answer costs are the built grader's, as a run's are: --judge-repeats, else
    # its [graders.NAME] table's repeats, else its default
    repeats = repeats_of(args, config)
    estimate = _estimate(args, config, golden_set, judged, repeats)
    plan = plan_for(
        golden_set.identifier,
        estimate.cases,  # counted by the check's pass: len() of a stream that declares no count reads it again
        repeats=repeats,
        judge_repeats=estimate.judge_repeats,
        rate=rate,
        rate_source=source,
        alpha=gate.alpha,
        gate=gate.method,
        tolerance=float(tolerances.max_pass_rate_drop),
        target_drop=_fraction(args.target_drop, "target-drop"),
    )
    if args.json:
        print_json({**plan.as_dict(), "estimate": estimate.document()})
        return 0
    out = console()
    for line in plan.lines():
        out.print(line)
    for line in estimate_lines(estimate, plan):
        out.print(line)
    for warning in plan.warnings:
        out.print(f"warning: {warning}", style="yellow")
    for note in plan.notes:
        out.print(note, style="dim")
    return 0


def _estimate(args: Arguments, config: Any, golden_set: Any, judged: bool, repeats: int) -> Any:
    """What the run would ask and cost (:func:`evalkit.run.estimate.estimate_set`): from the stored
    usage of the scope's latest run where there is one, else from the prompts' lengths. The set is
    the one ``handle`` looked up: looking it up again ran every set provider a second time."""
    from ..run.estimate import estimate_set
    from .common import database_url
    from .render import SetCheckDisplay

    options: dict[str, Any] = {}
    if judged and args.judge:
        options["judge"] = args.judge
    if judged and args.judge_repeats is not None:  # as `evalkit run --judge-repeats` passes them
        options["repeats"] = args.judge_repeats
    # a set of a million streamed prompts takes a while: checked, then estimated, in two passes
    checking = SetCheckDisplay(enabled=not args.json)
    estimating = SetCheckDisplay(enabled=not args.json, verb="estimating")
    try:
        return estimate_set(
            golden_set, provider=args.provider, model=args.model, grader=args.grader, grader_options=options or None,
            config=config, database=database_url(args, config), repeats=repeats, on_check=checking, on_estimate=estimating,
        )  # fmt: skip
    finally:
        checking.stop()
        estimating.stop()


def estimate_lines(estimate: Any, plan: Any) -> list[str]:
    """The estimate for people, in the plan's columns: tokens, cost ("unknown" without a price,
    never 0) and time, and the requests only where they differ from the plan's own count."""
    from ..costs import format_amount
    from ..plan_report import plan_row
    from ..wording import counted, figure

    lengths = "the prompts' lengths (about 4 characters a token)"
    if estimate.from_run and estimate.measured_cases:
        rest = f", {lengths} for the other {estimate.cases - estimate.measured_cases}" if estimate.measured_cases < estimate.cases else ""
        basis = f"the stored usage of run {estimate.from_run} for {counted(estimate.measured_cases, 'case')}{rest}"
    else:
        basis = lengths
    cost = "unknown (no price configured)" if estimate.cost is None else format_amount(estimate.cost, estimate.currency)
    if estimate.seconds is None:
        seconds = "unknown"
    elif estimate.time_limit is None:
        seconds = f"{figure(estimate.seconds)} s at {figure(estimate.concurrency)} in flight"
    else:  # a per-minute limit is slower than the latencies (or the only bound known)
        seconds = f"{'' if estimate.measured_cases else 'at least '}{figure(estimate.seconds)} s, bounded by {estimate.time_limit}"
    same_count = (estimate.generator_requests, estimate.judge_requests) == (plan.answers, plan.judge_calls)
    requests = f"{figure(estimate.generator_requests)} to the generator, {figure(estimate.judge_requests)} to a judge"
    return [
        *([] if same_count else [plan_row("Requests sent", requests)]),
        plan_row("Tokens", f"about {figure(estimate.prompt_tokens)} in, {figure(estimate.completion_tokens)} out (estimated from {basis})"),
        plan_row("Cost", cost),
        plan_row("Time", seconds),
    ]
