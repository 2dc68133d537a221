"""Accepted baselines in the store, on SQLite and PostgreSQL: the scope read, acceptances, and
migration 3 (existing runs that did not regress count as accepted; MRR stored as MRR@k)."""

from __future__ import annotations

import json

import pytest
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.baselines import Acceptance, BaselineScope
from evalkit.runs import RunKind, RunStatus
from evalkit.storage import AcceptedBaselines, open_repository, upgrade_schema
from evalkit.storage import schema as schema_module
from evalkit.storage.migrations.m0001_initial import tables as v1_tables
from evalkit.storage.sql import connect

IDENTITY = ServingIdentity("prod", "gpt", "gpt-2025")
SCOPE = BaselineScope(RunKind.PROMPTS, "pkg.set", "prod", "gpt", "gpt-2025", "deterministic")


def store(repo, run_id: str, finished: float, *, identity=IDENTITY, status="complete", set_id="pkg.set") -> Run:  # noqa: ANN001
    repo.begin_run(Run(id=run_id, set_identifier=set_id, grader="deterministic", case_count=1, started_at=finished - 1,
                       provider_instance=identity.provider_instance if identity else "adhoc", model_alias=identity.model_alias if identity else "m"))
    repo.record_cases(run_id, [CaseResult("c1", True, 1.0, identity=identity)], "metadata")
    return repo.finish_run(run_id, status, finished, grader="deterministic", identity=identity)


def test_the_baseline_is_the_most_recently_accepted_run_of_exactly_the_scope(repo) -> None:  # noqa: ANN001
    assert isinstance(repo, AcceptedBaselines)
    for run_id, finished in (("a", 100.0), ("b", 200.0), ("c", 300.0)):
        store(repo, run_id, finished)
    store(repo, "other-model", 400.0, identity=ServingIdentity("prod", "gpt", "gpt-2026"))
    store(repo, "unfinished", 500.0, status="incomplete")
    assert repo.accepted_baseline(SCOPE) is None, "nothing accepted yet"

    repo.accept_run("a", Acceptance("first", 100.0))
    repo.accept_run("b", Acceptance("no_regression", 200.0, reason="no regression against accepted run a"))
    repo.accept_run("other-model", Acceptance("first", 400.0))
    repo.accept_run("unfinished", Acceptance("manual", 500.0, "eve", "an incomplete run is never a baseline"))
    baseline = repo.accepted_baseline(SCOPE)
    assert baseline.id == "b" and [c.case_id for c in baseline.cases] == ["c1"], "c is newer but not accepted"
    assert repo.accepted_baseline(SCOPE, exclude_run_id="b").id == "a"
    assert repo.accepted_baseline(BaselineScope(RunKind.PROMPTS, "PKG.SET", "prod", "gpt", "gpt-2025", "deterministic")) is None

    # Accepting an older run on purpose makes it the baseline again (a roll-back).
    repo.accept_run("a", Acceptance("manual", 600.0, "alice", "roll back"))
    assert repo.accepted_baseline(SCOPE).id == "a"
    assert repo.acceptances_for(["a", "b", "c"]) == {
        "a": Acceptance("manual", 600.0, "alice", "roll back"),
        "b": Acceptance("no_regression", 200.0, None, "no regression against accepted run a"),
    }
    assert [r.id for r in repo.accepted_runs("pkg.set")] == ["a", "other-model", "b"]


def test_retrieval_scopes_are_set_retriever_and_deployment(repo) -> None:  # noqa: ANN001
    for run_id, deployment in (("none", None), ("staging", "staging"), ("prod", "prod")):
        repo.begin_run(Run(id=run_id, set_identifier="q.set", grader="retrieval_hit_rate", kind=RunKind.RETRIEVAL,
                           retriever="r.one", deployment=deployment, started_at=1.0))
        repo.finish_run(run_id, RunStatus.COMPLETE.value, 2.0)
        repo.accept_run(run_id, Acceptance("first", 2.0))
    scope = BaselineScope(RunKind.RETRIEVAL, "q.set", retriever="r.one", deployment=None)
    assert repo.accepted_baseline(scope).id == "none"
    assert repo.accepted_baseline(BaselineScope(RunKind.RETRIEVAL, "q.set", retriever="r.one", deployment="prod")).id == "prod"
    assert repo.accepted_baseline(BaselineScope(RunKind.RETRIEVAL, "q.set", retriever="r.two", deployment="prod")) is None


