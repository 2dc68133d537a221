"""Comparing a run with its baseline: aggregate tolerances, per-case flips and their weight."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import attrs

from .runs import Run
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

    @property
    def regressed(self) -> bool:
        """True when either aggregate dropped beyond its tolerance."""
        return self.pass_rate_regressed or self.mean_score_regressed

    def summary(self) -> str:
        """One sentence, as the CLI prints it."""
        if not self.regressed:
            return (
                f"No regression: pass rate {float(self.pass_rate_delta) * 100:+.1f} pp, "
                f"mean score {float(self.mean_score_delta):+.3f} versus run {self.baseline_id}."
            )
        parts = []
        if self.pass_rate_regressed:
            parts.append(f"pass rate dropped {float(-self.pass_rate_delta) * 100:.1f} pp")
        if self.mean_score_regressed:
            parts.append(f"mean score dropped {float(-self.mean_score_delta):.3f}")
        return f"Regression: {' and '.join(parts)} beyond the configured tolerance (baseline run {self.baseline_id})."


def compare(current: Run, baseline: Run, tolerances: Tolerances) -> Comparison:
    """Compare ``current`` with ``baseline``; a drop equal to its tolerance is accepted."""
    pass_delta = current.pass_rate - baseline.pass_rate
    mean_delta = exact_score(current.mean_score) - exact_score(baseline.mean_score)
    before = baseline.case_map()
    after = current.case_map()
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
    )
