"""The built-in repository on both engines: writing, finishing, resuming, listing, retention, verdicts."""

from __future__ import annotations

import itertools

import pytest
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.errors import StorageError
from evalkit.runs import RunStatus
from evalkit.storage import (
    GeneratorScopedResults,
    ProviderModelQualityScores,
    ResultRepository,
    ResumableRuns,
    RunHistory,
    RunVerdicts,
    StoredVerdict,
)

IDENTITY = ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-08-06")
_clock = itertools.count(1_000)


def header(run_id: str, *, set_id: str = "pkg.set", cases: int = 3, started: float | None = None, **fields) -> Run:
    return Run(
        id=run_id, set_identifier=set_id, grader="deterministic", case_count=cases,
        started_at=float(next(_clock)) if started is None else started,
        provider_instance=IDENTITY.provider_instance, model_alias=IDENTITY.model_alias, **fields,
    )


def case(case_id: str, *, passed: bool = True, error: str | None = None, score: float | None = None) -> CaseResult:
    return CaseResult(
        case_id=case_id, passed=passed and error is None, score=(1.0 if passed else 0.0) if score is None else score,
        identity=None if error else IDENTITY, yardstick=None if error else "deterministic", error=error, finished_at=1.0,
    )


def test_the_builtin_repository_has_every_capability(repo) -> None:
    for capability in (ResultRepository, GeneratorScopedResults, ProviderModelQualityScores, RunHistory, ResumableRuns, RunVerdicts):
        assert isinstance(repo, capability), capability.__name__


def test_begin_run_twice_joins_the_stored_run(repo) -> None:
    first = repo.begin_run(header("r1", started=100.0))
    again = repo.begin_run(header("r1", started=999.0, label="other"))
    assert first.status is RunStatus.RUNNING
    assert again.started_at == 100.0 and again.label is None


def test_a_stored_case_is_kept_but_an_errored_one_is_replaced(repo) -> None:
    repo.begin_run(header("r1"))
    repo.record_cases("r1", [case("a"), case("b", error="rate limited")], "metadata")
    assert repo.answered_case_ids("r1") == {"a"}
    repo.record_cases("r1", [case("a", passed=False), case("b")], "metadata")
    stored = {c.case_id: c for c in repo.get_run("r1").cases}
    assert stored["a"].passed and not stored["b"].errored and stored["b"].passed
    assert repo.answered_case_ids("r1") == {"a", "b"}


def test_finish_recomputes_the_aggregates_from_the_stored_cases(repo) -> None:
    repo.begin_run(header("r1"))
    repo.record_cases("r1", [case("a"), case("b", passed=False), case("c", score=0.5, passed=True)], "metadata")
    run = repo.finish_run("r1", "complete", 2_000.0, identity=IDENTITY)
    assert (run.status, run.answered_count, run.passed_count) == (RunStatus.COMPLETE, 3, 2)
    assert run.identity == IDENTITY and run.mean_score == pytest.approx(0.5)
    listed = repo.recent_runs("pkg.set")[0]
    assert (listed.stored_answered_count, listed.stored_passed_count, listed.stored_mean_score) == (3, 2, 0.5)


def test_a_shard_that_finishes_late_with_an_older_view_does_not_reopen_the_run(repo) -> None:
    repo.begin_run(header("r1", cases=2))
    repo.record_cases("r1", [case("a"), case("b")], "metadata")
    repo.finish_run("r1", "complete", 2_000.0, identity=IDENTITY)
    late = repo.finish_run("r1", "running", 2_001.0, identity=None, identity_note="saw only its own slice")
    assert late.status is RunStatus.COMPLETE and late.identity == IDENTITY and late.finished_at == 2_000.0


