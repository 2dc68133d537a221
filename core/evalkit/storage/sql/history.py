"""Reads and writes over many runs in the SQL repository: the history of a set, retention (whole
runs deleted in short transactions), and the measured quality of a provider instance and model
that routing and ``evalkit models rank`` use."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ...runs import Run, RunKind, RunStatus
from .rows import run_from_row
from .runs import RunsAndCases
from .store import guarded

__all__ = ["HistoryAndQuality"]


class HistoryAndQuality(RunsAndCases):
    """``RunHistory``, ``ProviderModelQualityScores``, ``ProviderModelQualityRuns`` and the quality
    read of ``GeneratorScopedResults``."""

    # -- history and retention -------------------------------------------------------------------

    @guarded
    def recent_runs(self, set_identifier: str | None = None, limit: int = 20) -> list[Run]:
        """Runs newest first by start time (without cases); exact match on the set identifier."""
        if limit < 1:
            return []
        R = self.Run
        query = R.select()
        if set_identifier is not None:
            query = query.where(R.set_identifier == set_identifier)
        rows = query.order_by(R.started_at.desc(), R.id.desc()).limit(limit)
        return [run_from_row(r) for r in rows if set_identifier is None or r.set_identifier == set_identifier]

    @guarded
    def purge_older_than(self, cutoff: float) -> int:
        """Delete whole runs, with their cases, started strictly before ``cutoff``; return how many.

        Runs go in chunks, each chunk (cases and runs together) in its own short transaction, so a
        large purge never holds the write lock long enough to time out a concurrent run.
        """
        R = self.Run
        total = 0
        while True:
            with self._atomic():
                chunk = [run_id for (run_id,) in R.select(R.id).where(R.started_at < cutoff).limit(500).tuples()]
                if not chunk:
                    return total
                self.Lease.delete().where(self.Lease.run.in_(chunk)).execute()
                self.Case.delete().where(self.Case.run.in_(chunk)).execute()
                R.delete().where(R.id.in_(chunk)).execute()
            total += len(chunk)

    @guarded
    def delete_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the given runs and their cases."""
        ids = list(run_ids)
        with self._atomic():
            self.Lease.delete().where(self.Lease.run.in_(ids)).execute()
            self.Case.delete().where(self.Case.run.in_(ids)).execute()
            self.Run.delete().where(self.Run.id.in_(ids)).execute()


    # -- quality of a provider instance and model --------------------------------------------------

    def _quality_rows(self, where: Any, exact: Callable[[Any], bool]) -> list[Any]:
        """Rows that may feed routing quality, newest first: complete, verified prompt runs with
        answers. ``exact`` re-checks the scope in Python, before any per-set choice, because
        database collations may match ``Set-A`` or ``DETERMINISTIC`` loosely."""
        R = self.Run
        query = R.select().where(
            where
            & (R.kind == RunKind.PROMPTS.value)
            & (R.verified == True)  # noqa: E712 - a SQL expression, not a Python comparison
            & (R.status == RunStatus.COMPLETE.value)
            & (R.answered_count > 0)
        )
        return [row for row in self._newest_first(query) if exact(row)]

    @staticmethod
    def _latest_per_set(rows: Iterable[Any]) -> list[Any]:
        latest: dict[str, Any] = {}
        for row in rows:
            latest.setdefault(row.set_identifier, row)
        return list(latest.values())

    @guarded
    def quality_runs_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> list[Run]:
        """The runs behind :meth:`mean_quality_for_provider_model`: the latest eligible run per set
        for exactly this instance, alias and grader, newest first, without their cases."""
        if not provider_instance or not model_alias or not grader:
            return []
        R = self.Run
        rows = self._quality_rows(
            (R.provider_instance == provider_instance) & (R.model_alias == model_alias) & (R.grader == grader),
            lambda r: r.provider_instance == provider_instance and r.model_alias == model_alias and r.grader == grader,
        )
        return [run_from_row(row) for row in self._latest_per_set(rows)]

    def mean_quality_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> float | None:
        """Mean score of the latest verified complete run per set for this instance and alias
        (``None``: no data; a measured 0.0 stays 0.0)."""
        runs = self.quality_runs_for_provider_model(provider_instance, model_alias, grader)
        return math.fsum(r.mean_score for r in runs) / len(runs) if runs else None

    @guarded
    def mean_quality_for_model(self, model_alias: str, grader: str = "deterministic") -> float | None:
        """Mean score of the latest verified complete run per set for the alias; ``None`` when there
        is no data or when eligible runs of the alias come from more than one provider instance."""
        if not model_alias or not grader:
            return None
        R = self.Run
        rows = self._quality_rows(
            (R.model_alias == model_alias) & (R.grader == grader),
            lambda r: r.model_alias == model_alias and r.grader == grader,
        )
        if len({r.provider_instance for r in rows}) != 1:
            return None
        latest = self._latest_per_set(rows)
        return math.fsum(r.mean_score for r in latest) / len(latest)
