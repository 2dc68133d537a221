"""The bar never moves down by itself, and luck never moves it up (issue 33, §1): which verdicts
earn an automatic acceptance, under both gate methods."""

from __future__ import annotations

import pytest
from evalkit.gate_settings import GateSettings
from evalkit.run.decide import acceptance_of, automatic_acceptance
from evalkit.runs import CaseResult, Run, RunStatus
from evalkit.storage.protocols import Capabilities
from evalkit.storage.values import Acceptance
from evalkit.tolerance import Tolerances
from evalkit.verdict import BASELINE, Verdict, compare, verdict_of
from evalkit.wording import arguments_named


class AcceptedStore:
    """Just enough of a store for the rule: which runs are accepted."""

    def __init__(self, *accepted: str) -> None:
        self.accepted = set(accepted)

    def acceptances_for(self, run_ids):  # noqa: ANN001, ANN201
        return {r: Acceptance("first", 0.0) for r in run_ids if r in self.accepted}


def store(*accepted: str) -> Capabilities:
    kept = AcceptedStore(*accepted)
    return Capabilities(kept, baselines=kept)  # type: ignore[arg-type]


def run(run_id: str, failing: int, n: int = 30, answers: int = 1) -> Run:
    measures = None
    cases = []
    for i in range(n):
        passed = i >= failing
        if answers > 1:
            measures = {"pass_fraction": 1.0 if passed else 0.0, "answers": answers, "passes": answers if passed else 0}
        cases.append(CaseResult(f"c{i}", passed, 1.0 if passed else 0.0, fingerprint="f", measures=measures))
    return Run(run_id, "s.set", "deterministic", status=RunStatus.COMPLETE, cases=cases, fingerprints_kept=True)


def verdict(now: Run, baseline: Run, method: str) -> Verdict:
    return verdict_of(compare(now, baseline, Tolerances(), GateSettings(method=method)), baseline)


METHODS = ("tolerance", "paired")


def test_the_first_run_of_its_scope_is_accepted() -> None:
    acceptance, note = acceptance_of(Verdict(BASELINE, "first"), store())
    assert acceptance is not None and acceptance.how == "first" and note is None


@pytest.mark.parametrize("method", METHODS)
def test_a_run_that_passes_but_is_worse_is_not_accepted(method) -> None:
    worse = verdict(run("now", 2), run("then", 0), method)  # 6.7 pp down: within the tolerance
    assert worse.state in ("no_regression", "inconclusive")
    acceptance, note = acceptance_of(worse, store("then"))
    assert acceptance is None
    if worse.state == "no_regression":
        assert "worse than the baseline on pass_rate" in note


@pytest.mark.parametrize("method", METHODS)
def test_a_run_as_good_as_the_baseline_is_not_accepted(method) -> None:
    same = verdict(run("now", 3, n=400), run("then", 3, n=400), method)
    assert same.state == "no_regression"
    acceptance, note = acceptance_of(same, store("then"))
    assert acceptance is None and "not significantly better" in note


@pytest.mark.parametrize("method", METHODS)
def test_a_significantly_better_run_is_accepted(method) -> None:
    better = verdict(run("now", 0), run("then", 6), method)  # six fixed, none regressed: p = 1/64
    acceptance, note = acceptance_of(better, store("then"))
    assert acceptance is not None and acceptance.how == "no_regression" and note is None
    assert "significantly better than the baseline on pass_rate" in acceptance.reason and "against accepted run then" in acceptance.reason


@pytest.mark.parametrize("method", METHODS)
def test_a_lucky_run_is_not_accepted(method) -> None:
    lucky = verdict(run("now", 2), run("then", 4), method)  # two fixed: p = 1/4
    assert acceptance_of(lucky, store("then"))[0] is None


def test_better_than_a_run_that_is_not_accepted_vouches_for_nothing() -> None:
    better = verdict(run("now", 0), run("then", 6), "tolerance")
    acceptance, note = acceptance_of(better, store())
    assert acceptance is None and note == "the run it was compared with (then) is not an accepted baseline"


def test_reused_answers_never_move_the_bar() -> None:
    assert automatic_acceptance(Verdict(BASELINE, "first"), store(), answers_reused=True) is None
    better = verdict(run("now", 0), run("then", 6), "paired")
    acceptance, note = acceptance_of(better, store("then"), answers_reused=True)
    assert acceptance is None
    assert note == "its answers were reused (a cache or a re-grade), and such a run is never accepted automatically"


def test_a_regressed_or_inconclusive_run_is_not_accepted_and_no_note_repeats_its_verdict() -> None:
    """Its verdict already says why it is not the new bar: no acceptance note is added."""
    regressed = verdict(run("now", 10), run("then", 0), "tolerance")
    assert regressed.state == "regressed" and acceptance_of(regressed, store("then")) == (None, None)
    inconclusive = verdict(run("now", 4, n=6), run("then", 0, n=6), "paired")
    assert inconclusive.state == "inconclusive" and acceptance_of(inconclusive, store("then")) == (None, None)


def test_a_run_with_an_added_case_that_fails_is_not_accepted_under_fail_on_new_failures() -> None:
    baseline = run("then", 6)
    now = run("now", 0)
    now = now.with_cases([*now.cases, CaseResult("new", False, 0.0, fingerprint="g")])
    better = verdict(now, baseline, "paired")
    acceptance, note = acceptance_of(better, store("then"), fail_on_new_failures=True)
    assert acceptance is None and note == "an added or edited case fails (fail_on_new_failures)"  # a Python caller's keyword
    with arguments_named():  # the command line's flag (it named the flag to a Python caller too)
        assert acceptance_of(better, store("then"), fail_on_new_failures=True)[1] == "an added or edited case fails (--fail-on-new-failures)"
    assert acceptance_of(better, store("then"))[0] is not None


def test_repeated_runs_are_accepted_by_the_same_rule() -> None:
    better = verdict(run("now", 0, answers=5), run("then", 6, answers=5), "paired")
    assert better.comparison is not None and better.comparison.repeats == 5
    assert acceptance_of(better, store("then"))[0] is not None