def test_a_shards_case_stored_after_another_shard_closed_the_run_is_in_its_figures_and_spend(repo) -> None:
    """Shard 1, stopped by the run's budget, read what was spent (cases a, b), then closed the run
    ``incomplete`` — by then shard 2 had stored c, and its request in flight was answered after
    (d). Shard 2 finished its slice (``running``: the run is short of its budget-stopped cases), and
    the run kept shard 1's figures: 2 answered, 2 requests in its spend, where 4 cases are stored.
    The spend kept is summed from the stored cases under the run's lock, at the run's prices, and a
    late finisher still counts what it stored (status and finish time stay shard 1's)."""
    import attrs
    from evalkit.answers import Usage
    from evalkit.costs import Price, run_spend

    pricing = {"generator": Price(1000, 2000, "EUR").as_mapping()}
    repo.begin_run(header("r1", cases=6, pricing=pricing))
    usage = Usage(input_tokens=10, output_tokens=1, total_tokens=11)

    def answered(*ids: str) -> list[CaseResult]:
        return [attrs.evolve(case(i), usage=usage, requests=1) for i in ids]

    repo.record_cases("r1", answered("a", "b"), "metadata")  # shard 1's
    shard_1_view = run_spend(pricing, repo.case_usage("r1")).document()
    repo.record_cases("r1", answered("c"), "metadata")  # shard 2's, meanwhile
    repo.finish_run("r1", "incomplete", 2_000.0, identity=IDENTITY, spend=shard_1_view)
    repo.record_cases("r1", answered("d"), "metadata")  # shard 2's request in flight, answered after
    shard_2_view = run_spend(pricing, repo.case_usage("r1")).document()
    late = repo.finish_run("r1", "running", 2_001.0, identity=None, spend=shard_2_view)
    assert late.status is RunStatus.INCOMPLETE and late.finished_at == 2_000.0 and late.identity == IDENTITY
    assert (late.answered_count, late.passed_count) == (4, 4)
    assert late.spend["generator"]["requests"] == 4 and late.spend["generator"]["prompt_tokens"] == 40
    assert late.spend["cost"] == "0.048" and late.spend["currency"] == "EUR"  # 4 x (10 x 1000 + 1 x 2000) / 1e6
    kept = repo.get_run("r1", with_cases=False)
    assert kept.spend == late.spend and kept.answered_count == 4


def test_mark_status_never_touches_a_complete_run(repo) -> None:
    repo.begin_run(header("r1", cases=1))
    repo.mark_status("r1", "interrupted")
    assert repo.get_run("r1").status is RunStatus.INTERRUPTED
    repo.mark_status("r1", "running")
    assert repo.get_run("r1").finished_at is None
    repo.record_cases("r1", [case("a")], "metadata")
    repo.finish_run("r1", "complete", 2_000.0, identity=IDENTITY)
    repo.mark_status("r1", "interrupted")
    assert repo.get_run("r1").status is RunStatus.COMPLETE


def test_latest_unfinished_run_is_scoped_to_set_instance_alias_and_grader(repo) -> None:
    repo.begin_run(header("old"))
    repo.mark_status("old", "interrupted")
    repo.begin_run(header("newer"))
    repo.begin_run(header("other-set", set_id="pkg.other"))
    repo.begin_run(Run(id="other-alias", set_identifier="pkg.set", grader="deterministic", started_at=float(next(_clock)),
                       provider_instance="prod-gpt", model_alias="gpt-4o-mini"))
    repo.begin_run(header("done", cases=1))
    repo.record_cases("done", [case("a")], "metadata")
    repo.finish_run("done", "complete", 5_000.0, identity=IDENTITY)
    found = repo.latest_unfinished_run("pkg.set", "prod-gpt", "gpt-4o", "deterministic")
    assert found.id == "newer"
    assert repo.latest_unfinished_run("pkg.set", "prod-gpt", "gpt-4o", "decision") is None
    assert repo.latest_unfinished_run("PKG.SET", "prod-gpt", "gpt-4o", "deterministic") is None


