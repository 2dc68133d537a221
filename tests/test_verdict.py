"""The regression rule with exact arithmetic, per-case flips and the McNemar weight."""

from __future__ import annotations

from fractions import Fraction

import pytest
from evalkit import CaseResult, Run, Tolerances
from evalkit.runs import RunStatus
from evalkit.verdict import compare, exact_score, mcnemar_exact_p


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
