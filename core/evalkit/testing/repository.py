"""The repository contract suite: what every results store must do, checked against any URL.

One section for the base protocol every store implements, then one (or two) for each optional
capability of :mod:`evalkit.storage.protocols` — a store is held to every capability it claims."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import attrs

from ..answers import ServingIdentity
from ..components import offers
from ..grading import Check
from ..runs import CaseResult, Run, RunKind, RunStatus
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

    def retrieval_header(self, run_id: str, set_id: str, *, deployment: str | None = None) -> Run:
        self.clock += 10
        return Run(
            id=f"kit-{self.token}-{run_id}", set_identifier=set_id, grader="retrieval_hit_rate", kind=RunKind.RETRIEVAL,
            case_count=1, started_at=self.clock, adapter="kit.retriever", retriever="kit.retriever",
            deployment=deployment, privacy="full",
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


def _provenance(suite: _Suite, report: ContractReport) -> None:
    from ..run.placement import built_in_code, grader_plugin_of, prompt_run_provenance

    repo = suite.repository
    given = prompt_run_provenance(True, "kit-grader-plugin")
    run = attrs.evolve(suite.header("provenance", suite.set_id("provenance"), cases=1), provenance=given)
    repo.begin_run(run)
    begun = repo.get_run(run.id, with_cases=False)
    if begun is None:
        return  # the base section reports a store that loses runs
    if begun.provenance != given:
        report.add(
            f"begin_run() must keep Run.provenance as given; got {begun.provenance!r}: without it `evalkit regrade` "
            "of a plugin grader's run needs --grader and an in-code set's run is not told apart"
        )
        return
    repo.record_cases(run.id, [suite.case("a")], "full")
    finished = repo.finish_run(run.id, "complete", run.started_at + 1, grader="kit-yardstick:v1", identity=IDENTITY)
    read = repo.get_run(run.id, with_cases=False)
    for what, stored in (("finish_run()", finished), ("get_run() after finish_run()", read)):
        if isinstance(stored, Run) and (grader_plugin_of(stored), built_in_code(stored)) != ("kit-grader-plugin", True):
            report.add(
                f"{what} must keep the provenance given to begin_run() when finish_run() is given none; got {stored.provenance!r}"
            )
            return


def _revisable(suite: _Suite, report: ContractReport) -> None:
    """``revise_provenance`` changes the stored provenance by what it is given (nothing for ``None``),
    keeps what begin_run stored beside it, and refuses a run that is not stored."""
    from ..errors import StorageError

    repo = suite.repository
    run = attrs.evolve(suite.header("revised", suite.set_id("revised"), cases=1), provenance={"kept": True})
    repo.begin_run(run)
    seen: list[Any] = []
    repo.revise_provenance(run.id, lambda stored: (seen.append(stored), {**(stored or {}), "limit_stops": {"1/2": "a"}})[1])
    repo.revise_provenance(run.id, lambda stored: {**(stored or {}), "limit_stops": {**stored["limit_stops"], "2/2": "b"}})
    repo.revise_provenance(run.id, lambda stored: None)
    stored = repo.get_run(run.id, with_cases=False)
    want = {"kept": True, "limit_stops": {"1/2": "a", "2/2": "b"}}
    if seen != [{"kept": True}] or stored is None or stored.provenance != want:
        report.add(
            f"revise_provenance() must give the stored provenance to its change and store what it returns (nothing for None): "
            f"given {seen!r}, then stored {stored.provenance if stored is not None else None!r}, not {want!r}"
        )
    try:
        repo.revise_provenance(f"{run.id}-missing", lambda stored: {"x": 1})
    except StorageError:
        pass
    else:
        report.add("revise_provenance() of a run that is not stored must raise StorageError")


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
    regrade = attrs.evolve(suite.header("resume-regrade", set_id), answers_reused="regrade", source_run_id=run.id)
    repo.begin_run(regrade)
    repo.mark_status(regrade.id, "interrupted")
    found = repo.latest_unfinished_run(set_id, IDENTITY.provider_instance, "kit-alias", "deterministic")
    if found is None or found.id != run.id:
        report.add(
            "latest_unfinished_run() must pass over a re-grade run (answers_reused \"regrade\": it is re-graded again, "
            f"never resumed) and find the older unfinished run; got {None if found is None else found.id!r}"
        )
    _ad_hoc_resumable(suite, report)
    repo.record_cases(run.id, [suite.case("b")], "full")
    repo.finish_run(run.id, "complete", run.started_at + 1, grader="deterministic", identity=IDENTITY)
    repo.mark_status(run.id, "interrupted")
    if repo.get_run(run.id).status is not RunStatus.COMPLETE:
        report.add("mark_status() must never change a complete run")
    retrieval = suite.retrieval_header("resume-r", set_id, deployment="kit-deployment")
    repo.begin_run(retrieval)
    found = repo.latest_unfinished_retrieval_run(set_id, "kit.retriever", deployment="kit-deployment")
    if found is None or found.id != retrieval.id:
        report.add("latest_unfinished_retrieval_run() must find the unfinished retrieval run of the set, retriever and deployment")
    if repo.latest_unfinished_retrieval_run(set_id, "kit.retriever", deployment=None) is not None:
        report.add("latest_unfinished_retrieval_run() must be scoped to the deployment")


def _ad_hoc_resumable(suite: _Suite, report: ContractReport) -> None:
    """A store whose ``latest_unfinished_run`` takes ``adapter`` must pass over another adapter's
    ad-hoc run (no instance): a bare ``--resume`` would pick it and be refused. One written before
    ``adapter`` was asked for is called without it, and is not held to this."""
    import inspect

    repo = suite.repository
    try:
        parameters = inspect.signature(repo.latest_unfinished_run).parameters
    except (TypeError, ValueError):
        return
    if "adapter" not in parameters:
        return
    set_id = suite.set_id("resume-ad-hoc")
    runs = {}
    for adapter in ("kit", "kit-other"):
        run = attrs.evolve(suite.header(f"resume-{adapter}", set_id), provider_instance=None, adapter=adapter)
        repo.begin_run(run)
        runs[adapter] = run.id
    for adapter, run_id in runs.items():
        found = repo.latest_unfinished_run(set_id, None, "kit-alias", "deterministic", adapter=adapter)
        if found is None or found.id != run_id:
            report.add(
                f"latest_unfinished_run(adapter={adapter!r}) must find the newest unfinished ad-hoc run of that adapter, "
                f"passing over another adapter's; got {found.id if found is not None else None!r}"
            )
            return


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
    evidence = [r.id for r in repo.quality_runs_for_provider_model(IDENTITY.provider_instance, IDENTITY.model_alias)]
    if newer.id not in evidence or base.id in evidence:
        report.add("quality_runs_for_provider_model() must list the latest verified complete run of each set of the instance and alias")


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


def _accepted_baselines(suite: _Suite, report: ContractReport) -> None:
    from ..baselines import Acceptance, BaselineScope

    repo = suite.repository
    set_id = suite.set_id("accepted")
    older = suite.complete(suite.header("a1", set_id, cases=1), [suite.case("a")])
    newer = suite.complete(suite.header("a2", set_id, cases=1), [suite.case("a")])
    unfinished = suite.header("a3", set_id, cases=1)
    repo.begin_run(unfinished)
    scope = BaselineScope.of_run(older)
    if scope is None:
        return  # the first-acceptance section reports a store that loses the identity
    if repo.accepted_baseline(scope) is not None:
        report.add("accepted_baseline() must return None while no run of the scope is accepted")
    manual = Acceptance("manual", 5.0, "kit", "a reviewed change")
    repo.accept_run(older.id, Acceptance("first", 1.0, None, "the first run of its scope"))
    repo.accept_run(newer.id, manual)
    found = repo.accepted_baseline(scope)
    if found is None or found.id != newer.id:
        report.add("accepted_baseline() must return the most recently accepted run of the scope")
    elif sorted(c.case_id for c in found.cases) != ["a"]:
        report.add("accepted_baseline() must return the baseline with its cases")
    again = repo.accepted_baseline(scope, exclude_run_id=newer.id)
    if again is None or again.id != older.id:
        report.add("accepted_baseline(exclude_run_id=…) must skip the excluded run and return the next accepted one")
    if repo.acceptances_for([newer.id, unfinished.id]) != {newer.id: manual}:
        report.add("acceptances_for() must return the acceptance of each accepted run, and nothing for the others")
    listed = [r.id for r in repo.accepted_runs(set_id)]
    if listed != [newer.id, older.id]:
        report.add(f"accepted_runs() must list the set's accepted runs, most recently accepted first; got {listed}")
    other = attrs.evolve(scope, reported_model="another-reported-model")
    if repo.accepted_baseline(other) is not None:
        report.add("accepted_baseline() must be scoped to the whole serving identity (reported model too)")


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


def _alias_quality(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    suite.complete(suite.header("q", suite.set_id("quality"), cases=1), [suite.case("a")])
    value = repo.mean_quality_for_model(IDENTITY.model_alias)
    if value is not None and not 0.0 <= float(value) <= 1.0:
        report.add(f"mean_quality_for_model() must be a score from 0 to 1 (or None), got {value!r}")
    if repo.mean_quality_for_model(f"kit-{suite.token}-never-measured") is not None:
        report.add("mean_quality_for_model() of an alias never measured must be None")


def _streamed(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    set_id = suite.set_id("streamed")
    base = suite.complete(suite.header("s1", set_id, cases=3), [suite.case("a"), suite.case("b"), suite.case("c", passed=False)])
    run = suite.header("s2", set_id, cases=3)
    repo.begin_run(run)
    repo.record_cases(run.id, [suite.case("b", passed=False), suite.case("a"), suite.case("d")], "full")
    finished = repo.finish_run(run.id, "complete", run.started_at + 1, grader="deterministic", identity=IDENTITY, with_cases=False)
    if finished.cases or finished.answered_count != 3:
        report.add("finish_run(with_cases=False) must return the run without its cases, with the stored aggregates")
    tally = repo.case_tally(run.id)
    if (tally.answered, tally.passed, tally.errored) != (3, 2, 0) or dict(tally.identities) != {IDENTITY: 3}:
        report.add(f"case_tally() must count the stored cases and their identities; got {tally!r}")
    elif set(tally.yardsticks) != {"deterministic"}:
        report.add(f"case_tally() must give the yardsticks of the answered cases; got {sorted(tally.yardsticks)}")
    stored = [c.case_id for c in repo.iter_cases(run.id)]
    if stored != ["b", "a", "d"]:
        report.add(f"iter_cases() must give the run's cases in stored order; got {stored}")
    notable = [c.case_id for c in repo.iter_cases(run.id, notable_only=True)]
    if notable != ["b"]:
        report.add(f"iter_cases(notable_only=True) must give only the failed, errored and unstable cases; got {notable}")
    pairs = list(repo.paired_cases(run.id, base.id))
    shape = [(p.case_id, None if p.current is None else p.current.passed, None if p.baseline is None else p.baseline.passed) for p in pairs]
    expected = [("b", False, True), ("a", True, True), ("d", True, None), ("c", None, False)]
    if shape != expected:
        report.add(
            "paired_cases() must give the run's cases in stored order, each with the baseline's case of its id, "
            f"then the baseline's cases the run lacks; got {shape}"
        )


def _leases(suite: _Suite, report: ContractReport) -> None:
    from ..leases import LeaseOwner, RunBusyError, ShardMismatchError

    repo = suite.repository
    run = suite.header("lease", suite.set_id("leases"), cases=2)
    repo.begin_run(run)
    one = LeaseOwner("kit-host-one", 1, f"{suite.token}-one")
    two = LeaseOwner("kit-host-two", 2, f"{suite.token}-two")
    repo.acquire_lease(run.id, "*", one)
    try:
        repo.acquire_lease(run.id, "1/2", two, shard_count=2)
    except RunBusyError:
        pass
    else:
        report.add("acquire_lease() must refuse (RunBusyError) a part that overlaps another owner's live lease")
    if repo.renew_lease(run.id, "*", one) is not True:
        report.add("renew_lease() must refresh the owner's own lease and return True")
    repo.release_lease(run.id, "*", one, done=False)
    repo.acquire_lease(run.id, "1/2", two, shard_count=2)
    try:
        repo.acquire_lease(run.id, "2/3", one, shard_count=3)
    except ShardMismatchError:
        pass
    else:
        report.add("acquire_lease() must refuse (ShardMismatchError) a shard that gives another N than the stored shards")
    live = repo.lease_liveness([run.id]).get(run.id)
    if live is None or not live.live:
        report.add(f"lease_liveness() must say a run whose lease is live is answered; got {live!r}")
    repo.release_lease(run.id, "1/2", two, done=True)
    progress = repo.shard_progress(run.id)
    if (progress.count, set(progress.done)) != (2, {1}):
        report.add(f"shard_progress() must say N and which shards are in; got {progress!r}")
    live = repo.lease_liveness([run.id, "evalkit-kit-no-such-run"])
    if "evalkit-kit-no-such-run" in live or run.id not in live or live[run.id].live or live[run.id].unstarted != (2,):
        report.add(
            "lease_liveness() must give each run with a lease its RunLiveness (none live, shard 2 of 2 not started "
            f"here) and leave out runs without one; got {live!r}"
        )
    repo.acquire_lease(run.id, "1/2", one, shard_count=2)  # the shard run again (a CI's re-run of its job)
    progress = repo.shard_progress(run.id)
    if progress.done:
        report.add(f"acquire_lease() must clear a part's done mark when it is taken again (it is answered again); got {progress!r}")
    repo.release_lease(run.id, "1/2", one, done=False)


def _purge(suite: _Suite, report: ContractReport) -> None:
    repo = suite.repository
    ancient = attrs.evolve(suite.header("ancient", suite.set_id("purge"), cases=1), started_at=500.0)
    kept = suite.complete(suite.header("kept", suite.set_id("purge"), cases=1), [suite.case("a")])
    suite.complete(ancient, [suite.case("a")])
    purged = repo.purge_older_than(501.0)  # only runs started in the first minutes of 1970: the suite's own
    if purged < 1 or repo.get_run(ancient.id) is not None:
        report.add("purge_older_than() must delete the runs started before the cutoff and say how many")
    if repo.get_run(kept.id) is None:
        report.add("purge_older_than() must keep the runs started after the cutoff")


def _partial_capabilities(repository: Any) -> list[str]:
    """A problem for each optional capability ``repository`` implements in part: evalkit uses a
    capability only whole, so a store with some of its methods (one written before a method was
    added to it, or with a misspelt name) silently runs without it — leases, resume, baselines."""
    from ..storage.protocols import _CAPABILITIES

    problems = []
    for _, protocol in _CAPABILITIES:
        if isinstance(repository, protocol):
            continue
        methods = [name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")]
        has = [name for name in methods if callable(getattr(repository, name, None))]
        if has:
            lacks = [name for name in methods if name not in has]
            problems.append(
                f"it implements {protocol.__name__} in part (it has {', '.join(has)}; it lacks {', '.join(lacks)}): "
                f"evalkit uses a capability only whole, so the store runs without {protocol.__name__}"
            )
    return problems


def check_repository(url: str | Any) -> None:
    """Run the repository contract suite against the store ``url`` opens (or a repository object).

    Every store must satisfy :class:`~evalkit.storage.ResultRepository`: begin (and join) a run,
    record cases (a stored answer is kept, an errored one replaced) with their fingerprints, keep a run's
    ``provenance`` (what ``evalkit regrade`` reads the grader plugin from), honour the privacy level,
    recompute aggregates on finish, read runs back. Each optional capability the store claims
    (``ResumableRuns``, ``GeneratorScopedResults``, ``ProviderModelQualityScores``, ``RunHistory``,
    ``AcceptedBaselines``, ``StreamedCases``, ``RunLeases``, ``RevisableProvenance``; see :mod:`evalkit.storage.protocols`)
    is checked too (``ResumableRuns``: the resume lookup passes over re-grade runs): a capability claimed is a promise, and one implemented in part (some of its
    methods) is a problem, since evalkit then runs as if the store lacked it. The suite writes runs under unique
    ``evalkit_kit_*`` set identifiers (and, for retention, purges only runs it dates to the first
    minutes of 1970), so an existing store can be used. Raises one ``AssertionError`` listing every
    problem.
    """
    from ..storage import (
        AcceptedBaselines,
        GeneratorScopedResults,
        ProviderModelQualityScores,
        ResultRepository,
        ResumableRuns,
        RevisableProvenance,
        RunHistory,
        RunLeases,
        StreamedCases,
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
        if not offers(repository, ResultRepository):
            report.add("it does not satisfy ResultRepository (begin_run, record_cases, finish_run, get_run)")
            report.raise_if_any()
        report.extend(_partial_capabilities(repository))
        suite = _Suite(repository)
        sections: list[tuple[str, Callable[[_Suite, ContractReport], None], Any]] = [
            ("storing runs and cases", _base, None),
            ("case fingerprints", _fingerprints, None),
            ("the run's provenance", _provenance, None),
            ("the privacy level", _privacy, None),
            ("resume (ResumableRuns)", _resumable, ResumableRuns),
            ("baseline reads (GeneratorScopedResults)", _baselines, GeneratorScopedResults),
            ("quality per alias (ProviderModelQualityScores)", _alias_quality, ProviderModelQualityScores),
            ("history (RunHistory)", _history, RunHistory),
            ("verdicts (AcceptedBaselines)", _verdicts, AcceptedBaselines),
            ("accepted baselines (AcceptedBaselines)", _accepted_baselines, AcceptedBaselines),
            ("the first of a scope (AcceptedBaselines)", _first_acceptance, AcceptedBaselines),
            ("streamed cases (StreamedCases)", _streamed, StreamedCases),
            ("cases as stored (StreamedCases)", _stored_forms, StreamedCases),
            ("leases (RunLeases)", _leases, RunLeases),
            ("retention (RunHistory)", _purge, RunHistory),
            ("the run's provenance revised (RevisableProvenance)", _revisable, RevisableProvenance),
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
