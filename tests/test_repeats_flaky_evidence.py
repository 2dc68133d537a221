"""A prompt answered several times, flaky cases, and the backend behind an alias (issue 33, §4–§5)."""

from __future__ import annotations

import pytest
from evalkit.answers import ServingIdentity, Usage
from evalkit.flakiness import flaky_cases
from evalkit.grading import AGREEMENT_CHECK, Check, judge_pass_share, verdict_check_name
from evalkit.run.answering.repeats import merge_answers, repeat_metrics
from evalkit.runs import CaseResult
from evalkit.serving_evidence import compare_evidence, identity_evidence
from evalkit.storage.values import CaseOutcome, RunOutcomes

WHO = ServingIdentity("prod", "gpt", "gpt-2025")


def answer(passed: bool, score: float | None = None, *, checks=(), error=None, identity=WHO, yardstick="deterministic") -> CaseResult:  # noqa: ANN001
    return CaseResult(
        "c", passed, score if score is not None else float(passed), checks=checks, error=error, identity=identity,
        yardstick=yardstick, latency_s=1.0, usage=Usage(10, 2), answer_text="a", fingerprint="f", finished_at=5.0,
    )  # fmt: skip


# -- repeats ----------------------------------------------------------------------------------


def test_one_answer_is_the_case_as_it_was() -> None:
    only = answer(True)
    assert merge_answers([only]) == only and only.answers == 1 and not only.flaky


def test_answers_that_disagree_make_a_flaky_case_with_its_pass_fraction() -> None:
    checks_ok, checks_bad = (Check("exact", True),), (Check("exact", False, detail="was 13"),)
    case = merge_answers([answer(True, checks=checks_ok), answer(False, checks=checks_bad), answer(True, checks=checks_ok)])
    assert (case.answers, case.passes, case.pass_fraction, case.flaky, case.passed) == (3, 2, pytest.approx(2 / 3), True, True)
    assert case.score == pytest.approx(2 / 3) and case.needs_a_look
    assert case.checks == (Check("exact", False, None, "failed in 1 of 3 answers: was 13"),)
    assert case.usage == Usage(30, 6) and case.latency_s == 1.0 and case.answer_text == "a"
    assert [a["passed"] for a in case.detail["answers"]] == [True, False, True]
    two_of_four = merge_answers([answer(True), answer(False), answer(True), answer(False)])
    assert not two_of_four.passed, "a case passes when most of its answers do; half is not most"


def test_an_answer_that_errs_makes_the_case_errored_and_a_failed_grading_its_yardstick() -> None:
    errored = merge_answers([answer(True), answer(False, error="timed out")])
    assert errored.errored and errored.error == "answer 2 of 2: timed out"
    failed = merge_answers([answer(True), answer(False, yardstick="decision:failed")])
    assert failed.yardstick == "decision:failed"
    switched = merge_answers([answer(True), answer(True, identity=ServingIdentity("prod", "gpt", "other"))])
    assert switched.identity is None, "answers that disagree on who served prove no single identity"


def test_a_judge_asked_several_times_gives_each_answer_its_share_of_passing_verdicts() -> None:
    verdicts = (
        Check(verdict_check_name(1, 3, "pass"), True), Check(verdict_check_name(2, 3, "fail"), False),
        Check(verdict_check_name(3, 3, "pass"), True), Check(AGREEMENT_CHECK, False),
    )  # fmt: skip
    assert judge_pass_share(verdicts) == pytest.approx(2 / 3)
    assert judge_pass_share((Check("verdict of the court", True),)) is None
    single = merge_answers([answer(True, checks=verdicts)])
    assert single.pass_fraction == pytest.approx(2 / 3) and single.unstable
    repeated = merge_answers([answer(True, checks=verdicts), answer(True)])
    assert repeated.pass_fraction == pytest.approx((2 / 3 + 1) / 2)


def test_a_runs_repeat_summary_counts_pass_at_n_pass_all_n_and_the_flaky() -> None:
    cases = [
        merge_answers([answer(True), answer(True)]),
        merge_answers([answer(True), answer(False)]),
        merge_answers([answer(False), answer(False)]),
    ]
    summary = repeat_metrics([attr_id(c, f"c{i}") for i, c in enumerate(cases)])
    assert summary == {
        "answers_per_case": 2, "cases": 3, "pass_fraction": pytest.approx(0.5), "pass_at_n": pytest.approx(2 / 3),
        "pass_all_n": pytest.approx(1 / 3), "flaky_count": 1, "flaky_cases": ["c1"],
    }  # fmt: skip
    assert repeat_metrics([answer(True)]) is None


def attr_id(case: CaseResult, case_id: str) -> CaseResult:
    import attrs

    return attrs.evolve(case, case_id=case_id)


# -- flaky across runs ----------------------------------------------------------------------------


