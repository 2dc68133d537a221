"""Migration 1, the first release: the run and case tables with their indexes.

Frozen: never edit. The tables are built from a copy of the first release's model classes
(:func:`tables`), not from :mod:`evalkit.storage.models`.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import peewee as pw

NAME = "create run and case tables"


def tables(db: pw.Database) -> SimpleNamespace:
    """The tables as schema version 1 created them (and its migration log), bound to ``db``."""

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


def up(migrator: Any, db: pw.Database) -> None:
    """Create the run and case tables (kept when a database already holds them)."""
    created = tables(db)
    db.create_tables([created.Run, created.Case], safe=True)
