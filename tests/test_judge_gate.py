"""The judge gate: which judges' checks are advisory under ``[gate] min_judge_kappa``, and what an
advisory check leaves of a case's pass and score."""

from __future__ import annotations

import pytest
from evalkit.grading import Check, Grading
from evalkit.judge_gate import JudgeGate, judge_lines
from evalkit.storage.values import CalibrationRecord

RUBRIC = "deterministic:rubric:judge:m-1:v1"


def record(kappa: float | None, at: float, *, yardstick: str = RUBRIC, temperature: float = 0.0) -> CalibrationRecord:
    return CalibrationRecord(
        yardstick=yardstick, temperature=temperature, grader="rubric", judge_instance="judge", judge_model="m-1",
        prompt_version=1, set_identifier="shop.labels", repeats=1, n=10, agreement=0.9, kappa=kappa,
        kappa_low=None, kappa_high=None, self_agreement=None, calibrated_at=at,
    )  # fmt: skip


def mixed(rubric_passed: bool = False) -> Grading:
    checks = (Check("contains", True), Check("regex", False), Check("rubric", rubric_passed, detail="why", judged=True))
    held = sum(c.passed for c in checks)
    return Grading(held / 3, False, checks, yardstick=RUBRIC)


def test_an_uncalibrated_judges_checks_are_advisory_and_the_rest_decide_the_case() -> None:
    graded = JudgeGate.from_records(0.6, [], 0.0).apply(mixed())
    assert [(c.name, c.advisory) for c in graded.checks] == [("contains", False), ("regex", False), ("rubric", True)]
    assert (graded.passed, graded.score) == (False, 0.5)  # the failing regex still gates
    only_judged = Grading(0.0, False, (Check("fulfilment", False, judged=True),), yardstick=RUBRIC)
    assert (lambda g: (g.passed, g.score))(JudgeGate.from_records(0.6, [], 0.0).apply(only_judged)) == (True, 1.0)


@pytest.mark.parametrize(
    ("records", "advisory"),
    [
        ([record(0.6, 1.0)], False),  # at the threshold: licensed
        ([record(0.59, 1.0)], True),
        ([record(None, 1.0)], True),  # κ undefined
        ([record(0.9, 1.0), record(0.2, 2.0)], True),  # the newest record counts
        ([record(0.2, 1.0), record(0.9, 2.0)], False),
        ([record(0.9, 1.0, temperature=0.7)], True),  # another temperature is another judge
        ([record(0.9, 1.0, yardstick="deterministic:rubric:judge:m-2:v1")], True),  # another model too
    ],
)
def test_a_judge_is_licensed_by_its_newest_calibration_at_or_above_the_threshold(records, advisory) -> None:
    graded = JudgeGate.from_records(0.6, records, 0.0).apply(mixed())
    assert graded.checks[2].advisory is advisory
    assert graded == (mixed() if not advisory else graded)


def test_nothing_is_advisory_without_a_threshold_or_in_a_failed_grading() -> None:
    assert JudgeGate.from_records(None, [], 0.0).apply(mixed()) == mixed()
    failed = Grading(
        0.0,
        False,
        (Check("rubric", False, judged=True),),
        yardstick="deterministic:rubric:failed",
        error="Judge failed",
    )
    assert JudgeGate.from_records(0.6, [], 0.0).apply(failed) == failed


def test_the_lines_name_each_judges_kappa_from_the_run_metrics() -> None:
    from evalkit.runs import CaseResult

    case = CaseResult.from_grading("c1", mixed(True))
    gating = JudgeGate.from_records(0.6, [record(0.8123, 1.0)], 0.0)
    assert judge_lines(gating.metrics([case])) == [
        f"Judge {RUBRIC}: κ 0.81 (calibrated on shop.labels); its verdicts gate (min_judge_kappa 0.6)."
    ]
    advisory = JudgeGate.from_records(0.6, [], 0.0)
    case = CaseResult.from_grading("c1", advisory.apply(mixed()))
    assert judge_lines(advisory.metrics([case])) == [
        f"Judge {RUBRIC}: uncalibrated; its verdicts are advisory: below min_judge_kappa 0.6, they do not fail the run.",
        "1 advisory judged check left out of the gated figures.",
    ]
    assert (
        advisory.metrics([CaseResult("plain", True, 1.0, (Check("contains", True),), yardstick="deterministic")])
        is None
    )
    assert judge_lines(None) == [] and judge_lines({"judge_gate": "hostile"}) == []
    assert judge_lines({"judge_gate": {"judges": [{"yardstick": "y", "kappa": None, "calibration_set": "s"}]}}) == [
        "Judge y: κ undefined (calibrated on s); its verdicts gate ([gate] min_judge_kappa is unset)."
    ]


def test_a_stored_yardstick_or_set_is_named_as_one_word_whatever_it_holds() -> None:
    """``judge_lines`` put the stored yardstick and calibration set into its sentence raw: a
    report's notes keep their lines (the JUnit report's ``system-out``, the HTML notes), so a
    yardstick holding ``\\nevalkit: ok`` printed a line of its own there. Each is now named as a
    message names a word (``wording.word_named``): as it is when it reads as one, else quoted with
    its hidden characters escaped."""
    stored = {
        "judge_gate": {
            "judges": [
                {
                    "yardstick": "judge:x\nevalkit: ok \x1b[31m",
                    "kappa": 0.5,
                    "calibration_set": "s\r\n[bold]b[/bold] set",
                },
                {"yardstick": RUBRIC, "kappa": None, "calibration_set": None},
            ]
        }
    }
    first, second = judge_lines(stored)
    assert first == (
        'Judge "judge:x\\x0aevalkit: ok \\x1b[31m": κ 0.50 (calibrated on "s\\x0d\\x0a[bold]b[/bold] set"); '
        "its verdicts gate ([gate] min_judge_kappa is unset)."
    )
    assert second.startswith(f"Judge {RUBRIC}: uncalibrated;")
