"""The uncertainty of a comparison: for each metric of a run and its baseline, the paired delta with
its 95 % interval, the p-values, the minimum detectable drop — and the paired gate's decision.

A comparison (:func:`evalkit.verdict.compare_pairs`) collects, case by case, each metric's value in
both runs into a :class:`PairedColumn`; :func:`measure` turns a column into the figures of
:class:`~evalkit.stats.MetricComparison` with the methods of :mod:`evalkit.stats`:

* pass/fail outcomes (one answer per case, every value 0 or 1): Newcombe's interval and the exact
  McNemar test, from the 2×2 table; the minimum detectable drop is the exact McNemar test's
  (:func:`~evalkit.stats.mcnemar_detectable_drop`), which the pass rate's tolerance is held to;
* values in [0, 1] (mean scores, pass fractions under ``--repeats`` or judge repeats, per-question
  retrieval metrics): Student's paired t interval and test — for retrieval runs the seeded
  sign-flip randomization test, as IR practice recommends — and the normal formula's minimum
  detectable drop with the best noise measured.

**Large sets.** From :data:`LARGE_SET` paired cases on, the normal approximations replace the
exact computations whose cost grows with the set: Connor's approximation of the McNemar test's
detectable drop (it agrees with the exact sum to 0.001 from 2,000 cases) and the paired t test in
place of the sign-flip test (they agree closely on large sets: Smucker, Allan & Carterette 2007).
The exact McNemar p-value itself is kept at every size. So a 100,000-question verdict costs a few
hundredths of a second per metric.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from fractions import Fraction
from operator import mul, sub

import attrs

from .stats import (
    GateDecision,
    MetricComparison,
    NoiseEstimate,
    StatisticsSettings,
    choose_noise,
    connor_detectable_drop,
    decide,
    holm_adjusted,
    mcnemar_detectable_drop,
    minimum_detectable_drop,
    noise_from_rate,
    paired_binary_counts,
)
from .stats.comparison import binary_comparison
from .stats.distributions import student_t_cdf, student_t_quantile
from .stats.gate import decision_confidence
from .stats.intervals import Interval
from .stats.resampling import sign_flip_from_differences

__all__ = [
    "LARGE_SET",
    "MetricSpec",
    "PairedColumn",
    "decide_gate",
    "measure",
    "significantly_better",
]

#: From this many paired cases the normal approximations replace the exact computations whose
#: cost grows with the set (see the module docstring).
LARGE_SET = 5_000


@attrs.frozen
class MetricSpec:
    """One metric a comparison measures: its ``name`` (the ``--json`` key), the words a report
    uses (``label``), whether it is a rate shown in points (``percent``), whether its per-case
    values may be compared as pass/fail outcomes (``binary``: the exact tests) and its
    ``tolerance`` (``None``: measured and reported, not gated)."""

    name: str
    label: str
    percent: bool = True
    binary: bool = False
    tolerance: Fraction | None = None

    @property
    def gated(self) -> bool:
        """True when the gate reads this metric."""
        return self.tolerance is not None


@attrs.define
class PairedColumn:
    """One metric's values of the compared cases, in both runs, case by case (``before`` the
    baseline's). ``outcomes`` stays true while every value is 0 or 1."""

    before: array = attrs.Factory(lambda: array("d"))
    after: array = attrs.Factory(lambda: array("d"))
    outcomes: bool = True

    def add(self, then: float, now: float) -> None:
        """One more compared case."""
        self.before.append(then)
        self.after.append(now)
        if self.outcomes and not (then in (0.0, 1.0) and now in (0.0, 1.0)):
            self.outcomes = False

    def __len__(self) -> int:
        return len(self.before)


def _binary(spec: MetricSpec, column: PairedColumn, settings: StatisticsSettings, tolerance: Fraction) -> MetricComparison:
    """Pass/fail outcomes from their 2×2 table."""
    before, after = column.before, column.after
    n = len(before)
    both = round(math.fsum(map(mul, before, after)))
    regressed = round(math.fsum(before)) - both
    fixed = round(math.fsum(after)) - both
    report = paired_binary_counts(both, regressed, fixed, n - both - regressed - fixed, 0.95)
    if n < LARGE_SET:
        detectable = mcnemar_detectable_drop(n, report.baseline_rate, alpha=settings.alpha, power=settings.power)
    else:
        detectable = connor_detectable_drop(n, report.baseline_rate, alpha=settings.alpha, power=settings.power)
    return binary_comparison(spec.name, report, settings, tolerance, detectable)


def _t_interval(delta: float, se: float, df: int, confidence: float) -> Interval:
    half = student_t_quantile(0.5 + confidence / 2, df) * se
    return Interval(max(-1.0, delta - half), min(1.0, delta + half), confidence)


