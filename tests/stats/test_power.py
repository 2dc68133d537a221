"""The minimum detectable drop: the reference's worked figure, its inverses, its noise sources, and
seeded simulations showing the promised detection rate is the one a gate gets."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from evalkit.stats import (
    StatisticsInputError,
    cases_needed,
    choose_noise,
    connor_detectable_drop,
    mcnemar_detectable_drop,
    mcnemar_power,
    minimum_detectable_drop,
    noise_from_differences,
    noise_from_history,
    noise_from_rate,
    noise_from_repeats,
    paired_binary,
    paired_t,
    repeats_needed,
)
from evalkit.stats.power import DetectableDrop, NoiseEstimate, smallest_flagged_regressions
from scipy import optimize, stats
from statsmodels.stats.power import NormalIndPower


def test_the_reference_figure_30_cases_at_080() -> None:
    """30 cases at p = 0.8, one-sided α = 0.05, power 0.8: (1.645 + 0.842) · √(2·0.8·0.2) / √30."""
    result = minimum_detectable_drop(noise_from_rate(0.8), 30)
    assert round(result.drop, 2) == 0.26
    z = stats.norm.ppf(0.95) + stats.norm.ppf(0.8)
    assert result.drop == pytest.approx(z * math.sqrt(0.32) / math.sqrt(30), rel=1e-12)
    assert (result.n, result.repeats, result.source, result.method) == (30, 1, "independent_bernoulli", "normal")


def test_repeats_shrink_the_noise_and_the_inverses_solve_the_formula() -> None:
    noise = noise_from_rate(0.8)
    five = minimum_detectable_drop(noise.with_repeats(5), 30)
    assert five.drop == pytest.approx(minimum_detectable_drop(noise, 30).drop / math.sqrt(5))
    needed = cases_needed(noise, 0.2)
    assert minimum_detectable_drop(noise, needed).drop <= 0.2 < minimum_detectable_drop(noise, needed - 1).drop
    k = repeats_needed(noise, 0.1, 30)
    assert minimum_detectable_drop(noise.with_repeats(k), 30).drop <= 0.1
    assert minimum_detectable_drop(noise.with_repeats(k - 1), 30).drop > 0.1
    assert repeats_needed(noise, 0.9, 30) == 1
    assert cases_needed(noise_from_rate(1.0), 0.5) == 2


def test_whole_cases_cannot_be_flagged_below_five_regressions() -> None:
    assert smallest_flagged_regressions(0.05) == 5
    assert smallest_flagged_regressions(0.0625) == 4
    assert smallest_flagged_regressions(0.01) == 7
    perfect = minimum_detectable_drop(noise_from_rate(1.0), 30, whole_cases=True)
    assert (perfect.drop, perfect.floor) == (5 / 30, 5 / 30)
    assert minimum_detectable_drop(noise_from_rate(1.0), 30).drop == 0.0
    assert cases_needed(noise_from_rate(1.0), 0.1, whole_cases=True) == 50
    assert minimum_detectable_drop(noise_from_rate(0.5), 2).drop == 1.0  # capped: a fraction cannot drop more


def test_noise_sources() -> None:
    diffs = [0.1, -0.2, 0.0, 0.3, -0.1]
    observed = noise_from_differences(diffs)
    assert observed.variance == pytest.approx(stats.tstd(diffs) ** 2)
    assert noise_from_differences(diffs, repeats=3).sd == pytest.approx(observed.sd)
    history = noise_from_history([[0.1, -0.1, 0.2], [0.0, 0.3], [0.5]])
    pooled = (2 * stats.tvar([0.1, -0.1, 0.2]) + stats.tvar([0.0, 0.3])) / 3
    assert (history.variance, history.cases, history.source) == (pytest.approx(pooled), 5, "history")
    repeats = noise_from_repeats([[1, 1, 0], [0, 0, 0], [1, 0, 1], [1]])
    # within-case sample variances 1/3, 0, 1/3 pooled over 6 degrees of freedom, doubled for two runs
    assert (repeats.variance, repeats.repeats, repeats.cases) == (pytest.approx(2 * (2 / 3 + 2 / 3) / 6), 3, 3)
    assert noise_from_rate(0.8, repeats=4).sd == pytest.approx(math.sqrt(0.32 / 4))
    zero = noise_from_differences([0.0, 0.0, 0.0])
    assert choose_noise(None, zero, noise_from_rate(0.8)) == noise_from_rate(0.8)
    assert choose_noise(zero) == zero and choose_noise() is None


def test_noise_input_is_checked() -> None:
    with pytest.raises(StatisticsInputError, match="at least 2 differences"):
        noise_from_differences([0.1])
    with pytest.raises(StatisticsInputError, match=r"differences\[1\] is 1.5, not a difference in \[-1, 1\]"):
        noise_from_differences([0.1, 1.5])
    with pytest.raises(StatisticsInputError, match="history holds no comparison"):
        noise_from_history([[0.1]])
    with pytest.raises(StatisticsInputError, match="at least 2 answers"):
        noise_from_repeats([[1], [0]])
    with pytest.raises(StatisticsInputError, match="rate"):
        noise_from_rate(1.2)
    with pytest.raises(StatisticsInputError, match="alpha"):
        minimum_detectable_drop(noise_from_rate(0.8), 30, alpha=0.5)
    with pytest.raises(StatisticsInputError, match="power"):
        minimum_detectable_drop(noise_from_rate(0.8), 30, power=1)
    with pytest.raises(StatisticsInputError, match=r"drop is 0, not a number in \(0, 1\]"):
        cases_needed(noise_from_rate(0.8), 0)
    with pytest.raises(StatisticsInputError, match="drop is 0.9, not a number between 0 and the rate"):
        mcnemar_power(30, 0.8, 0.9)


def test_exact_mcnemar_power_matches_a_simulation() -> None:
    """The exact power of the one-sided exact test, against 2,000 seeded trials of 30 cases."""
    rng = random.Random(30)
    exact = mcnemar_power(30, 0.8, 0.257)
    caught = 0
    for _ in range(2_000):
        baseline = [rng.random() < 0.8 for _ in range(30)]
        current = [rng.random() < 0.8 - 0.257 for _ in range(30)]
        caught += paired_binary(baseline, current).p_drop <= 0.05
    assert abs(caught / 2_000 - exact) < 0.035
    # the normal formula's 0.26 is caught about 59 % of the time by the gate's exact test, not 80 %
    assert 0.5 < exact < 0.7


def test_the_exact_detectable_drop_is_caught_80_percent_of_the_time() -> None:
    result = mcnemar_detectable_drop(30, 0.8)
    assert result.method == "exact_mcnemar" and 0.3 < result.drop < 0.36
    assert mcnemar_power(30, 0.8, result.drop) == pytest.approx(0.8, abs=0.002)
    rng = random.Random(80)
    caught = 0
    for _ in range(1_000):
        baseline = [rng.random() < 0.8 for _ in range(30)]
        current = [rng.random() < 0.8 - result.drop for _ in range(30)]
        caught += paired_binary(baseline, current).p_drop <= 0.05
    assert 0.75 <= caught / 1_000 <= 0.85


def test_exact_detectable_drop_edges_and_large_sets() -> None:
    assert mcnemar_detectable_drop(5, 0.8).drop == 1.0  # five cases cannot show an 80 % drop reliably
    perfect = mcnemar_detectable_drop(30, 1.0)
    assert mcnemar_power(30, 1.0, perfect.drop) >= 0.8
    large = mcnemar_detectable_drop(20_000, 0.8)
    assert large.method == "exact_mcnemar"
    # on a large set the exact test's drop meets Connor's normal approximation, and the formula's
    z_alpha, z_power = stats.norm.ppf(0.95), stats.norm.ppf(0.8)
    flips = 0.8 * (1 - 0.8 + large.drop) + 0.2 * (0.8 - large.drop)
    connor = (z_alpha * math.sqrt(flips) + z_power * math.sqrt(flips - large.drop**2)) / math.sqrt(20_000)
    assert large.drop == pytest.approx(connor, rel=0.01)
    assert large.drop == pytest.approx(minimum_detectable_drop(noise_from_rate(0.8), 20_000).drop, rel=0.05)
    assert mcnemar_power(10, 0.8, 0.0) <= 0.05  # no drop: the test keeps its level
    assert mcnemar_power(10, 0.0, 0.0) == 0.0


def test_with_noise_from_earlier_runs_the_formula_keeps_its_promise() -> None:
    """Scores whose noise does not depend on the drop (each run adds uniform noise to a case's
    quality): the paired t test at the formula's drop, with σ_d measured on earlier unchanged
    runs, detects it about 80 % of the time (t rather than z on 50 cases: 0.79)."""
    rng = random.Random(2024)
    n, width = 50, 0.2
    quality = [rng.uniform(0.3, 0.7) for _ in range(n)]

    def run(shift: float = 0.0) -> list[float]:
        return [q - shift + rng.uniform(-width, width) for q in quality]

    history = []
    for _ in range(12):
        first, second = run(), run()
        history.append([b - a for a, b in zip(first, second, strict=True)])
    drop = minimum_detectable_drop(noise_from_history(history), n).drop
    caught = sum(paired_t(run(), run(drop)).p_drop <= 0.05 for _ in range(1_000))
    assert 0.72 <= caught / 1_000 <= 0.86


def test_the_issue_goal_a_20_point_drop_on_30_cases_with_5_repeats() -> None:
    rng = random.Random(5)
    assert minimum_detectable_drop(noise_from_rate(0.8, repeats=5), 30).drop < 0.2

    def fractions(rate: float) -> list[float]:
        return [sum(rng.random() < rate for _ in range(5)) / 5 for _ in range(30)]

    caught = sum(paired_t(fractions(0.8), fractions(0.6)).p_drop <= 0.05 for _ in range(300))
    assert caught / 300 >= 0.8


# --- pinned values, computed apart from the code under test --------------------------------------
#
# The noise sources against numpy's sample variance, the formula and its inverses against scipy's
# normal quantiles and statsmodels' NormalIndPower, and the exact McNemar power against a direct sum
# of scipy's binomial probabilities (every discordant count, every critical count found afresh).


def _z(alpha: float = 0.05, power: float = 0.8) -> float:
    return float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))


def test_observed_noise_is_the_sample_variance_of_two_or_more_differences_per_answer() -> None:
    """Two differences are enough; the per-answer variance is the sample variance times the
    repeats each difference averaged, so ``sd`` stays the spread of the differences themselves."""
    diffs = [0.25, -0.5]
    var = float(np.var(diffs, ddof=1))  # 0.28125
    assert var == 0.28125
    one = noise_from_differences(diffs)
    assert (one.variance, one.repeats, one.source, one.cases) == (pytest.approx(var), 1, "observed", 2)
    four = noise_from_differences(diffs, repeats=4)
    assert (four.variance, four.repeats, four.sd) == (pytest.approx(4 * var), 4, pytest.approx(math.sqrt(var)))
    # a difference may be anywhere in [-1, 1]
    edges = noise_from_differences([-1.0, 1.0, 0.0])
    assert edges.variance == pytest.approx(np.var([-1.0, 1.0, 0.0], ddof=1))


def test_history_pools_each_comparisons_variance_and_scales_it_to_one_answer() -> None:
    """Comparisons of two cases count (one degree of freedom each), one of a single case is
    skipped, the pooled variance is weighted by degrees of freedom, and ``repeats`` multiplies it
    back to one answer."""
    history = [[0.1, 0.3], [0.5], [-0.2, 0.0, 0.4, -1.0]]
    pooled = (1 * np.var([0.1, 0.3], ddof=1) + 3 * np.var([-0.2, 0.0, 0.4, -1.0], ddof=1)) / 4
    once = noise_from_history(history)
    assert (once.variance, once.repeats, once.source, once.cases) == (pytest.approx(pooled), 1, "history", 6)
    thrice = noise_from_history(history, repeats=3)
    assert (thrice.variance, thrice.repeats, thrice.cases) == (pytest.approx(3 * pooled), 3, 6)
    assert thrice.sd == pytest.approx(math.sqrt(pooled))
    pair = noise_from_history([[0.1, 0.3]])
    assert (pair.variance, pair.cases) == (pytest.approx(0.02), 2)


def test_repeats_noise_pools_within_case_variances_and_counts_the_harmonic_mean_of_answers() -> None:
    """Cases of 2 and 4 answers: within-case squares 0.5 (1 df) and 0.75 (3 df) pool to 1.25 / 4,
    doubled for two runs: 0.625; the answers per case are the harmonic mean 2 / (1/2 + 1/4) = 8/3,
    rounded to 3. A case of one answer is skipped."""
    noise = noise_from_repeats([[1, 0], [1, 0, 1, 1], [1]])
    assert (noise.variance, noise.repeats, noise.source, noise.cases) == (pytest.approx(0.625), 3, "repeats", 2)
    scores = noise_from_repeats([[0.5, 0.7], [0.2, 0.2]])
    assert (scores.variance, scores.repeats, scores.cases) == (pytest.approx(2 * 0.02 / 2), 2, 2)


def test_the_bernoulli_noise_covers_every_rate_from_0_to_1() -> None:
    """``2 p (1 − p)`` per answer, measured on no case; the rates 0 and 1 are accepted (no noise)."""
    noise = noise_from_rate(0.3)
    assert (noise.variance, noise.repeats, noise.source, noise.cases) == (
        pytest.approx(0.42),
        1,
        "independent_bernoulli",
        0,
    )
    assert noise_from_rate(0).variance == 0.0 and noise_from_rate(1).variance == 0.0
    assert noise_from_rate(0.3, repeats=2).sd == pytest.approx(math.sqrt(0.21))
    for bad in (-0.1, 1.01, "0.5", None):
        with pytest.raises(StatisticsInputError, match=r"^rate is .*, not a number in \[0, 1\]$"):
            noise_from_rate(bad)  # type: ignore[arg-type]


def test_choose_noise_takes_the_first_measured_and_otherwise_the_last_given() -> None:
    first, second = noise_from_rate(0.5), noise_from_rate(0.9)
    assert choose_noise(first, second) is first
    assert choose_noise(None, second) is second
    zeros = [
        NoiseEstimate(0.0, 1, "history", 4),
        NoiseEstimate(0.0, 1, "repeats", 5),
        NoiseEstimate(0.0, 1, "observed", 6),
    ]
    assert choose_noise(*zeros) is zeros[2]
    assert choose_noise(*zeros, None) is zeros[2]


def test_a_detectable_drop_built_by_hand_has_no_floor_and_the_normal_method() -> None:
    built = DetectableDrop(0.1, 30, 1, 0.5, "observed", 0.05, 0.8)
    assert (built.floor, built.method) == (0.0, "normal")


def test_the_formula_matches_statsmodels_one_sample_normal_power() -> None:
    """``NormalIndPower`` with ``ratio=0`` is the one-sample z test: the effect size it solves for,
    times ``σ_d``, is the minimum detectable drop, at any α and power and down to one case."""
    solver = NormalIndPower()
    noise = noise_from_rate(0.7)
    for n, alpha, power in [(1, 0.05, 0.8), (30, 0.01, 0.9), (200, 0.1, 0.5)]:
        effect = solver.solve_power(effect_size=None, nobs1=n, alpha=alpha, power=power, ratio=0, alternative="larger")
        result = minimum_detectable_drop(noise, n, alpha=alpha, power=power)
        assert result.drop == pytest.approx(min(1.0, effect * noise.sd), rel=1e-5)  # the solver's own precision
        assert (result.n, result.alpha, result.power, result.floor, result.sd) == (
            n,
            alpha,
            power,
            0.0,
            pytest.approx(noise.sd),
        )
    default = minimum_detectable_drop(noise, 50)
    assert (default.alpha, default.power) == (0.05, 0.8)
    assert default.drop == pytest.approx(_z() * math.sqrt(0.42) / math.sqrt(50))


def test_the_whole_case_floor_applies_only_to_one_pass_fail_answer_per_case() -> None:
    """The floor ``k / n`` is recorded only with ``whole_cases`` and one answer per case: means of
    5 repeats can move by less than one case, so the formula alone holds for them."""
    quiet = NoiseEstimate(0.0004, 1, "observed", 30)
    plain = minimum_detectable_drop(quiet, 30)
    assert (plain.drop, plain.floor) == (pytest.approx(_z() * 0.02 / math.sqrt(30)), 0.0)
    floored = minimum_detectable_drop(quiet, 30, whole_cases=True)
    assert (floored.drop, floored.floor) == (5 / 30, 5 / 30)
    repeated = minimum_detectable_drop(quiet.with_repeats(5), 30, whole_cases=True)
    assert (repeated.drop, repeated.floor) == (pytest.approx(_z() * 0.02 / math.sqrt(5 * 30)), 0.0)
    twice = minimum_detectable_drop(quiet.with_repeats(2), 30, whole_cases=True)
    assert twice.floor == 0.0
    reference = minimum_detectable_drop(noise_from_rate(0.8), 30, whole_cases=True)
    assert reference.floor == 5 / 30 and reference.drop == pytest.approx(_z() * math.sqrt(0.32 / 30))


def test_cases_needed_matches_statsmodels_and_a_drop_met_exactly_needs_no_extra_case() -> None:
    noise = noise_from_rate(0.8)
    solver = NormalIndPower()
    for drop, alpha, power in [(0.1, 0.05, 0.8), (0.05, 0.01, 0.9), (0.3, 0.1, 0.6)]:
        nobs = solver.solve_power(
            effect_size=drop / noise.sd, nobs1=None, alpha=alpha, power=power, ratio=0, alternative="larger"
        )
        assert cases_needed(noise, drop, alpha=alpha, power=power) == max(2, math.ceil(nobs))
    assert cases_needed(noise, 0.1) == 198  # (2.486 · 0.566 / 0.1)² = 197.8
    # σ_d chosen so that 36 cases detect 0.1 exactly: 36 are needed, not 37 (nor 35)
    exact = NoiseEstimate(36 * 0.1**2 / _z() ** 2, 1, "observed", 36)
    assert cases_needed(exact, 0.1) == 36
    assert minimum_detectable_drop(exact, 36).drop == pytest.approx(0.1)
    # whole cases: 5 regressions in n cases must be at most the drop; 5 / 0.125 = 40 exactly
    assert cases_needed(NoiseEstimate(0.0, 1, "observed", 9), 0.125, whole_cases=True) == 40
    assert cases_needed(NoiseEstimate(0.0, 1, "observed", 9), 0.125) == 2
    assert cases_needed(NoiseEstimate(0.0, 1, "observed", 9), 0.125, alpha=0.01, whole_cases=True) == 56  # 7 / 0.125
    # with repeats the floor does not apply: the formula's 36 cases stand
    assert cases_needed(exact.with_repeats(2), 0.1 / math.sqrt(2), whole_cases=True) == 36
    assert cases_needed(NoiseEstimate(0.0, 2, "repeats", 9), 0.125, whole_cases=True) == 2


def test_repeats_needed_solves_the_formula_for_k_and_a_drop_met_exactly_needs_no_extra_repeat() -> None:
    """``K = z² · variance / (n · drop²)``: with the variance chosen so that 4 repeats of 30 cases
    detect 0.1 exactly, 4 are needed; a drop a little smaller needs 5."""
    variance = 4 * 30 * 0.1**2 / _z() ** 2
    noise = NoiseEstimate(variance, 1, "repeats", 30)
    assert repeats_needed(noise, 0.1, 30) == 4
    assert repeats_needed(noise, 0.099, 30) == 5
    bernoulli = noise_from_rate(0.8)
    for drop, n, alpha, power in [(0.1, 30, 0.05, 0.8), (0.2, 10, 0.01, 0.9), (0.3, 1, 0.05, 0.8)]:
        expected = math.ceil(_z(alpha, power) ** 2 * 0.32 / (n * drop**2))
        assert repeats_needed(bernoulli, drop, n, alpha=alpha, power=power) == expected
    assert repeats_needed(bernoulli, 0.1, 30) == 7  # 2.486² · 0.32 / (30 · 0.01) = 6.59
    assert repeats_needed(bernoulli, 1, 1) == 2  # 2.486² · 0.32 = 1.98
    assert repeats_needed(NoiseEstimate(0.0, 1, "repeats", 3), 0.5, 3) == 1


def test_a_target_drop_may_be_anything_in_0_to_1() -> None:
    noise = noise_from_rate(0.8)
    assert cases_needed(noise, 1) == 2 and repeats_needed(noise, 1.0, 30) == 1
    for bad in (0.0, -0.1, 1.5, "0.2", True):
        with pytest.raises(StatisticsInputError, match=r"^drop is .*, not a number in \(0, 1\]$"):
            cases_needed(noise, bad)  # type: ignore[arg-type]


def _critical(n: int, alpha: float) -> np.ndarray:
    """For every ``m`` up to ``n``, the fewest regressions among ``m`` flips the exact one-sided
    test flags: the smallest ``r`` with ``P(Binomial(m, ½) >= r) <= alpha`` (``m + 1`` when none is)."""
    m = np.arange(n + 1)
    critical = np.minimum(stats.binom.isf(alpha, m, 0.5) + 1, m + 1).astype(int)
    # scipy's discrete inverse, checked: the count flags, one fewer does not
    flagged = critical <= m
    assert np.all(stats.binom.sf(critical[flagged] - 1, m[flagged], 0.5) <= alpha)
    assert np.all(stats.binom.sf(critical - 2, m, 0.5) > alpha)
    return critical


def _oracle_power(n: int, rate: float, drop: float, alpha: float = 0.05) -> float:
    """The exact power summed over every discordant count ``m`` with scipy's binomial
    probabilities: ``Σ P(M = m) P(R >= c(m) | m)``."""
    after = rate - drop
    regress, fix = rate * (1 - after), (1 - rate) * after
    flips = regress + fix
    if flips == 0:
        return 0.0
    m, critical = np.arange(n + 1), _critical(n, alpha)
    terms = stats.binom.pmf(m, n, flips) * stats.binom.sf(critical - 1, m, regress / flips)
    return float(math.fsum(terms[critical <= m]))


@pytest.mark.parametrize(
    ("n", "rate", "drop", "alpha"),
    [
        (30, 0.8, 0.257, 0.05),
        (30, 0.8, 0.1, 0.05),
        (12, 0.6, 0.3, 0.1),
        (40, 0.5, 0.2, 0.01),
        (25, 0.9, 0.4, 0.05),
        (30, 1.0, 0.2, 0.05),  # a perfect baseline: every flip is a regression
        (30, 0.7, 0.7, 0.05),  # the run fails everything: every flip is a regression too
        (20, 0.3, 0.0, 0.05),  # no drop: the test's size, below α
        (8, 0.5, 0.5, 0.05),
        (1, 0.8, 0.5, 0.05),
        (60, 0.05, 0.04, 0.05),
        (25, 1.0, 0.9, 0.05),  # nearly every case flips: the sum starts at 2 flips, not 0
    ],
)
def test_exact_mcnemar_power_is_the_sum_over_discordant_counts(n: int, rate: float, drop: float, alpha: float) -> None:
    assert mcnemar_power(n, rate, drop, alpha=alpha) == pytest.approx(
        _oracle_power(n, rate, drop, alpha), rel=1e-9, abs=1e-13
    )


def test_exact_mcnemar_power_on_a_large_set_sums_only_where_the_mass_is() -> None:
    """2,000 cases: the sum keeps the counts within 8 standard deviations of the mean, which must
    leave the power as the full sum has it."""
    for drop in (0.02, 0.035, 0.05):
        assert mcnemar_power(2_000, 0.8, drop) == pytest.approx(_oracle_power(2_000, 0.8, drop), rel=1e-9)


def test_exact_mcnemar_power_edges() -> None:
    """No flip can happen (rate 0 or 1 with no drop): power 0. Every case flips (rate 1, drop 1):
    the test flags 30 regressions out of 30, power 1. Default α is 0.05."""
    assert mcnemar_power(30, 1.0, 0.0) == 0.0
    assert mcnemar_power(30, 0.0, 0.0) == 0.0
    assert mcnemar_power(30, 1.0, 1.0) == pytest.approx(1.0)
    assert mcnemar_power(4, 1.0, 1.0) == 0.0  # 4 regressions out of 4: p = 1/16 > 0.05
    assert mcnemar_power(5, 1.0, 1.0) == pytest.approx(1.0)  # 5 of 5: p = 1/32
    assert mcnemar_power(30, 0.8, 0.2) == pytest.approx(_oracle_power(30, 0.8, 0.2, 0.05), rel=1e-9)
    assert mcnemar_power(30, 0.8, 0.2, alpha=0.1) == pytest.approx(_oracle_power(30, 0.8, 0.2, 0.1), rel=1e-9)


def test_a_p_value_equal_to_alpha_is_flagged() -> None:
    """Five regressions and no fix have the one-sided exact p = 1/32: a test at α = 1/32 flags
    them (p <= α), one at α = 0.03 does not — so every case lost is caught, or never."""
    assert mcnemar_power(5, 1.0, 1.0, alpha=1 / 32) == pytest.approx(1.0)
    assert mcnemar_power(5, 1.0, 1.0, alpha=0.03) == 0.0
    assert mcnemar_power(6, 1.0, 1.0, alpha=1 / 64) == pytest.approx(1.0)  # 6 of 6: p = 1/64


def _oracle_detectable(n: int, rate: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest drop whose oracle power reaches ``power``, bisected to 1e-9."""
    low, high = 0.0, rate
    while high - low > 1e-9:
        middle = (low + high) / 2
        low, high = (low, middle) if _oracle_power(n, rate, middle, alpha) >= power else (middle, high)
    return high


