"""Reads only retrieval runs need from the SQL repository: the newest complete run of a question
set, retriever and deployment (what a retrieval run is compared with when no run is accepted yet),
and the newest unfinished one (what ``--resume`` continues)."""

from __future__ import annotations

from ...runs import Run, RunKind, RunStatus
from .rows import run_from_row
from .runs import RunsAndCases
from .store import guarded

__all__ = ["RetrievalReads"]


class RetrievalReads(RunsAndCases):
    """``RetrievalBaselines`` and ``ResumableRetrievalRuns``: a retrieval run's scope is its set,
    retriever and deployment (``None``: runs without one)."""

    @guarded
    def latest_retrieval_run(
        self,
        set_identifier: str,
        retriever: str,
        *,
        deployment: str | None = None,
        exclude_run_id: str | None = None,
    ) -> Run | None:
        """The newest complete retrieval run of the set with this retriever in this deployment
        (``None``: runs without a deployment), whatever its fingerprints."""
        R = self.Run
        query = R.select().where(
            (R.kind == RunKind.RETRIEVAL.value)
            & (R.set_identifier == set_identifier)
            & (R.retriever == retriever)
            & (R.deployment.is_null() if deployment is None else R.deployment == deployment)
            & (R.status == RunStatus.COMPLETE.value)
        )
        if exclude_run_id is not None:
            query = query.where(R.id != exclude_run_id)
        for row in self._newest_first(query).limit(20):
            if row.set_identifier == set_identifier and row.retriever == retriever and row.deployment == deployment:
                return self.get_run(row.id)
        return None

    @guarded
    def latest_unfinished_retrieval_run(
        self, set_identifier: str, retriever: str, *, deployment: str | None = None
    ) -> Run | None:
        """The newest retrieval run of the set with this retriever in this deployment (``None``:
        runs without one) that is interrupted, incomplete or still marked running."""
        R = self.Run
        unfinished = [RunStatus.INTERRUPTED.value, RunStatus.RUNNING.value, RunStatus.INCOMPLETE.value]
        query = R.select().where(
            (R.kind == RunKind.RETRIEVAL.value)
            & (R.set_identifier == set_identifier)
            & (R.retriever == retriever)
            & (R.deployment.is_null() if deployment is None else R.deployment == deployment)
            & R.status.in_(unfinished)
        )
        for row in query.order_by(R.started_at.desc(), R.id.desc()).limit(20):
            if row.set_identifier == set_identifier and row.retriever == retriever and row.deployment == deployment:
                return run_from_row(row)
        return None

