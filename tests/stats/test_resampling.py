"""The seeded paired bootstrap agrees with ``scipy.stats.bootstrap(..., paired=True)`` and the
sign-flip test with ``scipy.stats.permutation_test`` on the same data."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np
import pytest
from evalkit.stats import StatisticsInputError, paired_binary, paired_bootstrap, sign_flip_test
from evalkit.stats.resampling import (
    bootstrap_from_differences,
    bootstrap_intervals,
    quantile,
    sign_flip_from_differences,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats


def tables() -> list[tuple[list[float], list[float]]]:
    rng = random.Random(33)
    result = []
    for size in (20, 24, 30, 45, 60):
        baseline = [rng.random() for _ in range(size)]
        result.append((baseline, [min(1.0, max(0.0, b + rng.gauss(-0.05, 0.25))) for b in baseline]))
    # pass fractions of 3 repeats: the resampled means lie on a lattice of step 1 / (3 n), so two
    # independent samplers can land a step apart; from 45 cases on the step is below 0.01
    for size in (45, 60, 90):
        passes = [rng.randrange(4) / 3 for _ in range(size)]
        result.append((passes, [max(0.0, p - rng.choice((0, 0, 1 / 3, 2 / 3))) for p in passes]))
    return result


TABLES = tables()
IDS = [f"n{len(b)}-{i}" for i, (b, _) in enumerate(TABLES)]


def mean_difference(baseline: np.ndarray, current: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(current - baseline, axis=axis)


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize(("baseline", "current"), TABLES, ids=IDS)
def test_bootstrap_within_a_hundredth_of_scipy(baseline: list[float], current: list[float], method: str) -> None:
    ours = paired_bootstrap(baseline, current, resamples=20_000, seed=7, method=method)  # type: ignore[arg-type]
    theirs = stats.bootstrap(
        (np.array(baseline), np.array(current)),
        mean_difference,
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert ours.method == method
    assert abs(ours.interval.low - theirs.low) < 0.01
    assert abs(ours.interval.high - theirs.high) < 0.01
    assert ours.interval.low <= ours.delta <= ours.interval.high


def test_bootstrap_is_reproducible_from_its_seed() -> None:
    baseline, current = TABLES[0]
    first = paired_bootstrap(baseline, current, seed=11)
    assert first == paired_bootstrap(baseline, current, seed=11)
    assert (first.seed, first.resamples) == (11, 2_000)
    assert first.interval != paired_bootstrap(baseline, current, seed=12).interval


def test_bootstrap_levels_share_their_resamples() -> None:
    baseline, current = TABLES[2]
    diffs = [c - b for b, c in zip(baseline, current, strict=True)]
    wide, narrow = bootstrap_intervals(diffs, (0.95, 0.9), resamples=3_000, seed=5)
    assert wide == paired_bootstrap(baseline, current, resamples=3_000, seed=5)
    assert wide.interval.low <= narrow.interval.low <= narrow.interval.high <= wide.interval.high


def test_bootstrap_edges() -> None:
    one = paired_bootstrap([0.2], [0.9])
    assert (one.interval.low, one.interval.high) == (-1.0, 1.0)
    flat = paired_bootstrap([0.5, 0.5, 0.5], [0.25, 0.25, 0.25])
    assert (flat.interval.low, flat.interval.high, flat.delta) == (-0.25, -0.25, -0.25)
    # every resampled mean above the estimate cannot happen; one-sided data falls back cleanly
    lopsided = paired_bootstrap([0.0] * 9 + [0.0], [0.0] * 9 + [1.0], resamples=500)
    assert lopsided.interval.low == 0.0
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    with pytest.raises(StatisticsInputError, match="method"):
        paired_bootstrap([0.1, 0.2], [0.2, 0.3], method="basic")  # type: ignore[arg-type]
    with pytest.raises(StatisticsInputError, match="resamples"):
        paired_bootstrap([0.1, 0.2], [0.2, 0.3], resamples=0)
    with pytest.raises(StatisticsInputError, match="seed"):
        paired_bootstrap([0.1, 0.2], [0.2, 0.3], seed=1.5)  # type: ignore[arg-type]


def exact_permutation(diffs: list[float], alternative: str) -> float:
    return stats.permutation_test(
        (np.array(diffs),),
        lambda x, axis=-1: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alternative,
    ).pvalue


@pytest.mark.parametrize("size", [5, 8, 11, 13])
def test_exact_sign_flip_equals_scipy_exact_permutation(size: int) -> None:
    rng = random.Random(size)
    baseline = [rng.random() for _ in range(size)]
    current = [min(1.0, max(0.0, b + rng.gauss(-0.1, 0.2))) for b in baseline]
    diffs = [c - b for b, c in zip(baseline, current, strict=True)]
    ours = sign_flip_test(baseline, current)
    assert ours.method == "exact" and ours.samples == 0
    assert ours.p_drop == pytest.approx(exact_permutation(diffs, "less"), abs=1e-12)
    assert ours.p_value == pytest.approx(exact_permutation(diffs, "two-sided"), abs=1e-12)


@pytest.mark.parametrize(("baseline", "current"), TABLES[:6], ids=IDS[:6])
def test_sampled_sign_flip_is_close_to_scipy(baseline: list[float], current: list[float]) -> None:
    diffs = np.array(current) - np.array(baseline)
    ours = sign_flip_test(baseline, current, samples=20_000, seed=3, stop_after=None)
    # two independent samplers of 20,000: the one-sided p-values differ by 0.005 (sd) at most;
    # scipy doubles a one-sided tail for the two-sided one, which doubles its noise
    for alternative, value, within in (("less", ours.p_drop, 0.02), ("two-sided", ours.p_value, 0.03)):
        theirs = stats.permutation_test(
            (diffs,),
            lambda x, axis=-1: np.mean(x, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=20_000,
            alternative=alternative,
            rng=np.random.default_rng(3),
        ).pvalue
        assert abs(value - theirs) < within
    assert ours.seed == 3 and ours == sign_flip_test(baseline, current, samples=20_000, seed=3, stop_after=None)
    assert ours.samples == (20_000 if ours.method == "monte_carlo" else 0)


def test_hit_rates_get_the_exact_sign_test_which_is_mcnemar() -> None:
    rng = random.Random(4)
    baseline = [rng.random() < 0.8 for _ in range(200)]
    current = [rng.random() < 0.7 for _ in range(200)]
    flip = sign_flip_test([float(b) for b in baseline], [float(c) for c in current])
    binary = paired_binary(baseline, current)
    assert (flip.method, flip.samples, flip.seed, flip.n) == ("exact", 0, 0, 200)
    assert (flip.p_value, flip.p_drop) == (binary.p_value, binary.p_drop)


def test_many_sizes_sample_from_byte_tables_and_huge_sets_use_the_normal_limit() -> None:
    rng = random.Random(8)
    diffs = [rng.uniform(-0.5, 0.45) for _ in range(300)]
    sampled = sign_flip_from_differences(diffs, samples=4_000, seed=1)
    assert sampled.method == "monte_carlo"
    exact_t = stats.ttest_1samp(diffs, 0.0, alternative="less").pvalue
    assert abs(sampled.p_drop - exact_t) < 0.03  # Smucker et al.: the two agree closely
    few_sizes = [rng.choice((-0.5, -0.25, 0.25, 0.5, 1.0, -1.0)) for _ in range(400)]
    grouped = sign_flip_from_differences(few_sizes, samples=4_000, seed=1)
    assert grouped.method == "monte_carlo"
    assert abs(grouped.p_drop - stats.ttest_1samp(few_sizes, 0.0, alternative="less").pvalue) < 0.03
    huge = [rng.uniform(-0.3, 0.3) for _ in range(40_000)]
    normal = sign_flip_from_differences(huge)
    assert normal.method == "normal" and 0 < normal.error_bound <= 0.01 and normal.samples == 0
    assert normal.p_drop == pytest.approx(stats.ttest_1samp(huge, 0.0, alternative="less").pvalue, abs=0.01)


def test_large_p_values_stop_sampling_early() -> None:
    rng = random.Random(21)
    baseline = [rng.random() for _ in range(300)]
    current = [min(1.0, max(0.0, b + rng.gauss(0.0, 0.1))) for b in baseline]
    early = sign_flip_test(baseline, current, samples=20_000, seed=1)
    full = sign_flip_test(baseline, current, samples=20_000, seed=1, stop_after=None)
    assert early.method == full.method == "monte_carlo"
    assert early.samples < 2_000 < full.samples
    assert early.p_drop == pytest.approx(full.p_drop, rel=0.2)
    assert early.p_value == pytest.approx(full.p_value, rel=0.2)
    regressed = sign_flip_test(baseline, [max(0.0, c - 0.05) for c in current], samples=3_000, seed=1)
    assert regressed.samples == 3_000 and regressed.p_drop < 0.01


def test_sign_flip_edges() -> None:
    nothing = sign_flip_test([0.3, 0.4], [0.3, 0.4])
    assert (nothing.p_value, nothing.p_drop, nothing.method, nothing.samples, nothing.n) == (1.0, 1.0, "exact", 0, 2)
    with pytest.raises(StatisticsInputError, match="samples"):
        sign_flip_test([0.1], [0.2], samples=0)
    with pytest.raises(StatisticsInputError, match="differences are empty"):
        sign_flip_from_differences([])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=40))
def test_sign_flip_p_values_are_probabilities_and_mirror(pairs: list[tuple[float, float]]) -> None:
    baseline = [b for b, _ in pairs]
    current = [c for _, c in pairs]
    # the same seed draws the same sign patterns, so |T| — and the two-sided p — mirror exactly
    # (when sampling runs its course: an early stop depends on which tail fills first)
    forward = sign_flip_test(baseline, current, samples=500, seed=2, stop_after=None)
    backward = sign_flip_test(current, baseline, samples=500, seed=2, stop_after=None)
    assert 0 < forward.p_drop <= 1 and 0 < forward.p_value <= 1
    assert forward.p_value == pytest.approx(backward.p_value, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=40))
def test_bootstrap_interval_holds_its_estimate(pairs: list[tuple[float, float]]) -> None:
    result = paired_bootstrap([b for b, _ in pairs], [c for _, c in pairs], resamples=300, method="percentile")
    assert -1.0 <= result.interval.low <= result.interval.high <= 1.0
    assert result.interval.low - 1e-12 <= result.delta <= result.interval.high + 1e-12


def test_the_sampled_sign_flip_p_values_are_reproducible_counts_of_the_seeded_draws() -> None:
    """Pinned from the seeded draws: (1 + hits) / (1 + samples) in both tails, the byte-table and
    the grouped sampler, drawing every sample or stopping once both tails have enough hits."""
    rng = random.Random(8)
    diffs = [rng.uniform(-0.5, 0.45) for _ in range(300)]
    few_sizes = [rng.choice((-0.5, -0.25, 0.25, 0.5, 1.0, -1.0)) for _ in range(400)]
    drawn = sign_flip_from_differences(diffs, samples=4_000, seed=1, stop_after=None)
    assert (drawn.n, drawn.method, drawn.samples, drawn.seed) == (300, "monte_carlo", 4_000, 1)
    assert drawn.delta == pytest.approx(sum(diffs) / 300, rel=1e-12)
    assert (drawn.p_value * 4_001, drawn.p_drop * 4_001) == (pytest.approx(1_795), pytest.approx(912))
    grouped = sign_flip_from_differences(few_sizes, samples=4_000, seed=1, stop_after=None)
    assert (grouped.p_value * 4_001, grouped.p_drop * 4_001) == (pytest.approx(2_180), pytest.approx(1_072))
    early = sign_flip_from_differences(few_sizes, samples=4_000, seed=1)
    assert early.samples == 736 and (early.p_value, early.p_drop) == (
        pytest.approx(391 / 736),
        pytest.approx(200 / 736),
    )
    default = sign_flip_from_differences(diffs, stop_after=None)
    assert (default.samples, default.seed) == (10_000, 0)
    assert (default.p_value * 10_001, default.p_drop * 10_001) == (pytest.approx(4_533), pytest.approx(2_279))


def test_the_normal_limit_is_the_sign_flip_sums_own_normal() -> None:
    from evalkit.stats.distributions import normal_cdf

    rng = random.Random(8)
    huge = [rng.uniform(-0.3, 0.3) for _ in range(40_000)]
    normal = sign_flip_from_differences(huge)
    z = math.fsum(huge) / math.sqrt(math.fsum(d * d for d in huge))
    assert normal.method == "normal" and (normal.seed, normal.samples) == (0, 0)
    assert normal.p_value == pytest.approx(2 * normal_cdf(-abs(z)), rel=1e-9)
    assert normal.p_drop == pytest.approx(normal_cdf(z), rel=1e-9)
    bound = 0.56 * math.fsum(abs(d) ** 3 for d in huge) / math.fsum(d * d for d in huge) ** 1.5
    assert normal.error_bound == pytest.approx(bound, rel=1e-9)
    # the method follows the bound alone; a few samples show it (10,000 of 40,000 flips took seconds)
    assert sign_flip_from_differences(huge, normal_error=bound / 2, samples=50).method == "monte_carlo"
    assert sign_flip_from_differences(huge, normal_error=normal.error_bound).method == "normal"  # at most: the edge too
    assert sign_flip_from_differences([0.0, 0.0], seed=7).seed == 7


SKEWED = [0.9, -0.1, -0.05, -0.1, 0.0, -0.05, 0.6, -0.1, -0.02, 0.05, -0.1, 0.3]


def test_the_bca_interval_of_a_skewed_sample_is_reproducible_from_its_seed() -> None:
    """Pinned from the seeded resamples: the bias correction and the acceleration move the BCa
    ends away from the percentile ends of the same resamples (a right-skewed sample: both up)."""
    from evalkit.stats.resampling import bootstrap_from_differences

    bca = bootstrap_from_differences(SKEWED)
    assert (bca.method, bca.resamples, bca.seed, bca.n) == ("bca", 2_000, 0, 12)
    assert (bca.interval.low, bca.interval.high) == (
        pytest.approx(-0.025, rel=1e-9),
        pytest.approx(0.37302788414838045, rel=1e-9),
    )
    plain = bootstrap_from_differences(SKEWED, method="percentile")
    assert (plain.interval.low, plain.interval.high) == (
        pytest.approx(-0.043333333333333335),
        pytest.approx(0.31083333333333335),
    )
    both = bootstrap_intervals(SKEWED, (0.95, 0.9), resamples=500, seed=3)
    ends = [(b.interval.low, b.interval.high, b.interval.confidence) for b in both]
    assert ends == [
        (pytest.approx(-0.032645559940679074, rel=1e-9), pytest.approx(0.3580124654112675, rel=1e-9), 0.95),
        (pytest.approx(-0.018333333333333337, rel=1e-9), pytest.approx(0.28524560188359915, rel=1e-9), 0.9),
    ]
    same = bootstrap_intervals([0.2, 0.2, 0.2], (0.95,))[0]
    assert (same.delta, same.interval.low, same.interval.high, same.resamples, same.seed) == (0.2, 0.2, 0.2, 2_000, 0)


def test_quantiles_at_the_ends_and_between() -> None:
    values = [0.0, 1.0, 2.0, 3.0]
    assert (quantile(values, 0.0), quantile(values, 0.5), quantile(values, 1.0)) == (0.0, 1.5, 3.0)


def test_the_exact_sign_flip_counts_every_sign_pattern() -> None:
    # five differences, 32 sign patterns; the observed sum 1.75 is reached or passed in size by 6,
    # and 31 of them are at most it
    exact = sign_flip_from_differences([0.5, -0.25, 0.25, 0.5, 0.75])
    assert exact.method == "exact" and (exact.p_value, exact.p_drop) == (pytest.approx(6 / 32), pytest.approx(31 / 32))


def test_the_sign_flip_is_exact_up_to_fifty_thousand_group_sums() -> None:
    # two sizes, 249 and 199 times: 250 * 200 = 50 000 possible sums, enumerated
    at_limit = sign_flip_from_differences([0.5] * 249 + [-0.25] * 199)
    assert at_limit.method == "exact" and at_limit.error_bound == 0.0
    # 2 and 16 666 times: 3 * 16 667 = 50 001, one too many to enumerate
    beyond = sign_flip_from_differences([0.5] * 2 + [-0.25] * 16_666)
    assert beyond.method != "exact"


def test_a_bias_correction_that_is_undefined_falls_back_to_the_percentile_interval() -> None:
    from evalkit.stats.resampling import bootstrap_from_differences

    # one resample: its mean is below the estimate (seed 0) or above it (seed 2), never both sides
    for seed, mean in ((0, 0.05833333333333333), (2, 0.12166666666666666)):
        single = bootstrap_from_differences(SKEWED, resamples=1, seed=seed)
        assert single.method == "percentile" and single.interval.low == single.interval.high == pytest.approx(mean)


def reference_means(diffs: list[float], resamples: int, seed: int) -> np.ndarray:
    """The documented seeded resampling: ``resamples`` means of ``n`` cases drawn with replacement
    by ``random.Random(seed).choices``, sorted."""
    draw = random.Random(seed).choices
    return np.sort([math.fsum(draw(diffs, k=len(diffs))) / len(diffs) for _ in range(resamples)])


def reference_bca(diffs: list[float], means: np.ndarray, confidence: float) -> tuple[float, float]:
    """Efron & Tibshirani (1993) eq. 14.10–14.15 from scratch: the bias correction from the share
    of resampled means below the estimate (ties counted half), the acceleration from the jackknife
    means (each case left out in turn), and the ends read by numpy's linear quantile."""
    data = np.array(diffs)
    estimate = math.fsum(diffs) / len(diffs)
    share = (np.sum(means < estimate) + 0.5 * np.sum(means == estimate)) / len(means)
    z0 = stats.norm.ppf(share)
    jackknife = np.array([np.mean(np.delete(data, i)) for i in range(len(data))])
    spread = jackknife.mean() - jackknife
    acceleration = np.sum(spread**3) / (6 * np.sum(spread**2) ** 1.5)
    ends = []
    for alpha in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = z0 + stats.norm.ppf(alpha)
        ends.append(float(np.quantile(means, stats.norm.cdf(z0 + z / (1 - acceleration * z)))))
    return ends[0], ends[1]


