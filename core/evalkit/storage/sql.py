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
from ..baselines import ACCEPTANCE_KINDS, Acceptance, BaselineScope
from ..errors import SchemaOutOfDateError, StorageError
from ..grading import Check
from ..privacy import keeps_text, redacted_text, scrub
from ..runs import CaseResult, Run, RunKind, RunStatus
from . import schema
from .protocols import VERDICT_STATES, StoredVerdict

__all__ = ["SqlRepository", "apply_migrations", "connect", "read_schema_status", "sqlite_path"]

#: How long a writer waits for another process's transaction before giving up (seconds).
BUSY_TIMEOUT_S = 60


def sqlite_path(url: str) -> str | None:
    """The file a ``sqlite:`` URL names (``:memory:`` for none), or ``None`` for another scheme."""
    if not url.startswith("sqlite:"):
        return None
    rest = url[len("sqlite:") :]
    if rest.startswith("///"):  # sqlite:///relative/path, sqlite:////absolute/path
        rest = rest[3:]
    elif rest.startswith("//"):
        rest = rest[2:]
    return rest or ":memory:"


def connect(url: str) -> pw.Database:
    """Open the database a URL names (``sqlite:///path``, ``postgresql://…``).

    SQLite runs in WAL mode (readers never block the writer) with a busy timeout, so concurrent
    ``evalkit run`` processes wait their turn instead of failing with "database is locked".
    """
    from playhouse.db_url import parse

    path = sqlite_path(url)
    if path is not None:
        if path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create the folder of database {url}: {exc.strerror}") from None
        return pw.SqliteDatabase(
            path,
            timeout=BUSY_TIMEOUT_S,
            pragmas={
                "busy_timeout": BUSY_TIMEOUT_S * 1000,
                "journal_mode": "wal",
                "synchronous": "normal",
                "foreign_keys": 1,
            },
        )
    if url.startswith(("postgres://", "postgresql://")):
        params = parse(url)
        return pw.PostgresqlDatabase(params.pop("database"), **params)
    raise StorageError(f"unsupported database URL {schema.redact_url(url)!r}; use sqlite:///PATH or postgresql://…")


def _open(url: str) -> pw.Database:
    db = connect(url)
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.connect(reuse_if_open=True)
            return db
        except (pw.OperationalError, pw.InterfaceError) as exc:
            # Switching a new file to WAL takes an exclusive lock that SQLite does not wait for
            # (no busy handler), so processes opening one fresh file at once retry here.
            if "locked" in str(exc) and time.monotonic() < deadline:
                if not db.is_closed():
                    db.close()
                time.sleep(0.05)
                continue
            raise StorageError(f"cannot open database {schema.redact_url(url)}: {str(exc).strip()}") from None


def read_schema_status(url: str) -> schema.SchemaStatus:
    """Where the database's schema stands; a SQLite file that does not exist yet is version 0."""
    path = sqlite_path(url)
    if path is not None and path != ":memory:" and not Path(path).exists():
        return schema.SchemaStatus(
            url=schema.redact_url(url), engine="sqlite", version=0, latest=schema.SCHEMA_VERSION, applied=(),
            pending=tuple((v, n) for v, n, _ in schema.MIGRATIONS),
        )
    db = _open(url)
    try:
        return schema.schema_status(db, url)
    finally:
        db.close()


def apply_migrations(url: str) -> tuple[schema.SchemaStatus, list[int]]:
    """Bring the database up to this evalkit's schema; returns the new status and what was applied."""
    db = _open(url)
    try:
        version = schema.current_version(db)
        if version > schema.SCHEMA_VERSION:
            raise SchemaOutOfDateError(_too_new(url, version))
        applied = schema.upgrade(db)
        return schema.schema_status(db, url), applied
    finally:
        db.close()


