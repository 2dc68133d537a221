"""The tables, their indexes and the numbered migrations that create and evolve them."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import peewee as pw

__all__ = ["SCHEMA_VERSION", "MIGRATIONS", "bind_models", "current_version", "upgrade", "redact_url"]


def redact_url(url: str) -> str:
    """A database URL with its password replaced, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def bind_models(db: pw.Database) -> SimpleNamespace:
    """Fresh model classes bound to ``db`` (so several databases can be open in one process)."""

    class Base(pw.Model):
        class Meta:
            database = db

    class SchemaMigration(Base):
        version = pw.IntegerField(primary_key=True)
        name = pw.CharField(max_length=100)
        applied_at = pw.FloatField()

        class Meta:
            table_name = "evalkit_schema_migration"

    class Run(Base):
        id = pw.CharField(primary_key=True, max_length=64)
        kind = pw.CharField(max_length=16, default="prompts")
        set_identifier = pw.CharField(max_length=190)
        set_fingerprint = pw.CharField(max_length=80, default="")
        grader = pw.CharField(max_length=190)
        status = pw.CharField(max_length=16)
        provider_instance = pw.CharField(max_length=100, null=True)
        adapter = pw.CharField(max_length=100, null=True)
        model_alias = pw.CharField(max_length=150, null=True)
        reported_model = pw.CharField(max_length=150, null=True)
        verified = pw.BooleanField(default=False)
        identity_note = pw.TextField(null=True)
        generator_provenance = pw.TextField(null=True)
        retriever = pw.CharField(max_length=190, null=True)
        deployment = pw.CharField(max_length=100, null=True)
        benchmark_fingerprint = pw.CharField(max_length=80, default="")
        variant_fingerprint = pw.CharField(max_length=80, default="")
        provenance = pw.TextField(null=True)
        metrics = pw.TextField(null=True)
        case_count = pw.IntegerField(default=0)
        answered_count = pw.IntegerField(default=0)
        passed_count = pw.IntegerField(default=0)
        errored_count = pw.IntegerField(default=0)
        pass_rate = pw.FloatField(default=0.0)
        mean_score = pw.FloatField(default=0.0)
        started_at = pw.FloatField()
        finished_at = pw.FloatField(null=True)
        label = pw.CharField(max_length=190, null=True)
        privacy = pw.CharField(max_length=16, default="metadata")

        class Meta:
            table_name = "evalkit_run"
            indexes = (
                (
                    (
                        "set_identifier",
                        "provider_instance",
                        "model_alias",
                        "reported_model",
                        "grader",
                        "status",
                        "finished_at",
                    ),
                    False,
                ),
                (("set_identifier", "retriever", "kind", "finished_at"), False),
                (("model_alias", "grader", "verified"), False),
                (("finished_at",), False),
            )

    class Case(Base):
        id = pw.AutoField()
        run = pw.ForeignKeyField(Run, column_name="run_id", on_delete="CASCADE", field="id")
        case_id = pw.CharField(max_length=190)
        passed = pw.BooleanField()
        score = pw.FloatField()
        errored = pw.BooleanField(default=False)
        error = pw.TextField(null=True)
        checks = pw.TextField(null=True)
        latency_s = pw.FloatField(default=0.0)
        provider_instance = pw.CharField(max_length=100, null=True)
        model_alias = pw.CharField(max_length=150, null=True)
        reported_model = pw.CharField(max_length=150, null=True)
        adapter = pw.CharField(max_length=100, null=True)
        yardstick = pw.CharField(max_length=190, null=True)
        answer_text = pw.TextField(null=True)
        detail = pw.TextField(null=True)
        usage = pw.TextField(null=True)
        finished_at = pw.FloatField()

        class Meta:
            table_name = "evalkit_case"
            indexes = ((("run", "case_id"), True),)

    return SimpleNamespace(Base=Base, SchemaMigration=SchemaMigration, Run=Run, Case=Case)


def _create_v1(db: pw.Database, models: SimpleNamespace) -> None:
    db.create_tables([models.Run, models.Case], safe=True)


#: Numbered migrations, applied in order by ``evalkit db upgrade``; never edit a shipped one.
MIGRATIONS: list[tuple[int, str, Callable[[pw.Database, SimpleNamespace], None]]] = [
    (1, "create run and case tables", _create_v1),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def current_version(db: pw.Database, models: SimpleNamespace) -> int:
    """The highest applied migration (0 for an empty database)."""
    if not db.table_exists(models.SchemaMigration._meta.table_name):
        return 0
    value = models.SchemaMigration.select(pw.fn.MAX(models.SchemaMigration.version)).scalar()
    return int(value or 0)


def upgrade(db: pw.Database, models: SimpleNamespace, target: int | None = None) -> list[int]:
    """Apply the migrations above the current version, each in its own transaction."""
    applied: list[int] = []
    db.create_tables([models.SchemaMigration], safe=True)
    for version, name, step in MIGRATIONS:
        if target is not None and version > target:
            break
        with db.atomic():
            if models.SchemaMigration.get_or_none(models.SchemaMigration.version == version) is not None:
                continue
            step(db, models)
            models.SchemaMigration.insert(version=version, name=name, applied_at=time.time()).execute()
        applied.append(version)
    return applied


def describe(models: Any) -> str:
    """For debugging: the table names."""
    return ", ".join(m._meta.table_name for m in (models.Run, models.Case))