def _values(
    spec: MetricSpec,
    column: PairedColumn,
    settings: StatisticsSettings,
    tolerance: Fraction,
    repeats: int,
    noise: NoiseEstimate | None,
) -> MetricComparison:
    """Values in [0, 1]: the paired t interval (and test, or the sign-flip test), in one pass."""
    before, after = column.before, column.after
    n = len(before)
    diffs = array("d", map(sub, after, before))
    baseline_mean, mean = math.fsum(before) / n, math.fsum(after) / n
    delta = math.fsum(diffs) / n
    decision_level = decision_confidence(settings.alpha)
    sd = None
    if n == 1:
        ci95, decision = Interval(-1.0, 1.0, 0.95), Interval(-1.0, 1.0, decision_level)
        p_value = p_drop = p_rise = 1.0
    else:
        first = diffs[0]
        if all(d == first for d in diffs):
            sd, delta = 0.0, first
        else:
            sd = math.sqrt(max(0.0, math.fsum(map(mul, diffs, diffs)) - n * delta * delta) / (n - 1))
        se = sd / math.sqrt(n)
        if se == 0:
            ci95, decision = Interval(delta, delta, 0.95), Interval(delta, delta, decision_level)
            p_value, p_drop, p_rise = (1.0, 1.0, 1.0) if delta == 0 else (0.0, float(delta > 0), float(delta < 0))
        else:
            ci95, decision = _t_interval(delta, se, n - 1, 0.95), _t_interval(delta, se, n - 1, decision_level)
            t = delta / se
            p_value = min(1.0, 2 * student_t_cdf(-abs(t), n - 1))
            p_drop, p_rise = student_t_cdf(t, n - 1), student_t_cdf(-t, n - 1)
    test = "paired t"
    if settings.test == "sign_flip" and 1 < n < LARGE_SET:
        flip = sign_flip_from_differences(diffs, samples=settings.samples, seed=settings.seed)
        rise = sign_flip_from_differences([-d for d in diffs], samples=settings.samples, seed=settings.seed)
        p_value, p_drop, p_rise, test = flip.p_value, flip.p_drop, rise.p_drop, "sign-flip"
    observed = None if not sd else NoiseEstimate(sd * sd * repeats, repeats, "observed", n)
    chosen = choose_noise(noise, observed, noise_from_rate(min(1.0, max(0.0, baseline_mean)), repeats))
    assert chosen is not None
    detectable = minimum_detectable_drop(chosen, n, alpha=settings.alpha, power=settings.power)
    return MetricComparison(
        name=spec.name,
        n=n,
        baseline=baseline_mean,
        value=mean,
        delta=delta,
        ci95=ci95,
        decision_interval=decision,
        p_value=p_value,
        p_drop=p_drop,
        detectable=detectable,
        tolerance=tolerance,
        method=f"paired t interval, {test} test",
        p_rise=p_rise,
    )


def measure(
    spec: MetricSpec,
    column: PairedColumn,
    settings: StatisticsSettings,
    *,
    repeats: int = 1,
    noise: NoiseEstimate | None = None,
) -> MetricComparison | None:
    """The figures of one metric over its compared cases (``None`` when no case was compared).

    Pass/fail outcomes (``spec.binary``, one answer per case, every value 0 or 1) get the exact
    McNemar test; anything else the paired t (or sign-flip) test. ``repeats`` is how many answers
    each case's value averages; ``noise`` a measured noise that beats the one observed here (a
    run's repeats). An ungated metric is measured against a tolerance of 0 (its drop tests and
    detectable drop do not depend on it; :func:`decide_gate` never reads it).
    """
    if not len(column):
        return None
    tolerance = spec.tolerance if spec.tolerance is not None else Fraction(0)
    if spec.binary and repeats == 1 and column.outcomes:
        return _binary(spec, column, settings, tolerance)
    return _values(spec, column, settings, tolerance, repeats, noise)


def decide_gate(statistics: Sequence[MetricComparison], specs: Sequence[MetricSpec], alpha: float) -> GateDecision | None:
    """The paired gate's decision over the gated metrics (Holm-corrected across them), ``None``
    when no gated metric was measured (nothing compared)."""
    gated = {spec.name for spec in specs if spec.gated}
    evidence = [m.evidence for m in statistics if m.name in gated]
    return decide(evidence, alpha) if evidence else None


def significantly_better(
    statistics: Sequence[MetricComparison], specs: Sequence[MetricSpec], alpha: float
) -> tuple[bool, str]:
    """Whether the run is significantly better than its baseline and worse on no gated metric —
    the only way a run that is not the first of its scope becomes its baseline by itself — and
    the sentence that says why or why not.

    Significantly better: the one-sided paired test of a rise holds at ``alpha`` for at least one
    gated metric, after Holm's correction across the gated metrics (a lucky run among several
    metrics must not ratchet the bar up). Worse: any gated metric whose delta is below 0.
    """
    gated = {spec.name for spec in specs if spec.gated}
    measured = [m for m in statistics if m.name in gated]
    if not measured:
        return False, "nothing gated was compared"
    worse = [m.name for m in measured if (m.exact_delta if m.exact_delta is not None else m.delta) < 0]
    if worse:
        return False, f"it is worse than the baseline on {', '.join(worse)}"
    adjusted = holm_adjusted([m.p_rise for m in measured]) if len(measured) > 1 else (measured[0].p_rise,)
    better = [m.name for m, p in zip(measured, adjusted, strict=True) if p <= alpha]
    if not better:
        best = min(adjusted)
        return False, f"it is not significantly better than the baseline (smallest p for a rise {best:.3g}, alpha {alpha:g})"
    return True, f"significantly better than the baseline on {', '.join(better)} (alpha {alpha:g})"
