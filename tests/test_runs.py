"""The run value: which runs never ended, and how one is shown with the cases its store holds."""

from __future__ import annotations

from fractions import Fraction

import pytest
from evalkit.runs import Run, RunStatus
from evalkit.storage.values import CaseTally


@pytest.mark.parametrize(
    ("status", "never_ended"),
    [(RunStatus.RUNNING, True), (RunStatus.INTERRUPTED, True), (RunStatus.COMPLETE, False), (RunStatus.INCOMPLETE, False)],
)
def test_a_run_marked_running_or_interrupted_never_ended(status: RunStatus, never_ended: bool) -> None:
    # only those have the counts of their start in their row; a complete or incomplete run's are its own
    assert Run("r", "s.x", "deterministic", status=status, case_count=40).never_ended is never_ended


def test_a_run_counted_by_its_stored_cases_carries_their_aggregates() -> None:
    run = Run("r", "s.x", "deterministic", status=RunStatus.INTERRUPTED, case_count=40)
    counted = run.counted_by(CaseTally(answered=6, passed=4, errored=1, score_sum=4.5))
    assert (counted.answered_count, counted.passed_count, counted.errored_count) == (6, 4, 1)
    # over the 5 scored cases: the errored one is counted apart, as by the pass rate (4/5)
    assert counted.mean_score == 0.9 and counted.pass_rate == Fraction(4, 5) and counted.case_count == 40 and counted.status is RunStatus.INTERRUPTED
    assert run.counted_by(CaseTally()).mean_score == 0.0  # nothing stored yet: no division by zero
