"""The regression rule with exact arithmetic, per-case flips and the McNemar weight."""

from __future__ import annotations

from fractions import Fraction

import attrs
import pytest
from evalkit import CaseResult, Run, Tolerances
from evalkit.comparison_statistics import MetricSpec
from evalkit.gate_settings import GateSettings
from evalkit.runs import RunKind, RunStatus
from evalkit.stats import NoiseEstimate
from evalkit.storage.values import CaseMark
from evalkit.verdict import (
    INCONCLUSIVE,
    NO_REGRESSION,
    NOT_COMPARABLE,
    REGRESSED,
    Comparability,
    Comparison,
    EditedCase,
    Verdict,
    _value,
    _WithinCaseNoise,
    compare,
    exact_score,
    mcnemar_exact_p,
    metric_specs,
    verdict_of,
)
from evalkit.wording import arguments_named


def run(run_id: str, outcomes: dict[str, float]) -> Run:
    cases = [CaseResult(case_id=cid, passed=score == 1.0, score=score) for cid, score in outcomes.items()]
    return Run(id=run_id, set_identifier="s.t", grader="deterministic", status=RunStatus.COMPLETE, cases=cases)


def ten(passing: int) -> dict[str, float]:
    return {f"c{i}": 1.0 if i < passing else 0.0 for i in range(10)}


def test_a_drop_equal_to_the_tolerance_passes() -> None:
    comparison = compare(run("new", ten(7)), run("old", ten(8)), Tolerances())
    assert comparison.pass_rate_delta == Fraction(-1, 10)
    assert comparison.mean_score_delta == Fraction(-1, 10)  # 0.8 -> 0.7 exactly, not 0.09999999999999998
    assert not comparison.regressed


def test_a_drop_beyond_the_tolerance_regresses_and_lists_the_cases_first() -> None:
    comparison = compare(run("new", ten(6)), run("old", ten(8)), Tolerances())
    assert comparison.regressed and comparison.pass_rate_regressed and comparison.mean_score_regressed
    assert comparison.regressed_cases == ("c6", "c7")
    assert comparison.summary().startswith("Regression: pass rate dropped 20.0 pp and mean score dropped 0.200")


@pytest.mark.parametrize(("tolerance", "regressed"), [("0", True), ("-0.0", True), ("0.5", True), ("5e-1", True), ("1", False)])
def test_full_collapse_against_each_tolerance(tolerance: str, regressed: bool) -> None:
    comparison = compare(run("new", ten(0)), run("old", ten(10)), Tolerances.parse(tolerance, tolerance))
    assert comparison.regressed is regressed


def test_zero_tolerance_rejects_any_drop_but_accepts_a_rise() -> None:
    tight = Tolerances.parse("0", "0")
    assert compare(run("new", ten(9)), run("old", ten(10)), tight).regressed
    assert not compare(run("new", ten(10)), run("old", ten(9)), tight).regressed


def test_case_bookkeeping() -> None:
    old = run("old", {"a": 1.0, "b": 0.0, "c": 0.0, "gone": 1.0})
    new = run("new", {"a": 0.0, "b": 1.0, "c": 0.0, "added": 1.0})
    comparison = compare(new, old, Tolerances.parse("1", "1"))
    assert comparison.regressed_cases == ("a",)
    assert comparison.fixed_cases == ("b",)
    assert comparison.still_failing == ("c",)
    assert comparison.added_cases == ("added",)
    assert comparison.removed_cases == ("gone",)


def test_mcnemar_exact_p() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(1, 0) == 1.0  # one flip on a small set is no evidence
    assert mcnemar_exact_p(6, 0) == pytest.approx(0.03125)
    assert mcnemar_exact_p(5, 1) == pytest.approx(0.21875)
    assert mcnemar_exact_p(10, 10) == 1.0


def test_exact_score_recovers_small_fractions() -> None:
    assert exact_score(1 / 3) == Fraction(1, 3)
    assert exact_score(0.7) == Fraction(7, 10)


def test_exact_score_limits_the_denominator_to_a_million() -> None:
    assert exact_score(1 / 3) == Fraction(1, 3)
    assert exact_score(1 / 1_000_001) == Fraction(1, 1_000_000)