def test_latest_unfinished_run_of_an_ad_hoc_generator_passes_over_another_adapters_run(repo) -> None:
    # A bare `--resume` of an ad-hoc run chose the newest run of the alias whatever its adapter,
    # and was refused, hiding the run of the adapter that asked.
    def ad_hoc(run_id: str, adapter: str | None) -> None:
        repo.begin_run(Run(id=run_id, set_identifier="pkg.set", grader="deterministic", started_at=float(next(_clock)),
                           provider_instance=None, model_alias="gpt-4o", adapter=adapter))

    ad_hoc("reference-run", "reference")
    ad_hoc("llm-run", "llm")
    assert repo.latest_unfinished_run("pkg.set", None, "gpt-4o", "deterministic", adapter="reference").id == "reference-run"
    assert repo.latest_unfinished_run("pkg.set", None, "gpt-4o", "deterministic", adapter="llm").id == "llm-run"
    assert repo.latest_unfinished_run("pkg.set", None, "gpt-4o", "deterministic", adapter="openai") is None
    assert repo.latest_unfinished_run("pkg.set", None, "gpt-4o", "deterministic").id == "llm-run", "no adapter: as before"
    ad_hoc("unknown-adapter", None)  # a run that stored no adapter is not passed over
    assert repo.latest_unfinished_run("pkg.set", None, "gpt-4o", "deterministic", adapter="openai").id == "unknown-adapter"
    # a configured instance's run is its instance's, whatever adapter answers it now
    repo.begin_run(header("instance-run"))
    assert repo.latest_unfinished_run("pkg.set", "prod-gpt", "gpt-4o", "deterministic", adapter="other").id == "instance-run"


def test_latest_unfinished_run_passes_over_a_regrade_run(repo) -> None:
    # A bare `--resume` chose a newer stopped re-grade run, which `evalkit run` refuses (it is
    # re-graded again, never resumed), hiding the user's own stopped run of the same scope.
    repo.begin_run(header("mine"))
    repo.mark_status("mine", "interrupted")
    repo.begin_run(header("regrade", answers_reused="regrade", source_run_id="src"))
    repo.mark_status("regrade", "interrupted")
    repo.begin_run(header("answers-from", answers_reused="answers-from", source_run_id="src"))
    assert repo.latest_unfinished_run("pkg.set", "prod-gpt", "gpt-4o", "deterministic").id == "answers-from"
    repo.Run.update({repo.Run.status: "complete"}).where(repo.Run.id == "answers-from").execute()
    assert repo.latest_unfinished_run("pkg.set", "prod-gpt", "gpt-4o", "deterministic").id == "mine"
    repo.Run.update({repo.Run.status: "complete"}).where(repo.Run.id == "mine").execute()
    assert repo.latest_unfinished_run("pkg.set", "prod-gpt", "gpt-4o", "deterministic") is None


def test_recent_runs_are_newest_first_limited_and_exact(repo) -> None:
    for run_id, started in (("a", 10.0), ("b", 30.0), ("c", 20.0)):
        repo.begin_run(header(run_id, started=started))
    repo.begin_run(header("x", set_id="pkg.Set", started=40.0))
    assert [r.id for r in repo.recent_runs("pkg.set")] == ["b", "c", "a"]
    assert [r.id for r in repo.recent_runs("pkg.set", limit=2)] == ["b", "c"]
    assert repo.recent_runs("pkg.set", limit=0) == []
    assert [r.id for r in repo.recent_runs()] == ["x", "b", "c", "a"]


def test_the_stored_set_identifiers_are_each_set_once_newest_first(repo) -> None:
    # what a mistyped set's "did you mean" draws from: it read the newest 1,000 runs of every set
    from evalkit.storage import stored_set_identifiers

    assert repo.stored_set_identifiers() == []
    for run_id, set_id, started in (("a", "pkg.old", 10.0), ("b", "pkg.new", 30.0), ("c", "pkg.old", 20.0), ("d", "pkg.Old", 15.0)):
        repo.begin_run(header(run_id, set_id=set_id, started=started))
    assert repo.stored_set_identifiers() == ["pkg.new", "pkg.old", "pkg.Old"]
    assert stored_set_identifiers(repo, 1) == ["pkg.new", "pkg.old", "pkg.Old"]


