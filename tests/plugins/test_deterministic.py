"""The deterministic grader: score is the fraction of checks that hold, passed when all hold."""

from __future__ import annotations

from evalkit import Answer, Assertion, GoldenPrompt
from evalkit_plugins.deterministic import DeterministicGrader


def test_two_assertions_one_held_scores_exactly_one_half() -> None:
    prompt = GoldenPrompt(id="p", prompt="x", assertions=[Assertion.contains("Paris"), Assertion.contains("France")])
    grading = DeterministicGrader().grade(prompt, Answer(text="Paris"))
    assert grading.score == 0.5 and not grading.passed
    assert [c.name for c in grading.failed_checks] == ["contains#2"]
    assert grading.yardstick == "deterministic"


def test_reference_only_prompt_fails_and_points_to_a_judge() -> None:
    grading = DeterministicGrader().grade(GoldenPrompt(id="p", prompt="x", reference="Paris"), Answer(text="Paris"))
    assert grading.score == 0.0 and not grading.passed
    (check,) = grading.checks
    # the detail is stored and shown to whoever reads the run: it names the grader, no option of
    # either caller (it said `--grader decision` to a Python caller, who passes grader="decision")
    assert check.detail == 'no deterministic assertions declared; use a judge grader (such as "decision") for reference-only prompts'


def test_all_checks_hold() -> None:
    prompt = GoldenPrompt(id="p", prompt="x", assertions=[Assertion.exact("4"), Assertion.regex(r"/\b4\b/"), Assertion.max_words(1)])
    grading = DeterministicGrader().grade(prompt, Answer(text=" 4\n"))
    assert grading.passed and grading.score == 1.0
    assert grading.check_map() == {"exact_match": True, "matches_pattern": True, "within_length": True}