def test_one_aggregate_beyond_its_tolerance_is_a_regression() -> None:
    only_rate = compare(run("new", ten(7)), run("old", ten(8)), Tolerances(Fraction(0), Fraction(1)))
    assert only_rate.pass_rate_regressed and not only_rate.mean_score_regressed and only_rate.regressed
    only_mean = compare(run("new", ten(7)), run("old", ten(8)), Tolerances(Fraction(1), Fraction(0)))
    assert only_mean.mean_score_regressed and not only_mean.pass_rate_regressed and only_mean.regressed
    assert only_mean.summary() == (
        "Regression: mean score dropped 0.100 beyond the configured tolerance (baseline run old)."
    )


def test_the_summary_sentences() -> None:
    same = compare(run("new", ten(8)), run("old", ten(7)), Tolerances())
    assert same.summary() == "No regression: pass rate +10.0 pp, mean score +0.100 versus run old."
    assert same.summary("top-1 hit rate", "top-3 hit rate", mean_in_points=True) == (
        "No regression: top-1 hit rate +10.0 pp, top-3 hit rate +10.0 pp versus run old."
    )
    dropped = compare(run("new", ten(5)), run("old", ten(8)), Tolerances())
    assert dropped.summary("top-1 hit rate", "top-3 hit rate", mean_in_points=True) == (
        "Regression: top-1 hit rate dropped 30.0 pp and top-3 hit rate dropped 30.0 pp beyond the configured "
        "tolerance (baseline run old)."
    )


def test_the_mean_without_unstable_cases_is_an_average() -> None:
    from evalkit.grading import AGREEMENT_CHECK, Check

    def judged(case_id: str, score: float, unstable: bool = False) -> CaseResult:
        checks = [Check("fulfilment", score == 1.0), Check(AGREEMENT_CHECK, not unstable)]
        return CaseResult(case_id, score == 1.0, score, checks=checks)

    current = Run("new", "s.t", "g", cases=[judged("a", 1.0), judged("b", 0.5), judged("c", 0.0, unstable=True)])
    baseline = Run("old", "s.t", "g", cases=[judged("a", 1.0), judged("b", 1.0), judged("c", 1.0)])
    comparison = compare(current, baseline, Tolerances())
    assert comparison.unstable_cases == ("c",)
    assert comparison.mean_score_delta == Fraction(-1, 4)  # (1 + 0.5) / 2 against (1 + 1) / 2
    assert comparison.pass_rate_delta == Fraction(-1, 2)


def test_a_side_left_empty_by_unstable_cases_counts_as_zero() -> None:
    from evalkit.grading import AGREEMENT_CHECK, Check

    unstable = CaseResult("a", False, 0.0, checks=[Check(AGREEMENT_CHECK, False)])
    current = Run("new", "s.t", "g", cases=[unstable])
    baseline = Run("old", "s.t", "g", cases=[CaseResult("a", True, 1.0), CaseResult("b", True, 1.0)])
    comparison = compare(current, baseline, Tolerances())
    # The gate is computed on the stable cases both runs share: none here ("a" is unstable, "b" was
    # removed), so both sides are empty and count as zero — no delta, no regression.
    assert (comparison.pass_rate_delta, comparison.mean_score_delta) == (Fraction(0), Fraction(0))
    assert comparison.removed_cases == ("b",) and not comparison.regressed


def test_a_comparison_of_no_pair_says_it_measured_nothing_and_counts_what_it_reported_apart() -> None:
    """No case both runs share and may gate on — one the judge disagreed on, one quarantined, one
    removed — gave "+0.0 pp … on the 0 unchanged cases", a figure of no case: the sentence says
    nothing was measured and counts each kind it reported apart, in the caller's unit."""
    from evalkit.grading import AGREEMENT_CHECK, Check

    unstable = CaseResult("alpha", False, 0.0, checks=[Check(AGREEMENT_CHECK, False)])
    current = Run("new", "s.t", "g", cases=[unstable, CaseResult("quiet", True, 1.0)])
    baseline = Run("old", "s.t", "g", cases=[CaseResult(i, True, 1.0) for i in ("alpha", "beta", "quiet")])
    comparison = compare(current, baseline, Tolerances(), GateSettings(quarantine=("quiet", "betta")))
    assert comparison.summary(unit="question") == (
        "No regression: no question was compared with run old, so nothing was measured (0 added, 0 edited, "
        "1 removed, 1 quarantined, 1 the judge disagreed on are reported apart)."
    )
    assert comparison.warnings() == (
        'warning: [gate] quarantine names "betta", which is no case of this run or its baseline, so it keeps nothing '
        'out of the gate. Did you mean "beta"?',
    )