def _version_2_database(url: str) -> None:
    """Runs as schema 2 kept them: verdicts recorded (or not), retrieval metrics with ``mrr``."""
    db = connect(url)
    db.connect()
    try:
        schema_module.upgrade(db, target=2)
        tables = v1_tables(db)
        rows = [
            ("ok-run", "complete", True, "ok", "prompts"),
            ("baseline-run", "complete", True, "baseline", "prompts"),
            ("regressed-run", "complete", True, "regressed", "prompts"),
            ("not-compared-run", "complete", False, "not_compared", "prompts"),
            ("old-run", "complete", True, None, "prompts"),
            ("old-unverified", "complete", False, None, "prompts"),
            ("incomplete-run", "incomplete", True, None, "prompts"),
            ("retrieval-k10", "complete", False, "baseline", "retrieval"),
            ("retrieval-k10-meta", "complete", False, "ok", "retrieval"),
            ("retrieval-k20", "complete", False, "mismatch", "retrieval"),
        ]
        for number, (run_id, status, verified, _, kind) in enumerate(rows):
            k = 20 if run_id == "retrieval-k20" else 10
            metrics = None
            if kind == "retrieval":
                groups = {"match": {"questions": 2, "top1_hit_rate": 0.5, "top3_hit_rate": 0.5, "mrr": 0.6, "recall_at_k": 0.5, "ndcg_at_k": 0.5}}
                metrics = json.dumps({"retrieval": {"k": k, "question_count": 2, "mrr": 0.6, "by_form": groups, "by_hard_class": {}}})
            tables.Run.insert(
                id=run_id, kind=kind, set_identifier="pkg.set", grader="deterministic", status=status,
                provider_instance="prod", model_alias="gpt", reported_model="gpt-2025", verified=verified,
                started_at=1000.0 + number, finished_at=1000.5 + number, answered_count=2, metrics=metrics,
                retriever="r.one" if kind == "retrieval" else None,
            ).execute()  # fmt: skip
            if kind == "retrieval":
                # Ranks 1 and 11: RR 1.0 and 1/11; within k=10 only the first counts.
                for case_id, rr in (("q1", 1.0), ("q2", 1 / 11)):
                    detail = None if run_id == "retrieval-k10-meta" else json.dumps({"form": "match", "hard_class": None, "reciprocal_rank": rr, "k": k})
                    tables.Case.insert(run=run_id, case_id=case_id, passed=rr == 1.0, score=1.0, finished_at=1.0, detail=detail).execute()
        verdicts = {run_id: verdict for run_id, _, _, verdict, _ in rows}
        for run_id, verdict in verdicts.items():
            db.execute_sql(f"UPDATE evalkit_run SET verdict = {db.param} WHERE id = {db.param}", (verdict, run_id))
    finally:
        db.close()


def test_migration_3_accepts_what_did_not_regress_and_renames_mrr(database_url: str) -> None:
    _version_2_database(database_url)
    assert 3 in upgrade_schema(database_url)[1]
    repo = open_repository(database_url)
    try:
        runs = ["ok-run", "baseline-run", "regressed-run", "not-compared-run", "old-run", "old-unverified", "incomplete-run",
                "retrieval-k10", "retrieval-k10-meta", "retrieval-k20"]
        accepted = repo.acceptances_for(runs)
        assert sorted(accepted) == ["baseline-run", "ok-run", "old-run", "retrieval-k10", "retrieval-k10-meta"]
        assert {a.how for a in accepted.values()} == {"migrated"}
        assert accepted["ok-run"].reason == "a complete run whose stored verdict was ok"
        assert accepted["old-run"].reason == "a complete run stored before verdicts were kept"
        assert accepted["ok-run"].at == pytest.approx(1000.5)
        assert repo.accepted_baseline(SCOPE).id == "old-run", "the most recently accepted"

        exact = repo.get_run("retrieval-k10")
        assert exact.metrics["retrieval"]["mrr_at_k"] == pytest.approx(0.5) and "mrr" not in exact.metrics["retrieval"]
        assert exact.metrics["retrieval"]["by_form"]["match"]["mrr_at_k"] == pytest.approx(0.5)
        assert [c.detail["reciprocal_rank_at_k"] for c in exact.cases] == [1.0, 0.0]
        unknown = repo.get_run("retrieval-k10-meta").metrics["retrieval"]
        assert (unknown["mrr_at_k"], unknown["mrr_at_depth"], unknown["mrr_depth"]) == (None, 0.6, 12)
        assert unknown["by_form"]["match"]["mrr_at_k"] is None
        deep = repo.get_run("retrieval-k20")
        assert deep.metrics["retrieval"]["mrr_at_k"] == 0.6 and deep.metrics["retrieval"]["by_form"]["match"]["mrr_at_k"] == 0.6
        assert [c.detail["reciprocal_rank_at_k"] for c in deep.cases] == [1.0, pytest.approx(1 / 11)]
    finally:
        repo.close()


def test_only_one_run_is_accepted_as_the_first_of_its_scope(repo, database_url) -> None:  # noqa: ANN001
    """Two first runs finishing at once both read "no baseline yet" and both became "the first".
    accept_if_first checks and accepts in one transaction, serialised per scope."""
    from concurrent.futures import ThreadPoolExecutor

    from evalkit.storage import FirstAcceptance

    assert isinstance(repo, FirstAcceptance)
    ids = [f"r{n}" for n in range(6)]
    for n, run_id in enumerate(ids):
        store(repo, run_id, 100.0 + n)
    store(repo, "elsewhere", 99.0, set_id="pkg.other")

    def claim(run_id: str) -> bool:
        own = open_repository(database_url)  # a process of its own, as parallel CI jobs are
        try:
            return own.accept_if_first(run_id, SCOPE, Acceptance("first", 1.0, None, "the first run of its scope"))
        finally:
            own.close()

    with ThreadPoolExecutor(len(ids)) as pool:
        won = list(pool.map(claim, ids))
    assert won.count(True) == 1
    assert list(repo.acceptances_for(ids)) == [ids[won.index(True)]]
    other_scope = BaselineScope(RunKind.PROMPTS, "pkg.other", "prod", "gpt", "gpt-2025", "deterministic")
    assert repo.accept_if_first("elsewhere", other_scope, Acceptance("first", 1.0)), "another scope has its own first"
    assert not repo.accept_if_first(ids[won.index(False)], SCOPE, Acceptance("first", 2.0))
