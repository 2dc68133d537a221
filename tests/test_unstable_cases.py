"""A case the judge disagreed with itself on never moves a regression verdict."""

from __future__ import annotations

from fractions import Fraction

from evalkit.grading import AGREEMENT_CHECK, Check
from evalkit.runs import CaseResult, Run
from evalkit.tolerance import Tolerances
from evalkit.verdict import compare


def case(case_id: str, passed: bool, *, unstable: bool = False) -> CaseResult:
    """A judged case; ``unstable`` adds a failed agreement check, as a judge grader with repeats does."""
    checks = [Check("fulfilment", passed), Check(AGREEMENT_CHECK, not unstable)]
    return CaseResult(case_id, passed, 1.0 if passed else 0.0, checks=checks)


def test_a_case_is_unstable_only_when_its_agreement_check_failed() -> None:
    assert case("a", True, unstable=True).unstable
    assert not case("a", True).unstable
    assert not CaseResult("a", False, 0.0, checks=[Check("fulfilment", False)]).unstable


def test_an_unstable_failure_in_the_current_run_is_left_out_of_both_sides() -> None:
    baseline = Run("base", "s", "g", cases=[case(str(i), True) for i in range(7)])
    current = Run("cur", "s", "g", cases=[*(case(str(i), True) for i in range(6)), case("6", False, unstable=True)])
    comparison = compare(current, baseline, Tolerances())
    assert comparison.unstable_cases == ("6",)
    assert comparison.pass_rate_delta == 0 and comparison.mean_score_delta == 0
    assert comparison.regressed_cases == ()
    assert not comparison.regressed


def test_an_unstable_pass_in_the_baseline_is_left_out_too() -> None:
    baseline = Run("base", "s", "g", cases=[case("a", True, unstable=True), case("b", False), case("c", True)])
    current = Run("cur", "s", "g", cases=[case("a", False), case("b", True), case("c", True)])
    comparison = compare(current, baseline, Tolerances())
    assert comparison.unstable_cases == ("a",)
    assert comparison.pass_rate_delta == Fraction(1, 2)  # b fixed; a is not counted as regressed
    assert comparison.regressed_cases == () and comparison.fixed_cases == ("b",)


def test_stable_runs_compare_exactly_as_before() -> None:
    baseline = Run("base", "s", "g", cases=[case("a", True), case("b", True)])
    current = Run("cur", "s", "g", cases=[case("a", True), case("b", False)])
    comparison = compare(current, baseline, Tolerances())
    assert comparison.unstable_cases == ()
    assert comparison.pass_rate_delta == Fraction(-1, 2)
    assert comparison.regressed and comparison.regressed_cases == ("b",)