def test_a_comparison_built_by_hand_knows_its_fingerprints_and_lists_nothing_it_was_not_given() -> None:
    """A plugin or report building a Comparison itself: without a word about fingerprints, the
    runs are taken to have kept them (no "set versions unknown" note is printed)."""
    from evalkit.verdict import Comparison

    comparison = Comparison(
        baseline_id="base", pass_rate_delta=Fraction(0), mean_score_delta=Fraction(0), pass_rate_regressed=False,
        mean_score_regressed=False, regressed_cases=(), fixed_cases=(), still_failing=(), added_cases=(),
        removed_cases=(), mcnemar_p=1.0,
    )  # fmt: skip
    assert comparison.fingerprints_known is True
    rates = (comparison.baseline_pass_rate, comparison.pass_rate, comparison.baseline_mean_score, comparison.mean_score)
    assert rates == (0, 0, 0, 0) and all(isinstance(r, Fraction) for r in rates)
    assert (comparison.unstable_cases, comparison.edited_cases, comparison.added_failing, comparison.compared_cases) == ((), (), (), ())
    assert not comparison.regressed and not comparison.set_changed


def test_a_prompt_runs_comparability_is_plain_comparable() -> None:
    """Prompt runs need no check beyond their scope: comparable, no provenance word, no notes, the
    same treatment."""
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.verdict import Comparability

    check = PromptRules().comparability(run("now", ten(5)), run("base", ten(5)))
    assert check == Comparability()
    assert (check.comparable, check.reason, check.label, check.notes, check.treatment_changed) == (True, None, None, (), False)


# -- what a mutation run of verdict.py found unpinned -----------------------------------------------


def marked(outcomes: list[bool], *, measures: list[dict] | None = None, fingerprints: list[str | None] | None = None,
           kind: RunKind = RunKind.PROMPTS, provenance: dict | None = None, run_id: str = "r") -> Run:  # fmt: skip
    """A run of cases c000, c001, … with the given outcomes (score 1.0 or 0.0), measures and fingerprints."""
    cases = [
        CaseResult(f"c{i:03d}", passed, 1.0 if passed else 0.0, measures=measures[i] if measures else None,
                   fingerprint=fingerprints[i] if fingerprints else f"f{i}")
        for i, passed in enumerate(outcomes)
    ]  # fmt: skip
    return Run(run_id, "s.set", "deterministic", kind=kind, status=RunStatus.COMPLETE, cases=cases,
               provenance=provenance or {}, fingerprints_kept=True)  # fmt: skip


PAIRED = GateSettings(method="paired")


def test_a_comparison_built_by_hand_is_a_single_answer_tolerance_comparison_at_five_percent() -> None:
    comparison = Comparison(
        baseline_id="base", pass_rate_delta=Fraction(0), mean_score_delta=Fraction(0), pass_rate_regressed=False,
        mean_score_regressed=False, regressed_cases=(), fixed_cases=(), still_failing=(), added_cases=(),
        removed_cases=(), mcnemar_p=1.0,
    )  # fmt: skip
    assert (comparison.method, comparison.alpha, comparison.repeats, comparison.baseline_repeats) == ("tolerance", 0.05, 1, 1)
    assert comparison.state == NO_REGRESSION