# integer differences: the resampled means land exactly on the estimate 1 / 10 again and again
LATTICE = [1.0, 0.0, -1.0, 0.0, 1.0, 1.0, 0.0, -1.0, 0.0, 0.0]
LEFT_SKEWED = [-0.9, 0.1, 0.05, 0.1, 0.0, 0.05, -0.6, 0.1, 0.02, -0.05, 0.1, -0.3, 0.08]


@pytest.mark.parametrize("diffs", [SKEWED, LEFT_SKEWED, LATTICE], ids=["right-skewed", "left-skewed", "ties"])
def test_the_bca_ends_are_efrons_formula_on_the_seeded_resamples(diffs: list[float]) -> None:
    """Each BCa end equals Efron's bias-corrected, accelerated quantile computed independently
    (numpy, scipy's normal, a jackknife) from the same seeded resamples, at several levels."""
    means = reference_means(diffs, 1_000, seed=4)
    if diffs is LATTICE:  # the ties the bias correction counts half are there
        assert np.sum(means == 0.1) > 50
    results = bootstrap_intervals(diffs, (0.95, 0.8, 0.5), resamples=1_000, seed=4)
    for result, confidence in zip(results, (0.95, 0.8, 0.5), strict=True):
        low, high = reference_bca(diffs, means, confidence)
        assert result.method == "bca" and result.interval.confidence == confidence
        assert (result.interval.low, result.interval.high) == (
            pytest.approx(low, rel=1e-9),
            pytest.approx(high, rel=1e-9),
        )
        assert (result.n, result.resamples, result.seed) == (len(diffs), 1_000, 4)


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_the_percentile_ends_are_numpys_quantiles_of_the_seeded_resamples(confidence: float) -> None:
    """The percentile interval reads the (1 ∓ confidence) / 2 quantiles of the resampled means."""
    means = reference_means(LEFT_SKEWED, 700, seed=9)
    result = bootstrap_intervals(LEFT_SKEWED, (confidence,), resamples=700, seed=9, method="percentile")[0]
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    assert result.method == "percentile"
    assert (result.interval.low, result.interval.high) == (
        pytest.approx(low, rel=1e-12),
        pytest.approx(high, rel=1e-12),
    )


