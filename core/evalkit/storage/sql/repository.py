"""The Peewee repository: SQLite by default, PostgreSQL through the same URL scheme.

Nothing outside this package knows about Peewee. Each repository builds its own model classes
bound to its own database, so several stores can be open in one process.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import peewee as pw

from ...answers import ServingIdentity
from ...baselines import ACCEPTANCE_KINDS, Acceptance, BaselineScope
from ...errors import SchemaOutOfDateError, StorageError
from ...grading import AGREEMENT_CHECK
from ...leases import WHOLE_RUN, LeaseHolder, LeaseOwner, RunBusyError, ShardMismatchError, ShardProgress, overlaps
from ...runs import CaseResult, Run, RunKind, RunStatus
from .. import schema
from ..engine import open_database
from ..protocols import VERDICT_STATES, CasePair, CaseTally, StoredVerdict
from ..textcodec import decode_text, encode_text
from ..urls import redact_url, sqlite_path
from .rows import (
    CASE_COLUMNS,
    RECORDED_COLUMNS,
    case_from_columns,
    case_mark,
    case_values,
    dump_json,
    run_from_row,
    serving_identity,
)
from .store import SqlStore, guarded, too_new

__all__ = ["SqlRepository", "apply_migrations", "read_schema_status"]


def read_schema_status(url: str) -> schema.SchemaStatus:
    """Where the database's schema stands; a SQLite file that does not exist yet is version 0."""
    path = sqlite_path(url)
    if path is not None and path != ":memory:" and not Path(path).exists():
        return schema.SchemaStatus(
            url=redact_url(url), engine="sqlite", version=0, latest=schema.SCHEMA_VERSION, applied=(),
            pending=tuple((v, n) for v, n, _ in schema.MIGRATIONS),
        )
    db = open_database(url)
    try:
        return schema.schema_status(db, url)
    except (pw.DatabaseError, pw.InterfaceError) as exc:
        raise StorageError(f"cannot read database {redact_url(url)}: {' '.join(str(exc).split())}") from None
    finally:
        db.close()


def apply_migrations(url: str) -> tuple[schema.SchemaStatus, list[int]]:
    """Bring the database up to this evalkit's schema; returns the new status and what was applied."""
    db = open_database(url, writing=True)
    try:
        version = schema.current_version(db)
        if version > schema.SCHEMA_VERSION:
            raise SchemaOutOfDateError(too_new(url, version))
        applied = schema.upgrade(db)
        return schema.schema_status(db, url), applied
    except (pw.DatabaseError, pw.InterfaceError) as exc:
        raise StorageError(f"cannot upgrade database {redact_url(url)}: {' '.join(str(exc).split())}") from None
    finally:
        db.close()


def _scope_lock_key(scope: BaselineScope) -> int:
    """A PostgreSQL advisory-lock key (a signed 64-bit number) for ``scope``."""
    import hashlib

    fields = (scope.kind.value, scope.set_identifier, scope.provider_instance, scope.model_alias, scope.reported_model,
              scope.grader, scope.retriever, scope.deployment)  # fmt: skip
    text = "\x1f".join("" if v is None else v for v in fields)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big", signed=True)