def test_the_metrics_of_a_prompt_and_of_a_retrieval_comparison() -> None:
    tolerances = Tolerances(Fraction(1, 10), Fraction(1, 5), max_mrr_drop=Fraction(1, 20))
    assert metric_specs(marked([True]), tolerances) == (
        MetricSpec("pass_rate", "pass rate", True, True, Fraction(1, 10)),
        MetricSpec("mean_score", "mean score", False, False, Fraction(1, 5)),
    )
    retrieval = marked([True], kind=RunKind.RETRIEVAL, provenance={"k": 5})
    assert metric_specs(retrieval, tolerances) == (
        MetricSpec("hit_at_1", "top-1 hit rate", True, True, Fraction(1, 10)),
        MetricSpec("hit_at_3", "top-3 hit rate", True, True, Fraction(1, 5)),
        MetricSpec("mrr_at_k", "MRR@5", False, False, Fraction(1, 20)),
        MetricSpec("recall_at_k", "recall@5", False, False, None),
        MetricSpec("ndcg_at_k", "nDCG@5", False, False, None),
    )
    # a k that is no integer (a bool, a string) is not named: the labels say k
    for k in (True, "5", None):
        labels = [s.label for s in metric_specs(marked([True], kind=RunKind.RETRIEVAL, provenance={"k": k}), tolerances)]
        assert labels[2:] == ["MRR@k", "recall@k", "nDCG@k"], k


def test_a_cases_value_of_each_metric() -> None:
    passed, failed = CaseMark(True, 0.5), CaseMark(False, 0.25)
    assert (_value("pass_rate", passed, False), _value("pass_rate", failed, False)) == (1.0, 0.0)
    assert (_value("hit_at_1", passed, False), _value("hit_at_1", failed, False)) == (1.0, 0.0)
    assert (_value("mean_score", passed, False), _value("hit_at_3", failed, False)) == (0.5, 0.25)
    share = CaseMark(False, 0.0, measures={"pass_fraction": 0.75})
    assert (_value("pass_rate", share, True), _value("pass_rate", share, False)) == (0.75, 0.0)
    for stored, read in ((0, 0.0), (1, 1.0), (0.5, 0.5), (True, None), (1.5, None), (-0.1, None), ("0.5", None)):
        assert _value("ndcg_at_k", CaseMark(True, 1.0, measures={"ndcg_at_k": stored}), False) == read, stored
    assert _value("mrr_at_k", CaseMark(True, 1.0), False) is None


def test_the_noise_within_repeated_cases() -> None:
    noise = _WithinCaseNoise()
    assert noise.estimate() is None
    noise.add(CaseMark(True, 1.0, measures={"answers": 5, "passes": 4}))  # 4 * 1 / 5 = 0.8
    noise.add(CaseMark(True, 1.0, measures={"answers": 3, "passes": 3}))  # all passed: 0
    # 2 * 0.8 / (4 + 2) per answer; the cases average 2 / (1/5 + 1/3) = 3.75 answers
    assert noise.estimate() == NoiseEstimate(2 * 0.8 / 6, 4, "repeats", 2)
    none_passed = _WithinCaseNoise()
    none_passed.add(CaseMark(True, 1.0, measures={"answers": 4, "passes": 0}))
    none_passed.add(CaseMark(True, 1.0, measures={"answers": 2, "passes": 1}))  # 1 * 1 / 2
    assert none_passed.estimate() == NoiseEstimate(2 * 0.5 / 4, 3, "repeats", 2)
    ignored = _WithinCaseNoise()
    for measures in ({"answers": 1, "passes": 1}, {"answers": 3, "passes": 4}, {"answers": 3, "passes": -1},
                     {"answers": 3, "passes": True}, {"answers": 3, "passes": "2"}, {"answers": 3}, None):  # fmt: skip
        ignored.add(CaseMark(True, 1.0, measures=measures))
    assert ignored.estimate() is None


def test_the_pass_rates_are_each_runs_own_not_only_their_difference() -> None:
    comparison = compare(run("new", ten(6)), run("old", ten(8)), Tolerances())
    assert (comparison.baseline_pass_rate, comparison.pass_rate) == (Fraction(8, 10), Fraction(6, 10))
    # an unstable judge verdict is compared by its pass share under the paired gate, but a run
    # answered once keeps its pass rate the share of cases that passed
    from evalkit.grading import AGREEMENT_CHECK, Check

    unsure = CaseResult("c", True, 1.0, checks=(Check(AGREEMENT_CHECK, False),), measures={"pass_fraction": 0.5})
    paired = compare(Run("now", "s", "d", cases=[unsure]), Run("then", "s", "d", cases=[CaseResult("c", True, 1.0)]),
                     Tolerances(), PAIRED)  # fmt: skip
    assert paired.compared_cases == ("c",) and (paired.baseline_pass_rate, paired.pass_rate) == (1, 1)
    # two answers a case: the pass rate is the mean of the pass fractions
    twice = [{"pass_fraction": 0.5, "answers": 2, "passes": 1}] * 2
    repeated = compare(marked([True, True], measures=twice), marked([True, True]), Tolerances())
    assert repeated.repeats == 2 and (repeated.baseline_pass_rate, repeated.pass_rate) == (1, Fraction(1, 2))


