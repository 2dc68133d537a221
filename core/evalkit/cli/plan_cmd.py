"""``evalkit plan SET``: what a run of the set would make and could detect, before anything is spent."""

from __future__ import annotations

import argparse

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .common import add_store_options, positive_int


def register(subparsers: Any) -> None:
    """Add the ``plan`` command."""
    parser = subparsers.add_parser(
        "plan",
        help="say what a run of a set would ask and could detect, before anything is called",
        description=(
            "Without calling any generator or judge: the requests a run of SET would make, the smallest drop of its pass "
            "rate the gate can tell from noise as configured (cases, --repeats, [gate] alpha and tolerance; the pass rate of "
            "the scope's accepted baseline when the store has one), and what a target drop needs — cases at these "
            "repeats, or repeats with these cases."
        ),
    )
    parser.add_argument("set", metavar="SET", help="golden prompt set identifier (see `evalkit list sets`)")
    parser.add_argument("--provider", metavar="NAME", help="the configured provider instance the run would use (for its baseline)")
    parser.add_argument("--model", metavar="ALIAS", help="the model alias the run would send")
    parser.add_argument("--grader", default="deterministic", metavar="NAME", help="grader (default: deterministic)")
    parser.add_argument("--judge", metavar="NAME", help="the provider instance a judge grader would ask")
    parser.add_argument("--judge-repeats", type=positive_int, metavar="K", help="judge calls per answer (default 1 for a judge grader)")
    parser.add_argument("--repeats", type=positive_int, metavar="N", default=None, help="answers per case (default: [run] repeats, else 1)")
    parser.add_argument("--target-drop", metavar="X", default=None, help="the drop of the pass rate to detect, 0..1 (default: the tolerance)")
    parser.add_argument("--rate", metavar="P", default=None, help="the pass rate to assume when no stored run gives one (default 0.8)")
    from .gate_options import add_gate_options

    add_gate_options(parser)
    parser.add_argument(
        "--max-pass-rate-drop", metavar="X", default=None, help="the pass rate's tolerance (default: [gate], else 0.1)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of lines")
    add_store_options(parser)
    parser.set_defaults(handler=handle)


def _fraction(text: str | None, option: str, *, above_zero: bool = True) -> float | None:
    from ..errors import UsageError
    from ..tolerance import parse_tolerance

    if text is None:
        return None
    value = float(parse_tolerance(text, option))
    if above_zero and value <= 0:
        raise UsageError(f"--{option} must be above 0, got {text!r}")
    return value


def _case_count(golden_set: Any) -> int:
    prompts = golden_set.prompts
    try:
        return len(prompts)
    except TypeError:
        return sum(1 for _ in prompts)


def _stored_rate(args: argparse.Namespace, config: Any, instance: str | None, alias: str | None) -> tuple[float | None, str]:
    """The pass rate of the scope's accepted baseline, else of the set's latest complete run of the
    provider — from a store that exists (a plan never creates one)."""
    from ..baselines import current_baselines
    from ..storage import capabilities, close_repository, missing_store, open_repository
    from .common import database_url

    url = database_url(args, config)
    if missing_store(url) is not None or instance is None:
        return None, ""
    repository = open_repository(url)
    try:
        store = capabilities(repository)
        if store.baselines is not None:
            found = current_baselines(repository, args.set, provider_instance=instance, model_alias=alias, grader=args.grader)
            if found:
                run = found[0].run
                return float(run.pass_rate), f"the accepted baseline, run {run.id}"
        if store.history is not None:
            for run in store.history.recent_runs(args.set, limit=50):
                if run.status.value == "complete" and run.provider_instance == instance and run.answered_count:
                    return float(run.pass_rate), f"the latest complete run, {run.id}"
    finally:
        close_repository(repository)
    return None, ""


def handle(args: argparse.Namespace) -> int:
    """Print the plan; nothing is called, nothing is stored."""
    from .. import registry
    from ..catalog import prompt_set_catalog
    from ..components import JudgeGrader
    from ..config import load_config
    from ..errors import UsageError
    from ..plan_report import plan_for
    from .common import console, print_json
    from .gate_options import gate_of, repeats_of
    from .render import literal

    config = load_config(args.config)
    golden_set = prompt_set_catalog(config=config).get(args.set).set
    factory = registry.load(registry.find("evalkit.graders", args.grader))
    judged = isinstance(factory, type) and issubclass(factory, JudgeGrader)
    if (args.judge or args.judge_repeats) and not judged:
        raise UsageError(f'--judge and --judge-repeats apply to judge graders; "{args.grader}" asks no judge')
    if args.provider is not None and args.provider not in config.providers:
        from ..suggestions import did_you_mean

        raise UsageError(f'--provider "{args.provider}" is not a configured provider instance.{did_you_mean(args.provider, config.providers)}')
    tolerances, gate = gate_of(args, config)
    instance = args.provider
    alias = args.model or (config.providers[instance].model if instance is not None else None)
    rate, source = _stored_rate(args, config, instance, alias)
    if rate is None:
        rate = _fraction(args.rate, "rate", above_zero=False)
        source = "given with --rate" if rate is not None else ""
    plan = plan_for(
        golden_set.identifier,
        _case_count(golden_set),
        repeats=repeats_of(args, config),
        judge_repeats=(args.judge_repeats or 1) if judged else 0,
        rate=rate,
        rate_source=source,
        alpha=gate.alpha,
        gate=gate.method,
        tolerance=float(tolerances.max_pass_rate_drop),
        target_drop=_fraction(args.target_drop, "target-drop"),
    )
    if args.json:
        print_json(plan.as_dict())
        return 0
    out = console()
    for line in plan.lines():
        out.print(literal(line), markup=False)
    for warning in plan.warnings:
        out.print(f"[yellow]warning: {literal(warning)}[/yellow]")
    for note in plan.notes:
        out.print(f"[dim]{literal(note)}[/dim]")
    return 0
