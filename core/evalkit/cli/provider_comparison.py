"""``evalkit run SET --provider a --provider b``: the set once per provider, then side by side.

Each provider's run is an ordinary run — its own scope, baseline, verdict, output and store rows —
made one after the other; then one summary puts them next to each other: the pass rate with its
95 % interval (Wilson), the mean score, the median latency and each run's verdict, and the cases
whose outcome differs between the providers. The command's exit code is the worst of the runs'.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

from ..errors import UsageError
from ..run_figures import rate_text
from .app import Arguments

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ProviderResult", "refuse_single_run_options", "run_each_provider", "summary_document"]

#: Options that name one run, one baseline or one slice: meaningless across several providers.
SINGLE_RUN_OPTIONS = (
    ("run_id", "--run-id"), ("baseline", "--baseline"), ("baseline_file", "--baseline-file"), ("shard", "--shard"), ("resume", "--resume"),
    ("wait", "--wait-for-shards"), ("report", "--report"),
)  # fmt: skip


def refuse_single_run_options(args: Arguments) -> None:
    """A usage error (exit 2, before anything runs) for a provider named twice, or an option that
    names one run (:data:`SINGLE_RUN_OPTIONS`) given with several providers."""
    seen: set[str] = set()
    for provider in args.providers:
        if provider in seen:
            from ..wording import quoted

            raise UsageError(f"--provider {quoted(provider)} is given twice; name each provider once")
        seen.add(provider)
    given = [flag for name, flag in SINGLE_RUN_OPTIONS if getattr(args, name, None) not in (None, False, (), [])]
    if given:
        raise UsageError(
            f"{', '.join(given)} {'names' if len(given) == 1 else 'name'} one run, and {len(args.providers)} providers "
            "make one run each: run each provider on its own for that"
        )


class ProviderResult:
    """One provider's run, as the summary needs it: the provider, the run, its verdict word and
    each case's outcome and latency."""

    def __init__(self, provider: str, outcome: Any, cases: Iterable[Any]) -> None:
        self.provider = provider
        self.run = outcome.run
        self.verdict = outcome.verdict.state
        self.passed: dict[str, bool] = {}
        self.latencies: list[float] = []
        for case in cases:  # read once: a store streams them
            if not case.errored:
                self.passed[case.case_id] = bool(case.passed)
                self.latencies.append(float(case.latency_s))

    @property
    def interval(self) -> tuple[float, float] | None:
        """The pass rate's 95 % Wilson interval (``None`` when nothing was answered)."""
        from ..stats.intervals import wilson_interval

        scored = self.run.scored_count  # the cases the pass rate is over (evalkit.run_figures)
        if not scored:
            return None
        found = wilson_interval(min(self.run.passed_count, scored), scored)
        return found.low, found.high

    @property
    def latency_p50_s(self) -> float | None:
        """The median latency of the answered cases, in seconds."""
        return statistics.median(self.latencies) if self.latencies else None


def run_each_provider(
    args: Arguments,
    run_one: Callable[[Arguments, list[Any] | None], tuple[int, Any]],
    result_of: Callable[[str, Any], ProviderResult],
) -> int:
    """Run the set once per provider of ``args.providers`` (``run_one`` prints each run, or with
    ``--json`` collects its document; ``result_of`` reads a run's cases into a
    :class:`ProviderResult`), then print the side-by-side summary; the worst exit code."""
    from .console import console

    refuse_single_run_options(args)
    documents: list[Any] | None = [] if args.json else None
    results: list[ProviderResult] = []
    codes: list[int] = []
    for number, provider in enumerate(args.providers):
        if number and documents is None:
            console().line()
        one = Arguments(**{**vars(args), "provider": provider, "providers": (provider,)})
        code, outcome = run_one(one, documents)
        codes.append(code)
        results.append(result_of(provider, outcome))
    if documents is not None:
        from .json_output import print_json

        print_json({"runs": documents, "summary": summary_document(args.set, results)})
    else:
        render_summary(console(), args.set, results)
    return max(codes)


def disagreements(results: Sequence[ProviderResult]) -> list[tuple[str, dict[str, bool | None]]]:
    """The cases whose outcome differs between the providers, in the first run's order: each
    case's id and, per provider, passed (``None``: errored or not answered there)."""
    order = list(dict.fromkeys(case_id for result in results for case_id in result.passed))
    found = []
    for case_id in order:
        outcomes = {result.provider: result.passed.get(case_id) for result in results}
        if len(set(outcomes.values())) > 1:
            found.append((case_id, outcomes))
    return found


def summary_document(set_identifier: str, results: Sequence[ProviderResult]) -> dict[str, Any]:
    """The summary as ``--json`` prints it."""
    return {
        "set": set_identifier,
        "providers": [
            {
                "provider": r.provider,
                "run_id": r.run.id,
                "status": r.run.status.value,
                "passed": r.run.passed_count,
                "answered": r.run.answered_count,
                "pass_rate": float(r.run.pass_rate),
                "pass_rate_ci95": list(r.interval) if r.interval is not None else None,
                "mean_score": float(r.run.mean_score),
                "latency_p50_s": r.latency_p50_s,
                "verdict": r.verdict,
            }
            for r in results
        ],
        "disagreements": [{"id": case_id, "passed": outcomes} for case_id, outcomes in disagreements(results)],
    }


def _outcome_word(passed: bool | None) -> str:
    return "pass" if passed else ("FAIL" if passed is False else "—")


def render_summary(out: Any, set_identifier: str, results: Sequence[ProviderResult]) -> None:
    """The side-by-side summary for people."""
    from ..wording import counted
    from .layout import Column, print_rows

    out.line()
    out.line("[bold]Side by side: {set}[/bold]  ({providers})", set=set_identifier, providers=counted(len(results), "provider"))
    columns = (
        Column("Provider", whole=True, primary=True), Column("Run", whole=True), Column("Pass rate", "right", whole=True),
        Column("95% interval", "right", whole=True), Column("Mean score", "right", whole=True),
        Column("Latency p50 (ms)", "right", whole=True), Column("Verdict", whole=True),
    )  # fmt: skip
    rows = []
    for r in results:
        interval = r.interval
        rows.append([
            r.provider, r.run.id, rate_text(r.run),
            f"{interval[0] * 100:.1f}–{interval[1] * 100:.1f}%" if interval is not None else "—",
            f"{r.run.mean_score:.3f}", f"{r.latency_p50_s * 1000:.0f}" if r.latency_p50_s is not None else "—", r.verdict,
        ])  # fmt: skip
    print_rows(out, columns, rows)
    differing = disagreements(results)
    if not differing:
        out.print("The providers agree on every case.")
        return
    out.print(f"Cases where they disagree: {len(differing)}")
    for case_id, outcomes in differing:
        out.print(f"  - {case_id}: " + " · ".join(f"{provider} {_outcome_word(passed)}" for provider, passed in outcomes.items()))