def test_nothing_compared_counts_as_zero_on_both_sides() -> None:
    comparison = compare(marked([True], fingerprints=["new"]), marked([True], fingerprints=["old"]), Tolerances())
    assert comparison.compared_cases == () and [e.case_id for e in comparison.edited_cases] == ["c000"]
    rates = (comparison.baseline_pass_rate, comparison.pass_rate, comparison.baseline_mean_score, comparison.mean_score)
    assert rates == (0, 0, 0, 0)


def test_a_fingerprint_missing_on_either_side_counts_as_unchanged() -> None:
    for before, after in ((None, "a"), ("a", None), (None, None), ("a", "a")):
        comparison = compare(marked([False], fingerprints=[after]), marked([True], fingerprints=[before]), Tolerances())
        assert comparison.compared_cases == ("c000",) and comparison.edited_cases == (), (before, after)
        assert comparison.regressed_cases == ("c000",)
    edited = compare(marked([False, True], fingerprints=["b", "x"]), marked([True, True], fingerprints=["a", "x"]), Tolerances())
    assert edited.edited_failing == ("c000",) and edited.new_failures == ("c000",) and edited.compared_cases == ("c001",)
    fixed = compare(marked([True], fingerprints=["b"]), marked([False], fingerprints=["a"]), Tolerances())
    assert fixed.edited_failing == () and fixed.set_changed


def test_only_runs_that_both_kept_fingerprints_know_them() -> None:
    kept, old = marked([True]), attrs.evolve(marked([True]), fingerprints_kept=False)
    assert compare(kept, kept, Tolerances()).fingerprints_known
    assert not compare(kept, old, Tolerances()).fingerprints_known
    assert not compare(old, kept, Tolerances()).fingerprints_known


def test_the_set_changed_when_any_one_kind_of_change_happened() -> None:
    base = dict(baseline_id="b", pass_rate_delta=Fraction(0), mean_score_delta=Fraction(0), pass_rate_regressed=False,
                mean_score_regressed=False, regressed_cases=(), fixed_cases=(), still_failing=(), mcnemar_p=1.0)  # fmt: skip
    assert Comparison(**base, added_cases=("a",), removed_cases=()).set_changed
    assert Comparison(**base, added_cases=(), removed_cases=("r",)).set_changed
    edit = EditedCase("e", True, True, 1.0, 1.0)
    assert Comparison(**base, added_cases=(), removed_cases=(), edited_cases=(edit,)).set_changed
    assert not Comparison(**base, added_cases=(), removed_cases=()).set_changed


def test_the_paired_gate_names_the_aggregates_it_found_regressed() -> None:
    baseline = marked([True] * 30)
    comparison = compare(marked([False] * 6 + [True] * 24), baseline, Tolerances(), PAIRED)
    assert comparison.pass_rate_regressed and comparison.mean_score_regressed
    assert comparison.summary() == (
        "Regression: pass rate dropped 20.0 pp and mean score dropped 0.200 significantly, beyond the configured "
        "tolerance (baseline run r)."
    )
    loose_mean = compare(marked([False] * 6 + [True] * 24), baseline, Tolerances(Fraction(1, 10), Fraction(1)), PAIRED)
    assert loose_mean.pass_rate_regressed and not loose_mean.mean_score_regressed