def test_the_stored_set_identifiers_of_a_store_without_that_read_are_its_newest_runs_sets() -> None:
    from evalkit.storage import stored_set_identifiers

    class Listed:  # a third-party RunHistory: recent_runs and purge_older_than only
        def recent_runs(self, set_identifier=None, limit=20):  # noqa: ANN001, ANN201
            runs = [header(f"r{n}", set_id=f"pkg.s{n % 3}") for n in range(10)]
            return runs[:limit]

        def purge_older_than(self, cutoff):  # noqa: ANN001, ANN201
            return 0

    assert stored_set_identifiers(Listed(), 4) == ["pkg.s0", "pkg.s1", "pkg.s2"]
    assert stored_set_identifiers(Listed(), 2) == ["pkg.s0", "pkg.s1"]


def test_purge_deletes_whole_runs_strictly_older_than_the_cutoff(repo) -> None:
    """The reference study's oracle: runs at 100 and 200, purge older than 200 → 1 deleted."""
    for run_id, started in (("at-100", 100.0), ("at-200", 200.0)):
        repo.begin_run(header(run_id, started=started, cases=2))
        repo.record_cases(run_id, [case("a"), case("b")], "metadata")
        repo.finish_run(run_id, "complete", started + 1, identity=IDENTITY)
    assert repo.purge_older_than(200.0) == 1
    assert repo.get_run("at-100") is None
    kept = repo.get_run("at-200")
    assert [c.case_id for c in kept.cases] == ["a", "b"] and kept.status is RunStatus.COMPLETE
    assert repo.purge_older_than(200.0) == 0


def test_purge_goes_in_chunks_and_counts_every_run(repo) -> None:
    for number in range(1, 1_204):
        repo.begin_run(header(f"r{number}", started=float(number), cases=1))
    repo.record_cases("r5", [case("a")], "metadata")
    assert repo.purge_older_than(1_201.0) == 1_200
    assert [r.id for r in repo.recent_runs(limit=10)] == ["r1203", "r1202", "r1201"]


def test_verdicts_are_kept_with_their_runs(repo) -> None:
    repo.begin_run(header("base"))
    repo.begin_run(header("next"))
    repo.record_verdict("base", StoredVerdict("baseline", None, "recorded as the baseline"))
    repo.record_verdict("next", StoredVerdict("regressed", "base", "Regression: pass rate dropped 50.0 pp"))
    verdicts = repo.verdicts_for(["base", "next", "unknown"])
    assert verdicts == {
        "base": StoredVerdict("baseline", None, "recorded as the baseline"),
        "next": StoredVerdict("regressed", "base", "Regression: pass rate dropped 50.0 pp"),
    }


def test_a_stored_verdict_state_is_one_of_the_known_ones() -> None:
    with pytest.raises(ValueError):
        StoredVerdict("maybe")


def test_baseline_read_is_scoped_and_returns_the_run_with_all_its_cases(repo) -> None:
    repo.begin_run(header("base", cases=2))
    repo.record_cases("base", [case("a"), case("b", passed=False)], "metadata")
    repo.finish_run("base", "complete", 3_000.0, identity=IDENTITY)
    repo.begin_run(header("unfinished", cases=2))
    repo.record_cases("unfinished", [case("a")], "metadata")
    baseline = repo.baseline_for("pkg.set", IDENTITY, "deterministic")
    assert baseline.id == "base" and [c.case_id for c in baseline.cases] == ["a", "b"]
    other = ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-11-20")
    assert repo.baseline_for("pkg.set", other, "deterministic") is None
    assert repo.baseline_for("pkg.set", IDENTITY, "deterministic", exclude_run_id="base") is None


def test_the_baseline_read_searches_the_scope_index(repo, engine) -> None:
    if engine == "postgresql":
        repo.db.execute_sql("SET enable_seqscan = off")  # a tiny table: show the index can serve the read
    plan = "\n".join(repo.explain_baseline("pkg.set", IDENTITY, "deterministic"))
    assert "run_set_identifier_provider_instance_model_alias_reporte" in plan
    assert ("SEARCH" in plan) if engine == "sqlite" else ("Index Scan" in plan)
    assert "SCAN evalkit_run" not in plan and "Seq Scan" not in plan