def test_bootstrap_of_two_different_cases_resamples_them() -> None:
    """Two cases already resample (only one case gives the uninformative [-1, 1]): the means of
    two draws from {0.25, 0.75} are 0.25, 0.5 or 0.75, so the percentile ends are two of them."""
    two = bootstrap_from_differences([0.25, 0.75], method="percentile", resamples=400, seed=1)
    assert two.method == "percentile" and two.n == 2 and two.delta == 0.5
    assert (two.interval.low, two.interval.high) == (0.25, 0.75)


def test_a_spread_below_float_resolution_falls_back_to_the_percentile_interval() -> None:
    """Differences of 1e-170 apart: their squared deviations underflow to 0, so the acceleration
    is undefined and the percentile interval of the (still distinct) resampled means is used."""
    tiny = [0.0, 1e-170, 0.0, 1e-170, 0.0]
    result = bootstrap_from_differences(tiny, resamples=300, seed=2)
    means = reference_means(tiny, 300, seed=2)
    assert result.method == "percentile"
    assert (result.interval.low, result.interval.high) == tuple(np.quantile(means, [0.025, 0.975]))


def test_the_documented_defaults_of_the_bootstrap() -> None:
    """95 %, 2,000 resamples, seed 0 and BCa, for each entry point."""
    baseline, current = TABLES[0]
    diffs = [c - b for b, c in zip(baseline, current, strict=True)]
    default = paired_bootstrap(baseline, current)
    assert (default.interval.confidence, default.resamples, default.seed, default.method) == (0.95, 2_000, 0, "bca")
    assert default == paired_bootstrap(baseline, current, 0.95, resamples=2_000, seed=0, method="bca")
    (levels,) = bootstrap_intervals(diffs, (0.95,))
    assert (levels.resamples, levels.seed, levels.method) == (2_000, 0, "bca")
    assert levels.interval == default.interval
    flat = bootstrap_intervals([0.5, 0.5], (0.9,))[0]
    assert flat.method == "bca" and (flat.resamples, flat.seed) == (2_000, 0)