def test_the_inconclusive_and_the_capped_sentences() -> None:
    baseline = marked([True] * 30)
    unsure = compare(marked([False] * 4 + [True] * 26), baseline, Tolerances(), PAIRED)
    assert unsure.summary() == (
        "Inconclusive: pass rate -13.3 pp, mean score -0.133 versus run r; the set cannot tell such a change from "
        "noise (the smallest drop of pass rate it detects is 21.4 pp)."
    )
    grown = compare(marked([False] * 4 + [True] * 27), baseline, Tolerances(), PAIRED)
    assert grown.summary() == (
        "Inconclusive: pass rate -13.3 pp, mean score -0.133 versus run r on the 30 unchanged cases (1 added, 0 "
        "edited, 0 removed are reported apart); the set cannot tell such a change from noise (the smallest drop of "
        "pass rate it detects is 21.4 pp)."
    )
    capped = compare(marked([False] + [True] * 39), marked([True] * 40), Tolerances(), GateSettings(max_regressed_cases=0))
    assert capped.summary(unit="question") == (
        "Regression: 1 question passed in the baseline and fail now, more than the 0 max_regressed_cases allows "
        "(baseline run r)."
    )
    assert capped.summary().startswith("Regression: 1 case passed")


def test_a_verdict_without_a_comparison() -> None:
    verdict = Verdict(NOT_COMPARABLE, reason="another model")
    assert (verdict.regressed, verdict.new_failures, verdict.baseline_id, verdict.notes) == (False, (), None, ())
    base = marked([True], run_id="base")
    compared = verdict_of(compare(marked([False]), base, Tolerances()), base, Comparability(notes=("n",)))
    assert (compared.state, compared.regressed, compared.baseline_id, compared.notes) == (REGRESSED, True, "base", ("n",))


def test_the_tolerance_method_gates_retrieval_metrics_beyond_the_first_two() -> None:
    def questions(rank: float) -> Run:
        measures = [{"reciprocal_rank_at_k": rank, "recall_at_k": 1.0, "ndcg_at_k": 1.0}] * 10
        return marked([True] * 10, measures=measures, kind=RunKind.RETRIEVAL, provenance={"k": 5})

    before, after = questions(0.5), questions(0.25)
    at_tolerance = compare(after, before, Tolerances(max_mrr_drop=Fraction(1, 4)))
    assert at_tolerance.other_regressed == () and at_tolerance.state == NO_REGRESSION  # equal to it passes
    beyond = compare(after, before, Tolerances(max_mrr_drop=Fraction(1, 5)))
    assert beyond.other_regressed == ("mrr_at_k",) and beyond.state == REGRESSED
    assert beyond.summary() == "Regression: MRR@5 dropped 0.250 beyond the configured tolerance (baseline run r)."
    risen = compare(before, after, Tolerances(max_mrr_drop=Fraction(0)))
    assert risen.other_regressed == () and risen.state == NO_REGRESSION
    # a question whose measure is missing on one side leaves that metric's pair out
    partial = attrs.evolve(after, cases=[attrs.evolve(after.cases[0], measures=None), *after.cases[1:]])
    mrr = compare(partial, before, Tolerances()).statistic("mrr_at_k")
    assert mrr is not None and mrr.n == 9


def test_the_smallest_detectable_drop_named_is_of_the_first_gated_metric_when_every_tolerance_is_above_it() -> None:
    baseline = marked([True] * 30)
    wide = compare(marked([False] * 4 + [True] * 26), baseline, Tolerances(Fraction(1, 4), Fraction(1, 4)), PAIRED)
    assert wide.state == INCONCLUSIVE and wide.noise_warnings() == ()
    assert wide.summary().endswith("(the smallest drop of pass rate it detects is 21.4 pp).")


def test_the_noise_warnings_name_each_gated_metric_whose_tolerance_is_below_the_detectable_drop() -> None:
    unsure = compare(marked([False] * 4 + [True] * 26), marked([True] * 30), Tolerances(), PAIRED)
    assert unsure.noise_warnings() == (
        "warning: the tolerance of pass rate (10.0 pp) is below the smallest drop 30 cases can detect (21.4 pp, "
        "one-sided alpha 0.05, power 0.8): the set cannot tell a drop of 10.0 pp from noise; about 66 cases would.",
        "warning: the tolerance of mean score (0.100) is below the smallest drop 30 cases can detect (0.157, "
        "one-sided alpha 0.05, power 0.8): the set cannot tell a drop of 0.100 from noise; about 74 cases or "
        "repeats=3 would.",
    )  # a Python caller's keyword: the warnings are made as they are shown, for whoever reads them
    with arguments_named():  # the command line's option (it was the option for a Python caller too)
        assert unsure.noise_warnings()[1].endswith("about 74 cases or --repeats 3 would.")
    outcomes = [i % 10 != 0 for i in range(400)]
    assert compare(marked(outcomes), marked(outcomes), Tolerances(), PAIRED).noise_warnings() == ()
    # one case is "1 case", not "1 cases"
    single = compare(marked([True]), marked([True]), Tolerances(), PAIRED).noise_warnings()
    assert single and all("the smallest drop 1 case can detect" in line for line in single), single