def history(*runs: dict[str, tuple[bool, str] | tuple[bool, str, int, int]]) -> list[RunOutcomes]:
    """Runs oldest first, each ``{case id: (passed, fingerprint[, answers, passes])}``; returned newest first."""
    made = []
    for index, outcomes in enumerate(runs):
        made.append(RunOutcomes(f"r{index}", float(index), {cid: CaseOutcome(cid, *value) for cid, value in outcomes.items()}))
    return list(reversed(made))


def test_a_case_that_flips_back_and_forth_is_flaky_one_that_changed_once_is_not() -> None:
    found = flaky_cases(history(
        {"a": (True, "f"), "b": (True, "f"), "c": (True, "f")},
        {"a": (False, "f"), "b": (False, "f"), "c": (True, "f")},
        {"a": (True, "f"), "b": (False, "f"), "c": (True, "f")},
        {"a": (False, "f"), "b": (False, "f"), "c": (True, "f", 5, 3)},
    ))  # fmt: skip
    by_id = {c.case_id: c for c in found}
    assert set(by_id) == {"a", "c"}, "b failed once and stayed failed: a change, not noise"
    assert (by_id["a"].runs, by_id["a"].flips, by_id["a"].last_outcomes) == (4, 3, (True, False, True, False))
    assert by_id["a"].why == "flipped 3 times in 4 runs"
    assert (by_id["c"].disagreeing_runs, by_id["c"].latest_fraction) == (1, pytest.approx(0.6))
    assert found[0].case_id == "a"


def test_an_edited_case_starts_its_history_again() -> None:
    found = flaky_cases(history({"a": (True, "f1")}, {"a": (False, "f1")}, {"a": (True, "f2")}, {"a": (True, "f2")}))
    assert found == []


# -- the backend behind an alias -------------------------------------------------------------------


def serving(**evidence: object) -> dict:
    return {"serving": {"evidence": evidence}}


def test_identity_evidence_is_the_model_not_the_server() -> None:
    metrics = serving(routed_model="gpt-4o", owned_by="openai", total_slots=4, build_info="b123", **{"meta.n_params": 7})
    assert identity_evidence(metrics) == {"routed_model": "gpt-4o", "owned_by": "openai", "meta.n_params": "7"}
    assert identity_evidence(None) == identity_evidence({"serving": {"note": "x"}}) == {}


def test_a_different_backend_is_a_difference_and_missing_evidence_a_note() -> None:
    swapped = compare_evidence(serving(routed_model="claude-3"), serving(routed_model="gpt-4o"), "B")
    assert not swapped.same_backend
    assert swapped.differences == ("routed_model 'gpt-4o' (baseline run B) → 'claude-3' (this run)",)
    same = compare_evidence(serving(routed_model="gpt-4o", total_slots=2), serving(routed_model="gpt-4o", total_slots=4), "B")
    assert same.same_backend and same.notes == ()
    old = compare_evidence(serving(routed_model="gpt-4o"), None, "B")
    assert old.same_backend and "stored without evidence" in old.notes[0]
    silent = compare_evidence(None, serving(model_file="a.gguf"), "B")
    assert silent.same_backend and "gave no evidence" in silent.notes[0]
    partial = compare_evidence(serving(routed_model="x", model_file="a.gguf"), serving(routed_model="x"), "B")
    assert partial.same_backend and "model_file (this run only)" in partial.notes[0]


@pytest.mark.parametrize("method", ["tolerance", "paired"])
def test_a_repeated_run_s_pass_rate_is_the_mean_of_its_pass_fractions_under_both_gates(method) -> None:
    """Ten cases that passed 3 of 5 answers and now pass 2 of 5: each case's majority flips, but the
    pass fractions dropped 20 pp, which is what both gates read — not the 100 pp of the majorities."""
    from fractions import Fraction

    from evalkit.gate_settings import GateSettings
    from evalkit.runs import Run, RunStatus
    from evalkit.tolerance import Tolerances
    from evalkit.verdict import compare

    def repeated(run_id: str, passes: int) -> Run:
        measures = {"pass_fraction": passes / 5, "answers": 5, "passes": passes}
        cases = [CaseResult(f"c{i}", passes >= 3, passes / 5, fingerprint="f", measures=measures) for i in range(10)]
        return Run(run_id, "s.set", "deterministic", status=RunStatus.COMPLETE, cases=cases, fingerprints_kept=True)

    comparison = compare(repeated("now", 2), repeated("then", 3), Tolerances.parse("0.2", "0.2"), GateSettings(method=method))
    assert (comparison.baseline_pass_rate, comparison.pass_rate) == (Fraction(3, 5), Fraction(2, 5))
    assert comparison.pass_rate_delta == Fraction(-1, 5) and len(comparison.regressed_cases) == 10
    if method == "tolerance":
        assert not comparison.pass_rate_regressed, "a drop equal to the tolerance passes, exactly"
    assert comparison.statistic("pass_rate").delta == pytest.approx(-0.2)