def all_sign_patterns(diffs: list[float], unit: float) -> tuple[np.ndarray, int]:
    """Every sign pattern's sum of |d| (in whole units, so exactly) and the observed sum."""
    sizes = np.array([round(abs(d) / unit) for d in diffs])
    signs = 1 - 2 * ((np.arange(2 ** len(diffs))[:, None] >> np.arange(len(diffs))) & 1)
    return signs @ sizes, round(sum(diffs) / unit)


@pytest.mark.parametrize("positives", [(0, 3, 4), (1, 7, 7), (0, 5, 2)])
def test_the_exact_sign_flip_of_repeated_sizes_matches_every_sign_pattern(positives: tuple[int, int, int]) -> None:
    """Sizes 1/8, 1/2 and 5/8 repeated 1, 7 and 7 times: the enumerated distribution of the sums
    equals the count over all 2**15 sign patterns; an observed sum of 0 (resp. the largest sum)
    puts every pattern in the two-sided (resp. lower) tail, a p-value of exactly 1."""
    diffs = []
    for size, count, positive in zip((0.125, 0.5, 0.625), (1, 7, 7), positives, strict=True):
        diffs += [size] * positive + [-size] * (count - positive)
    sums, observed = all_sign_patterns(diffs, 0.125)
    result = sign_flip_from_differences(diffs)
    assert result.method == "exact" and result.samples == 0
    assert result.p_value == pytest.approx(np.mean(np.abs(sums) >= abs(observed)), rel=1e-12)
    assert result.p_drop == pytest.approx(np.mean(sums <= observed), rel=1e-12)
    if observed == 0:
        assert result.p_value == 1.0
    if observed == sums.max():
        assert result.p_drop == 1.0


