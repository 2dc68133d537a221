"""Runs and their cases in the SQL repository: beginning a run, committing finished cases (the
hot path: one prepared statement per batch), finishing with aggregates counted in SQL, and the
reads a run's end and a resume need — a run, its cases a page at a time, its cases paired with a
baseline's, its answered ids, the newest unfinished run of a scope."""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import peewee as pw

from ...answers import ServingIdentity
from ...costs import CaseUsage, run_spend
from ...errors import StorageError
from ...grading import AGREEMENT_CHECK
from ...runs import CaseResult, Run, RunStatus
from ..textcodec import decode_text, encode_text
from ..values import PASSES, CasePair, CaseTally
from .rows import (
    CASE_COLUMNS,
    RECORDED_COLUMNS,
    case_from_columns,
    case_mark,
    case_values,
    dump_json,
    run_from_row,
    serving_identity,
    stored_mapping,
)
from .store import SqlStore, guarded

__all__ = ["RunsAndCases"]


class RunsAndCases(SqlStore):
    """The base protocol (:class:`~evalkit.storage.ResultRepository`), ``StreamedCases``,
    ``StoredCaseForms``, ``ResumableRuns`` and ``RevisableProvenance`` over the run and case tables."""

    #: The rows :meth:`record_cases` wrote, collected while :meth:`record_cases_as_stored` asks for them.
    _written_rows: list[tuple[Any, ...]] | None = None

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
                pricing=dump_json(run.pricing),
                answers_reused=run.answers_reused,
                source_run_id=run.source_run_id,
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
        """Commit ``cases``; return the values written, a row per case (see :func:`.rows.case_values`)."""
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
                raise RuntimeError(
                    f"record_cases writes {sorted(RECORDED_COLUMNS)}, the case table has {sorted(stored)}"
                )
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
        spend: Any = None,
        answers_reused: str | None = None,
    ) -> Run:
        """Recompute aggregates from the stored cases and set the status, in one transaction.

        Concurrent finishers of one run (its shards) are serialised on the run row. A shard that
        asks for ``running`` after another shard already closed the run leaves its status, serving
        identity, metrics and provenance as that shard stored them (its own view of the cases was
        older), but not its figures: a shard a spending limit stopped closes the run
        ``incomplete`` while another shard still has a case in flight, and that case, stored
        after, is counted. A run left ``running`` (a shard in, others still to come) keeps no
        ``finished_at``: a running run has no finish time, whatever its shards' finishes said. The
        run is returned with its cases unless ``with_cases`` is false (its aggregates are then the
        stored ones).

        ``spend`` (any value: the caller's reckoning) asks for the run's spend to be kept; what is
        kept is summed here, in the same transaction, from every case stored by then at the
        prices stored with the run (:func:`evalkit.costs.run_spend`), not the caller's document:
        the caller read the cases before, and a shard finishing at the same moment may have stored
        one since — the last finisher's sum is every case's.
        """
        with self._atomic():
            locked = self.Run.select(self.Run.status, self.Run.pricing).where(self.Run.id == run_id)
            current = (locked if self.is_sqlite else locked.for_update()).first()
            if current is None:
                raise StorageError(f"run {run_id} is not in the store, so it cannot be finished")
            closed = (RunStatus.COMPLETE.value, RunStatus.INCOMPLETE.value)
            if status == RunStatus.RUNNING.value and current.status in closed:
                status = ""
            answered, passed, errored, score_sum = self._aggregates(run_id)
            figures: dict[Any, Any] = {
                self.Run.answered_count: answered,
                self.Run.passed_count: passed,
                self.Run.errored_count: errored,
                # over the scored cases, as Run.pass_rate and Run.mean_score: an errored case is counted apart
                self.Run.pass_rate: passed / (answered - errored) if answered > errored else 0.0,
                self.Run.mean_score: score_sum / (answered - errored) if answered > errored else 0.0,
            }
            if spend is not None:
                summed = run_spend(stored_mapping(current.pricing), self.case_usage(run_id))
                figures[self.Run.spend] = dump_json(summed.document())
            update: dict[Any, Any] = {
                self.Run.status: status,
                self.Run.finished_at: None if status == RunStatus.RUNNING.value else finished_at,
                **figures,
                self.Run.verified: identity is not None,
                self.Run.identity_note: identity_note,
                self.Run.reported_model: identity.reported_model if identity else None,
                self.Run.generator_provenance: dump_json(identity.as_mapping()) if identity else None,
                self.Run.base_prompt: identity.base_prompt or None if identity else None,
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
            if answers_reused is not None:
                update[self.Run.answers_reused] = answers_reused
            # a finisher whose view was older than the run's close still counts what it stored
            self.Run.update(update if status else figures).where(self.Run.id == run_id).execute()
        run = self.get_run(run_id, with_cases=with_cases)
        if run is None:
            raise StorageError(f"run {run_id} disappeared while it was being finished")
        return run

    @guarded
    def revise_provenance(self, run_id: str, change: Callable[[Any], Any]) -> None:
        """Write ``change(provenance)`` over the run's stored provenance, read with its row locked
        (SQLite ``BEGIN IMMEDIATE``, PostgreSQL ``FOR UPDATE``) in the same transaction, so two
        shards keeping their limit stops at once merge them (``None``: nothing is written)."""
        with self._atomic():
            locked = self.Run.select(self.Run.provenance).where(self.Run.id == run_id)
            current = (locked if self.is_sqlite else locked.for_update()).first()
            if current is None:
                raise StorageError(f"run {run_id} is not in the store, so its provenance cannot be changed")
            revised = change(stored_mapping(current.provenance))
            if revised is not None:
                self.Run.update({self.Run.provenance: dump_json(revised)}).where(self.Run.id == run_id).execute()

    def _aggregates(self, run_id: str) -> tuple[int, int, int, float]:
        """Answered, passed and errored counts (counted in SQL) and the exact sum of the scored
        (not errored) cases' scores (``math.fsum`` over the one score column, read without building
        a row object): the mean score is over the scored cases, as :attr:`evalkit.runs.Run.mean_score`."""
        C = self.Case
        passed_one = pw.Case(None, ((C.passed, 1),), 0)
        errored_one = pw.Case(None, ((C.errored, 1),), 0)
        query = C.select(pw.fn.COUNT(C.id), pw.fn.SUM(passed_one), pw.fn.SUM(errored_one)).where(C.run == run_id)
        answered, passed, errored = query.tuples().get()
        # The scores straight from the driver's cursor: peewee's per-row handling was a third of this method.
        scored = C.select(C.score).where((C.run == run_id) & (C.errored == False))  # noqa: E712 - a SQL expression
        scores = self.db.execute_sql(*scored.sql())
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

    @guarded
    def case_usage(self, run_id: str) -> Iterator[CaseUsage]:
        """Each stored case's generator usage, judge calls' usage, answer source, whether it
        errored, the requests that got a reply and the requests it sent (``None`` each: stored before
        they were counted), read raw a page at a time (what :func:`evalkit.costs` sums; see
        :class:`~evalkit.storage.RunSpending`)."""
        from .rows import stored_judge_usage, stored_requests, stored_usage

        C = self.Case

        def page(after: int) -> Any:
            return (
                C.select(C.id, C.usage, C.judge_usage, C.answer_source, C.errored, C.requests, C.requests_sent)
                .where((C.run == run_id) & (C.id > after))
                .order_by(C.id)
            )

        rows = list(self._guarded_rows(self._pages(page, lambda row: row[0], raw=True)))
        return iter([
            CaseUsage(stored_usage(decode_text(u) if u else None), stored_judge_usage(decode_text(j) if j else None), decode_text(s) if s else None, bool(e), stored_requests(r), stored_requests(n))
            for _, u, j, s, e, r, n in rows
        ])  # fmt: skip

    #: Rows read per page when a run's cases are streamed (bounded memory on every engine:
    #: psycopg2 would otherwise fetch a whole result into the client at once).
    PAGE_SIZE = 2000

    def _pages(
        self, make_query: Callable[[int], Any], position: Callable[[Any], int], *, raw: bool = False
    ) -> Iterator[Any]:
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
        errored, unstable and flaky ones (the ones a run's table lists)."""
        C = self.Case
        columns = [getattr(C, name) for name in CASE_COLUMNS]

        def page(after: int) -> Any:
            where = (C.run == run_id) & (C.id > after)
            if notable_only:
                # a repeated case (its measures count its passes) may be flaky: Python decides below
                # an advisory check is stored with the flags "ja" (rows.py): its case may have failed it
                where &= (
                    (C.passed == False)  # noqa: E712
                    | C.checks.contains(AGREEMENT_CHECK)
                    | C.measures.contains(f'"{PASSES}"')
                    | C.checks.contains('"ja"]')
                )
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
                C.select(
                    C.id,
                    C.case_id,
                    C.passed,
                    C.score,
                    C.checks,
                    C.fingerprint,
                    C.measures,
                    B.id,
                    B.passed,
                    B.score,
                    B.checks,
                    B.fingerprint,
                    B.measures,
                )  # fmt: skip
                .join(B, pw.JOIN.LEFT_OUTER, on=((B.run == baseline_id) & (B.case_id == C.case_id)))
                .where((C.run == run_id) & (C.id > after))
                .order_by(C.id)
                .tuples()
            )

        for row in self._guarded_rows(self._pages(current_page, lambda row: row[0])):
            (
                position,
                case_id,
                passed,
                score,
                checks,
                fingerprint,
                measures,
                b_position,
                b_passed,
                b_score,
                b_checks,
                b_fingerprint,
                b_measures,
            ) = row
            baseline = (
                None
                if b_position is None
                else case_mark(case_id, b_passed, b_score, b_checks, b_position, b_fingerprint, b_measures)
            )
            yield CasePair(
                case_id, case_mark(case_id, passed, score, checks, position, fingerprint, measures), baseline
            )
        current = self.Case.alias()
        missing = ~pw.fn.EXISTS(
            current.select(current.id).where((current.run == run_id) & (current.case_id == C.case_id))
        )

        def removed_page(after: int) -> Any:
            return (
                C.select(C.id, C.case_id, C.passed, C.score, C.checks, C.fingerprint, C.measures)
                .where((C.run == baseline_id) & (C.id > after) & missing)
                .order_by(C.id)
                .tuples()
            )

        for position, case_id, passed, score, checks, fingerprint, measures in self._guarded_rows(
            self._pages(removed_page, lambda row: row[0])
        ):
            yield CasePair(case_id, None, case_mark(case_id, passed, score, checks, position, fingerprint, measures))

    @guarded
    def mark_status(self, run_id: str, status: str) -> None:
        """Set the status of a run that is not complete (``interrupted`` stamps the time it
        stopped; ``running`` clears it, and the verdict recorded when the run last closed: the run
        reopened is answered again, so that verdict is no longer its own — it gets one when it
        closes again)."""
        reopened = status == RunStatus.RUNNING.value
        changes: dict[Any, Any] = {self.Run.status: status, self.Run.finished_at: None if reopened else time.time()}
        if reopened:
            changes.update({self.Run.verdict: None, self.Run.baseline_id: None, self.Run.verdict_note: None})

        def update() -> None:
            with self._atomic():
                self.Run.update(changes).where(
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
    def answered_case_ids(self, run_id: str) -> set[str]:
        """The ids of the run's stored cases that have an answer (what a resume skips)."""
        C = self.Case
        query = C.select(C.case_id).where((C.run == run_id) & (C.errored == False))  # noqa: E712
        return {case_id for (case_id,) in query.tuples()}

    @guarded
    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, with its cases unless ``with_cases`` is false."""
        run = self._run_by_id(run_id)
        if run is None:
            return None
        if with_cases:
            # Named tuples, not model instances: a 20,000-case read costs about 30% less CPU.
            C = self.Case
            cases = (
                C.select(*(getattr(C, name) for name in CASE_COLUMNS))
                .where(C.run == encode_text(run_id))
                .order_by(C.id)
                .tuples()
            )
            run = run.with_cases(case_from_columns(*values) for values in cases)
        return run

    def _newest_first(self, query: Any) -> Any:
        """``query`` over runs ordered newest first: by finish, then start time, then id."""
        return query.order_by(self.Run.finished_at.desc(), self.Run.started_at.desc(), self.Run.id.desc())

    @guarded
    def latest_unfinished_run(
        self,
        set_identifier: str,
        provider_instance: str | None,
        model_alias: str | None,
        grader: str,
        adapter: str | None = None,
    ) -> Run | None:
        """The newest run of the set for this instance, alias and grader that is not complete:
        interrupted, incomplete, or still marked running (a process killed outright leaves that).
        A re-grade run is passed over: it is re-graded again, never resumed; so, with ``adapter``, is
        an ad-hoc run (no instance) of another adapter (one that stored none is not)."""
        R = self.Run
        unfinished = [RunStatus.INTERRUPTED.value, RunStatus.RUNNING.value, RunStatus.INCOMPLETE.value]
        query = R.select().where(
            (R.set_identifier == set_identifier)
            & R.status.in_(unfinished)
            & ((R.grader == grader) | R.grader.startswith(f"{grader}:"))
            & (R.answers_reused.is_null() | (R.answers_reused != "regrade"))
        )
        for column, value in ((R.provider_instance, provider_instance), (R.model_alias, model_alias)):
            query = query.where(column.is_null() if value is None else column == value)
        ad_hoc = provider_instance is None and bool(adapter)
        if ad_hoc:
            query = query.where(R.adapter.is_null() | (R.adapter == "") | (R.adapter == adapter))
        for row in query.order_by(R.started_at.desc(), R.id.desc()).limit(50):
            if (
                row.set_identifier == set_identifier
                and row.provider_instance == provider_instance
                and row.model_alias == model_alias
                and (row.grader == grader or row.grader.startswith(f"{grader}:"))
                and not (ad_hoc and row.adapter and row.adapter != adapter)
            ):
                return run_from_row(row)
        return None
