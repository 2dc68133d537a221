"""A comparison's uncertainty and the paired gate (issue 33, §2–§3): the figures a verdict carries
agree with the statistics core and its references, the three states come out where they should, and
the tolerance method keeps every edge case it had."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from evalkit.comparison_statistics import LARGE_SET, MetricSpec, PairedColumn, measure, significantly_better
from evalkit.gate_settings import GateSettings
from evalkit.runs import CaseResult, Run, RunKind, RunStatus
from evalkit.stats import StatisticsSettings, compare_pass_rates, compare_values, mcnemar_detectable_drop
from evalkit.tolerance import Tolerances
from evalkit.verdict import INCONCLUSIVE, NO_REGRESSION, REGRESSED, compare

PAIRED = GateSettings(method="paired")


def run(run_id: str, outcomes: list[bool], *, scores: list[float] | None = None, measures: list[dict] | None = None) -> Run:
    cases = [
        CaseResult(
            f"c{i:03d}", passed, scores[i] if scores else (1.0 if passed else 0.0),
            measures=measures[i] if measures else None, fingerprint=f"f{i}",
        )
        for i, passed in enumerate(outcomes)
    ]  # fmt: skip
    return Run(run_id, "s.set", "deterministic", status=RunStatus.COMPLETE, cases=cases, fingerprints_kept=True)


def column(before: list[float], after: list[float]) -> PairedColumn:
    values = PairedColumn()
    for then, now in zip(before, after, strict=True):
        values.add(then, now)
    return values


def seeded_outcomes(n: int, p: float, seed: int) -> list[bool]:
    draw = random.Random(seed)
    return [draw.random() < p for _ in range(n)]


# -- the figures agree with the core and with the references ------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_pass_rate_figures_are_the_cores_exact_mcnemar_and_newcombe(seed) -> None:
    before, after = seeded_outcomes(30, 0.8, seed), seeded_outcomes(30, 0.7, seed + 100)
    mine = measure(MetricSpec("pass_rate", "pass rate", binary=True, tolerance=Fraction(1, 10)),
                   column([float(b) for b in before], [float(a) for a in after]), StatisticsSettings())  # fmt: skip
    core = compare_pass_rates(before, after, tolerance=0.1)
    assert mine is not None
    assert (mine.delta, mine.ci95, mine.decision_interval, mine.p_value, mine.p_drop) == (
        core.delta, core.ci95, core.decision_interval, core.p_value, core.p_drop
    )
    assert mine.exact_delta == core.exact_delta and mine.p_rise == core.p_rise
    assert mine.detectable.drop == pytest.approx(mcnemar_detectable_drop(30, core.baseline).drop)


@pytest.mark.parametrize("test", ["t", "sign_flip"])
def test_value_figures_are_the_cores_paired_t_and_sign_flip(test) -> None:
    draw = random.Random(7)
    before = [round(draw.random(), 3) for _ in range(40)]
    after = [min(1.0, max(0.0, round(b + draw.gauss(-0.05, 0.2), 3))) for b in before]
    settings = StatisticsSettings(test=test)
    mine = measure(MetricSpec("mean_score", "mean score", False, tolerance=Fraction(1, 10)), column(before, after), settings)
    core = compare_values(before, after, tolerance=0.1, settings=settings)
    assert mine is not None
    for field in ("delta", "p_value", "p_drop", "p_rise"):
        assert getattr(mine, field) == pytest.approx(getattr(core, field), abs=1e-9), field
    for interval in ("ci95", "decision_interval"):
        assert getattr(mine, interval).low == pytest.approx(getattr(core, interval).low, abs=1e-9)
        assert getattr(mine, interval).high == pytest.approx(getattr(core, interval).high, abs=1e-9)
    assert mine.detectable.drop == pytest.approx(core.detectable.drop, abs=1e-9)


def test_the_verdict_agrees_with_scipy_and_statsmodels_on_a_table_of_24_cases() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    before = [True] * 14 + [False] * 4 + [True] * 5 + [False]
    after = [True] * 14 + [True] * 4 + [False] * 5 + [False]
    scores_before = [0.9, 0.8, 0.7, 1.0, 0.6, 0.5, 0.9, 1.0, 0.4, 0.8, 0.7, 0.6, 0.9, 1.0, 0.2, 0.3, 0.1, 0.0, 0.8, 0.9, 0.7, 1.0, 0.6, 0.1]
    scores_after = [0.8, 0.8, 0.6, 1.0, 0.7, 0.4, 0.9, 0.9, 0.5, 0.7, 0.7, 0.6, 0.8, 1.0, 0.6, 0.7, 0.5, 0.6, 0.3, 0.2, 0.4, 0.2, 0.3, 0.0]
    comparison = compare(run("now", after, scores=scores_after), run("then", before, scores=scores_before), Tolerances(), PAIRED)
    pass_rate, mean_score = comparison.statistic("pass_rate"), comparison.statistic("mean_score")
    assert pass_rate is not None and mean_score is not None
    table = [[14, 5], [4, 1]]  # rows: baseline passed / failed; columns: run passed / failed
    assert pass_rate.p_value == pytest.approx(contingency.mcnemar(table, exact=True).pvalue, abs=1e-12)
    # values in [0, 1]: the randomization test (exact here: the differences take few sizes) ...
    permuted = scipy_stats.permutation_test(
        (scores_after, scores_before), lambda x, y, axis: (x - y).mean(axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=200_000, random_state=0,
    )  # fmt: skip
    assert mean_score.p_value == pytest.approx(permuted.pvalue, abs=0.01)
    # ... and the paired t interval
    expected = scipy_stats.ttest_rel(scores_after, scores_before)
    low, high = expected.confidence_interval(0.95)
    assert (mean_score.ci95.low, mean_score.ci95.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert comparison.mcnemar_p == pass_rate.p_value  # the flat key and the metric are one figure


def test_a_large_set_uses_the_normal_approximations_and_says_so() -> None:
    n = LARGE_SET + 10
    before, after = seeded_outcomes(n, 0.8, 1), seeded_outcomes(n, 0.8, 2)
    figures = measure(MetricSpec("pass_rate", "pass rate", binary=True, tolerance=Fraction(1, 100)),
                      column([float(b) for b in before], [float(a) for a in after]), StatisticsSettings())  # fmt: skip
    assert figures is not None and figures.detectable.method == "connor_mcnemar"
    assert figures.detectable.drop == pytest.approx(mcnemar_detectable_drop(n, figures.baseline).drop, abs=1e-3)
    scores = measure(MetricSpec("ndcg_at_k", "nDCG@10"), column([0.5] * n, [0.5 + (i % 3 - 1) * 0.1 for i in range(n)]),
                     StatisticsSettings(test="sign_flip"))  # fmt: skip
    assert scores is not None and scores.method == "paired t interval, paired t test"


# -- the three states and the tolerance method's edge cases -------------------------------------


def test_the_tolerance_method_keeps_a_drop_equal_to_the_tolerance_a_pass() -> None:
    baseline = run("then", [True] * 10)
    now = run("now", [True] * 9 + [False])
    at_tolerance = compare(now, baseline, Tolerances(Fraction(1, 10), Fraction(1, 10)))
    assert at_tolerance.state == NO_REGRESSION and not at_tolerance.regressed
    beyond = compare(now, baseline, Tolerances(Fraction(9, 100), Fraction(1, 10)))
    assert beyond.state == REGRESSED and beyond.pass_rate_regressed
    # the statistics are there under the tolerance method too, and decide nothing
    assert at_tolerance.method == "tolerance" and at_tolerance.decision is None
    assert {m.name for m in at_tolerance.statistics} == {"pass_rate", "mean_score"}


def test_the_paired_gate_says_regressed_only_for_a_significant_drop_beyond_the_tolerance() -> None:
    baseline = run("then", [True] * 30)
    six_broken = run("now", [False] * 6 + [True] * 24)  # 20 pp, p = 1/64
    assert compare(six_broken, baseline, Tolerances(), PAIRED).state == REGRESSED
    four_broken = run("now", [False] * 4 + [True] * 26)  # 13 pp, p = 1/16: not significant
    decided = compare(four_broken, baseline, Tolerances(), PAIRED)
    assert decided.state == INCONCLUSIVE and decided.inconclusive and not decided.regressed
    assert "cannot tell" in decided.summary()
    # significant, but within a generous tolerance: the interval shows it is within
    within = compare(six_broken, baseline, Tolerances(Fraction(1, 2), Fraction(1, 2)), PAIRED)
    assert within.state == NO_REGRESSION


def test_no_regression_needs_the_interval_within_the_tolerance() -> None:
    big = 400
    outcomes = seeded_outcomes(big, 0.9, 5)
    same = compare(run("now", outcomes), run("then", outcomes), Tolerances(), PAIRED)
    assert same.state == NO_REGRESSION  # 400 identical cases: the interval is narrow
    small = compare(run("now", [True] * 6), run("then", [True] * 6), Tolerances(), PAIRED)
    assert small.state == INCONCLUSIVE  # 6 identical cases prove little


def test_max_regressed_cases_fails_the_gate_under_either_method() -> None:
    baseline = run("then", [True] * 40)
    one_broken = run("now", [False] + [True] * 39)
    for method in ("tolerance", "paired"):
        capped = compare(one_broken, baseline, Tolerances(), GateSettings(method=method, max_regressed_cases=0))
        assert capped.state == REGRESSED and capped.too_many_regressed_cases
        assert "max_regressed_cases" in capped.summary()
        uncapped = compare(one_broken, baseline, Tolerances(), GateSettings(method=method, max_regressed_cases=1))
        assert uncapped.state != REGRESSED


def test_a_quarantined_case_is_reported_but_never_gated() -> None:
    baseline = run("then", [True] * 10)
    now = run("now", [False, False] + [True] * 8)
    gated = compare(now, baseline, Tolerances())
    assert gated.regressed
    kept_out = compare(now, baseline, Tolerances(), GateSettings(quarantine=("c000", "c001")))
    assert not kept_out.regressed and kept_out.regressed_cases == ()
    assert [(q.case_id, q.baseline_passed, q.passed) for q in kept_out.quarantined_cases] == [("c000", True, False), ("c001", True, False)]
    assert len(kept_out.compared_cases) == 8


def test_the_paired_gate_compares_an_unstable_case_by_its_judges_pass_share() -> None:
    from evalkit.grading import AGREEMENT_CHECK, Check

    def judged(passed: bool, share: float | None) -> CaseResult:
        checks = (Check(AGREEMENT_CHECK, share is None),)
        return CaseResult("c", passed, 1.0 if passed else 0.0, checks=checks, measures=None if share is None else {"pass_fraction": share})

    baseline = Run("then", "s", "d", status=RunStatus.COMPLETE, cases=[judged(True, None)])
    now = Run("now", "s", "d", status=RunStatus.COMPLETE, cases=[judged(True, 2 / 3)])
    assert compare(now, baseline, Tolerances()).compared_cases == ()  # the tolerance rule leaves it out
    paired = compare(now, baseline, Tolerances(), PAIRED)
    assert paired.compared_cases == ("c",)
    assert paired.statistic("pass_rate").value == pytest.approx(2 / 3)


def test_repeated_cases_pair_their_pass_fractions_with_the_noise_the_repeats_measured() -> None:
    n = 30
    before = [{"pass_fraction": 0.8, "answers": 5, "passes": 4}] * n
    after = [{"pass_fraction": 0.4, "answers": 5, "passes": 2}] * n
    comparison = compare(run("now", [False] * n, measures=after), run("then", [True] * n, measures=before), Tolerances(), PAIRED)
    pass_rate = comparison.statistic("pass_rate")
    assert comparison.repeats == 5 and pass_rate is not None
    assert pass_rate.delta == pytest.approx(-0.4) and pass_rate.detectable.source == "repeats"
    assert comparison.state == REGRESSED


def test_a_retrieval_comparison_measures_five_metrics_and_gates_the_ones_with_a_tolerance() -> None:
    def question(i: int, hit1: bool, ndcg: float) -> CaseResult:
        measures = {"reciprocal_rank_at_k": 1.0 if hit1 else 0.5, "recall_at_k": 1.0, "ndcg_at_k": ndcg}
        return CaseResult(f"q{i}", hit1, 1.0, measures=measures, fingerprint="f")

    base = Run("then", "q.set", "retrieval_hit_rate", kind=RunKind.RETRIEVAL, status=RunStatus.COMPLETE,
               cases=[question(i, True, 0.9) for i in range(40)], provenance={"k": 10}, fingerprints_kept=True)  # fmt: skip
    now = Run("now", "q.set", "retrieval_hit_rate", kind=RunKind.RETRIEVAL, status=RunStatus.COMPLETE,
              cases=[question(i, True, 0.7) for i in range(40)], provenance={"k": 10}, fingerprints_kept=True)  # fmt: skip
    loose = compare(now, base, Tolerances())
    assert [m.name for m in loose.statistics] == ["hit_at_1", "hit_at_3", "mrr_at_k", "recall_at_k", "ndcg_at_k"]
    assert [s.label for s in loose.metrics][2:] == ["MRR@10", "recall@10", "nDCG@10"]
    assert not loose.regressed  # nDCG@k is reported, not gated, unless a tolerance is set
    gated = Tolerances(max_ndcg_drop=Fraction(1, 10))
    assert compare(now, base, gated).state == REGRESSED and compare(now, base, gated).other_regressed == ("ndcg_at_k",)
    assert compare(now, base, gated, PAIRED).state == REGRESSED
    assert "nDCG@10 dropped 0.200" in compare(now, base, gated, PAIRED).summary()


# -- significantly better -------------------------------------------------------------------------


def test_significantly_better_needs_a_significant_rise_and_no_gated_metric_worse() -> None:
    specs = (MetricSpec("pass_rate", "pass rate", binary=True, tolerance=Fraction(1, 10)),)
    settings = StatisticsSettings()
    rise = measure(specs[0], column([0.0] * 6 + [1.0] * 24, [1.0] * 30), settings)
    small = measure(specs[0], column([0.0] * 2 + [1.0] * 28, [1.0] * 30), settings)
    assert rise is not None and small is not None
    assert significantly_better([rise], specs, 0.05)[0]
    better, why = significantly_better([small], specs, 0.05)
    assert not better and "not significantly better" in why
    mean = MetricSpec("mean_score", "mean score", False, tolerance=Fraction(1, 10))
    worse_mean = measure(mean, column([0.9] * 30, [0.8] * 30), settings)
    assert worse_mean is not None
    better, why = significantly_better([rise, worse_mean], (*specs, mean), 0.05)
    assert not better and "worse than the baseline on mean_score" in why