@pytest.mark.parametrize(("gap", "p_drop"), [(1.2e-10, 10 / 16), (1.3e-10, 8 / 16)])
def test_sign_flip_sums_closer_than_the_slack_count_as_ties(gap: float, p_drop: float) -> None:
    """Sums within 1e-10 (1 + Σ|d|) of each other are one sum (float noise), farther apart two.
    Cases 0.25, −0.25, 0.5, −(0.5 + g): observed −g; of the 16 patterns 8 sum to at most −g, and
    2 more sum to +g, within 2g of it — a tie when 2g <= 1e-10 (1 + 1.5 + g) ≈ 2.5e-10."""
    result = sign_flip_from_differences([0.25, -0.25, 0.5, -(0.5 + gap)])
    assert result.method == "exact"
    assert result.p_drop == pytest.approx(p_drop, rel=1e-12)
    assert result.p_value == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize(("sizes", "shift"), [("many", 0.08), ("many", -0.03), ("few", 0.05), ("few", -0.05)])
def test_sequential_sampling_stops_when_the_later_tail_reaches_its_hits(sizes: str, shift: float) -> None:
    """Besag & Clifford: sampling stops at the first draw where both tails have ``stop_after``
    hits, so the tail that filled last (the smaller p-value: the two-sided one after a clear rise,
    the lower one after a drop) holds exactly ``stop_after`` of the ``drawn`` samples."""
    rng = random.Random(12)
    if sizes == "many":  # 60 distinct sizes: the byte tables
        diffs = [shift + rng.uniform(-0.5, 0.5) for _ in range(60)]
    else:  # six sizes, 120 cases: the grouped sampler
        diffs = [shift + rng.choice((-0.25, 0.25, -0.5, 0.5, 0.75, -0.75)) for _ in range(120)]
    result = sign_flip_from_differences(diffs, samples=50_000, seed=3, stop_after=40)
    assert result.method == "monte_carlo" and result.samples < 50_000
    hits = (round(result.p_value * result.samples), round(result.p_drop * result.samples))
    assert min(hits) == 40
    assert (hits[0] == 40) == (shift > 0)


