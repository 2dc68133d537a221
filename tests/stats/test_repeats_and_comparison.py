"""Repeats summaries (pass fraction, pass@k, pass^k, flakiness) and the one-call comparison of a
metric that a verdict prints."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from evalkit.stats import (
    GateState,
    StatisticsInputError,
    StatisticsSettings,
    compare_pass_rates,
    compare_values,
    decide,
    flip_history,
    is_flaky,
    mcnemar_detectable_drop,
    noise_from_history,
    paired_binary,
    paired_t,
    pass_all_k,
    pass_at_k,
    summarize_repeats,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def test_a_case_over_its_repeats() -> None:
    mixed = summarize_repeats([True, False, True, True, False])
    assert (mixed.repeats, mixed.passes, mixed.pass_fraction) == (5, 3, 0.6)
    assert (mixed.pass_at_n, mixed.pass_all_n, mixed.flaky) == (True, False, True)
    steady = summarize_repeats([1, 1, 1])
    assert (steady.pass_at_n, steady.pass_all_n, steady.flaky) == (True, True, False)
    broken = summarize_repeats([False])
    assert (broken.pass_fraction, broken.pass_at_n, broken.pass_all_n, broken.flaky) == (0.0, False, False, False)
    assert is_flaky([True, False]) and not is_flaky([False, False])
    with pytest.raises(StatisticsInputError, match="answered 0 times"):
        summarize_repeats([])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8), st.data())
def test_pass_at_k_and_pass_all_k_equal_counting_every_subset(outcomes: list[bool], data: st.DataObject) -> None:
    k = data.draw(st.integers(1, len(outcomes)))
    subsets = list(itertools.combinations(outcomes, k))
    at_least_one = sum(any(s) for s in subsets) / len(subsets)
    all_of_them = sum(all(s) for s in subsets) / len(subsets)
    assert pass_at_k(len(outcomes), sum(outcomes), k) == pytest.approx(at_least_one)
    assert pass_all_k(len(outcomes), sum(outcomes), k) == pytest.approx(all_of_them)
    summary = summarize_repeats(outcomes)
    assert summary.pass_at_n == (pass_at_k(len(outcomes), sum(outcomes), len(outcomes)) == 1.0)
    assert summary.pass_all_n == (pass_all_k(len(outcomes), sum(outcomes), len(outcomes)) == 1.0)


def test_k_of_n_input_is_checked() -> None:
    with pytest.raises(StatisticsInputError, match="more than the 3 repeats it is estimated from"):
        pass_at_k(3, 1, 4)
    with pytest.raises(StatisticsInputError, match="passes is 4, more than the 3 repeats"):
        pass_all_k(3, 4, 1)


def test_flip_history() -> None:
    history = flip_history([True, True, False, True, True, True, False], last=3)
    assert (history.runs, history.passes, history.flips, history.last_outcomes) == (7, 5, 3, (True, True, False))
    assert history.flaky
    assert not flip_history([False, False]).flaky
    # by default the last five outcomes are kept
    assert flip_history([True, False, True, True, False, False, True]).last_outcomes == (True, True, False, False, True)
    assert flip_history([]).runs == 0


def test_pass_rates_as_a_verdict_prints_them() -> None:
    rng = random.Random(12)
    baseline = [rng.random() < 0.8 for _ in range(30)]
    current = [b if rng.random() < 0.8 else not b for b in baseline]
    result = compare_pass_rates(baseline, current, tolerance=Fraction(1, 10))
    binary = paired_binary(baseline, current)
    at_90 = paired_binary(baseline, current, confidence=0.9)
    assert (result.baseline, result.value, result.delta, result.n) == (binary.baseline_rate, binary.rate, binary.delta, 30)
    assert result.ci95 == binary.interval and result.decision_interval == at_90.interval
    assert (result.p_value, result.p_drop, result.exact_delta) == (binary.p_value, binary.p_drop, binary.exact_delta)
    assert result.detectable == mcnemar_detectable_drop(30, binary.baseline_rate)
    assert result.tolerance_below_detectable
    assert result.as_dict() == {
        "baseline": binary.baseline_rate,
        "value": binary.rate,
        "delta": binary.delta,
        "ci95": [binary.interval.low, binary.interval.high],
        "p_value": binary.p_value,
        "minimum_detectable_drop": result.detectable.drop,
        "tolerance": 0.1,
    }
    assert result.evidence.delta == binary.exact_delta
    with_history = compare_pass_rates(baseline, current, tolerance=0.1, noise=noise_from_history([[0, 1, -1, 0, 0, 0]]))
    assert with_history.detectable.source == "history" and with_history.detectable.floor == 5 / 30


def test_values_with_every_interval_and_test() -> None:
    rng = random.Random(13)
    baseline = [rng.random() for _ in range(40)]
    current = [min(1.0, max(0.0, b + rng.gauss(-0.02, 0.15))) for b in baseline]
    plain = compare_values(baseline, current, tolerance=0.05)
    t = paired_t(baseline, current)
    assert plain.ci95 == t.interval and (plain.p_value, plain.p_drop) == (t.p_value, t.p_drop)
    assert plain.decision_interval == paired_t(baseline, current, 0.9).interval
    assert plain.detectable.source == "observed" and plain.method == "paired t interval, paired t test"
    settings_ = StatisticsSettings(interval="bootstrap", test="sign_flip", seed=4, resamples=800, samples=800)
    resampled = compare_values(baseline, current, tolerance=0.05, settings=settings_, name="ndcg@10")
    assert resampled.name == "ndcg@10" and resampled.method == "BCa bootstrap interval, sign-flip test"
    assert resampled.decision_interval.low >= resampled.ci95.low and resampled.decision_interval.high <= resampled.ci95.high
    assert resampled == compare_values(baseline, current, tolerance=0.05, settings=settings_, name="ndcg@10")
    gate = decide([plain.evidence, resampled.evidence])
    assert gate.state in set(GateState)
    identical = compare_values(baseline, baseline, tolerance=0.05, repeats=3)
    # no noise seen between identical runs: the minimum detectable drop falls back to the baseline mean's bound
    assert identical.detectable.source == "independent_bernoulli" and identical.detectable.repeats == 3


def test_comparison_input_is_checked() -> None:
    with pytest.raises(StatisticsInputError, match="interval is 'wilson'"):
        StatisticsSettings(interval="wilson")  # type: ignore[arg-type]
    with pytest.raises(StatisticsInputError, match="test is 'wilcoxon'"):
        StatisticsSettings(test="wilcoxon")  # type: ignore[arg-type]
    with pytest.raises(StatisticsInputError, match="tolerance is 2"):
        compare_pass_rates([True], [False], tolerance=2)
    with pytest.raises(StatisticsInputError, match="alpha"):
        StatisticsSettings(alpha=0.6)
    with pytest.raises(StatisticsInputError, match="power"):
        StatisticsSettings(power=0.0)
    one = compare_values([0.4], [0.1], tolerance=0.1)
    assert (one.ci95.low, one.ci95.high, one.p_drop) == (-1.0, 1.0, 1.0)


def test_the_settings_default_to_what_the_docs_promise() -> None:
    defaults = StatisticsSettings()
    assert (defaults.alpha, defaults.power, defaults.interval, defaults.test) == (0.05, 0.8, "t", "t")
    assert (defaults.seed, defaults.resamples, defaults.samples) == (0, 2_000, 10_000)
    least = StatisticsSettings(resamples=1, samples=1)  # one draw is few, but a draw
    assert (least.resamples, least.samples) == (1, 1)


def test_a_comparison_names_its_metric_sides_and_method() -> None:
    rates = compare_pass_rates([True, True, False, True], [True, False, False, True], tolerance=0.1)
    assert (rates.name, rates.method) == ("pass_rate", "newcombe interval, exact McNemar test")
    assert (rates.baseline, rates.value) == (0.75, 0.5)
    values = compare_values([0.2, 0.4, 0.9], [0.5, 0.1, 0.6], tolerance=0.1)
    assert values.name == "mean_score"
    assert values.baseline == pytest.approx(0.5, abs=1e-15) and values.value == pytest.approx(0.4, abs=1e-15)
    assert values.detectable.repeats == 1  # one answer per case unless told


def test_the_observed_noise_is_per_answer_so_repeats_do_not_shrink_it_twice() -> None:
    """The paired differences of pass fractions over K answers already average K answers: the
    per-answer variance is sd² · K, and the drop it detects is (z(1 − α) + z(power)) · sd / √n."""
    import math
    import statistics

    baseline = [0.2, 0.4, 0.9, 0.6, 0.8, 1.0, 0.0, 0.4]
    current = [0.6, 0.2, 0.8, 0.2, 0.6, 0.8, 0.2, 0.0]
    sd = statistics.stdev([c - b for b, c in zip(baseline, current, strict=True)])
    z = statistics.NormalDist().inv_cdf(0.95) + statistics.NormalDist().inv_cdf(0.8)
    for repeats in (1, 5):
        result = compare_values(baseline, current, tolerance=0.1, repeats=repeats)
        assert (result.detectable.source, result.detectable.repeats) == ("observed", repeats)
        assert result.detectable.sd == pytest.approx(sd, rel=1e-12)
        assert result.detectable.drop == pytest.approx(z * sd / math.sqrt(len(baseline)), rel=1e-12)


def test_a_tolerance_equal_to_the_detectable_drop_is_not_below_it() -> None:
    import attrs

    result = compare_values([0.2, 0.4, 0.9, 0.6], [0.6, 0.2, 0.8, 0.2], tolerance=0.1)
    assert not attrs.evolve(result, tolerance=result.detectable.drop).tolerance_below_detectable
    assert attrs.evolve(result, tolerance=result.detectable.drop * 0.999).tolerance_below_detectable


def test_flaky_at_its_edges() -> None:
    assert summarize_repeats([True, False, False]).flaky and not summarize_repeats([True, True, True]).flaky
    assert not summarize_repeats([False, False]).flaky
    assert is_flaky([True, False]) and not is_flaky([True, True]) and not is_flaky([False, False])
    one_flip = flip_history([True, False])
    assert (one_flip.flips, one_flip.flaky) == (1, True)
    assert flip_history([True, False, False, True]).flips == 2


def test_without_observed_noise_the_detectable_drop_rests_on_the_baseline_mean() -> None:
    """Every difference the same (no spread): the conservative noise 2 p (1 − p) of the baseline's
    mean p — not the run's — per answer, divided by the repeats."""
    import math
    import statistics

    z = statistics.NormalDist().inv_cdf(0.95) + statistics.NormalDist().inv_cdf(0.8)
    shifted = compare_values([0.25, 0.5, 0.75] * 4, [0.5, 0.75, 1.0] * 4, tolerance=0.1)
    assert shifted.detectable.source == "independent_bernoulli"
    assert shifted.detectable.drop == pytest.approx(z * math.sqrt(2 * 0.5 * 0.5) / math.sqrt(12), rel=1e-12)
    identical = compare_values([0.2, 0.4, 0.9], [0.2, 0.4, 0.9], tolerance=0.1, repeats=3)
    assert identical.detectable.drop == pytest.approx(z * math.sqrt(2 * 0.5 * 0.5 / 3) / math.sqrt(3), rel=1e-12)