def test_the_paired_gate_with_nothing_compared_is_inconclusive() -> None:
    edited = compare(marked([True], fingerprints=["x"]), marked([True], fingerprints=["y"]), Tolerances(), PAIRED)
    assert edited.decision is None and edited.state == INCONCLUSIVE


def test_a_capped_gate_with_a_dropped_aggregate_names_the_aggregate() -> None:
    comparison = compare(marked([False] * 6 + [True] * 24), marked([True] * 30), Tolerances(), GateSettings(max_regressed_cases=0))
    assert comparison.summary() == (
        "Regression: pass rate dropped 20.0 pp and mean score dropped 0.200 beyond the configured tolerance "
        "(baseline run r)."
    )


def test_the_paired_gate_names_a_retrieval_metric_beyond_the_first_two() -> None:
    measures = [{"reciprocal_rank_at_k": 0.5, "recall_at_k": 1.0, "ndcg_at_k": 1.0}] * 10
    before = marked([True] * 10, measures=measures, kind=RunKind.RETRIEVAL, provenance={"k": 5})
    after = marked([True] * 10, measures=[{**m, "reciprocal_rank_at_k": 0.25} for m in measures], kind=RunKind.RETRIEVAL,
                   provenance={"k": 5})  # fmt: skip
    comparison = compare(after, before, Tolerances(max_mrr_drop=Fraction(1, 5)), PAIRED)
    assert comparison.state == REGRESSED
    assert comparison.summary() == "Regression: MRR@5 dropped 0.250 significantly, beyond the configured tolerance (baseline run r)."


def test_a_hand_built_comparison_names_only_the_metrics_it_measured() -> None:
    comparison = Comparison(
        baseline_id="b", pass_rate_delta=Fraction(0), mean_score_delta=Fraction(0), pass_rate_regressed=True,
        mean_score_regressed=False, regressed_cases=(), fixed_cases=(), still_failing=(), added_cases=(),
        removed_cases=(), mcnemar_p=1.0, other_regressed=("mrr_at_k",),
        metrics=(MetricSpec("mrr_at_k", "MRR@5", False, False, Fraction(1, 10)),),
    )  # fmt: skip
    assert comparison.summary() == "Regression: pass rate dropped 0.0 pp beyond the configured tolerance (baseline run b)."
    capped = attrs.evolve(comparison, pass_rate_regressed=False, other_regressed=(), method="paired",
                          regressed_cases=("a",), max_regressed_cases=0)  # fmt: skip
    assert capped.summary().startswith("Regression: 1 case passed in the baseline and fail now")


def test_different_corpora_is_said_of_two_retrieval_runs_only() -> None:
    """Two retrieval runs that declared different corpus revisions are said to have searched
    different corpora; no baseline, a prompt run on either side (whatever its provenance holds), the
    same revision or an undeclared one is no such difference."""
    from evalkit.verdict import different_corpora

    def retrieval(revision: object) -> Run:
        return Run(id="r", set_identifier="beir.col", grader="retrieval", kind=RunKind.RETRIEVAL, provenance={"corpus_revision": revision})

    prompts = Run(id="p", set_identifier="beir.col", grader="retrieval", provenance={"corpus_revision": "v1"})
    assert different_corpora(retrieval("v2"), retrieval("v1")) == ("v1", "v2")
    assert different_corpora(retrieval("v2"), None) is None
    assert different_corpora(retrieval("v2"), prompts) is None
    assert different_corpora(attrs.evolve(prompts, provenance={"corpus_revision": "v2"}), retrieval("v1")) is None
    assert different_corpora(retrieval("v1"), retrieval("v1")) is None
    assert different_corpora(retrieval(None), retrieval("v1")) is None
