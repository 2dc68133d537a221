"""Verdicts, accepted baselines and the generator-scoped baseline in the SQL repository.

A run's verdict is kept on its row (``RunVerdicts``); a run is accepted as the baseline of its scope
by stamping the row (``AcceptedBaselines``), and "accept only if no run of the scope is accepted
yet" is one transaction serialised per scope (``FirstAcceptance``); ``baseline_for`` reads the
latest verified run of a set, serving identity and yardstick through the scope index
(``GeneratorScopedResults``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ...answers import ServingIdentity
from ...runs import Run, RunKind, RunStatus
from ..values import ACCEPTANCE_KINDS, VERDICT_STATES, Acceptance, BaselineScope, StoredVerdict
from .rows import run_from_row
from .runs import RunsAndCases
from .store import guarded

__all__ = ["BaselinesAndVerdicts"]


def _scope_lock_key(scope: BaselineScope) -> int:
    """A PostgreSQL advisory-lock key (a signed 64-bit number) for ``scope``."""
    fields = (scope.kind.value, scope.set_identifier, scope.provider_instance, scope.model_alias, scope.reported_model,
              scope.grader, scope.retriever, scope.deployment)  # fmt: skip
    text = "\x1f".join("" if v is None else v for v in fields)
    if scope.base_prompt:  # a scope without one keeps the key it always had
        text += "\x1f" + scope.base_prompt
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big", signed=True)


def _same_base_prompt(R: Any, digest: str) -> Any:
    """Runs whose serving identity had this base system prompt (none: the column is null, as for
    every run stored before it was kept)."""
    return R.base_prompt.is_null() if not digest else R.base_prompt == digest


class BaselinesAndVerdicts(RunsAndCases):
    """Recorded verdicts, accepted baselines (automatic, first-run and on purpose) and the latest
    verified run of a generator scope."""

    # -- verdicts --------------------------------------------------------------------------------

    @guarded
    def record_verdict(self, run_id: str, verdict: StoredVerdict) -> None:
        """Keep the verdict a finished run got, with the baseline it was compared with."""
        with self._atomic():
            self.Run.update(
                {self.Run.verdict: verdict.state, self.Run.baseline_id: verdict.baseline_id, self.Run.verdict_note: verdict.note}
            ).where(self.Run.id == run_id).execute()

    @guarded
    def verdicts_for(self, run_ids: Sequence[str]) -> dict[str, StoredVerdict]:
        """The recorded verdicts of these runs (runs stored before schema 2 have none)."""
        R = self.Run
        found: dict[str, StoredVerdict] = {}
        ids = list(run_ids)
        for start in range(0, len(ids), 500):
            query = R.select(R.id, R.verdict, R.baseline_id, R.verdict_note).where(
                R.id.in_(ids[start : start + 500]) & R.verdict.is_null(False)
            )
            for run_id, state, baseline_id, note in query.tuples():
                if state in VERDICT_STATES:
                    found[run_id] = StoredVerdict(state, baseline_id, note)
        return found

    # -- accepted baselines ----------------------------------------------------------------------

    @guarded
    def accept_run(self, run_id: str, acceptance: Acceptance) -> None:
        """Record that the run is an accepted baseline (how, when, by whom, why)."""
        self._accept_run(run_id, acceptance)

    def _accept_run(self, run_id: str, acceptance: Acceptance) -> None:
        R = self.Run
        with self._atomic():
            R.update(
                {
                    R.accepted_at: acceptance.at,
                    R.acceptance: acceptance.how,
                    R.accepted_by: acceptance.by,
                    R.acceptance_reason: acceptance.reason,
                }
            ).where(R.id == run_id).execute()

    @guarded
    def accept_if_first(self, run_id: str, scope: BaselineScope, acceptance: Acceptance) -> bool:
        """Accept the run unless another run of ``scope`` already is, atomically: SQLite's write
        lock (``BEGIN IMMEDIATE``) or, on PostgreSQL, a transaction lock on the scope serialises
        concurrent first runs, and the check reads inside it."""
        with self._atomic():
            if not self.is_sqlite:
                self.db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_scope_lock_key(scope),))
            if self._accepted_baseline(scope, exclude_run_id=run_id, with_cases=False) is not None:
                return False
            self._accept_run(run_id, acceptance)
        return True

    @guarded
    def acceptances_for(self, run_ids: Sequence[str]) -> dict[str, Acceptance]:
        """The acceptances of these runs (runs that are not accepted are absent)."""
        R = self.Run
        found: dict[str, Acceptance] = {}
        ids = list(run_ids)
        for start in range(0, len(ids), 500):
            query = R.select(R.id, R.acceptance, R.accepted_at, R.accepted_by, R.acceptance_reason).where(
                R.id.in_(ids[start : start + 500]) & R.accepted_at.is_null(False)
            )
            for run_id, how, at, by, reason in query.tuples():
                if how in ACCEPTANCE_KINDS:
                    found[run_id] = Acceptance(how, at, by, reason)
        return found

    @guarded
    def accepted_runs(self, set_identifier: str) -> list[Run]:
        """Every complete, accepted run of the set, most recently accepted first, without cases."""
        R = self.Run
        query = R.select().where(
            (R.set_identifier == set_identifier) & R.accepted_at.is_null(False) & (R.status == RunStatus.COMPLETE.value)
        )
        rows = query.order_by(R.accepted_at.desc(), R.finished_at.desc(), R.id.desc())
        return [run_from_row(r) for r in rows if r.set_identifier == set_identifier]

    @guarded
    def accepted_baseline(
        self, scope: BaselineScope, *, exclude_run_id: str | None = None, with_cases: bool = True
    ) -> Run | None:
        """The most recently accepted complete run of exactly this scope, with its cases unless
        ``with_cases`` is false."""
        return self._accepted_baseline(scope, exclude_run_id=exclude_run_id, with_cases=with_cases)

    def _accepted_baseline(self, scope: BaselineScope, *, exclude_run_id: str | None, with_cases: bool) -> Run | None:
        R = self.Run
        query = R.select().where(
            (R.kind == scope.kind.value)
            & (R.set_identifier == scope.set_identifier)
            & (R.status == RunStatus.COMPLETE.value)
            & R.accepted_at.is_null(False)
        )
        if scope.kind is RunKind.PROMPTS:
            query = query.where(
                (R.provider_instance == scope.provider_instance)
                & (R.model_alias == scope.model_alias)
                & (R.reported_model == scope.reported_model)
                & _same_base_prompt(R, scope.base_prompt)
                & (R.grader == scope.grader)
                & (R.verified == True)  # noqa: E712 - a SQL expression, not a Python comparison
                & (R.answered_count > 0)
            )
        else:
            query = query.where(
                (R.retriever == scope.retriever)
                & (R.deployment.is_null() if scope.deployment is None else R.deployment == scope.deployment)
            )
        if exclude_run_id is not None:
            query = query.where(R.id != exclude_run_id)
        for row in query.order_by(R.accepted_at.desc(), R.finished_at.desc(), R.id.desc()).limit(20):
            run = run_from_row(row)
            # Collations may match loosely (case-insensitive); the scope is exact.
            if BaselineScope.of_run(run) == scope:
                return self.get_run(row.id) if with_cases else run
        return None

    # -- the latest verified run of a set, serving identity and yardstick ------------------------

    @guarded
    def baseline_for(
        self, set_identifier: str, identity: ServingIdentity, grader: str, *, exclude_run_id: str | None = None
    ) -> Run | None:
        """The latest complete, verified run with this set, identity and yardstick (exact match)."""
        for row in self._baseline_query(set_identifier, identity, grader, exclude_run_id):
            # Collations may match loosely (case-insensitive); the scope is exact.
            if (
                row.set_identifier == set_identifier
                and row.grader == grader
                and row.provider_instance == identity.provider_instance
                and row.model_alias == identity.model_alias
                and row.reported_model == identity.reported_model
                and (row.base_prompt or "") == identity.base_prompt
            ):
                return self.get_run(row.id)
        return None

    def _baseline_query(
        self, set_identifier: str, identity: ServingIdentity, grader: str, exclude_run_id: str | None
    ) -> Any:
        R = self.Run
        query = R.select().where(
            (R.kind == RunKind.PROMPTS.value)
            & (R.set_identifier == set_identifier)
            & (R.provider_instance == identity.provider_instance)
            & (R.model_alias == identity.model_alias)
            & (R.reported_model == identity.reported_model)
            & _same_base_prompt(R, identity.base_prompt)
            & (R.grader == grader)
            & (R.status == RunStatus.COMPLETE.value)
            & (R.verified == True)  # noqa: E712 - a SQL expression, not a Python comparison
            & (R.answered_count > 0)
        )
        if exclude_run_id is not None:
            query = query.where(R.id != exclude_run_id)
        return self._newest_first(query).limit(20)

    @guarded
    def explain_baseline(self, set_identifier: str, identity: ServingIdentity, grader: str) -> list[str]:
        """The engine's plan for the baseline read (``EXPLAIN QUERY PLAN`` / ``EXPLAIN``), one line
        per step: shows that the lookup searches the scope index instead of scanning runs."""
        sql, params = self._baseline_query(set_identifier, identity, grader, "-").sql()
        if self.is_sqlite:
            return [row[-1] for row in self.db.execute_sql(f"EXPLAIN QUERY PLAN {sql}", params)]
        return [row[0] for row in self.db.execute_sql(f"EXPLAIN {sql}", params)]

