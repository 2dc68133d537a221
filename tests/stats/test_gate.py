"""The three-state paired gate and Holm's correction across its metrics."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from evalkit.stats import (
    GateState,
    Interval,
    MetricEvidence,
    StatisticsInputError,
    decide,
    decide_metric,
    decision_confidence,
    holm_adjusted,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests


def evidence(delta: float | Fraction, low: float, high: float, p_drop: float, tolerance: float | Fraction = 0.1, name: str = "pass_rate") -> MetricEvidence:
    return MetricEvidence(name, delta, Interval(low, high, 0.9), p_drop, tolerance)


def test_decision_confidence_is_one_minus_two_alpha() -> None:
    assert decision_confidence(0.05) == pytest.approx(0.9)
    assert decision_confidence(0.025) == pytest.approx(0.95)


def test_a_significant_drop_beyond_the_tolerance_regressed() -> None:
    result = decide_metric(evidence(-0.2, -0.3, -0.1, 0.001))
    assert result.state is GateState.REGRESSED
    assert result.reason == "pass_rate dropped 0.200, more than the tolerance 0.100, and the drop is significant (p = 0.001, alpha 0.05)"


def test_a_drop_shown_within_the_tolerance_is_no_regression() -> None:
    result = decide_metric(evidence(-0.02, -0.08, 0.04, 0.3))
    assert result.state is GateState.NO_REGRESSION and result.drop_bound == pytest.approx(0.08)
    assert "a drop of at most 0.080, within the tolerance 0.100" in result.reason
    better = decide_metric(evidence(0.1, 0.02, 0.2, 0.99))
    assert better.state is GateState.NO_REGRESSION and "no drop at all" in better.reason
    # significant but small: not a regression, and the interval shows it small
    small = decide_metric(evidence(-0.04, -0.07, -0.01, 0.01))
    assert small.state is GateState.NO_REGRESSION


def test_what_the_set_cannot_tell_is_inconclusive() -> None:
    noisy = decide_metric(evidence(-0.15, -0.35, 0.05, 0.09))
    assert noisy.state is GateState.INCONCLUSIVE
    assert "is not significant" in noisy.reason and "the set cannot tell" in noisy.reason
    # significant, yet the estimate is within the tolerance while the interval is not
    edge = decide_metric(evidence(-0.08, -0.14, -0.02, 0.01))
    assert edge.state is GateState.INCONCLUSIVE and "not larger than the tolerance" in edge.reason


def test_a_drop_equal_to_the_tolerance_is_not_larger() -> None:
    exact = decide_metric(evidence(Fraction(-1, 10), -0.3, -0.05, 0.001, Fraction(1, 10)))
    assert exact.state is not GateState.REGRESSED
    floated = decide_metric(evidence(-0.30000000000000004 + 0.2, -0.3, -0.05, 0.001, 0.1))
    assert floated.state is not GateState.REGRESSED
    beyond = decide_metric(evidence(Fraction(-11, 100), -0.3, -0.05, 0.001, Fraction(1, 10)))
    assert beyond.state is GateState.REGRESSED
    zero = decide_metric(evidence(Fraction(-1, 30), -0.2, -0.01, 0.03, 0))
    assert zero.state is GateState.REGRESSED  # a zero tolerance gates any significant drop


def test_holm_equals_statsmodels() -> None:
    rng = random.Random(9)
    for size in (1, 2, 3, 5, 8):
        for _ in range(3):
            p_values = [rng.choice((rng.random(), rng.random() / 50, 1.0, 0.0)) for _ in range(size)]
            expected = multipletests(p_values, method="holm")[1]
            assert holm_adjusted(p_values) == pytest.approx(tuple(expected), abs=1e-12)


def test_the_gate_over_several_metrics() -> None:
    pass_rate = evidence(-0.2, -0.3, -0.1, 0.03, name="pass_rate")
    mean = evidence(-0.01, -0.05, 0.03, 0.4, name="mean_score")
    gate = decide([pass_rate, mean])
    # 0.03 alone would be significant; with two metrics Holm doubles it: 0.06 > 0.05
    assert gate.state is GateState.INCONCLUSIVE
    assert gate.metrics[0].p_adjusted == pytest.approx(0.06) and "Holm-adjusted" in gate.metrics[0].reason
    strong = decide([evidence(-0.2, -0.3, -0.1, 0.001, name="pass_rate"), mean])
    assert strong.state is GateState.REGRESSED and [m.name for m in strong.regressed] == ["pass_rate"]
    calm = decide([evidence(0.0, -0.05, 0.05, 0.5, name="pass_rate"), mean])
    assert calm.state is GateState.NO_REGRESSION and calm.alpha == 0.05


def test_the_gate_refuses_what_it_cannot_decide() -> None:
    with pytest.raises(StatisticsInputError, match="at least one"):
        decide([])
    with pytest.raises(StatisticsInputError, match="each gated metric once"):
        decide([evidence(0, -0.1, 0.1, 0.5), evidence(0, -0.1, 0.1, 0.5)])
    wrong_level = MetricEvidence("pass_rate", -0.1, Interval(-0.2, 0.0, 0.95), 0.04, 0.1)
    with pytest.raises(StatisticsInputError, match="reads the 90% interval"):
        decide([wrong_level])
    with pytest.raises(StatisticsInputError, match="tolerance is -0.1"):
        decide_metric(evidence(0, -0.1, 0.1, 0.5, tolerance=-0.1))
    with pytest.raises(StatisticsInputError, match="p_drop is 1.5"):
        decide_metric(evidence(0, -0.1, 0.1, 1.5))
    with pytest.raises(StatisticsInputError, match=r"p_values\[0\] is 2"):
        holm_adjusted([2])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(p_values: list[float]) -> None:
    adjusted = holm_adjusted(p_values)
    assert all(p <= a <= 1 for p, a in zip(p_values, adjusted, strict=True))
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    assert all(adjusted[i] <= adjusted[j] for i, j in zip(order, order[1:], strict=False))


@settings(max_examples=200, deadline=None)
@given(st.floats(-1, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_exactly_one_state_and_regressed_never_claims_within(delta: float, spread_low: float, spread_high: float, p: float, tolerance: float) -> None:
    low, high = max(-1.0, delta - spread_low), min(1.0, delta + spread_high)
    result = decide_metric(MetricEvidence("m", delta, Interval(low, high, 0.9), p, tolerance))
    if result.state is GateState.REGRESSED:
        assert p <= 0.05 and -delta > tolerance and result.drop_bound > tolerance
    if result.state is GateState.NO_REGRESSION:
        assert -low <= tolerance + 1e-12


# --- every edge of the decision, pinned (bench/mutation.py changes one operator at a time) -------


def test_the_states_are_written_as_the_verdict_json_names_them() -> None:
    assert [state.value for state in GateState] == ["regressed", "no_regression", "inconclusive"]


def test_a_p_value_equal_to_alpha_is_significant() -> None:
    assert decide_metric(evidence(-0.2, -0.3, -0.1, 0.05)).state is GateState.REGRESSED
    assert decide_metric(evidence(-0.2, -0.3, -0.1, 0.05000001)).state is GateState.INCONCLUSIVE


def test_a_float_drop_within_the_slack_of_a_float_tolerance_is_not_larger() -> None:
    at_slack = decide_metric(evidence(-(0.5 + 1e-12), -0.6, -0.45, 0.001, 0.5))
    assert at_slack.state is not GateState.REGRESSED
    beyond = decide_metric(evidence(-(0.5 + 1e-11), -0.6, -0.45, 0.001, 0.5))
    assert beyond.state is GateState.REGRESSED


def test_an_exact_drop_against_a_float_tolerance_is_compared_as_floats_with_the_slack() -> None:
    # exactly, 1/10 is larger than the float just below 0.1; as floats within 1e-12 it is equal
    result = decide_metric(evidence(Fraction(-1, 10), -0.3, -0.05, 0.001, 0.1 - 1e-13))
    assert result.state is GateState.INCONCLUSIVE


def test_the_reason_of_each_state_in_full() -> None:
    regressed = decide_metric(evidence(-0.2, -0.3, -0.1, 0.001))
    assert regressed.reason == (
        "pass_rate dropped 0.200, more than the tolerance 0.100, and the drop is significant (p = 0.001, alpha 0.05)"
    )
    within = decide_metric(evidence(-0.02, -0.08, 0.04, 0.3))
    assert within.reason == "pass_rate: the interval allows a drop of at most 0.080, within the tolerance 0.100"
    no_drop = decide_metric(evidence(0.05, 0.0, 0.1, 0.9))
    assert no_drop.state is GateState.NO_REGRESSION and no_drop.drop_bound == 0
    assert no_drop.reason == "pass_rate: the interval allows no drop at all, within the tolerance 0.100"
    noisy = decide_metric(evidence(-0.15, -0.35, 0.05, 0.09))
    assert noisy.reason == (
        "pass_rate: change -0.150 is not significant (p = 0.09), but the interval allows a drop of up to 0.350, "
        "beyond the tolerance 0.100: the set cannot tell"
    )
    # significant at exactly alpha, yet not larger than the tolerance
    small = decide_metric(evidence(-0.08, -0.14, -0.02, 0.05))
    assert small.state is GateState.INCONCLUSIVE
    assert small.reason == (
        "pass_rate: change -0.080 is not larger than the tolerance 0.100 (p = 0.05), but the interval allows a drop "
        "of up to 0.140, beyond the tolerance 0.100: the set cannot tell"
    )


def test_a_holm_adjusted_p_value_is_named_in_the_reason() -> None:
    gate = decide([evidence(-0.2, -0.3, -0.1, 0.03, name="pass_rate"), evidence(-0.01, -0.05, 0.03, 0.4, name="mean_score")])
    assert gate.metrics[0].reason == (
        "pass_rate: change -0.200 is not significant (p = 0.06, Holm-adjusted), but the interval allows a drop of up "
        "to 0.300, beyond the tolerance 0.100: the set cannot tell"
    )
    assert gate.metrics[1].p_adjusted == 0.4 and "Holm" not in gate.metrics[1].reason  # unchanged by the correction


def test_the_refusals_in_full() -> None:
    with pytest.raises(StatisticsInputError) as caught:
        decide([])
    assert str(caught.value) == "no gated metric: a decision needs at least one"
    with pytest.raises(StatisticsInputError) as caught:
        decide([evidence(0, -0.1, 0.1, 0.5), evidence(0, -0.1, 0.1, 0.5)])
    assert str(caught.value) == "each gated metric once: ['pass_rate', 'pass_rate']"
    with pytest.raises(StatisticsInputError) as caught:
        decide([MetricEvidence("pass_rate", -0.1, Interval(-0.2, 0.0, 0.95), 0.04, 0.1)])
    assert str(caught.value) == (
        "pass_rate: the decision reads the 90% interval (one-sided bounds at 1 − alpha); got a 95% interval"
    )
    with pytest.raises(StatisticsInputError) as caught:
        decide_metric(evidence(0, -0.1, 0.1, 1.5))
    assert str(caught.value) == "pass_rate: p_drop is 1.5, not a probability"
    with pytest.raises(StatisticsInputError) as caught:
        holm_adjusted([0.5, -0.25])
    assert str(caught.value) == "p_values[1] is -0.25, not a probability in [0, 1]"
