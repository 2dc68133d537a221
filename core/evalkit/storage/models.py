"""The results store's tables as this evalkit uses them: the one declaration of the schema.

An empty database gets its tables from these models (``create_tables``) with every migration logged
as applied; a store written by an earlier evalkit reaches the same tables through the numbered
migrations in :mod:`evalkit.storage.migrations`, which never import this module (each declares what
it changes as it was then). tests/storage/test_schema.py builds a store both ways on each engine and
checks they are the same, table for table.

The two engines differ where migration 2 made them differ: PostgreSQL enforces ``varchar(n)`` (a
long reported model name failed a run after it was paid for), so names and labels are unbounded
``text`` there, while SQLite keeps the ``VARCHAR(n)`` the first release declared (SQLite does not
enforce ``n``). Times and scores are 8-byte floats on both.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import peewee as pw

from .stored_checks import stored_time, time_held
from .textcodec import decode_text, encode_text

__all__ = ["MIGRATION_LOG", "bind_models", "models_for"]

#: The table that logs the applied migrations (version, name, when).
MIGRATION_LOG = "evalkit_schema_migration"


#: The model classes made for each open database (opening a store asks for them more than once).
_BOUND: weakref.WeakKeyDictionary[pw.Database, SimpleNamespace] = weakref.WeakKeyDictionary()


def models_for(db: pw.Database) -> SimpleNamespace:
    """:func:`bind_models` for ``db``, made once per database."""
    models = _BOUND.get(db)
    if models is None:
        models = _BOUND[db] = bind_models(db)
    return models


def _short_text_field(db: pw.Database) -> Callable[..., pw.Field]:
    """``short_text(n, **options)``: the field of a name or label of at most ``n`` characters on
    ``db``'s engine (``VARCHAR(n)`` on SQLite, which does not enforce ``n``; ``text`` on PostgreSQL)."""
    if isinstance(db, pw.PostgresqlDatabase):
        return lambda n, **options: pw.TextField(**options)
    return lambda n, **options: pw.CharField(max_length=n, **options)