def sorted_groups(diffs: list[float]) -> tuple[list[float], list[int], list[int]]:
    """The distinct sizes |d| in increasing order, how many cases share each, how many are > 0."""
    values = sorted({abs(d) for d in diffs if d})
    counts = [sum(1 for d in diffs if abs(d) == v) for v in values]
    positives = [sum(1 for d in diffs if d == v) for v in values]
    return values, counts, positives


def reference_grouped_sums(diffs: list[float], samples: int, seed: int) -> tuple[list[float], float]:
    """Sampled sign-flip sums of the documented grouped sampler: each group of c equal sizes v
    adds v (2X - c), X the set bits of c random bits, groups in increasing size."""
    values, counts, positives = sorted_groups(diffs)
    rng = random.Random(seed)
    sums = [
        math.fsum(v * (2 * rng.getrandbits(c).bit_count() - c) for v, c in zip(values, counts, strict=True))
        for _ in range(samples)
    ]
    return sums, math.fsum(v * (2 * p - c) for v, c, p in zip(values, counts, positives, strict=True))


def reference_byte_table_sums(diffs: list[float], samples: int, seed: int) -> tuple[list[float], float]:
    """Sampled sign-flip sums of the documented byte-table sampler: the sizes in increasing order
    in blocks of eight; one random byte per block, whose bit i gives the sign of the block's
    i-th size (the block's sum accumulated in size order)."""
    sizes = sorted(abs(d) for d in diffs if d)
    blocks = [sizes[start : start + 8] for start in range(0, len(sizes), 8)]
    rng = random.Random(seed)
    sums = []
    for _ in range(samples):
        picks = rng.randbytes(len(blocks))
        parts = []
        for block, byte in zip(blocks, picks, strict=True):
            total = 0.0
            for i, size in enumerate(block):
                total = total + size if byte >> i & 1 else total - size
            parts.append(total)
        sums.append(math.fsum(parts))
    return sums, math.fsum(diffs)


