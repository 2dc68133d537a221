"""Comparing a run with its baseline: aggregate tolerances, per-case flips and their weight."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from math import comb

import attrs

from .runs import CaseResult, Run
from .tolerance import Tolerances

__all__ = ["Comparison", "compare", "mcnemar_exact_p", "exact_score"]


def exact_score(value: float) -> Fraction:
    """A stored float score as the small fraction it came from (1/3 stays 1/3, 0.7 stays 7/10)."""
    return Fraction(value).limit_denominator(1_000_000)


def mcnemar_exact_p(regressed: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value for ``regressed`` vs ``fixed`` flipped cases (1.0 if none)."""
    n = regressed + fixed
    if n == 0:
        return 1.0
    k = min(regressed, fixed)
    tail = sum(comb(n, i) for i in range(k + 1))
    return min(1.0, float(Fraction(2 * tail, 2**n)))


@attrs.frozen
class Comparison:
    """The verdict of one run against its baseline."""

    baseline_id: str
    pass_rate_delta: Fraction
    mean_score_delta: Fraction
    pass_rate_regressed: bool
    mean_score_regressed: bool
    regressed_cases: tuple[str, ...]
    fixed_cases: tuple[str, ...]
    still_failing: tuple[str, ...]
    added_cases: tuple[str, ...]
    removed_cases: tuple[str, ...]
    mcnemar_p: float
    #: Cases the judge disagreed with itself on, in either run: left out of both sides.
    unstable_cases: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        """True when either aggregate dropped beyond its tolerance."""
        return self.pass_rate_regressed or self.mean_score_regressed

    def summary(self, pass_name: str = "pass rate", mean_name: str = "mean score", mean_in_points: bool = False) -> str:
        """One sentence, as the CLI prints it; retrieval names the rates after hits, in points."""

        def mean(delta: Fraction, signed: str) -> str:
            return f"{float(delta) * 100:{signed}.1f} pp" if mean_in_points else f"{float(delta):{signed}.3f}"

        if not self.regressed:
            return (
                f"No regression: {pass_name} {float(self.pass_rate_delta) * 100:+.1f} pp, "
                f"{mean_name} {mean(self.mean_score_delta, '+')} versus run {self.baseline_id}."
            )
        parts = []
        if self.pass_rate_regressed:
            parts.append(f"{pass_name} dropped {float(-self.pass_rate_delta) * 100:.1f} pp")
        if self.mean_score_regressed:
            parts.append(f"{mean_name} dropped {mean(-self.mean_score_delta, '')}")
        return f"Regression: {' and '.join(parts)} beyond the configured tolerance (baseline run {self.baseline_id})."


def _rate_and_mean(cases: Sequence[CaseResult]) -> tuple[Fraction, Fraction]:
    if not cases:
        return Fraction(0), Fraction(0)
    passed = sum(1 for c in cases if c.passed)
    return Fraction(passed, len(cases)), exact_score(math.fsum(c.score for c in cases) / len(cases))


def compare(current: Run, baseline: Run, tolerances: Tolerances) -> Comparison:
    """Compare ``current`` with ``baseline``; a drop equal to its tolerance is accepted.

    A case the judge disagreed with itself on (``CaseResult.unstable``) in either run is left out
    of both runs' aggregates and of the flipped cases, so a coin-flip verdict cannot flip a gate.
    """
    unstable = tuple(dict.fromkeys(c.case_id for run in (current, baseline) for c in run.cases if c.unstable))
    left_out = set(unstable)
    if unstable:
        current_rate, current_mean = _rate_and_mean([c for c in current.cases if c.case_id not in left_out])
        baseline_rate, baseline_mean = _rate_and_mean([c for c in baseline.cases if c.case_id not in left_out])
        pass_delta = current_rate - baseline_rate
        mean_delta = current_mean - baseline_mean
    else:
        pass_delta = current.pass_rate - baseline.pass_rate
        mean_delta = exact_score(current.mean_score) - exact_score(baseline.mean_score)
    before = {cid: case for cid, case in baseline.case_map().items() if cid not in left_out}
    after = {cid: case for cid, case in current.case_map().items() if cid not in left_out}
    regressed = tuple(cid for cid, case in after.items() if cid in before and before[cid].passed and not case.passed)
    fixed = tuple(cid for cid, case in after.items() if cid in before and not before[cid].passed and case.passed)
    still = tuple(cid for cid, case in after.items() if cid in before and not before[cid].passed and not case.passed)
    added = tuple(cid for cid in after if cid not in before)
    removed = tuple(cid for cid in before if cid not in after)
    return Comparison(
        baseline_id=baseline.id,
        pass_rate_delta=pass_delta,
        mean_score_delta=mean_delta,
        pass_rate_regressed=-pass_delta > tolerances.max_pass_rate_drop,
        mean_score_regressed=-mean_delta > tolerances.max_mean_score_drop,
        regressed_cases=regressed,
        fixed_cases=fixed,
        still_failing=still,
        added_cases=added,
        removed_cases=removed,
        mcnemar_p=mcnemar_exact_p(len(regressed), len(fixed)),
        unstable_cases=unstable,
    )