@pytest.mark.parametrize(
    ("n", "rate", "alpha", "power"),
    [
        (30, 0.8, 0.05, 0.8),
        (30, 1.0, 0.05, 0.8),
        (50, 0.6, 0.01, 0.9),
        (15, 0.9, 0.1, 0.5),
        (10, 1.0, 0.05, 0.8),  # the first sum (the whole drop) starts at 2 flips
        (50, 1.0, 0.05, 0.95),  # Connor's drop overshoots the exact one by more than 10 %
        (30, 1.0, 0.01, 0.95),
        (30, 0.8, 0.05, 0.04),  # a power between the test's size and alpha: Connor says 0
    ],
)
def test_the_exact_detectable_drop_is_the_smallest_drop_with_the_power(
    n: int, rate: float, alpha: float, power: float
) -> None:
    """Within the promised 1e-5 above the true smallest drop (never below it: the power there
    falls short)."""
    expected = _oracle_detectable(n, rate, alpha, power)
    result = mcnemar_detectable_drop(n, rate, alpha=alpha, power=power)
    assert expected - 1e-9 <= result.drop <= expected + 1e-5
    sd = math.sqrt(2 * rate * (1 - rate))
    assert (result.n, result.repeats, result.sd, result.source, result.alpha, result.power, result.floor, result.method) == (
        n, 1, pytest.approx(sd), "independent_bernoulli", alpha, power, 0.0, "exact_mcnemar",
    )  # fmt: skip


