"""The repository contract suite: what every results store must do, checked against any URL."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import attrs

from ..answers import ServingIdentity
from ..grading import Check
from ..runs import CaseResult, Run, RunStatus
from .problems import ContractReport

__all__ = ["check_repository"]

IDENTITY = ServingIdentity("kit-instance", "kit-alias", "kit-model-2026-01-01")


class _Suite:
    """One contract run: unique set identifiers and run ids, so any existing store can be used."""

    def __init__(self, repository: Any) -> None:
        self.repository = repository
        self.token = uuid.uuid4().hex[:10]
        self.clock = 1_000_000.0

    def set_id(self, name: str) -> str:
        return f"evalkit_kit_{self.token}.{name}"

    def header(self, run_id: str, set_id: str, cases: int = 2, *, alias: str = "kit-alias") -> Run:
        self.clock += 10
        return Run(
            id=f"kit-{self.token}-{run_id}", set_identifier=set_id, grader="deterministic", case_count=cases,
            started_at=self.clock, provider_instance=IDENTITY.provider_instance, model_alias=alias,
            adapter="kit", privacy="full",
        )

    @staticmethod
    def case(case_id: str, passed: bool = True, error: str | None = None, text: str | None = "an answer") -> CaseResult:
        return CaseResult(
            case_id=case_id, passed=passed and error is None, score=1.0 if passed and error is None else 0.0,
            checks=(Check("contains", passed and error is None),), latency_s=0.25, error=error,
            identity=None if error else IDENTITY, adapter="kit", yardstick=None if error else "deterministic",
            answer_text=None if error else text, finished_at=1.0,
        )

    def complete(self, run: Run, cases: list[CaseResult]) -> Run:
        self.repository.begin_run(run)
        self.repository.record_cases(run.id, cases, "full")
        return self.repository.finish_run(run.id, "complete", run.started_at + 1, grader="deterministic", identity=IDENTITY)


def _base(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    set_id = suite.set_id("base")
    run = suite.header("base", set_id, cases=3)
    stored = repo.begin_run(run)
    if not isinstance(stored, Run) or stored.id != run.id or stored.status is not RunStatus.RUNNING:
        report.add(f"begin_run() must return the new run with status running, got {stored!r}")
    again = repo.begin_run(suite.header("base", set_id, cases=3))
    if not isinstance(again, Run) or again.started_at != run.started_at:
        report.add("begin_run() with an existing id must return the stored run unchanged (a shard joining)")
    repo.record_cases(run.id, [suite.case("a"), suite.case("b", passed=False), suite.case("c", error="timed out")], "full")
    read = repo.get_run(run.id)
    if read is None:
        report.add("get_run() does not find a run that was begun")
        return
    cases = {c.case_id: c for c in read.cases}
    if set(cases) != {"a", "b", "c"}:
        report.add(f"get_run() must return every recorded case; got {sorted(cases)}")
    elif not (cases["a"].passed and not cases["b"].passed and cases["c"].errored and cases["c"].error == "timed out"):
        report.add("recorded cases must come back with their passed flag and error")
    elif [c.name for c in cases["a"].checks] != ["contains"]:
        report.add("a case's named checks must be kept")
    header_only = repo.get_run(run.id, with_cases=False)
    if header_only is None or header_only.set_identifier != set_id:
        report.add("get_run(with_cases=False) must return the run")
    repo.record_cases(run.id, [suite.case("a", passed=False), suite.case("c")], "full")
    cases = {c.case_id: c for c in repo.get_run(run.id).cases}
    if not cases.get("a") or not cases["a"].passed:
        report.add("record_cases() must keep a stored case as it is (a resume never overwrites an answer)")
    if not cases.get("c") or cases["c"].errored:
        report.add("record_cases() must replace a stored errored case (a resume answers it again)")
    finished = repo.finish_run(run.id, "complete", run.started_at + 5, grader="deterministic", identity=IDENTITY)
    if not isinstance(finished, Run):
        report.add(f"finish_run() must return the run, got {type(finished).__name__}")
        return
    if finished.status is not RunStatus.COMPLETE or finished.identity != IDENTITY:
        report.add("finish_run() must store the status and the serving identity")
    if (finished.answered_count, finished.passed_count) != (3, 2):
        report.add(f"finish_run() must recompute the aggregates from the stored cases: 3 answered, 2 passed; got {finished.answered_count}, {finished.passed_count}")
    if repo.get_run(f"kit-{suite.token}-never") is not None:
        report.add("get_run() of an unknown id must return None")


def _fingerprints(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    run = attrs.evolve(suite.header("prints", suite.set_id("prints"), cases=2), fingerprints_kept=True)
    repo.begin_run(run)
    repo.record_cases(run.id, [attrs.evolve(suite.case("a"), fingerprint="sha256:kit-a"), suite.case("b", error="timed out")], "full")
    stored = repo.get_run(run.id)
    if stored is None:
        report.add("get_run() does not find a run that was begun")
        return
    if not stored.fingerprints_kept:
        report.add("begin_run() must keep Run.fingerprints_kept: without it every edited case would be compared as unchanged")
    prints = {c.case_id: c.fingerprint for c in stored.cases}
    if prints.get("a") != "sha256:kit-a" or prints.get("b") is not None:
        report.add(f"record_cases() must keep each case's fingerprint as given (an edited case is told by it); got {prints}")


def _privacy(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    run = suite.header("private", suite.set_id("privacy"), cases=1)
    repo.begin_run(run)
    repo.record_cases(run.id, [suite.case("a", text="the secret answer text")], "metadata")
    stored = repo.get_run(run.id)
    if stored is not None and any(c.answer_text for c in stored.cases):
        report.add('record_cases(privacy="metadata") must not keep answer text')


def _resumable(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    set_id = suite.set_id("resume")
    run = suite.header("resume", set_id)
    repo.begin_run(run)
    repo.record_cases(run.id, [suite.case("a"), suite.case("b", error="rate limited")], "full")
    if repo.answered_case_ids(run.id) != {"a"}:
        report.add("answered_case_ids() must list the answered cases and not the errored ones")
    repo.mark_status(run.id, "interrupted")
    if repo.get_run(run.id).status is not RunStatus.INTERRUPTED:
        report.add("mark_status() must store the status of an unfinished run")
    found = repo.latest_unfinished_run(set_id, IDENTITY.provider_instance, "kit-alias", "deterministic")
    if found is None or found.id != run.id:
        report.add("latest_unfinished_run() must find the unfinished run of the set, instance, alias and grader")
    if repo.latest_unfinished_run(set_id, IDENTITY.provider_instance, "other-alias", "deterministic") is not None:
        report.add("latest_unfinished_run() must be scoped to the model alias")
    repo.record_cases(run.id, [suite.case("b")], "full")
    repo.finish_run(run.id, "complete", run.started_at + 1, grader="deterministic", identity=IDENTITY)
    repo.mark_status(run.id, "interrupted")
    if repo.get_run(run.id).status is not RunStatus.COMPLETE:
        report.add("mark_status() must never change a complete run")


def _baselines(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    set_id = suite.set_id("baseline")
    base = suite.complete(suite.header("b1", set_id), [suite.case("a"), suite.case("b", passed=False)])
    unfinished = suite.header("b2", set_id)
    repo.begin_run(unfinished)
    repo.record_cases(unfinished.id, [suite.case("a")], "full")
    found = repo.baseline_for(set_id, IDENTITY, "deterministic")
    if found is None or found.id != base.id:
        report.add("baseline_for() must return the latest complete run of the set, identity and yardstick (and never an unfinished one)")
    elif sorted(c.case_id for c in found.cases) != ["a", "b"]:
        report.add("baseline_for() must return the baseline with all its cases")
    if repo.baseline_for(set_id, IDENTITY, "deterministic", exclude_run_id=base.id) is not None:
        report.add("baseline_for(exclude_run_id=…) must never return the excluded run")
    other = ServingIdentity(IDENTITY.provider_instance, IDENTITY.model_alias, "another-reported-model")
    if repo.baseline_for(set_id, other, "deterministic") is not None:
        report.add("baseline_for() must be scoped to the whole serving identity (reported model too)")
    if repo.baseline_for(set_id, IDENTITY, "decision:judge:model:v1") is not None:
        report.add("baseline_for() must be scoped to the grading yardstick")
    newer = suite.complete(suite.header("b3", set_id), [suite.case("a"), suite.case("b")])
    found = repo.baseline_for(set_id, IDENTITY, "deterministic")
    if found is None or found.id != newer.id:
        report.add("baseline_for() must return the newest comparable run")


def _history(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    set_id = suite.set_id("history")
    ids = [suite.complete(suite.header(f"h{n}", set_id, cases=1), [suite.case("a")]).id for n in range(3)]
    listed = [r.id for r in repo.recent_runs(set_id)]
    if listed != list(reversed(ids)):
        report.add(f"recent_runs() must list the set's runs newest first; got {listed}")
    if [r.id for r in repo.recent_runs(set_id, limit=1)] != ids[-1:]:
        report.add("recent_runs(limit=1) must return only the newest run")


def _verdicts(suite: _Suite, report: ContractReport) -> None:
    from ..storage import StoredVerdict

    repo = suite.repository
    run = suite.complete(suite.header("v", suite.set_id("verdicts"), cases=1), [suite.case("a")])
    verdict = StoredVerdict("baseline", None, "recorded as the baseline")
    repo.record_verdict(run.id, verdict)
    if repo.verdicts_for([run.id, f"kit-{suite.token}-unknown"]) != {run.id: verdict}:
        report.add("verdicts_for() must return the recorded verdict of each known run, and nothing for unknown ids")


def _stored_forms(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    run = suite.header("forms", suite.set_id("forms"), cases=3)
    repo.begin_run(run)
    said = repo.record_cases_as_stored(run.id, [suite.case("a", text="a kept answer"), suite.case("b", passed=False)], "metadata")
    said_full = repo.record_cases_as_stored(run.id, [suite.case("c", text="a full answer"), suite.case("d", error="rate limited")], "full")
    stored = repo.get_run(run.id)
    if stored is None:
        return  # the base section reports a store that loses runs
    read_back = {c.case_id: c for c in stored.cases}
    for given, ids in ((said, ["a", "b"]), (said_full, ["c", "d"])):
        if given is None:
            continue  # allowed: the store committed them and says it cannot tell how they read back
        if [c.case_id for c in given] != ids:
            report.add(f"record_cases_as_stored() must return each case it was given, in order; got {[c.case_id for c in given]}")
        elif any(case != read_back.get(case.case_id) for case in given):
            report.add("record_cases_as_stored() must return the cases exactly as get_run() reads them back (privacy level applied)")


def _first_acceptance(suite: _Suite, report: ContractReport) -> None:
    from ..baselines import Acceptance, BaselineScope

    repo = suite.repository
    set_id = suite.set_id("first")
    one = suite.complete(suite.header("f1", set_id, cases=1), [suite.case("a")])
    two = suite.complete(suite.header("f2", set_id, cases=1), [suite.case("a")])
    scope = BaselineScope.of_run(one)
    if scope is None:
        report.add("finish_run() must return the run with its serving identity (needed for its baseline scope)")
        return
    first = Acceptance("first", one.started_at or 0.0, None, "the first run of its scope")
    if not repo.accept_if_first(one.id, scope, first):
        report.add("accept_if_first() must accept a run when no run of its scope is accepted")
    if repo.accept_if_first(two.id, scope, first):
        report.add("accept_if_first() must refuse (return False) when another run of the scope is already accepted")
    elsewhere = suite.complete(suite.header("f3", suite.set_id("first-other"), cases=1), [suite.case("a")])
    other_scope = BaselineScope.of_run(elsewhere)
    if other_scope is not None and not repo.accept_if_first(elsewhere.id, other_scope, first):
        report.add("accept_if_first() must judge each scope on its own")


def check_repository(url: str | Any) -> None:
    """Run the repository contract suite against the store ``url`` opens (or a repository object).

    Every store must satisfy :class:`~evalkit.storage.ResultRepository`: begin (and join) a run,
    record cases (a stored answer is kept, an errored one replaced) with their fingerprints, honour the privacy level,
    recompute aggregates on finish, read runs back. Each optional capability the store claims
    (``ResumableRuns``, ``GeneratorScopedResults``, ``RunHistory``, ``RunVerdicts``,
    ``StoredCaseForms``, ``FirstAcceptance``) is checked
    too: a capability claimed is a promise. The suite writes runs under unique ``evalkit_kit_*``
    set identifiers, so an existing store can be used. Raises one ``AssertionError`` listing every
    problem.
    """
    from ..storage import (
        FirstAcceptance,
        GeneratorScopedResults,
        ResultRepository,
        ResumableRuns,
        RunHistory,
        RunVerdicts,
        StoredCaseForms,
        close_repository,
        open_repository,
    )
    from ..storage.schema import redact_url

    shown = redact_url(url) if isinstance(url, str) else type(url).__name__
    report = ContractReport(f"repository {shown}")
    if isinstance(url, str):
        ok, repository = report.call("opening the repository", open_repository, url)
        if not ok:
            report.raise_if_any()
    else:
        repository = url
    try:
        if not isinstance(repository, ResultRepository):
            report.add("it does not satisfy ResultRepository (begin_run, record_cases, finish_run, get_run)")
            report.raise_if_any()
        suite = _Suite(repository)
        sections: list[tuple[str, Callable[[_Suite, ContractReport], None], Any]] = [
            ("storing runs and cases", _base, None),
            ("case fingerprints", _fingerprints, None),
            ("the privacy level", _privacy, None),
            ("resume (ResumableRuns)", _resumable, ResumableRuns),
            ("baseline reads (GeneratorScopedResults)", _baselines, GeneratorScopedResults),
            ("history (RunHistory)", _history, RunHistory),
            ("verdicts (RunVerdicts)", _verdicts, RunVerdicts),
            ("cases as stored (StoredCaseForms)", _stored_forms, StoredCaseForms),
            ("the first of a scope (FirstAcceptance)", _first_acceptance, FirstAcceptance),
        ]
        for title, section, capability in sections:
            if capability is not None and not isinstance(repository, capability):
                continue
            section_report = ContractReport(title)
            with section_report.step(title):
                section(suite, section_report)
            report.extend([f"{title}: {p}" if not p.startswith(title) else p for p in section_report.problems])
    finally:
        close_repository(repository)
    report.raise_if_any()
