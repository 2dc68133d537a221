"""The Peewee repository: SQLite by default, PostgreSQL through the same URL scheme.

Nothing outside this package knows about Peewee. Each repository builds its own model classes
bound to its own database, so several stores can be open in one process.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import peewee as pw

from ..answers import ServingIdentity, Usage
from ..errors import SchemaOutOfDateError, StorageError
from ..grading import Check
from ..privacy import keeps_text, scrub
from ..runs import CaseResult, Run, RunKind, RunStatus
from . import schema

__all__ = ["SqlRepository", "connect"]


def connect(url: str) -> pw.Database:
    """Open the database a URL names (``sqlite:///path``, ``postgresql://…``)."""
    from playhouse.db_url import parse

    if url.startswith("sqlite:///") or url == "sqlite://" or url.startswith("sqlite:"):
        path = url.split("sqlite://", 1)[1] or ":memory:"
        if path.startswith("/") and not url.startswith("sqlite:////"):
            path = path[1:] or ":memory:"
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        return pw.SqliteDatabase(
            path,
            timeout=30,
            pragmas={"journal_mode": "wal", "synchronous": "normal", "foreign_keys": 1, "busy_timeout": 30000},
        )
    if url.startswith(("postgres://", "postgresql://")):
        params = parse(url)
        return pw.PostgresqlDatabase(params.pop("database"), **params)
    raise StorageError(f"unsupported database URL {url!r}; use sqlite:///PATH or postgresql://…")


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _load(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _identity(instance: str | None, alias: str | None, reported: str | None) -> ServingIdentity | None:
    if instance is None or alias is None or reported is None:
        return None
    return ServingIdentity(instance, alias, reported)


class SqlRepository:
    """A :class:`~evalkit.storage.ResultRepository` with every optional capability, over Peewee."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.db = connect(url)
        self.is_sqlite = isinstance(self.db, pw.SqliteDatabase)
        self.models = schema.bind_models(self.db)
        self.Run = self.models.Run
        self.Case = self.models.Case
        try:
            self.db.connect(reuse_if_open=True)
        except pw.OperationalError as exc:
            raise StorageError(f"cannot open database {schema.redact_url(url)}: {exc}") from None
        version = schema.current_version(self.db, self.models)
        if version == 0 and create:
            schema.upgrade(self.db, self.models)
        elif 0 < version < schema.SCHEMA_VERSION:
            raise SchemaOutOfDateError(
                f"database {schema.redact_url(url)} has schema version {version}, this evalkit needs "
                f"{schema.SCHEMA_VERSION}: run `evalkit db upgrade`"
            )
        elif version > schema.SCHEMA_VERSION:
            raise SchemaOutOfDateError(
                f"database {schema.redact_url(url)} has schema version {version}, newer than this evalkit "
                f"understands ({schema.SCHEMA_VERSION}); upgrade evalkit"
            )

    def close(self) -> None:
        """Close the connection."""
        if not self.db.is_closed():
            self.db.close()

    def _atomic(self) -> Any:
        return self.db.atomic("IMMEDIATE") if self.is_sqlite else self.db.atomic()

    # -- writing -------------------------------------------------------------------------------

    def begin_run(self, run: Run) -> Run:
        """Create the run row with status running, or return the stored run of that id."""
        with self._atomic():
            existing = self.Run.get_or_none(self.Run.id == run.id)
            if existing is not None:
                return self._run_from_row(existing)
            self.Run.insert(
                id=run.id,
                kind=run.kind.value,
                set_identifier=run.set_identifier,
                set_fingerprint=run.set_fingerprint,
                grader=run.grader,
                status=RunStatus.RUNNING.value,
                provider_instance=run.provider_instance,
                adapter=run.adapter,
                model_alias=run.model_alias,
                retriever=run.retriever,
                deployment=run.deployment,
                case_count=run.case_count,
                started_at=run.started_at or time.time(),
                label=run.label,
                privacy=run.privacy,
                benchmark_fingerprint=run.benchmark_fingerprint,
                variant_fingerprint=run.variant_fingerprint,
                provenance=_dump(run.provenance),
            ).execute()
        return run

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        """Commit finished cases in one transaction; already stored case ids are kept as they are."""
        if not cases:
            return
        rows = [self._case_row(run_id, case, privacy) for case in cases]
        with self._atomic():
            for start in range(0, len(rows), 200):
                self.Case.insert_many(rows[start : start + 200]).on_conflict_ignore().execute()

    def _case_row(self, run_id: str, case: CaseResult, privacy: str) -> dict[str, Any]:
        text_kept = keeps_text(privacy)

        def text(value: str | None) -> str | None:
            if value is None or not text_kept:
                return None
            return value if privacy == "full" else scrub(value)

        checks = [[c.name, c.passed, c.error, text(c.detail)] for c in case.checks]
        detail = _dump(case.detail) if case.detail is not None else None
        identity = case.identity
        return {
            "run": run_id,
            "case_id": case.case_id,
            "passed": case.passed,
            "score": case.score,
            "errored": case.errored,
            "error": scrub(case.error) if case.error else None,
            "checks": _dump(checks),
            "latency_s": case.latency_s,
            "provider_instance": identity.provider_instance if identity else None,
            "model_alias": identity.model_alias if identity else None,
            "reported_model": identity.reported_model if identity else None,
            "adapter": case.adapter,
            "yardstick": case.yardstick,
            "answer_text": text(case.answer_text),
            "detail": text(detail),
            "usage": _dump([case.usage.input_tokens, case.usage.output_tokens]) if case.usage else None,
            "finished_at": case.finished_at or time.time(),
        }

    def finish_run(
        self,
        run_id: str,
        status: str,
        finished_at: float,
        *,
        grader: str | None = None,
        identity: ServingIdentity | None = None,
        identity_note: str | None = None,
        metrics: Any = None,
        provenance: Any = None,
    ) -> Run:
        """Recompute aggregates from the stored cases and close the run in one transaction."""
        with self._atomic():
            rows = list(
                self.Case.select(self.Case.passed, self.Case.score, self.Case.errored).where(self.Case.run == run_id)
            )
            answered = len(rows)
            passed = sum(1 for r in rows if r.passed)
            errored = sum(1 for r in rows if r.errored)
            score_sum = sum(r.score for r in rows)
            update: dict[Any, Any] = {
                self.Run.status: status,
                self.Run.finished_at: finished_at,
                self.Run.answered_count: answered,
                self.Run.passed_count: passed,
                self.Run.errored_count: errored,
                self.Run.pass_rate: passed / answered if answered else 0.0,
                self.Run.mean_score: score_sum / answered if answered else 0.0,
                self.Run.verified: identity is not None,
                self.Run.identity_note: identity_note,
                self.Run.reported_model: identity.reported_model if identity else None,
                self.Run.generator_provenance: _dump(identity.as_mapping()) if identity else None,
            }
            if identity is not None:
                update[self.Run.provider_instance] = identity.provider_instance
                update[self.Run.model_alias] = identity.model_alias
            if grader is not None:
                update[self.Run.grader] = grader
            if metrics is not None:
                update[self.Run.metrics] = _dump(metrics)
            if provenance is not None:
                update[self.Run.provenance] = _dump(provenance)
            self.Run.update(update).where(self.Run.id == run_id).execute()
        run = self.get_run(run_id)
        if run is None:
            raise StorageError(f"run {run_id} disappeared while it was being finished")
        return run

    def mark_status(self, run_id: str, status: str) -> None:
        """Set a run's status without touching anything else (an interrupted run)."""
        with self._atomic():
            self.Run.update({self.Run.status: status, self.Run.finished_at: time.time()}).where(
                self.Run.id == run_id
            ).execute()

    # -- reading -------------------------------------------------------------------------------

    def answered_case_ids(self, run_id: str) -> set[str]:
        """The case ids already stored for a run (what a resume skips)."""
        return {r.case_id for r in self.Case.select(self.Case.case_id).where(self.Case.run == run_id)}

    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, with its cases unless ``with_cases`` is false."""
        row = self.Run.get_or_none(self.Run.id == run_id)
        if row is None:
            return None
        run = self._run_from_row(row)
        if with_cases:
            cases = self.Case.select().where(self.Case.run == run_id).order_by(self.Case.id)
            run = run.with_cases(self._case_from_row(c) for c in cases)
        return run

    def _run_from_row(self, row: Any) -> Run:
        identity = None
        if row.verified:
            identity = _identity(row.provider_instance, row.model_alias, row.reported_model)
        return Run(
            id=row.id,
            set_identifier=row.set_identifier,
            grader=row.grader,
            kind=RunKind(row.kind),
            status=RunStatus(row.status),
            started_at=row.started_at,
            finished_at=row.finished_at,
            case_count=row.case_count,
            set_fingerprint=row.set_fingerprint or "",
            identity=identity,
            identity_note=row.identity_note,
            provider_instance=row.provider_instance,
            adapter=row.adapter,
            model_alias=row.model_alias,
            retriever=row.retriever,
            deployment=row.deployment,
            benchmark_fingerprint=row.benchmark_fingerprint or "",
            variant_fingerprint=row.variant_fingerprint or "",
            provenance=_load(row.provenance),
            metrics=_load(row.metrics),
            label=row.label,
            privacy=row.privacy,
            stored_passed_count=row.passed_count,
            stored_errored_count=row.errored_count,
            stored_answered_count=row.answered_count,
            stored_mean_score=row.mean_score,
        )

    def _case_from_row(self, row: Any) -> CaseResult:
        checks = tuple(Check(n, bool(p), e, d) for n, p, e, d in (_load(row.checks) or []))
        usage = _load(row.usage)
        return CaseResult(
            case_id=row.case_id,
            passed=bool(row.passed),
            score=row.score,
            checks=checks,
            latency_s=row.latency_s,
            error=row.error if row.errored else None,
            identity=_identity(row.provider_instance, row.model_alias, row.reported_model),
            adapter=row.adapter,
            yardstick=row.yardstick,
            answer_text=row.answer_text,
            usage=Usage(*usage) if usage else None,
            detail=_load(row.detail),
            finished_at=row.finished_at,
        )

    def _newest_first(self, query: Any) -> Any:
        return query.order_by(self.Run.finished_at.desc(), self.Run.started_at.desc(), self.Run.id.desc())

    def baseline_for(
        self, set_identifier: str, identity: ServingIdentity, grader: str, *, exclude_run_id: str | None = None
    ) -> Run | None:
        """The latest complete, verified run with this set, identity and yardstick (exact match)."""
        R = self.Run
        query = R.select().where(
            (R.kind == RunKind.PROMPTS.value)
            & (R.set_identifier == set_identifier)
            & (R.provider_instance == identity.provider_instance)
            & (R.model_alias == identity.model_alias)
            & (R.reported_model == identity.reported_model)
            & (R.grader == grader)
            & (R.status == RunStatus.COMPLETE.value)
            & (R.verified == True)  # noqa: E712 - a SQL expression, not a Python comparison
            & (R.answered_count > 0)
        )
        if exclude_run_id is not None:
            query = query.where(R.id != exclude_run_id)
        for row in self._newest_first(query).limit(20):
            # Collations may match loosely (case-insensitive); the scope is exact.
            if (
                row.set_identifier == set_identifier
                and row.grader == grader
                and row.provider_instance == identity.provider_instance
                and row.model_alias == identity.model_alias
                and row.reported_model == identity.reported_model
            ):
                return self.get_run(row.id)
        return None

    def latest_retrieval_run(
        self, set_identifier: str, retriever: str, *, exclude_run_id: str | None = None
    ) -> Run | None:
        """The newest complete retrieval run of the set with this retriever (any fingerprint)."""
        R = self.Run
        query = R.select().where(
            (R.kind == RunKind.RETRIEVAL.value)
            & (R.set_identifier == set_identifier)
            & (R.retriever == retriever)
            & (R.status == RunStatus.COMPLETE.value)
        )
        if exclude_run_id is not None:
            query = query.where(R.id != exclude_run_id)
        for row in self._newest_first(query).limit(20):
            if row.set_identifier == set_identifier and row.retriever == retriever:
                return self.get_run(row.id)
        return None

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
        return [self._run_from_row(row) for row in self._latest_per_set(rows)]

    def mean_quality_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> float | None:
        """Mean score of the latest verified complete run per set for this instance and alias
        (``None``: no data; a measured 0.0 stays 0.0)."""
        runs = self.quality_runs_for_provider_model(provider_instance, model_alias, grader)
        return math.fsum(r.mean_score for r in runs) / len(runs) if runs else None

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

    def recent_runs(self, set_identifier: str | None = None, limit: int = 20) -> list[Run]:
        """Runs newest first (without cases)."""
        if limit < 1:
            return []
        query = self.Run.select()
        if set_identifier is not None:
            query = query.where(self.Run.set_identifier == set_identifier)
        return [self._run_from_row(r) for r in self._newest_first(query).limit(limit)]

    def latest_unfinished_run(self, set_identifier: str, provider_instance: str | None, grader: str) -> Run | None:
        """The newest interrupted or still-running run of a set for an instance (what resume continues)."""
        R = self.Run
        query = R.select().where(
            (R.set_identifier == set_identifier)
            & (R.status.in_([RunStatus.INTERRUPTED.value, RunStatus.RUNNING.value, RunStatus.INCOMPLETE.value]))
            & (R.grader == grader)
        )
        if provider_instance is None:
            query = query.where(R.provider_instance.is_null())
        else:
            query = query.where(R.provider_instance == provider_instance)
        row = query.order_by(R.started_at.desc()).first()
        return self._run_from_row(row) if row else None

    def purge_older_than(self, cutoff: float) -> int:
        """Delete whole runs (their cases with them) that finished before ``cutoff``."""
        R = self.Run
        with self._atomic():
            old = [r.id for r in R.select(R.id).where(pw.fn.COALESCE(R.finished_at, R.started_at) < cutoff)]
            for start in range(0, len(old), 500):
                chunk = old[start : start + 500]
                self.Case.delete().where(self.Case.run.in_(chunk)).execute()
                R.delete().where(R.id.in_(chunk)).execute()
        return len(old)

    def delete_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the given runs and their cases."""
        ids = list(run_ids)
        with self._atomic():
            self.Case.delete().where(self.Case.run.in_(ids)).execute()
            self.Run.delete().where(self.Run.id.in_(ids)).execute()
