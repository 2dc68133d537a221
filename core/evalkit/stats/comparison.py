"""One gated metric compared on paired cases: every figure a verdict prints for it, and the
evidence its decision reads.

* :func:`compare_pass_rates` — pass/fail outcomes, one answer per case: Newcombe's interval,
  the exact McNemar test, and the minimum detectable drop of the exact test at the baseline
  rate (or, given earlier unchanged runs, of the normal formula with their noise).
* :func:`compare_values` — values in [0, 1] (mean scores, pass fractions under repeats,
  per-question retrieval metrics): the paired t interval (or the seeded BCa bootstrap) and the
  paired t test (or the seeded sign-flip test, as retrieval practice recommends), with the
  minimum detectable drop of the normal formula.

Both give a 95 % interval for the report (``ci95``) and a ``1 − 2α`` interval for the decision
(:mod:`evalkit.stats.gate`), from the same data and the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Literal

import attrs

from . import _checks
from .binary import PairedBinary, mcnemar_drop_p, newcombe_interval, paired_binary
from .distributions import student_t_cdf
from .gate import MetricEvidence, decision_confidence
from .intervals import Interval
from .means import PairedMean, paired_fractions, paired_t_from_differences
from .power import (
    DetectableDrop,
    NoiseEstimate,
    choose_noise,
    mcnemar_detectable_drop,
    minimum_detectable_drop,
    noise_from_rate,
)
from .resampling import bootstrap_intervals, sign_flip_from_differences

__all__ = ["MetricComparison", "StatisticsSettings", "compare_pass_rates", "compare_values", "t_rise"]


def _alpha(value: object) -> float:
    return _checks.alpha_level(value)


@attrs.frozen
class StatisticsSettings:
    """How a verdict's statistics are computed: the gate's ``alpha`` and the ``power`` its
    minimum detectable drop promises; for values in [0, 1] the ``interval`` (``t`` or the
    ``bootstrap``) and the ``test`` (``t`` or ``sign_flip``, as retrieval practice recommends);
    the ``seed`` of every resampling, and how many bootstrap ``resamples`` and sign-flip
    ``samples`` to draw."""

    alpha: float = attrs.field(default=0.05, converter=_alpha)
    power: float = 0.8
    interval: Literal["t", "bootstrap"] = "t"
    test: Literal["t", "sign_flip"] = "t"
    seed: int = 0
    resamples: int = 2_000
    samples: int = 10_000

    def __attrs_post_init__(self) -> None:
        _checks.probability(self.power, "power")
        if self.interval not in ("t", "bootstrap"):
            raise _checks.StatisticsInputError(f"interval is {self.interval!r}: 't' or 'bootstrap'")
        if self.test not in ("t", "sign_flip"):
            raise _checks.StatisticsInputError(f"test is {self.test!r}: 't' or 'sign_flip'")
        _checks.seed(self.seed)
        _checks.count(self.resamples, "resamples", minimum=1)
        _checks.count(self.samples, "samples", minimum=1)


@attrs.frozen
class MetricComparison:
    """One metric of a run against its baseline on ``n`` paired cases.

    ``baseline`` and ``value`` are the two sides (fractions), ``delta`` = ``value − baseline``
    (a drop is negative; ``exact_delta`` is the same as a fraction when it is one, for pass
    rates); ``ci95`` the 95 % interval of the delta for the report and ``decision_interval`` the
    ``1 − 2α`` one the decision reads; ``p_value`` is two-sided, ``p_drop`` one-sided for a drop
    and ``p_rise`` one-sided for a rise (what "significantly better" reads); ``detectable`` is the
    minimum detectable drop; ``method`` names the interval and the test.
    """

    name: str
    n: int
    baseline: float
    value: float
    delta: float
    ci95: Interval
    decision_interval: Interval
    p_value: float
    p_drop: float
    detectable: DetectableDrop
    tolerance: float | Fraction
    method: str
    exact_delta: Fraction | None = None
    p_rise: float = 1.0

    @property
    def evidence(self) -> MetricEvidence:
        """What :func:`~evalkit.stats.gate.decide` needs about this metric."""
        delta = self.exact_delta if self.exact_delta is not None else self.delta
        return MetricEvidence(self.name, delta, self.decision_interval, self.p_drop, self.tolerance)

    @property
    def tolerance_below_detectable(self) -> bool:
        """Whether the tolerance is smaller than the drop this set can detect: a promise it
        cannot keep (say so, and what would: more cases or more repeats)."""
        return float(self.tolerance) < self.detectable.drop

    def as_dict(self) -> dict[str, object]:
        """The metric as a verdict's ``--json`` writes it: ``baseline``, ``value``, ``delta``,
        ``ci95``, ``p_value``, ``minimum_detectable_drop``, ``tolerance`` (fractions)."""
        return {
            "baseline": self.baseline,
            "value": self.value,
            "delta": self.delta,
            "ci95": self.ci95.as_list(),
            "p_value": self.p_value,
            "minimum_detectable_drop": self.detectable.drop,
            "tolerance": float(self.tolerance),
        }


def compare_pass_rates(
    baseline: Sequence[object],
    current: Sequence[object],
    *,
    tolerance: float | Fraction,
    settings: StatisticsSettings | None = None,
    name: str = "pass_rate",
    noise: NoiseEstimate | None = None,
) -> MetricComparison:
    """The pass rate of a run against its baseline on the same cases (pass/fail, one answer
    each: ``baseline[i]`` and ``current[i]`` are case ``i``).

    The minimum detectable drop is the exact McNemar test's at the baseline rate
    (:func:`~evalkit.stats.power.mcnemar_detectable_drop`), or, when ``noise`` measured on
    earlier unchanged runs is given, the normal formula with that noise and the whole-case floor.
    """
    settings = settings or StatisticsSettings()
    tolerance = _checks.tolerance(tolerance)
    report = paired_binary(baseline, current, 0.95)
    chosen = choose_noise(noise)
    if chosen is None:
        detectable = mcnemar_detectable_drop(report.n, report.baseline_rate, alpha=settings.alpha, power=settings.power)
    else:
        detectable = minimum_detectable_drop(chosen, report.n, alpha=settings.alpha, power=settings.power, whole_cases=True)
    return binary_comparison(name, report, settings, tolerance, detectable)


def binary_comparison(
    name: str, report: PairedBinary, settings: StatisticsSettings, tolerance: Fraction, detectable: float
) -> MetricComparison:
    """A pass/fail metric's comparison from its paired 2×2 table ``report``: the Newcombe interval
    at the gate's confidence, the exact McNemar p-values both ways, and the ``detectable`` drop the
    caller chose (the one place both the pass rate and the stored verdict's columns build it)."""
    decision = newcombe_interval(
        report.both_passed, report.regressed, report.fixed, report.both_failed, decision_confidence(settings.alpha)
    )
    return MetricComparison(
        name=name,
        n=report.n,
        baseline=report.baseline_rate,
        value=report.rate,
        delta=report.delta,
        ci95=report.interval,
        decision_interval=decision,
        p_value=report.p_value,
        p_drop=report.p_drop,
        detectable=detectable,
        tolerance=tolerance,
        method="newcombe interval, exact McNemar test",
        exact_delta=report.exact_delta,
        p_rise=mcnemar_drop_p(report.fixed, report.regressed),
    )


def compare_values(
    baseline: Sequence[object],
    current: Sequence[object],
    *,
    tolerance: float | Fraction,
    settings: StatisticsSettings | None = None,
    name: str = "mean_score",
    repeats: int = 1,
    noise: NoiseEstimate | None = None,
) -> MetricComparison:
    """A metric of values in [0, 1] (a case's score, pass fraction over ``repeats`` answers, or a
    question's retrieval metric) of a run against its baseline on the same cases.

    ``settings.interval``: the paired t interval, or the seeded BCa bootstrap; ``settings.test``:
    the paired t test, or the seeded sign-flip randomization test. The minimum detectable drop uses the best
    noise available: ``noise`` (earlier unchanged runs, or repeats), else the spread of the
    paired differences at hand, else the conservative bound at the baseline mean.
    """
    settings = settings or StatisticsSettings()
    tolerance = _checks.tolerance(tolerance)
    repeats = _checks.count(repeats, "repeats", minimum=1)
    interval, test = settings.interval, settings.test
    before, after = paired_fractions(baseline, current)
    n = len(before)
    means = (math.fsum(before) / n, math.fsum(after) / n)
    diffs = [now - then for then, now in zip(before, after, strict=True)]
    t_report = paired_t_from_differences(diffs, 0.95, means)
    if interval == "t":
        ci95 = t_report.interval
        decision = paired_t_from_differences(diffs, decision_confidence(settings.alpha)).interval
    else:  # both levels read from the same resamples
        levels = (0.95, decision_confidence(settings.alpha))
        report, at_decision = bootstrap_intervals(diffs, levels, resamples=settings.resamples, seed=settings.seed)
        ci95, decision = report.interval, at_decision.interval
    if test == "t":
        p_value, p_drop = t_report.p_value, t_report.p_drop
        p_rise = t_rise(t_report)
    else:
        flip = sign_flip_from_differences(diffs, samples=settings.samples, seed=settings.seed)
        p_value, p_drop = flip.p_value, flip.p_drop
        p_rise = sign_flip_from_differences([-d for d in diffs], samples=settings.samples, seed=settings.seed).p_drop
    # the spread the t interval measured, per answer (the same as noise_from_differences, once)
    observed = None if t_report.sd is None else NoiseEstimate(t_report.sd**2 * repeats, repeats, "observed", n)
    chosen = choose_noise(noise, observed, noise_from_rate(min(1.0, max(0.0, means[0])), repeats))
    assert chosen is not None
    detectable = minimum_detectable_drop(chosen, n, alpha=settings.alpha, power=settings.power)
    method = f"{'paired t' if interval == 't' else 'BCa bootstrap'} interval, {'paired t' if test == 't' else 'sign-flip'} test"
    return MetricComparison(
        name=name,
        n=n,
        baseline=means[0],
        value=means[1],
        delta=t_report.delta,
        ci95=ci95,
        decision_interval=decision,
        p_value=p_value,
        p_drop=p_drop,
        detectable=detectable,
        tolerance=tolerance,
        method=method,
        p_rise=p_rise,
    )


def t_rise(report: PairedMean) -> float:
    """The one-sided p-value of the paired t test for a rise (the mirror of ``p_drop``): ``P(T >= t)``
    (with no spread: 0 for a rise, else 1; one case: 1)."""
    if report.t is None:
        if report.n == 1 or report.sd is None:
            return 1.0
        return 0.0 if report.delta > 0 else 1.0
    return student_t_cdf(-report.t, report.df)