def test_case_fingerprints_are_stored_with_each_case_and_older_runs_say_they_have_none(repo) -> None:  # noqa: ANN001
    fingerprints = {"c1": "sha256:" + "a" * 64, "c2": "sha256:" + "b" * 64}
    repo.begin_run(Run(id="with", set_identifier="pkg.set", grader="deterministic", case_count=2, fingerprints_kept=True))
    repo.record_cases("with", [CaseResult(c, True, 1.0, fingerprint=f) for c, f in fingerprints.items()], "metadata")
    repo.begin_run(Run(id="without", set_identifier="pkg.set", grader="deterministic", case_count=2))
    repo.record_cases("without", [CaseResult("c1", True, 1.0)], "metadata")
    assert {c.case_id: c.fingerprint for c in repo.get_run("with").cases} == fingerprints
    assert repo.get_run("with", with_cases=False).fingerprints_kept
    without = repo.get_run("without")
    assert not without.fingerprints_kept and without.cases[0].fingerprint is None


#: Public methods that reach the database only through guarded ones (or not at all).
_DELEGATING = {
    "close",
    "release_thread_connection",
    "iter_cases",
    "paired_cases",
    "record_cases_as_stored",
    "mean_quality_for_provider_model",
}


def test_every_public_method_turns_a_database_error_into_a_store_failure() -> None:
    # accepted_runs, acceptances_for, accepted_baseline, accept_run … let peewee's DatabaseError out:
    # `evalkit history` on a store with a damaged index printed "internal error (an evalkit bug)"
    import inspect

    from evalkit.storage.sql import SqlRepository

    unguarded = sorted(
        name
        for name, method in inspect.getmembers(SqlRepository, inspect.isfunction)
        if not name.startswith("_") and name not in _DELEGATING and not hasattr(method, "__wrapped__")
    )
    assert unguarded == []


def test_two_shards_keeping_their_limit_stops_at_once_keep_both(repo, database_url) -> None:
    """Each shard a spending limit stopped keeps its stop in the run's provenance; two at once lost
    one (each read, then wrote the whole: the last writer won). ``revise_provenance`` reads and
    writes with the run's row locked: shard 2, writing while shard 1 is between its read and its
    write, waits, then merges with what shard 1 wrote."""
    import threading

    from evalkit.run.limit_stops import LIMIT_STOPS, limit_stop, provenance_after, stops_of
    from evalkit.storage import RevisableProvenance, open_repository

    assert isinstance(repo, RevisableProvenance)
    repo.begin_run(header("r1", provenance={"grader_plugin": "deterministic"}))
    first = limit_stop("max_requests", 1, None, ("--max-requests", "6"))
    second = limit_stop("budget", 0.5, "EUR", ("--budget", "2"))
    other = open_repository(database_url)
    seen: list[object] = []
    waited: list[bool] = []

    def shard_2() -> None:
        other.revise_provenance("r1", lambda stored: (seen.append(stored), provenance_after(stored, "2/2", second))[1])

    def shard_1(stored):  # noqa: ANN001, ANN202 - between shard 1's read and its write, shard 2 writes
        writer = threading.Thread(target=shard_2)
        writer.start()
        writer.join(0.5)
        waited.append(writer.is_alive())  # it waits for the row shard 1 holds
        threads.append(writer)
        return provenance_after(stored, "1/2", first)

    threads: list[threading.Thread] = []
    try:
        repo.revise_provenance("r1", shard_1)
        threads[0].join()
    finally:
        other.close()
    assert waited == [True]
    assert seen == [{"grader_plugin": "deterministic", LIMIT_STOPS: {"1/2": first}}]
    stored = repo.get_run("r1", with_cases=False)
    assert stops_of(stored) == {"1/2": first, "2/2": second} and stored.provenance["grader_plugin"] == "deterministic"
    repo.revise_provenance("r1", lambda stored: None)  # nothing to write: nothing changes
    assert repo.get_run("r1", with_cases=False).provenance == stored.provenance
    with pytest.raises(StorageError, match="run r2 is not in the store"):
        repo.revise_provenance("r2", lambda stored: {})
