"""The three-state decision of a paired gate: regressed, no regression, or inconclusive.

For each gated metric, with its paired ``delta`` (run minus baseline), the two-sided ``1 − 2α``
interval of the delta (whose ends are one-sided ``1 − α`` bounds), the one-sided p-value for a
drop and a tolerance ``δ >= 0`` (the largest acceptable drop):

* **regressed** — the drop is significant at ``α`` (after Holm's correction across the gated
  metrics) *and* larger than ``δ``;
* **no regression** — the interval shows the drop is at most ``δ``: the largest drop it allows,
  ``−low``, is within the tolerance (a non-inferiority statement: the logic of Schuirmann's two
  one-sided tests, Schuirmann 1987, J. Pharmacokinet. Biopharm. 15:657–680);
* **inconclusive** — neither: the set cannot tell the change from noise.

The gate as a whole is regressed when any metric is, no regression when every metric is, and
inconclusive otherwise.

What is corrected: a false "regressed" on *any* of ``m`` metrics is the error a team pays for, so
the ``m`` tests for a drop are one family, and Holm's step-down procedure (Holm 1979, Scand. J.
Statist. 6:65–70) keeps the chance of any false alarm at most ``α`` when nothing changed, whatever
the dependence between the metrics. "No regression" needs every metric shown within its
tolerance: an intersection–union test, which is level ``α`` without any correction (Berger 1982,
Technometrics 24:295–300), so the intervals stay at ``1 − 2α``.

A drop equal to its tolerance is not larger than it: exactly so when both are exact fractions
(:class:`fractions.Fraction` or ``int``), and within 1e-12 when either is a float.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from fractions import Fraction

import attrs

from . import _checks
from .intervals import Interval

__all__ = [
    "GateDecision",
    "GateState",
    "MetricDecision",
    "MetricEvidence",
    "decide",
    "decide_metric",
    "decision_confidence",
    "holm_adjusted",
]

#: A float drop within this of the tolerance counts as equal to it (rounding, not a regression).
_FLOAT_SLACK = 1e-12


class GateState(str, enum.Enum):
    """A gate's verdict on the statistics (``not_comparable`` and ``baseline`` belong to the
    lifecycle, which decides whether there is anything to compare)."""

    REGRESSED = "regressed"
    NO_REGRESSION = "no_regression"
    INCONCLUSIVE = "inconclusive"


def decision_confidence(alpha: float) -> float:
    """The two-sided confidence level whose ends are one-sided ``1 − α`` bounds: ``1 − 2α``
    (0.90 for ``α = 0.05``)."""
    return 1 - 2 * _checks.alpha_level(alpha)


@attrs.frozen
class MetricEvidence:
    """What the decision needs about one gated metric.

    ``interval`` is the two-sided interval of ``delta`` at ``1 − 2α``
    (:func:`decision_confidence`); ``p_drop`` is the one-sided p-value of "no drop";
    ``tolerance`` the largest acceptable drop (``δ >= 0``). ``delta`` and ``tolerance`` may be
    exact fractions.
    """

    name: str
    delta: float | Fraction
    interval: Interval
    p_drop: float
    tolerance: float | Fraction


@attrs.frozen
class MetricDecision:
    """One metric's state, with the figures behind it and a sentence that says why.

    ``p_adjusted`` is ``p_drop`` after Holm's correction (equal to it with one metric);
    ``drop_bound`` the largest drop the interval allows (``−interval.low``).
    """

    name: str
    state: GateState
    delta: float | Fraction
    tolerance: float | Fraction
    p_drop: float
    p_adjusted: float
    drop_bound: float
    reason: str


@attrs.frozen
class GateDecision:
    """The gate's state over its metrics, decided at ``alpha`` with Holm's correction."""

    state: GateState
    alpha: float
    metrics: tuple[MetricDecision, ...]

    @property
    def regressed(self) -> tuple[MetricDecision, ...]:
        """The metrics that regressed."""
        return tuple(m for m in self.metrics if m.state is GateState.REGRESSED)


def holm_adjusted(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm's (1979) step-down adjusted p-values, in the order given: sorted ascending, the
    ``j``-th smallest becomes ``max over i <= j of min(1, (m − i + 1) p_(i))``. A hypothesis is
    rejected at family-wise level ``α`` when its adjusted p-value is at most ``α``."""
    checked = []
    for index, p in enumerate(p_values):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise _checks.StatisticsInputError(f"p_values[{index}] is {p!r}, not a probability in [0, 1]")
        checked.append(float(p))
    m = len(checked)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=checked.__getitem__)):
        running = max(running, min(1.0, (m - rank) * checked[index]))
        adjusted[index] = running
    return tuple(adjusted)