def monte_carlo_p_values(sums: list[float], observed: float, diffs: list[float]) -> tuple[float, float]:
    """Phipson & Smyth's (1 + hits) / (1 + samples) in both tails, sums within the documented
    1e-10 (1 + sum |d|) of the observed one counting as hits."""
    slack = 1e-10 * (1.0 + math.fsum(abs(d) for d in diffs))
    lower = sum(1 for s in sums if s <= observed + slack)
    extreme = sum(1 for s in sums if abs(s) >= abs(observed) - slack)
    return (1 + extreme) / (1 + len(sums)), (1 + lower) / (1 + len(sums))


@pytest.mark.parametrize(
    ("sizes", "cases", "sampler"),
    [(16, 16, reference_grouped_sums), (17, 17, reference_byte_table_sums), (17, 1_088, reference_grouped_sums),
     (17, 1_087, reference_byte_table_sums), (17, 1_100, reference_grouped_sums), (40, 45, reference_byte_table_sums),
     (5, 600, reference_grouped_sums)],
)  # fmt: skip
def test_the_sampled_p_values_are_the_documented_samplers_counts(
    sizes: int, cases: int, sampler: Callable[[list[float], int, int], tuple[list[float], float]]
) -> None:
    """The Monte Carlo p-values are (1 + hits) / (1 + samples) over the sums of the sampler the
    docstring names, rebuilt here from the seed: the grouped one up to max(16, n // 64) distinct
    sizes (16 of 16 cases, 17 of 1,088 or of 1,100), the byte tables beyond (17 of 17 or of 1,087
    cases). At 1,088 cases each size fills whole blocks of eight, where the two samplers draw the
    same sums from the same bits; 1,100 cases (1100 // 64 = 17) tell them apart."""
    rng = random.Random(sizes * cases)
    levels = [round(rng.uniform(0.05, 1.0), 6) for _ in range(sizes)]
    diffs = [levels[i % sizes] * rng.choice((-1.0, 1.0)) for i in range(cases)]
    assert len({abs(d) for d in diffs}) == sizes
    result = sign_flip_from_differences(diffs, samples=1_500, seed=6, stop_after=None, normal_error=0.001)
    sums, observed = sampler(diffs, 1_500, 6)
    assert result.method == "monte_carlo" and result.samples == 1_500
    assert (result.p_value, result.p_drop) == monte_carlo_p_values(sums, observed, diffs)


def test_quantiles_interpolate_up_to_the_last_pair() -> None:
    """Definition 7 between the last two order statistics: position (4 - 1) * 0.9 = 2.7 lies 0.7 of
    the way from the third value to the fourth."""
    assert quantile([0.0, 1.0, 2.0, 3.0], 0.9) == pytest.approx(2.7, rel=1e-15)
    assert quantile([0.0, 10.0], 0.25) == 2.5