def bind_models(db: pw.Database) -> SimpleNamespace:
    """The model classes of the store (``SchemaMigration``, ``Run``, ``Case``, ``RunLease``,
    ``JudgeCalibration``, ``AnswerCache``), made
    for and bound to ``db``: several stores can be open in one process, each with its own."""
    short_text = _short_text_field(db)
    false_default = pw.SQL("DEFAULT 0" if isinstance(db, pw.SqliteDatabase) else "DEFAULT false")

    class Base(pw.Model):
        class Meta:
            database = db

    class SchemaMigration(Base):
        """One applied migration."""

        version = pw.IntegerField(primary_key=True)
        name = pw.CharField(max_length=100)
        applied_at = pw.DoubleField()

        class Meta:
            table_name = MIGRATION_LOG

    class Run(Base):
        """One run: its set, serving identity, yardstick, status, aggregates, verdict and acceptance."""

        id = pw.CharField(primary_key=True, max_length=64)
        kind = pw.CharField(max_length=16, default="prompts")
        set_identifier = short_text(190)
        set_fingerprint = short_text(80, default="")
        grader = short_text(190)
        status = pw.CharField(max_length=16)
        provider_instance = short_text(100, null=True)
        adapter = short_text(100, null=True)
        model_alias = short_text(150, null=True)
        reported_model = short_text(150, null=True)
        verified = pw.BooleanField(default=False)
        identity_note = pw.TextField(null=True)
        generator_provenance = pw.TextField(null=True)
        retriever = short_text(190, null=True)
        deployment = short_text(100, null=True)
        benchmark_fingerprint = short_text(80, default="")
        variant_fingerprint = short_text(80, default="")
        provenance = pw.TextField(null=True)
        metrics = pw.TextField(null=True)
        case_count = pw.IntegerField(default=0)
        answered_count = pw.IntegerField(default=0)
        passed_count = pw.IntegerField(default=0)
        errored_count = pw.IntegerField(default=0)
        pass_rate = pw.DoubleField(default=0.0)
        mean_score = pw.DoubleField(default=0.0)
        started_at = pw.DoubleField()
        finished_at = pw.DoubleField(null=True)
        label = short_text(190, null=True)
        privacy = pw.CharField(max_length=16, default="metadata")
        #: The verdict the run got when it was stored (none for runs stored before schema 2).
        verdict = pw.CharField(max_length=16, null=True)
        baseline_id = pw.CharField(max_length=64, null=True)
        verdict_note = pw.TextField(null=True)
        #: Set when the run is an accepted baseline: how (evalkit.baselines.ACCEPTANCE_KINDS), by whom, why.
        accepted_at = pw.DoubleField(null=True)
        acceptance = pw.CharField(max_length=16, null=True)
        accepted_by = pw.TextField(null=True)
        acceptance_reason = pw.TextField(null=True)
        #: Whether the run's cases carry the fingerprint of the set version it answered.
        fingerprints_kept = pw.BooleanField(default=False, constraints=[false_default])
        #: The prices the run was costed at, and what it spent (JSON; see evalkit.costs).
        pricing = pw.TextField(null=True)
        spend = pw.TextField(null=True)
        #: ``cache``, ``regrade`` or ``answers-from`` when answers were reused; the run they came from.
        answers_reused = pw.CharField(max_length=16, null=True)
        source_run_id = pw.CharField(max_length=64, null=True)
        #: The digest of the base system prompt of the serving identity (null for none, and for runs stored before schema 9).
        base_prompt = pw.CharField(max_length=80, null=True)

        class Meta:
            table_name = "evalkit_run"
            indexes = (
                # the baseline scope of a prompt run, newest first
                (("set_identifier", "provider_instance", "model_alias", "reported_model", "grader", "status", "finished_at"), False),
                (("set_identifier", "retriever", "kind", "finished_at"), False),
                (("model_alias", "grader", "verified"), False),
                (("finished_at",), False),
            )

    Run.add_index(Run.set_identifier, Run.started_at, name="evalkit_run_set_started")  # history of a set
    Run.add_index(Run.started_at, name="evalkit_run_started")  # retention
    Run.add_index(Run.set_identifier, Run.accepted_at, name="evalkit_run_set_accepted")  # accepted runs of a set

    class Case(Base):
        """One case of a run: its checks, score, error, latency and (privacy allowing) answer."""

        id = pw.AutoField()
        run = pw.ForeignKeyField(Run, column_name="run_id", on_delete="CASCADE", field="id")
        case_id = short_text(190)
        passed = pw.BooleanField()
        score = pw.DoubleField()
        errored = pw.BooleanField(default=False)
        error = pw.TextField(null=True)
        checks = pw.TextField(null=True)
        latency_s = pw.DoubleField(default=0.0)
        provider_instance = short_text(100, null=True)
        model_alias = short_text(150, null=True)
        reported_model = short_text(150, null=True)
        adapter = short_text(100, null=True)
        yardstick = short_text(190, null=True)
        answer_text = pw.TextField(null=True)
        detail = pw.TextField(null=True)
        usage = pw.TextField(null=True)
        finished_at = pw.DoubleField()
        #: A retrieval question's rank measures (JSON numbers), kept at every privacy level.
        measures = pw.TextField(null=True)
        #: The case's fingerprint (evalkit.set_versions); none for a case stored without one.
        fingerprint = pw.TextField(null=True)
        #: The token counts of each judge call (JSON list of lists), and where a reused answer came from.
        judge_usage = pw.TextField(null=True)
        answer_source = pw.TextField(null=True)
        #: The digest of what the model was asked (evalkit.set_versions.prompt_digest).
        prompt_digest = pw.TextField(null=True)
        #: A conversation's turns after its fixed history (JSON), as the privacy level keeps them.
        transcript = pw.TextField(null=True)
        #: The generator requests that answered the case (null: stored before they were counted).
        requests = pw.IntegerField(null=True)
        #: The generator requests the case sent, a failed one included (null: stored before they were counted).
        requests_sent = pw.IntegerField(null=True)

        class Meta:
            table_name = "evalkit_case"
            indexes = ((("run", "case_id"), True),)

    class RunLease(Base):
        """Which process answers a run (part ``*``) or one shard of it (``I/N``), with its heartbeat;
        ``done_at`` is set when the part is in."""

        id = pw.AutoField()
        run = pw.ForeignKeyField(Run, column_name="run_id", on_delete="CASCADE", field="id")
        part = pw.TextField()
        shard_index = pw.IntegerField(null=True)
        shard_count = pw.IntegerField(null=True)
        owner_host = pw.TextField(null=True)
        owner_pid = pw.IntegerField(null=True)
        owner_token = pw.TextField(null=True)
        acquired_at = pw.DoubleField()
        heartbeat_at = pw.DoubleField(null=True)
        done_at = pw.DoubleField(null=True)

        class Meta:
            table_name = "evalkit_run_lease"
            indexes = ((("run", "part"), True),)

    class JudgeCalibration(Base):
        """A judge measured against people's labels: its identity (yardstick and temperature), the
        calibration set, the figures a gate reads and the whole report (JSON)."""

        id = pw.AutoField()
        yardstick = pw.TextField()
        temperature = pw.DoubleField()
        grader = pw.TextField()
        judge_instance = pw.TextField()
        judge_model = pw.TextField()
        prompt_version = pw.IntegerField()
        set_identifier = pw.TextField()
        repeats = pw.IntegerField()
        n = pw.IntegerField()
        agreement = pw.DoubleField()
        kappa = pw.DoubleField(null=True)
        kappa_low = pw.DoubleField(null=True)
        kappa_high = pw.DoubleField(null=True)
        self_agreement = pw.DoubleField(null=True)
        report = pw.TextField()
        calibrated_at = pw.DoubleField()

        class Meta:
            table_name = "evalkit_judge_calibration"
            indexes = ((("yardstick", "temperature", "calibrated_at"), False),)

    class AnswerCache(Base):
        """One cached answer: the digest of the canonical request it answered (key), who answered
        it (instance, alias, reported model), the answer (JSON) and when it was stored and last used."""

        key = pw.CharField(primary_key=True, max_length=64)
        provider_instance = pw.TextField()
        model_alias = pw.TextField(null=True)
        reported_model = pw.TextField(null=True)
        answer = pw.TextField()
        created_at = pw.DoubleField()
        used_at = pw.DoubleField(null=True)

        class Meta:
            table_name = "evalkit_answer_cache"
            indexes = ((("created_at",), False),)

    for model in (Run, Case, RunLease, JudgeCalibration, AnswerCache):
        _store_text_losslessly(model)
    for model in (SchemaMigration, Run, Case, RunLease, JudgeCalibration, AnswerCache):
        for field in model._meta.sorted_fields:
            if isinstance(field, pw.IntegerField):
                field.python_value = _read_int
    SchemaMigration.name.python_value = _read_text  # the log's one text column: read as any stored text
    # When a run was accepted is read by queries that make no Run (acceptances, baseline show): it is
    # checked as it is read, as run_from_row checks a run's own times.
    Run.accepted_at.python_value = _read_time("a run", "accepted_at")
    return SimpleNamespace(
        SchemaMigration=SchemaMigration, Run=Run, Case=Case, RunLease=RunLease, JudgeCalibration=JudgeCalibration, AnswerCache=AnswerCache
    )