def _too_new(url: str, version: int) -> str:
    return (
        f"database {schema.redact_url(url)} has schema version {version}, newer than this evalkit "
        f"understands ({schema.SCHEMA_VERSION}); upgrade evalkit"
    )


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _load(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _fingerprints(text: str | None) -> dict[str, str] | None:
    """Stored case fingerprints, or ``None`` when absent or unreadable (all cases then count as unchanged)."""
    value = _load(text)
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    return value


def _identity(instance: str | None, alias: str | None, reported: str | None) -> ServingIdentity | None:
    if instance is None or alias is None or reported is None:
        return None
    return ServingIdentity(instance, alias, reported)


class SqlRepository:
    """A :class:`~evalkit.storage.ResultRepository` with every optional capability, over Peewee."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        """Open ``url``; an empty database gets the current schema (unless ``create`` is false), an
        older or newer one is refused with :class:`SchemaOutOfDateError` before anything is written."""
        self.url = url
        self.db = _open(url)
        self.is_sqlite = isinstance(self.db, pw.SqliteDatabase)
        self.models = schema.bind_models(self.db)
        self.Run = self.models.Run
        self.Case = self.models.Case
        version = schema.current_version(self.db)
        if version == 0 and create:
            schema.upgrade(self.db)
            version = schema.current_version(self.db)
        if version > schema.SCHEMA_VERSION:
            self.close()
            raise SchemaOutOfDateError(_too_new(url, version))
        if version < schema.SCHEMA_VERSION:
            self.close()
            raise SchemaOutOfDateError(
                f"database {schema.redact_url(url)} has schema version {version}, this evalkit needs "
                f"{schema.SCHEMA_VERSION}: run `evalkit db upgrade` (it keeps every stored run)"
            )

    def close(self) -> None:
        """Close the connection."""
        if not self.db.is_closed():
            self.db.close()

    def _atomic(self) -> Any:
        return self.db.atomic("IMMEDIATE") if self.is_sqlite else self.db.atomic()

    # -- writing -------------------------------------------------------------------------------

    def begin_run(self, run: Run) -> Run:
        """Create the run row with status running, or return the stored run of that id (shards
        joining one run may call this at the same moment; exactly one row results)."""
        with self._atomic():
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
                case_fingerprints=_dump(dict(run.case_fingerprints)) if run.case_fingerprints is not None else None,
            ).on_conflict_ignore().execute()
            stored = self.Run.get(self.Run.id == run.id)
        return self._run_from_row(stored)

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        """Commit finished cases in one transaction. A case id already stored for the run is kept
        as it is, unless the stored case is errored: then the new result replaces it (a resume)."""
        if not cases:
            return
        rows = [self._case_row(run_id, case, privacy) for case in cases]
        sql, columns = self._case_upsert()
        values = [tuple(row[name] for name in columns) for row in rows]
        with self._atomic():
            # One prepared statement for the batch: building it through the query builder per row
            # cost more CPU than everything else a case needs.
            cursor = self.db.cursor()
            if self.is_sqlite:
                cursor.executemany(sql, [row + (True,) for row in values])
            else:
                # psycopg2's executemany is a round trip per row; one multi-row INSERT per page.
                from psycopg2.extras import execute_values

                execute_values(cursor, sql, values, page_size=256)

    def _case_upsert(self) -> tuple[str, tuple[str, ...]]:
        cached = getattr(self, "_case_upsert_sql", None)
        if cached is None:
            C = self.Case
            fields = [f for f in C._meta.sorted_fields if f.name != "id"]
            columns = tuple(f.name for f in fields)
            names = [f.column_name for f in fields]
            replaced = [n for f, n in zip(fields, names, strict=True) if f.name not in ("run", "case_id")]
            table = C._meta.table_name
            param = self.db.param
            quoted = ", ".join('"' + n + '"' for n in names)
            updates = ", ".join('"' + n + '" = EXCLUDED."' + n + '"' for n in replaced)
            placeholders = f"({', '.join(param for _ in names)})" if self.is_sqlite else "%s"
            errored = param if self.is_sqlite else "true"
            sql = (
                f'INSERT INTO "{table}" ({quoted}) VALUES {placeholders} '
                f'ON CONFLICT ("run_id", "case_id") DO UPDATE SET {updates} WHERE "{table}"."errored" = {errored}'
            )
            cached = self._case_upsert_sql = (sql, columns)
        return cached

    def _case_row(self, run_id: str, case: CaseResult, privacy: str) -> dict[str, Any]:
        text_kept = keeps_text(privacy)

        def text(value: str | None) -> str | None:
            if value is None or not text_kept:
                return None
            return value if privacy == "full" else redacted_text(value)

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
            "measures": _dump(dict(case.measures)) if case.measures is not None else None,
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
        """Recompute aggregates from the stored cases and set the status, in one transaction.

        Concurrent finishers of one run (its shards) are serialised on the run row. A shard that
        asks for ``running`` after another shard already closed the run with every case leaves the
        run as that shard stored it: its own view of the cases was older.
        """
        with self._atomic():
            locked = self.Run.select(self.Run.status).where(self.Run.id == run_id)
            current = (locked if self.is_sqlite else locked.for_update()).first()
            if current is None:
                raise StorageError(f"run {run_id} is not in the store, so it cannot be finished")
            closed = (RunStatus.COMPLETE.value, RunStatus.INCOMPLETE.value)
            if status == RunStatus.RUNNING.value and current.status in closed:
                status = ""
            rows = self.Case.select(self.Case.passed, self.Case.score, self.Case.errored).where(
                self.Case.run == run_id
            ).tuples()
            answered = passed = errored = 0
            scores: list[float] = []
            for case_passed, score, case_errored in rows:
                answered += 1
                passed += bool(case_passed)
                errored += bool(case_errored)
                scores.append(score)
            score_sum = math.fsum(scores)
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
            if status:
                self.Run.update(update).where(self.Run.id == run_id).execute()
        run = self.get_run(run_id)
        if run is None:
            raise StorageError(f"run {run_id} disappeared while it was being finished")
        return run

    def mark_status(self, run_id: str, status: str) -> None:
        """Set the status of a run that is not complete (``interrupted`` stamps the time it
        stopped; ``running`` clears it)."""
        finished_at = None if status == RunStatus.RUNNING.value else time.time()
        with self._atomic():
            self.Run.update({self.Run.status: status, self.Run.finished_at: finished_at}).where(
                (self.Run.id == run_id) & (self.Run.status != RunStatus.COMPLETE.value)
            ).execute()

    def record_verdict(self, run_id: str, verdict: StoredVerdict) -> None:
        """Keep the verdict a finished run got, with the baseline it was compared with."""
        with self._atomic():
            self.Run.update(
                {self.Run.verdict: verdict.state, self.Run.baseline_id: verdict.baseline_id, self.Run.verdict_note: verdict.note}
            ).where(self.Run.id == run_id).execute()

    def accept_run(self, run_id: str, acceptance: Acceptance) -> None:
        """Record that the run is an accepted baseline (how, when, by whom, why)."""
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

    # -- reading -------------------------------------------------------------------------------

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

    def accepted_runs(self, set_identifier: str) -> list[Run]:
        """Every complete, accepted run of the set, most recently accepted first, without cases."""
        R = self.Run
        query = R.select().where(
            (R.set_identifier == set_identifier) & R.accepted_at.is_null(False) & (R.status == RunStatus.COMPLETE.value)
        )
        rows = query.order_by(R.accepted_at.desc(), R.finished_at.desc(), R.id.desc())
        return [self._run_from_row(r) for r in rows if r.set_identifier == set_identifier]

    def accepted_baseline(self, scope: BaselineScope, *, exclude_run_id: str | None = None) -> Run | None:
        """The most recently accepted complete run of exactly this scope, with its cases."""
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
            run = self._run_from_row(row)
            # Collations may match loosely (case-insensitive); the scope is exact.
            if BaselineScope.of_run(run) == scope:
                return self.get_run(row.id)
        return None

    def answered_case_ids(self, run_id: str) -> set[str]:
        """The ids of the run's stored cases that have an answer (what a resume skips)."""
        C = self.Case
        query = C.select(C.case_id).where((C.run == run_id) & (C.errored == False))  # noqa: E712
        return {case_id for (case_id,) in query.tuples()}

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

    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, with its cases unless ``with_cases`` is false."""
        row = self.Run.get_or_none(self.Run.id == run_id)
        if row is None:
            return None
        run = self._run_from_row(row)
        if with_cases:
            # Named tuples, not model instances: a 20,000-case read costs about 30% less CPU.
            cases = self.Case.select().where(self.Case.run == run_id).order_by(self.Case.id).namedtuples()
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
            case_fingerprints=_fingerprints(row.case_fingerprints),
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
            measures=_load(row.measures),
        )

    def _newest_first(self, query: Any) -> Any:
        return query.order_by(self.Run.finished_at.desc(), self.Run.started_at.desc(), self.Run.id.desc())

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
            & (R.grader == grader)
            & (R.status == RunStatus.COMPLETE.value)
            & (R.verified == True)  # noqa: E712 - a SQL expression, not a Python comparison
            & (R.answered_count > 0)
        )
        if exclude_run_id is not None:
            query = query.where(R.id != exclude_run_id)
        return self._newest_first(query).limit(20)

    def explain_baseline(self, set_identifier: str, identity: ServingIdentity, grader: str) -> list[str]:
        """The engine's plan for the baseline read (``EXPLAIN QUERY PLAN`` / ``EXPLAIN``), one line
        per step: shows that the lookup searches the scope index instead of scanning runs."""
        sql, params = self._baseline_query(set_identifier, identity, grader, "-").sql()
        if self.is_sqlite:
            return [row[-1] for row in self.db.execute_sql(f"EXPLAIN QUERY PLAN {sql}", params)]
        return [row[0] for row in self.db.execute_sql(f"EXPLAIN {sql}", params)]

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
                return self._run_from_row(row)
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
        """Runs newest first by start time (without cases); exact match on the set identifier."""
        if limit < 1:
            return []
        R = self.Run
        query = R.select()
        if set_identifier is not None:
            query = query.where(R.set_identifier == set_identifier)
        rows = query.order_by(R.started_at.desc(), R.id.desc()).limit(limit)
        return [self._run_from_row(r) for r in rows if set_identifier is None or r.set_identifier == set_identifier]

    def latest_unfinished_run(
        self, set_identifier: str, provider_instance: str | None, model_alias: str | None, grader: str
    ) -> Run | None:
        """The newest run of the set for this instance, alias and grader that is not complete:
        interrupted, incomplete, or still marked running (a process killed outright leaves that)."""
        R = self.Run
        unfinished = [RunStatus.INTERRUPTED.value, RunStatus.RUNNING.value, RunStatus.INCOMPLETE.value]
        query = R.select().where(
            (R.set_identifier == set_identifier)
            & R.status.in_(unfinished)
            & ((R.grader == grader) | R.grader.startswith(f"{grader}:"))
        )
        for column, value in ((R.provider_instance, provider_instance), (R.model_alias, model_alias)):
            query = query.where(column.is_null() if value is None else column == value)
        for row in query.order_by(R.started_at.desc(), R.id.desc()).limit(50):
            if (
                row.set_identifier == set_identifier
                and row.provider_instance == provider_instance
                and row.model_alias == model_alias
                and (row.grader == grader or row.grader.startswith(f"{grader}:"))
            ):
                return self._run_from_row(row)
        return None

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
                self.Case.delete().where(self.Case.run.in_(chunk)).execute()
                R.delete().where(R.id.in_(chunk)).execute()
            total += len(chunk)

    def delete_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the given runs and their cases."""
        ids = list(run_ids)
        with self._atomic():
            self.Case.delete().where(self.Case.run.in_(ids)).execute()
            self.Run.delete().where(self.Run.id.in_(ids)).execute()
