"""Reads and writes over many runs in the SQL repository: the history of a set, retention (whole
runs deleted in short transactions), and the measured quality of a provider instance and model
that routing and ``evalkit models rank`` use."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import peewee as pw

from ...runs import Run, RunKind, RunStatus
from ..values import ANSWERS, PASSES, BaselineScope, CaseOutcome, LeaseHolder, RunOutcomes
from .leases import _checked
from .rows import run_from_row, stored_measures
from .runs import RunsAndCases
from .store import guarded

__all__ = ["HistoryAndQuality"]

#: The most case ids one ``case_history`` query names (more are read in several).
_IDS_PER_QUERY = 500


def _outcome(case_id: str, passed: object, fingerprint: str | None, measures: str | None) -> CaseOutcome:
    numbers = stored_measures(measures) if measures else None
    answers = (numbers or {}).get(ANSWERS)
    passes = (numbers or {}).get(PASSES)
    if isinstance(answers, (int, float)) and isinstance(passes, (int, float)) and answers >= 2 and 0 <= passes <= answers:
        return CaseOutcome(case_id, bool(passed), fingerprint, int(answers), int(passes))
    return CaseOutcome(case_id, bool(passed), fingerprint)


class HistoryAndQuality(RunsAndCases):
    """``RunHistory`` (with ``stored_set_identifiers`` and ``runs_started_before``, read through
    :mod:`evalkit.storage`'s helpers of those names), ``CaseHistory``, ``ProviderModelQualityScores``, ``ProviderModelQualityRuns``
    and the quality read of ``GeneratorScopedResults``."""

    #: The scope's current baseline, read as :class:`~.baselines.BaselinesAndVerdicts` reads it
    #: (the repository is built of both): a purge keeps it.
    _accepted_baseline: Callable[..., Run | None]

    # -- each case's outcomes over a scope's recent runs -------------------------------------------

    @guarded
    def case_history(
        self, scope: BaselineScope, *, runs: int = 20, case_ids: Sequence[str] | None = None
    ) -> list[RunOutcomes]:
        """The ``runs`` most recent complete runs of exactly ``scope`` (newest first) with their
        answered cases' outcomes (only ``case_ids``, when given): one query for the runs through
        the scope index, then one per :data:`_IDS_PER_QUERY` case ids."""
        if runs < 1 or (case_ids is not None and not case_ids):
            return []
        R, C = self.Run, self.Case
        query = R.select().where(
            (R.kind == scope.kind.value) & (R.set_identifier == scope.set_identifier) & (R.status == RunStatus.COMPLETE.value)
        )
        if scope.kind is RunKind.PROMPTS:
            query = query.where(
                (R.provider_instance == scope.provider_instance)
                & (R.model_alias == scope.model_alias)
                & (R.reported_model == scope.reported_model)
                & (R.grader == scope.grader)
                & (R.verified == True)  # noqa: E712 - a SQL expression, not a Python comparison
            )
        else:
            query = query.where(
                (R.retriever == scope.retriever)
                & (R.deployment.is_null() if scope.deployment is None else R.deployment == scope.deployment)
            )
        chosen = []
        for row in query.order_by(R.started_at.desc(), R.id.desc()).limit(runs * 2):
            run = run_from_row(row)
            # Collations may match loosely (case-insensitive); the scope is exact.
            if BaselineScope.of_run(run) == scope:
                chosen.append(run)
            if len(chosen) == runs:
                break
        if not chosen:
            return []
        found: dict[str, dict[str, CaseOutcome]] = {run.id: {} for run in chosen}
        wanted = list(dict.fromkeys(case_ids)) if case_ids is not None else None
        groups = [None] if wanted is None else [wanted[i : i + _IDS_PER_QUERY] for i in range(0, len(wanted), _IDS_PER_QUERY)]
        for group in groups:
            cases = C.select(C.run, C.case_id, C.passed, C.fingerprint, C.measures).where(
                C.run.in_(list(found)) & (C.errored == False)  # noqa: E712
            )
            if group is not None:
                cases = cases.where(C.case_id.in_(group))
            for run_id, case_id, passed, fingerprint, measures in cases.tuples():
                if run_id in found and (group is None or case_id in group):
                    found[run_id][case_id] = _outcome(case_id, passed, fingerprint, measures)
        return [RunOutcomes(run.id, run.started_at, found[run.id]) for run in chosen]

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
    def stored_set_identifiers(self) -> list[str]:
        """Every set identifier the store holds a run of, each once, the set of the newest run
        first: one grouped query over the run table, no run read (what a mistyped set's "did you
        mean" is drawn from, :func:`evalkit.storage.stored_set_identifiers`)."""
        R = self.Run
        newest = pw.fn.MAX(R.started_at)
        rows = R.select(R.set_identifier, newest).group_by(R.set_identifier).order_by(newest.desc(), R.set_identifier)
        return [set_identifier for set_identifier, _ in rows.tuples()]

    @guarded
    def runs_started_before(self, cutoff: float) -> dict[RunStatus, int]:
        """How many runs started strictly before ``cutoff`` the store holds, per status: one
        counting query (what ``evalkit db prune`` reports as kept after a purge), never a list of
        runs capped at some length, which undercounted a store with more newer runs than the cap."""
        R = self.Run
        rows = R.select(R.status, pw.fn.COUNT(R.id)).where(R.started_at < cutoff).group_by(R.status).tuples()
        counts: dict[RunStatus, int] = {}
        for status, count in rows:
            try:
                known = RunStatus(status)
            except ValueError:
                continue  # a status another program wrote: not a run evalkit keeps for a reason
            counts[known] = counts.get(known, 0) + int(count)
        return counts

    @guarded
    def purge_older_than(self, cutoff: float) -> int:
        """Delete whole runs, with their cases, started strictly before ``cutoff``; return how many.
        A run a live process is answering (its lease: :meth:`LeaseHolder.is_live`) is kept, and so is
        each scope's current baseline (its most recently accepted run): deleted, the next run of the
        scope, regressed or not, was the first of its scope and became the baseline.

        Runs go in chunks, each chunk (cases and runs together) in its own short transaction, so a
        large purge never holds the write lock long enough to time out a concurrent run.
        """
        R, L = self.Run, self.Lease
        total = 0
        after: str | None = None
        while True:
            with self._atomic():
                query = R.select(R.id).where(R.started_at < cutoff)
                if after is not None:
                    query = query.where(R.id > after)
                chunk = [run_id for (run_id,) in query.order_by(R.id).limit(500).tuples()]
                if not chunk:
                    return total
                after = chunk[-1]
                # A run a live process is answering is kept: deleted under it, it failed ("FOREIGN
                # KEY constraint failed") and offered a --resume of a run no longer there.
                now = self._store_now()
                answered = {
                    row.run_id for row in map(_checked, L.select().where(L.run.in_(chunk)))
                    if LeaseHolder(row.part, row.owner_host, row.owner_pid, row.heartbeat_at).is_live(now)
                }
                baselines = self._current_baselines(chunk)
                gone = [run_id for run_id in chunk if run_id not in answered and run_id not in baselines]
                if gone:
                    L.delete().where(L.run.in_(gone)).execute()
                    self.Case.delete().where(self.Case.run.in_(gone)).execute()
                    R.delete().where(R.id.in_(gone)).execute()
            total += len(gone)

    def _current_baselines(self, run_ids: Sequence[str]) -> set[str]:
        """Those of ``run_ids`` that are their scope's current baseline (the most recently accepted
        complete run of the scope)."""
        R = self.Run
        query = R.select().where(R.id.in_(list(run_ids)) & R.accepted_at.is_null(False) & (R.status == RunStatus.COMPLETE.value))
        current: set[str] = set()
        for row in query:
            scope = BaselineScope.of_run(run_from_row(row))
            baseline = None if scope is None else self._accepted_baseline(scope, exclude_run_id=None, with_cases=False)
            if baseline is not None and baseline.id == row.id:
                current.add(row.id)
        return current

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