def test_the_exact_detectable_drop_is_1_when_even_losing_everything_is_missed() -> None:
    result = mcnemar_detectable_drop(5, 0.8)
    sd = math.sqrt(0.32)
    assert (result.drop, result.n, result.repeats, result.sd, result.source, result.alpha, result.power, result.floor, result.method) == (
        1.0, 5, 1, pytest.approx(sd), "independent_bernoulli", 0.05, 0.8, 0.0, "exact_mcnemar",
    )  # fmt: skip


def test_a_power_reached_only_by_losing_everything_is_the_whole_rate() -> None:
    """Rate ½ on 5 cases: a run that fails everything regresses each case with probability ½ and
    fixes none, so 5 regressions (p = 1/32, flagged) come with probability exactly 1/32. That
    power is reached at the drop of the whole rate — which is 0.5, not "undetectable" (1)."""
    assert mcnemar_power(5, 0.5, 0.5) == pytest.approx(1 / 32)
    result = mcnemar_detectable_drop(5, 0.5, power=1 / 32)
    assert result.drop == pytest.approx(0.5, abs=1e-5)


def _oracle_connor(n: int, rate: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Connor's equation ``Δ √n = z(1 − α) √ψ + z(power) √(ψ − Δ²)`` solved by scipy's brentq."""
    z_alpha, z_power = stats.norm.ppf(1 - alpha), stats.norm.ppf(power)

    def gap(drop: float) -> float:
        flips = rate * (1 - rate + drop) + (1 - rate) * (rate - drop)
        return drop * math.sqrt(n) - z_alpha * math.sqrt(flips) - z_power * math.sqrt(max(0.0, flips - drop * drop))

    # from just above 0: with no noise at all (rate 1) Δ = 0 solves it trivially
    return float(optimize.brentq(gap, 1e-12, rate, xtol=1e-12)) if gap(rate) >= 0 else rate


@pytest.mark.parametrize(
    ("n", "rate", "alpha", "power"),
    [(30, 0.8, 0.05, 0.8), (2_000, 0.95, 0.05, 0.8), (100, 0.5, 0.01, 0.9), (400, 1.0, 0.1, 0.6), (6, 0.8, 0.05, 0.8)],
)
def test_connors_detectable_drop_solves_his_equation(n: int, rate: float, alpha: float, power: float) -> None:
    result = connor_detectable_drop(n, rate, alpha=alpha, power=power)
    assert result.drop == pytest.approx(_oracle_connor(n, rate, alpha, power), abs=2e-9)
    sd = math.sqrt(2 * rate * (1 - rate))
    assert (result.n, result.repeats, result.sd, result.source, result.alpha, result.power, result.floor, result.method) == (
        n, 1, pytest.approx(sd), "independent_bernoulli", alpha, power, 0.0, "connor_mcnemar",
    )  # fmt: skip


def test_connors_drop_is_the_whole_rate_when_his_equation_has_no_root() -> None:
    """Three cases at 0.8: even a drop to 0 leaves Δ √n below the right-hand side."""
    assert _oracle_connor(3, 0.8) == 0.8
    default = connor_detectable_drop(3, 0.8)
    assert (default.drop, default.alpha, default.power) == (0.8, 0.05, 0.8)
    assert connor_detectable_drop(30, 0.8).drop == pytest.approx(_oracle_connor(30, 0.8), abs=2e-9)


def test_an_exact_power_is_a_probability_even_where_its_terms_round_above_1() -> None:
    """50 cases at 0.8 all lost: nearly every term is certain, and their sum rounds a little above
    1 (1 + 2e-14); the power answered is still at most 1."""
    for n, rate, drop in [(50, 0.8, 0.8), (50, 0.95, 0.855), (30, 0.9, 0.9)]:
        power = mcnemar_power(n, rate, drop)
        assert power <= 1.0
        assert power == pytest.approx(_oracle_power(n, rate, drop), rel=1e-12)


def test_a_power_the_test_has_with_no_drop_needs_no_drop() -> None:
    """At power 0.01 — below the 2.3 % the exact test on 30 cases at 0.8 flags with no drop at all
    (its size) — the smallest drop detected is 0, within the bisection's 1e-5."""
    assert _oracle_power(30, 0.8, 0.0) > 0.01
    assert 0.0 <= mcnemar_detectable_drop(30, 0.8, power=0.01).drop <= 1e-5


def test_the_detectable_drops_refuse_what_they_cannot_answer_naming_the_argument() -> None:
    cases = [
        (lambda: connor_detectable_drop(0, 0.8), "n is 0, not an integer of at least 1"),
        (lambda: connor_detectable_drop(30, 0.8, power=1), "power is 1, not a number strictly between 0 and 1"),
        (lambda: connor_detectable_drop(30, 0.8, alpha=0.5), "alpha is 0.5, not a number strictly between 0 and 0.5"),
        (lambda: connor_detectable_drop(30, 1.2), "rate is 1.2, not a number in [0, 1]"),
        (lambda: mcnemar_detectable_drop(0, 0.8), "n is 0, not an integer of at least 1"),
        (lambda: mcnemar_detectable_drop(30, 0.8, alpha=0), "alpha is 0, not a number strictly between 0 and 0.5"),
        (lambda: mcnemar_power(30, 0.8, 0.1, alpha=0.5), "alpha is 0.5, not a number strictly between 0 and 0.5"),
        (lambda: repeats_needed(noise_from_rate(0.8), 0.1, 0), "n is 0, not an integer of at least 1"),
        (lambda: minimum_detectable_drop(noise_from_rate(0.8), 0), "n is 0, not an integer of at least 1"),
    ]
    for call, message in cases:
        with pytest.raises(StatisticsInputError) as caught:
            call()
        assert str(caught.value) == message


def test_one_case_is_a_set_too_small_to_detect_anything() -> None:
    """One case: the exact test can never flag it (p = 1/2), so no drop is detected (1); Connor's
    equation has no root below the rate (√1 · 0.8 < 1.645 · √0.8), so it answers the rate."""
    assert mcnemar_detectable_drop(1, 0.8).drop == 1.0
    assert _oracle_connor(1, 0.8) == 0.8
    assert connor_detectable_drop(1, 0.8).drop == 0.8


@pytest.mark.parametrize(("flips", "regressions"), [(4, 4), (10, 9), (12, 10), (20, 15), (33, 24)])
def test_an_alpha_equal_to_an_attainable_p_value_flags_what_the_gate_flags(flips: int, regressions: int) -> None:
    """At ``alpha`` = P(X >= c) exactly (1/16 for 4 of 4 flips), the gate flags c regressions
    (p <= alpha); power's critical count must be c too, not c + 1 from the running tail's rounding."""
    from evalkit.stats.binary import mcnemar_drop_p
    from evalkit.stats.power import _CriticalRegressions

    # P(X >= c), X ~ Binomial(m, 1/2), as an exact fraction rounded once
    alpha = sum(math.comb(flips, j) for j in range(regressions, flips + 1)) / 2**flips
    assert mcnemar_drop_p(regressions, flips - regressions) <= alpha < mcnemar_drop_p(regressions - 1, flips - regressions + 1)
    critical = _CriticalRegressions(alpha)
    # asked in increasing order, as mcnemar_power asks it (the running tail), then directly
    assert [critical(m) for m in range(1, flips + 1)][-1] == regressions
    assert _CriticalRegressions(alpha)(flips) == regressions


def test_a_certain_drop_is_detected_with_power_one_at_an_attainable_alpha() -> None:
    """Every case regresses (rate 1, drop 1): 4 of 4 flips, p = 1/16, flagged at alpha 1/16."""
    assert mcnemar_power(4, 1.0, 1.0, alpha=0.0625) == 1.0
    assert mcnemar_power(4, 1.0, 1.0, alpha=0.0624) == 0.0


@pytest.mark.parametrize(
    ("n", "rate", "alpha", "power", "drop"),
    [
        (30, 0.8, 0.05, 0.8, 0.33485662509296976),  # Connor's bracket holds: bisected as it stands
        (200, 0.7, 0.05, 0.8, 0.12449919489830462),
        (30, 1.0, 0.05, 0.8, 0.21391396454596284),  # Connor's drop too small: the bracket's top doubles
        (30, 0.8, 0.05, 0.04, 0.025318957503326238),  # Connor's drop ~0: the top doubles up from 1e-4
        (15, 0.9, 0.1, 0.5, 0.27655227816156713),
        (50, 1.0, 0.05, 0.95, 0.17379368658403105),  # Connor's drop too large: the bottom halves
    ],
)
def test_the_exact_detectable_drop_is_reproducible_bit_for_bit(
    n: int, rate: float, alpha: float, power: float, drop: float
) -> None:
    """Pinned from the search: a bracket around Connor's drop (0.9 and 1.1 times it, plus 1e-4),
    its top doubled or its bottom halved until the exact power is short at the bottom and met at
    the top, then bisected to 1e-5. The drop is the end of that fixed sequence of halvings, each
    step decided by a power at least 8e-7 away from the target (far beyond rounding), so it is the
    same float on every machine — and any other bracket or step lands elsewhere within the 1e-5."""
    result = mcnemar_detectable_drop(n, rate, alpha=alpha, power=power)
    assert result.drop == drop
    assert mcnemar_power(n, rate, drop, alpha=alpha) >= power > mcnemar_power(n, rate, drop - 1e-5, alpha=alpha)


def test_connors_bisection_stops_at_a_bracket_exactly_1e_9_wide() -> None:
    """Connor's drop is bisected while the bracket is wider than 1e-9. At rate 2^29 · 1e-9 on
    10^20 cases the root lies near 1.8e-10, so every step keeps the bottom at 0 and halves the
    top exactly: after 29 steps the bracket is [0, 1e-9], exactly 1e-9 wide, and the search
    stops there, answering its top."""
    rate = 1e-9 * 2**29
    assert _oracle_connor(10**20, rate) < 5e-10
    assert connor_detectable_drop(10**20, rate).drop == 1e-9
