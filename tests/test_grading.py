"""The rules a grading follows, applied by the run to every grading and by the contract kit."""

from __future__ import annotations

import math

import pytest
from evalkit.grading import MAX_CHECK_TEXT_CHARS, Check, Grading, grading_problems


class Score(float):
    """A float subclass, as numpy's float64 is: a number like any other."""


@pytest.mark.parametrize(
    "grading",
    [
        Grading(1, True),
        Grading(0.0, False, checks=[Check("a", False, error="timed out", detail="…")]),
        Grading(Score(0.25), False, yardstick="decision:judge:m:v1", detail={"votes": [1, 0], "why": None}),
        Grading(1.0, True, error=None, detail={}),
    ],
)
def test_gradings_by_the_rules_have_no_problems(grading: Grading) -> None:
    assert grading_problems(grading) == []


def looped() -> dict[str, object]:
    detail: dict[str, object] = {}
    detail["self"] = detail
    return detail


@pytest.mark.parametrize(
    ("grading", "problem"),
    [
        (None, "NoneType None is not an evalkit.Grading"),
        ({"score": 1}, "dict {'score': 1} is not an evalkit.Grading"),
        (Grading(math.nan, True), "score must be a finite number in 0..1, got nan"),
        (Grading(math.inf, True), "score must be a finite number in 0..1, got inf"),
        (Grading(1.5, True), "score must be a finite number in 0..1, got 1.5"),
        (Grading(-0.1, False), "score must be a finite number in 0..1, got -0.1"),
        (Grading(True, True), "score must be a finite number in 0..1, got True"),
        (Grading("1", True), "score must be a finite number in 0..1, got '1'"),
        (Grading(1.0, "no"), "passed must be True or False, got 'no'"),
        (Grading(1.0, 1), "passed must be True or False, got 1"),
        (Grading(1.0, True, checks=["contains"]), "a check must be an evalkit.Check, got 'contains'"),
        (Grading(1.0, True, checks=[Check("", True)]), "a check has no name: Check(name='', passed=True, error=None, detail=None)"),
        (Grading(1.0, True, checks=[Check("c", "yes")]), "check 'c': passed must be True or False, got 'yes'"),
        (Grading(1.0, True, checks=[Check("c", False, error=3)]), "check 'c': error and detail must be text or None"),
        (Grading(1.0, True, yardstick=""), "yardstick must be a non-empty string of at most 1,000 characters, got ''"),
        (Grading(1.0, True, yardstick="y" * 1_001), "yardstick must be a non-empty string of at most 1,000 characters, got 1,001 characters"),
        (Grading(1.0, True, error=ValueError("x")), "error must be text or None, got ValueError('x')"),
        (Grading(1.0, True, detail=["a"]), "detail must be a mapping or None, got ['a']"),
        (Grading(1.0, True, detail={"x": object()}), "detail cannot be written as JSON: Object of type object is not JSON serializable"),
        (Grading(1.0, True, detail={"x": math.nan}), "detail holds NaN at x, which is not a number JSON can carry"),
        (Grading(1.0, True, detail=looped()), "detail contains itself, so it would never end"),
        (Grading(1.0, True, checks=[Check("c", True)] * 1_001), "checks: 1,001 of them, more than the 1,000 allowed"),
        (
            Grading(1.0, True, checks=[Check("n" * 1_001, True)]),
            "check '" + "n" * 56 + "...: its name is 1,001 characters long, more than the 1,000 allowed",
        ),
        (
            Grading(1.0, True, detail={"x": "y" * 1_048_570}),
            "detail is 1,048,579 characters of JSON, more than the 1,048,576 allowed",
        ),
    ],
)
def test_each_broken_rule_is_named(grading: object, problem: str) -> None:
    assert grading_problems(grading) == [problem]


def test_every_broken_rule_is_listed_at_once() -> None:
    assert len(grading_problems(Grading(math.nan, "yes", yardstick="", detail=[]))) == 4


def test_a_grading_at_every_bound_is_fine() -> None:
    at_bounds = Grading(1.0, True, checks=[Check("n" * 1_000, True)] * 1_000, detail={"x": "y" * 1_048_567})
    assert grading_problems(at_bounds) == []


def test_texts_past_the_bound_are_cut_however_the_grading_is_made() -> None:
    from evalkit.runs import CaseResult

    long = "t" * (MAX_CHECK_TEXT_CHARS + 65)
    at_bound = "e" * (MAX_CHECK_TEXT_CHARS + 64)  # room for the mark of a text already cut
    assert Check("a", False, error=at_bound, detail=at_bound) == Check("a", False, error=at_bound, detail=at_bound)
    shown = "t" * MAX_CHECK_TEXT_CHARS + "… (10,065 characters)"
    cut = Grading(0.5, False, checks=[Check("a", True), Check("b", False, error=long, detail=long)], error=long)
    assert cut.checks == (Check("a", True), Check("b", False, error=shown, detail=shown))
    assert (cut.error, cut.score, cut.passed) == (shown, 0.5, False)
    assert CaseResult(case_id="c", passed=False, score=0.0, error=long).error == shown
    assert Check("c", False, error=3).error == 3  # not text: left for grading_problems to name
    assert Check("d", False, error=shown).error == shown  # made again (read back from a store): cut once
