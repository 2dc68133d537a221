"""SqlRepository.latest_retrieval_run: the newest complete run of one set, retriever and deployment.

(It was the optional ``RetrievalBaselines`` capability; a retrieval run is compared with its scope's
accepted baseline now, so the capability is gone and the built-in store keeps the read.)"""

from __future__ import annotations

from evalkit.runs import CaseResult, Run, RunKind, RunStatus


def store(repo, run_id: str, *, deployment: str | None, at: float, status: str = "complete", retriever: str = "r.one") -> None:  # noqa: ANN001
    repo.begin_run(
        Run(run_id, "set.a", "retrieval_hit_rate", kind=RunKind.RETRIEVAL, started_at=at, case_count=1,
            retriever=retriever, deployment=deployment, benchmark_fingerprint=f"v1:{run_id}")
    )  # fmt: skip
    repo.record_cases(run_id, [CaseResult("q1", True, 1.0)], "metadata")
    repo.finish_run(run_id, status, at + 1)


def test_latest_retrieval_run_is_scoped_by_deployment_and_skips_incomplete_runs(repo) -> None:  # noqa: ANN001
    store(repo, "none-1", deployment=None, at=100)
    store(repo, "staging-1", deployment="staging", at=200)
    store(repo, "prod-1", deployment="production", at=300)
    store(repo, "staging-2", deployment="staging", at=400, status="incomplete")
    store(repo, "other", deployment="staging", at=500, retriever="r.two")
    store(repo, "Staging-x", deployment="Staging", at=600)

    latest = repo.latest_retrieval_run("set.a", "r.one", deployment="staging")
    assert latest.id == "staging-1" and latest.status is RunStatus.COMPLETE and len(latest.cases) == 1
    assert latest.benchmark_fingerprint == "v1:staging-1"
    assert repo.latest_retrieval_run("set.a", "r.one", deployment=None).id == "none-1"
    assert repo.latest_retrieval_run("set.a", "r.one", deployment="production").id == "prod-1"
    assert repo.latest_retrieval_run("set.a", "r.one", deployment="staging", exclude_run_id="staging-1") is None
    assert repo.latest_retrieval_run("set.a", "r.two", deployment="staging").id == "other"
    assert repo.latest_retrieval_run("set.b", "r.one") is None