def _read_text(value: Any) -> str | None:
    """A text column's value as evalkit reads it. What another program put there is read as text
    rather than failing every command that reads the row: a BLOB as UTF-8 (a byte that is none as
    U+FFFD, shown escaped like any stored text), a number as its decimal text."""
    if value is None:
        return None
    if type(value) is str:
        return decode_text(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _read_int(value: Any) -> Any:
    """An integer column's value: an int as it is, a float holding a whole number as that int, and
    anything else another program left there (text, an infinity) as it is, for the row's reader to
    name: peewee's ``int()`` of an infinity raised OverflowError, an internal error."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def _read_time(owner: str, column: str) -> Callable[[Any], float | None]:
    """A time column's reader: the stored time, ``None`` for none, a :class:`~evalkit.errors.StorageError`
    naming ``owner`` and ``column`` for text or a number no calendar holds (``accepted_at = 'x'``
    ended ``baseline show`` in an internal error, ``9e999`` ``baseline export``)."""

    def read(value: Any) -> float | None:
        return value if value is None or time_held(value) else stored_time(value, owner, column)

    return read


def _store_text_losslessly(model: type[pw.Model]) -> None:
    """Route every text column of ``model`` but its key through :mod:`.textcodec` (NUL, lone surrogates)."""
    for field in model._meta.sorted_fields:
        if isinstance(field, pw._StringField) and not field.primary_key:
            adapt: Any = field.adapt
            field.db_value = lambda value, adapt=adapt: None if value is None else encode_text(adapt(value))
            field.python_value = _read_text