def test_the_documented_defaults_of_the_sign_flip_test() -> None:
    """Seed 0 and 10,000 samples: the default call is the explicit one, and says so."""
    rng = random.Random(8)
    baseline = [rng.random() for _ in range(40)]
    current = [min(1.0, max(0.0, b + rng.gauss(0.0, 0.2))) for b in baseline]
    default = sign_flip_test(baseline, current, stop_after=None)
    assert default.method == "monte_carlo" and (default.seed, default.samples) == (0, 10_000)
    assert default == sign_flip_test(baseline, current, samples=10_000, seed=0, stop_after=None)
    assert sign_flip_test([0.3, 0.4], [0.3, 0.5]).seed == 0


def test_the_normal_limit_weighs_each_size_by_how_many_cases_share_it() -> None:
    """Three sizes shared by 20,000 cases each (far beyond fifty thousand group sums, a
    Berry–Esseen bound of 0.003): the normal limit has variance Σ d² over every case, and the
    bound sums |d|³ over every case too."""
    diffs = [0.25] * 10_500 + [-0.25] * 9_500 + [0.5] * 9_800 + [-0.5] * 10_200 + [-1.0] * 10_050 + [1.0] * 9_950
    result = sign_flip_from_differences(diffs)
    variance = math.fsum(d * d for d in diffs)
    z = math.fsum(diffs) / math.sqrt(variance)
    bound = 0.56 * math.fsum(abs(d) ** 3 for d in diffs) / variance**1.5
    assert (result.method, result.samples, result.n) == ("normal", 0, 60_000)
    assert result.error_bound == pytest.approx(bound, rel=1e-12)
    assert result.p_drop == pytest.approx(stats.norm.cdf(z), rel=1e-9)
    assert result.p_value == pytest.approx(2 * stats.norm.cdf(-abs(z)), rel=1e-9)


@pytest.mark.parametrize(
    ("diffs", "p_value", "p_drop"),
    [
        # sizes 3e-11 and x, observed 3e-11 - x: the pattern +3e-11 + x lies exactly the slack above it
        ([3e-11, -5.0000000004e-11], 1.0, 1.0),
        ([3e-11, -math.nextafter(5.0000000004e-11, 1.0)], 1.0, 3 / 4),  # one float farther: beyond
        # sizes y and 0.3, observed 0.3 + y: the patterns ±(0.3 - y) lie exactly the slack below it in size
        ([6.500003313369972e-11, 0.3], 1.0, 1.0),
        ([math.nextafter(6.500003313369972e-11, 1.0), 0.3], 1 / 2, 1.0),
    ],
)
def test_an_enumerated_sum_exactly_the_slack_away_is_a_tie(diffs: list[float], p_value: float, p_drop: float) -> None:
    """A sum within the slack 1e-10 (1 + Σ|d|) of the observed one counts as reaching it, the
    edge included (≤ in the lower tail, ≥ in size for the two-sided one); the next float past
    the edge does not. The differences are chosen so that the sums land on the edge exactly."""
    result = sign_flip_from_differences(diffs)
    assert result.method == "exact"
    assert (result.p_value, result.p_drop) == (pytest.approx(p_value, rel=1e-12), pytest.approx(p_drop, rel=1e-12))


HALVES = [0.5] * 6_250 + [-0.5] * 6_250


@pytest.mark.parametrize(
    ("diffs", "tail"),
    [([3e-11, -3.12550000015629e-07, *HALVES], "lower"), ([3.125600000095e-07, 0.2, *HALVES], "two-sided")],
    ids=["lower", "two-sided"],
)
def test_a_sampled_sum_exactly_the_slack_away_is_a_hit(diffs: list[float], tail: str) -> None:
    """The sampled tails count sums within the slack of the observed one too, the edge included.
    12,500 halves (half of them positive, too many group sums to enumerate) and two small sizes
    chosen so that, whenever the halves' signs cancel, one sign pattern of the small sizes sums
    exactly the slack above the observed sum (lower) or exactly the slack below it in size
    (two-sided): those samples are hits."""
    result = sign_flip_from_differences(diffs, samples=3_000, seed=3, stop_after=None, normal_error=0.0)
    sums, observed = reference_grouped_sums(diffs, 3_000, 3)
    slack = 1e-10 * (1.0 + math.fsum(abs(d) for d in diffs))
    if tail == "lower":
        on_edge = sum(1 for s in sums if s == observed + slack)
    else:
        on_edge = sum(1 for s in sums if abs(s) == abs(observed) - slack)
    assert on_edge >= 8
    assert (result.method, result.samples) == ("monte_carlo", 3_000)
    assert (result.p_value, result.p_drop) == monte_carlo_p_values(sums, observed, diffs)