def test_the_paired_t_p_value_for_a_rise() -> None:
    from evalkit.stats.comparison import t_rise
    from evalkit.stats.distributions import student_t_cdf
    from evalkit.stats.means import PairedMean, paired_t_from_differences

    assert t_rise(paired_t_from_differences([0.5])) == 1.0  # one case says nothing
    assert t_rise(paired_t_from_differences([0.25, 0.25])) == 0.0  # a rise without spread
    assert t_rise(paired_t_from_differences([-0.25, -0.25])) == 1.0
    assert t_rise(paired_t_from_differences([0.0, 0.0])) == 1.0  # no change is no rise
    spread = paired_t_from_differences([0.1, 0.3, 0.2])
    assert spread.t is not None and t_rise(spread) == pytest.approx(student_t_cdf(-spread.t, 2))
    assert t_rise(spread) == pytest.approx(1 - spread.p_drop)

    def undefined(n: int, sd: float | None) -> PairedMean:
        return PairedMean(n, None, None, 0.5, sd, None, n - 1, paired_t_from_differences([0.5]).interval, 1.0, 1.0)

    # a report without a spread (sd None) or of one case says nothing either way, even a rise
    assert (t_rise(undefined(1, 0.0)), t_rise(undefined(3, None)), t_rise(undefined(3, 0.0))) == (1.0, 1.0, 0.0)


def test_a_metric_comparison_built_without_a_rise_p_value_claims_no_rise() -> None:
    import attrs
    from evalkit.stats import MetricComparison

    measured = compare_values([0.5, 0.5, 0.5], [0.75, 1.0, 0.75], tolerance=0.1)
    given = {f.name: getattr(measured, f.name) for f in attrs.fields(MetricComparison) if f.name != "p_rise"}
    assert MetricComparison(**given).p_rise == 1.0