class SqlRepository(SqlStore):
    """A :class:`~evalkit.storage.ResultRepository` with every optional capability, over Peewee."""

    # -- writing -------------------------------------------------------------------------------

    @guarded
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
                provenance=dump_json(run.provenance),
                fingerprints_kept=run.fingerprints_kept,
            ).on_conflict_ignore().execute()
            stored = self._run_by_id(run.id)
        assert stored is not None
        return stored

    def _run_by_id(self, run_id: str) -> Run | None:
        """The run row as a :class:`Run` (no cases). ``run_id`` is looked up as it is stored (a
        user's ``evalkit show $'\\xff'`` holds a surrogate no engine can bind)."""
        row = self.Run.get_or_none(self.Run.id == encode_text(run_id))
        return None if row is None else run_from_row(row)

    @guarded
    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        """Commit finished cases in one transaction. A case id already stored for the run is kept
        as it is, unless the stored case is errored: then the new result replaces it (a resume)."""
        rows = self._commit_cases(run_id, cases, privacy)
        if self._written_rows is not None:
            self._written_rows.extend(rows)

    def record_cases_as_stored(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> list[CaseResult] | None:
        """Commit ``cases`` through :meth:`record_cases` (a subclass's own, if it has one), and
        return what it wrote as :meth:`iter_cases` reads it back: made from the very values written,
        decoded, without reading. ``None`` when nothing was written through this class's
        ``record_cases`` (a subclass storing cases its own way)."""
        self._written_rows = []
        try:
            self.record_cases(run_id, cases, privacy)
            rows = self._written_rows
        finally:
            self._written_rows = None
        if not rows and cases:
            return None
        return [case_from_columns(*[decode_text(v) if isinstance(v, str) else v for v in row[1:]]) for row in rows]

    def _commit_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> list[tuple[Any, ...]]:
        """Commit ``cases``; return the values written, a row per case (see :meth:`_case_values`)."""
        if not cases:
            return []
        sql = self._case_upsert()
        stored_run_id = encode_text(run_id)
        values = [case_values(stored_run_id, case, privacy) for case in cases]
        with self._atomic(), pw.__exception_wrapper__:
            # One prepared statement for the batch: building it through the query builder per row
            # cost more CPU than everything else a case needs. (The driver's errors become
            # peewee's, like every other statement's, so a failing store is reported the same way.)
            cursor = self.db.cursor()
            if self.is_sqlite:
                cursor.executemany(sql, [row + (True,) for row in values])
            else:
                # psycopg2's executemany is a round trip per row; one multi-row INSERT per page.
                from psycopg2.extras import execute_values

                execute_values(cursor, sql, values, page_size=256)
        return values

    def _case_upsert(self) -> str:
        """The statement :meth:`record_cases` runs, its columns in :data:`RECORDED_COLUMNS` order."""
        cached = getattr(self, "_case_upsert_sql", None)
        if cached is None:
            C = self.Case
            stored = {f.name for f in C._meta.sorted_fields if f.name != "id"}
            if stored != set(RECORDED_COLUMNS):  # a column added to the schema must be written too
                raise RuntimeError(f"record_cases writes {sorted(RECORDED_COLUMNS)}, the case table has {sorted(stored)}")
            fields = [C._meta.fields[name] for name in RECORDED_COLUMNS]
            names = [f.column_name for f in fields]
            replaced = [n for f, n in zip(fields, names, strict=True) if f.name not in ("run", "case_id")]
            table = C._meta.table_name
            param = self.db.param
            quoted = ", ".join('"' + n + '"' for n in names)
            updates = ", ".join('"' + n + '" = EXCLUDED."' + n + '"' for n in replaced)
            placeholders = f"({', '.join(param for _ in names)})" if self.is_sqlite else "%s"
            errored = param if self.is_sqlite else "true"
            cached = self._case_upsert_sql = (
                f'INSERT INTO "{table}" ({quoted}) VALUES {placeholders} '
                f'ON CONFLICT ("run_id", "case_id") DO UPDATE SET {updates} WHERE "{table}"."errored" = {errored}'
            )
        return cached

    @guarded
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
        with_cases: bool = True,
    ) -> Run:
        """Recompute aggregates from the stored cases and set the status, in one transaction.

        Concurrent finishers of one run (its shards) are serialised on the run row. A shard that
        asks for ``running`` after another shard already closed the run with every case leaves the
        run as that shard stored it: its own view of the cases was older. The run is returned with
        its cases unless ``with_cases`` is false (its aggregates are then the stored ones).
        """
        with self._atomic():
            locked = self.Run.select(self.Run.status).where(self.Run.id == run_id)
            current = (locked if self.is_sqlite else locked.for_update()).first()
            if current is None:
                raise StorageError(f"run {run_id} is not in the store, so it cannot be finished")
            closed = (RunStatus.COMPLETE.value, RunStatus.INCOMPLETE.value)
            if status == RunStatus.RUNNING.value and current.status in closed:
                status = ""
            answered, passed, errored, score_sum = self._aggregates(run_id)
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
                self.Run.generator_provenance: dump_json(identity.as_mapping()) if identity else None,
            }
            if identity is not None:
                update[self.Run.provider_instance] = identity.provider_instance
                update[self.Run.model_alias] = identity.model_alias
            if grader is not None:
                update[self.Run.grader] = grader
            if metrics is not None:
                update[self.Run.metrics] = dump_json(metrics)
            if provenance is not None:
                update[self.Run.provenance] = dump_json(provenance)
            if status:
                self.Run.update(update).where(self.Run.id == run_id).execute()
        run = self.get_run(run_id, with_cases=with_cases)
        if run is None:
            raise StorageError(f"run {run_id} disappeared while it was being finished")
        return run

    def _aggregates(self, run_id: str) -> tuple[int, int, int, float]:
        """Answered, passed and errored counts (counted in SQL) and the exact sum of the scores
        (``math.fsum`` over the one score column, read without building a row object)."""
        C = self.Case
        passed_one = pw.Case(None, ((C.passed, 1),), 0)
        errored_one = pw.Case(None, ((C.errored, 1),), 0)
        query = C.select(pw.fn.COUNT(C.id), pw.fn.SUM(passed_one), pw.fn.SUM(errored_one)).where(C.run == run_id)
        answered, passed, errored = query.tuples().get()
        # The scores straight from the driver's cursor: peewee's per-row handling was a third of this method.
        scores = self.db.execute_sql(*C.select(C.score).where(C.run == run_id).sql())
        return answered or 0, int(passed or 0), int(errored or 0), math.fsum(map(operator.itemgetter(0), scores))

    @guarded
    def case_tally(self, run_id: str) -> CaseTally:
        """The run's aggregates, and its answered cases counted per serving identity and yardstick
        (one grouped query), without reading a case back."""
        answered, passed, errored, score_sum = self._aggregates(run_id)
        C = self.Case
        query = (
            C.select(C.provider_instance, C.model_alias, C.reported_model, C.yardstick, pw.fn.COUNT(C.id))
            .where((C.run == run_id) & (C.errored == False))  # noqa: E712 - a SQL expression
            .group_by(C.provider_instance, C.model_alias, C.reported_model, C.yardstick)
        )
        identities: dict[ServingIdentity | None, int] = {}
        yardsticks: set[str] = set()
        for instance, alias, reported, yardstick, count in query.tuples():
            identity = serving_identity(instance, alias, reported)
            identities[identity] = identities.get(identity, 0) + count
            if yardstick:
                yardsticks.add(yardstick)
        return CaseTally(answered, passed, errored, score_sum, identities, frozenset(yardsticks))

    #: Rows read per page when a run's cases are streamed (bounded memory on every engine:
    #: psycopg2 would otherwise fetch a whole result into the client at once).
    PAGE_SIZE = 2000

    def _pages(self, make_query: Callable[[int], Any], position: Callable[[Any], int], *, raw: bool = False) -> Iterator[Any]:
        """Rows of a query ordered by case row id, a page at a time (keyset pagination); ``raw``:
        the driver's tuples, without peewee's conversion of each value."""
        after = -1
        while True:
            query = make_query(after).limit(self.PAGE_SIZE)
            rows = self.db.execute(query).fetchall() if raw else list(query)
            yield from rows
            if len(rows) < self.PAGE_SIZE:
                return
            after = position(rows[-1])

    def iter_cases(self, run_id: str, *, notable_only: bool = False) -> Iterator[CaseResult]:
        """The run's cases in stored order, a page at a time; ``notable_only``: only the failed,
        errored and unstable ones (the ones a run's table lists)."""
        C = self.Case
        columns = [getattr(C, name) for name in CASE_COLUMNS]

        def page(after: int) -> Any:
            where = (C.run == run_id) & (C.id > after)
            if notable_only:
                where &= (C.passed == False) | C.checks.contains(AGREEMENT_CHECK)  # noqa: E712
            return C.select(C.id, *columns).where(where).order_by(C.id)

        # Read raw: peewee's per-value conversion cost more than the rest of a 100,000-case --json.
        for _, *values in self._guarded_rows(self._pages(page, lambda row: row[0], raw=True)):
            case = case_from_columns(*[decode_text(v) if isinstance(v, str) else v for v in values])
            if not notable_only or case.needs_a_look:
                yield case

    def paired_cases(self, run_id: str, baseline_id: str) -> Iterator[CasePair]:
        """Both runs' cases matched by id in SQL, a page at a time: the current run's in stored
        order (with the baseline's case of that id), then the baseline's cases the run lacks."""
        C = self.Case
        B = self.Case.alias()

        def current_page(after: int) -> Any:
            return (
                C.select(C.id, C.case_id, C.passed, C.score, C.checks, C.fingerprint, B.id, B.passed, B.score, B.checks, B.fingerprint)
                .join(B, pw.JOIN.LEFT_OUTER, on=((B.run == baseline_id) & (B.case_id == C.case_id)))
                .where((C.run == run_id) & (C.id > after))
                .order_by(C.id)
                .tuples()
            )

        for row in self._guarded_rows(self._pages(current_page, lambda row: row[0])):
            position, case_id, passed, score, checks, fingerprint, b_position, b_passed, b_score, b_checks, b_fingerprint = row
            baseline = None if b_position is None else case_mark(case_id, b_passed, b_score, b_checks, b_position, b_fingerprint)
            yield CasePair(case_id, case_mark(case_id, passed, score, checks, position, fingerprint), baseline)
        current = self.Case.alias()
        missing = ~pw.fn.EXISTS(current.select(current.id).where((current.run == run_id) & (current.case_id == C.case_id)))

        def removed_page(after: int) -> Any:
            return (
                C.select(C.id, C.case_id, C.passed, C.score, C.checks, C.fingerprint)
                .where((C.run == baseline_id) & (C.id > after) & missing)
                .order_by(C.id)
                .tuples()
            )

        for position, case_id, passed, score, checks, fingerprint in self._guarded_rows(self._pages(removed_page, lambda row: row[0])):
            yield CasePair(case_id, None, case_mark(case_id, passed, score, checks, position, fingerprint))

    @guarded
    def mark_status(self, run_id: str, status: str) -> None:
        """Set the status of a run that is not complete (``interrupted`` stamps the time it
        stopped; ``running`` clears it)."""
        finished_at = None if status == RunStatus.RUNNING.value else time.time()

        def update() -> None:
            with self._atomic():
                self.Run.update({self.Run.status: status, self.Run.finished_at: finished_at}).where(
                    (self.Run.id == run_id) & (self.Run.status != RunStatus.COMPLETE.value)
                ).execute()

        try:
            update()
        except pw.OperationalError as exc:
            if not (self.is_sqlite and "full" in str(exc)):
                raise
            # A full disk: moving the write-ahead log into the database and truncating it frees the
            # log's space (often enough for this one-row update, so the run says it was interrupted).
            self.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            update()

    @guarded
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

    @guarded
    def accept_if_first(self, run_id: str, scope: BaselineScope, acceptance: Acceptance) -> bool:
        """Accept the run unless another run of ``scope`` already is, atomically: SQLite's write
        lock (``BEGIN IMMEDIATE``) or, on PostgreSQL, a transaction lock on the scope serialises
        concurrent first runs, and the check reads inside it."""
        with self._atomic():
            if not self.is_sqlite:
                self.db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_scope_lock_key(scope),))
            if self.accepted_baseline(scope, exclude_run_id=run_id, with_cases=False) is not None:
                return False
            self.accept_run(run_id, acceptance)
        return True

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
        return [run_from_row(r) for r in rows if r.set_identifier == set_identifier]

    def accepted_baseline(
        self, scope: BaselineScope, *, exclude_run_id: str | None = None, with_cases: bool = True
    ) -> Run | None:
        """The most recently accepted complete run of exactly this scope, with its cases unless
        ``with_cases`` is false."""
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
            run = run_from_row(row)
            # Collations may match loosely (case-insensitive); the scope is exact.
            if BaselineScope.of_run(run) == scope:
                return self.get_run(row.id) if with_cases else run
        return None

    @guarded
    def answered_case_ids(self, run_id: str) -> set[str]:
        """The ids of the run's stored cases that have an answer (what a resume skips)."""
        C = self.Case
        query = C.select(C.case_id).where((C.run == run_id) & (C.errored == False))  # noqa: E712
        return {case_id for (case_id,) in query.tuples()}

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

    @guarded
    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, with its cases unless ``with_cases`` is false."""
        run = self._run_by_id(run_id)
        if run is None:
            return None
        if with_cases:
            # Named tuples, not model instances: a 20,000-case read costs about 30% less CPU.
            C = self.Case
            cases = C.select(*(getattr(C, name) for name in CASE_COLUMNS)).where(C.run == encode_text(run_id)).order_by(C.id).tuples()
            run = run.with_cases(case_from_columns(*values) for values in cases)
        return run

    def _newest_first(self, query: Any) -> Any:
        return query.order_by(self.Run.finished_at.desc(), self.Run.started_at.desc(), self.Run.id.desc())

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
                return run_from_row(row)
        return None

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

    # -- leases --------------------------------------------------------------------------------

    @guarded
    def acquire_lease(self, run_id: str, part: str, owner: LeaseOwner, *, shard_count: int | None = None) -> None:
        """Take the lease on ``part`` of the run in one transaction serialised on the run row;
        refused (:class:`RunBusyError`) while a live lease overlaps it, and
        (:class:`ShardMismatchError`) when a stored shard of the run gives another N."""
        L = self.Lease
        now = time.time()
        with self._atomic():
            locked = self.Run.select(self.Run.id).where(self.Run.id == run_id)
            if (locked if self.is_sqlite else locked.for_update()).first() is None:
                raise StorageError(f"run {run_id} is not in the store, so no lease can be taken on it")
            rows = list(L.select().where(L.run == run_id))
            if shard_count is not None:
                counts = {r.shard_count for r in rows if r.shard_count is not None}
                if counts - {shard_count}:
                    raise ShardMismatchError(run_id, part, counts)
            for row in rows:
                holder = LeaseHolder(row.part, row.owner_host, row.owner_pid, row.heartbeat_at)
                if row.owner_token != owner.token and overlaps(part, row.part) and holder.is_live(now):
                    raise RunBusyError(run_id, part, holder, now)
            index = int(part.split("/", 1)[0]) if part != WHOLE_RUN else None
            claim = {
                L.owner_host: owner.host, L.owner_pid: owner.pid, L.owner_token: owner.token,
                L.acquired_at: now, L.heartbeat_at: now,
            }
            if any(row.part == part for row in rows):
                L.update(claim).where((L.run == run_id) & (L.part == part)).execute()
            else:
                L.insert(
                    run=run_id, part=part, shard_index=index, shard_count=shard_count, owner_host=owner.host,
                    owner_pid=owner.pid, owner_token=owner.token, acquired_at=now, heartbeat_at=now,
                ).execute()

    @guarded
    def renew_lease(self, run_id: str, part: str, owner: LeaseOwner) -> bool:
        """Refresh the heartbeat of this owner's lease; ``False`` when another process took it over.
        (An in-memory store is private to its connection: nothing else can see it, nothing to refresh.)"""
        if self.in_memory:
            return True
        L = self.Lease
        with self._atomic():
            changed = L.update({L.heartbeat_at: time.time()}).where(
                (L.run == run_id) & (L.part == part) & (L.owner_token == owner.token)
            ).execute()
        return bool(changed)

    @guarded
    def release_lease(self, run_id: str, part: str, owner: LeaseOwner, *, done: bool) -> None:
        """Clear this owner from the lease; ``done`` stamps the part as in."""
        L = self.Lease
        update: dict[Any, Any] = {L.owner_host: None, L.owner_pid: None, L.owner_token: None, L.heartbeat_at: None}
        if done:
            update[L.done_at] = time.time()
        with self._atomic():
            L.update(update).where((L.run == run_id) & (L.part == part) & (L.owner_token == owner.token)).execute()

    @guarded
    def shard_progress(self, run_id: str) -> ShardProgress:
        """The run's N (``None``: not sharded), the shards whose slice is in and those answered now."""
        L = self.Lease
        now = time.time()
        rows = list(L.select().where((L.run == run_id) & L.shard_count.is_null(False)))
        if not rows:
            return ShardProgress(None)
        return ShardProgress(
            count=max(r.shard_count for r in rows),
            done=frozenset(r.shard_index for r in rows if r.done_at is not None),
            answering=frozenset(
                r.shard_index for r in rows if LeaseHolder(r.part, r.owner_host, r.owner_pid, r.heartbeat_at).is_live(now)
            ),
        )