def _exceeds(drop: float | Fraction, tolerance: float | Fraction) -> bool:
    """``drop > tolerance``: exactly for exact numbers, beyond rounding for floats."""
    if isinstance(drop, (int, Fraction)) and isinstance(tolerance, (int, Fraction)):
        return drop > tolerance
    return float(drop) > float(tolerance) + _FLOAT_SLACK


def _check(evidence: MetricEvidence, confidence: float) -> None:
    _checks.tolerance(evidence.tolerance)
    if not math.isclose(evidence.interval.confidence, confidence, abs_tol=1e-9):
        raise _checks.StatisticsInputError(
            f"{evidence.name}: the decision reads the {confidence:.0%} interval (one-sided bounds at 1 − alpha); "
            f"got a {evidence.interval.confidence:.0%} interval"
        )
    if not 0 <= evidence.p_drop <= 1:
        raise _checks.StatisticsInputError(f"{evidence.name}: p_drop is {evidence.p_drop!r}, not a probability")


def decide_metric(evidence: MetricEvidence, alpha: float = 0.05, p_adjusted: float | None = None) -> MetricDecision:
    """One metric's state at ``alpha`` (``p_adjusted``: its p-value after a correction, when it
    is one of several)."""
    alpha = _checks.alpha_level(alpha)
    _check(evidence, decision_confidence(alpha))
    p = evidence.p_drop if p_adjusted is None else p_adjusted
    drop = -evidence.delta
    bound = -evidence.interval.low
    tolerance = evidence.tolerance
    adjusted = "" if p_adjusted is None or p_adjusted == evidence.p_drop else ", Holm-adjusted"
    if p <= alpha and _exceeds(drop, tolerance):
        state = GateState.REGRESSED
        reason = (
            f"{evidence.name} dropped {float(drop):.3f}, more than the tolerance {float(tolerance):.3f}, "
            f"and the drop is significant (p = {p:.3g}{adjusted}, alpha {alpha:g})"
        )
    elif not _exceeds(bound, tolerance):
        state = GateState.NO_REGRESSION
        within = "no drop at all" if bound <= 0 else f"a drop of at most {bound:.3f}"
        reason = (
            f"{evidence.name}: the interval allows {within}, within the tolerance {float(tolerance):.3f}"
        )
    else:
        state = GateState.INCONCLUSIVE
        why = "not significant" if p > alpha else f"not larger than the tolerance {float(tolerance):.3f}"
        reason = (
            f"{evidence.name}: change {float(evidence.delta):+.3f} is {why} (p = {p:.3g}{adjusted}), but the interval "
            f"allows a drop of up to {bound:.3f}, beyond the tolerance {float(tolerance):.3f}: the set cannot tell"
        )
    return MetricDecision(evidence.name, state, evidence.delta, tolerance, evidence.p_drop, p, bound, reason)


def decide(evidence: Sequence[MetricEvidence], alpha: float = 0.05) -> GateDecision:
    """The gate's state over its metrics at ``alpha``: the drop tests are Holm-corrected across
    the metrics; see the module docstring for what each state means."""
    alpha = _checks.alpha_level(alpha)
    if not evidence:
        raise _checks.StatisticsInputError("no gated metric: a decision needs at least one")
    names = [e.name for e in evidence]
    if len(set(names)) != len(names):
        raise _checks.StatisticsInputError(f"each gated metric once: {names}")
    adjusted = holm_adjusted([e.p_drop for e in evidence]) if len(evidence) > 1 else (None,)
    metrics = tuple(decide_metric(e, alpha, p) for e, p in zip(evidence, adjusted, strict=True))
    states = {m.state for m in metrics}
    if GateState.REGRESSED in states:
        state = GateState.REGRESSED
    elif states == {GateState.NO_REGRESSION}:
        state = GateState.NO_REGRESSION
    else:
        state = GateState.INCONCLUSIVE
    return GateDecision(state, alpha, metrics)
