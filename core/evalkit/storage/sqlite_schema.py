"""A fresh SQLite store's tables in one step: what the migrations leave, as SQLite keeps it.

Replaying every migration on an empty file (each ``ALTER TABLE`` re-reading the schema, and
``playhouse.migrate`` imported for it) was most of what opening a new store cost a first run, as in
a fresh CI workspace. :data:`STATEMENTS` is the text ``sqlite_master`` holds after migrations 1 to
:data:`VERSION` on an empty file, in the order they created it (the migration log's own table
aside: :func:`evalkit.storage.schema.upgrade` creates that first either way).

It is generated, not written by hand: ``python -m evalkit.storage.sqlite_schema`` prints this
module's constants from the migrations, and tests/storage/test_sqlite_schema.py fails, printing
them, whenever a migration makes them differ. Until they are regenerated, ``upgrade`` takes the
migrations (the one-step path is used only when :data:`VERSION` is the latest schema version).
"""

from __future__ import annotations

#: The schema version :data:`STATEMENTS` builds.
VERSION = 6

#: ``sqlite_master.sql`` after the migrations, in creation order (generated; see the module docstring).
STATEMENTS = (
    'CREATE TABLE "evalkit_run" ("id" VARCHAR(64) NOT NULL PRIMARY KEY, "kind" VARCHAR(16) NOT NULL, "set_identifier" VARCHAR(190) NOT NULL, "set_fingerprint" VARCHAR(80) NOT NULL, "grader" VARCHAR(190) NOT NULL, "status" VARCHAR(16) NOT NULL, "provider_instance" VARCHAR(100), "adapter" VARCHAR(100), "model_alias" VARCHAR(150), "reported_model" VARCHAR(150), "verified" INTEGER NOT NULL, "identity_note" TEXT, "generator_provenance" TEXT, "retriever" VARCHAR(190), "deployment" VARCHAR(100), "benchmark_fingerprint" VARCHAR(80) NOT NULL, "variant_fingerprint" VARCHAR(80) NOT NULL, "provenance" TEXT, "metrics" TEXT, "case_count" INTEGER NOT NULL, "answered_count" INTEGER NOT NULL, "passed_count" INTEGER NOT NULL, "errored_count" INTEGER NOT NULL, "pass_rate" REAL NOT NULL, "mean_score" REAL NOT NULL, "started_at" REAL NOT NULL, "finished_at" REAL, "label" VARCHAR(190), "privacy" VARCHAR(16) NOT NULL, "verdict" VARCHAR(16), "baseline_id" VARCHAR(64), "verdict_note" TEXT, "accepted_at" REAL, "acceptance" VARCHAR(16), "accepted_by" TEXT, "acceptance_reason" TEXT, "fingerprints_kept" INTEGER NOT NULL DEFAULT 0)',
    'CREATE INDEX "run_set_identifier_provider_instance_model_alias_reporte_d8abc70" ON "evalkit_run" ("set_identifier", "provider_instance", "model_alias", "reported_model", "grader", "status", "finished_at")',
    'CREATE INDEX "run_set_identifier_retriever_kind_finished_at" ON "evalkit_run" ("set_identifier", "retriever", "kind", "finished_at")',
    'CREATE INDEX "run_model_alias_grader_verified" ON "evalkit_run" ("model_alias", "grader", "verified")',
    'CREATE INDEX "run_finished_at" ON "evalkit_run" ("finished_at")',
    'CREATE TABLE "evalkit_case" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" VARCHAR(64) NOT NULL, "case_id" VARCHAR(190) NOT NULL, "passed" INTEGER NOT NULL, "score" REAL NOT NULL, "errored" INTEGER NOT NULL, "error" TEXT, "checks" TEXT, "latency_s" REAL NOT NULL, "provider_instance" VARCHAR(100), "model_alias" VARCHAR(150), "reported_model" VARCHAR(150), "adapter" VARCHAR(100), "yardstick" VARCHAR(190), "answer_text" TEXT, "detail" TEXT, "usage" TEXT, "finished_at" REAL NOT NULL, "measures" TEXT, "fingerprint" TEXT, FOREIGN KEY ("run_id") REFERENCES "evalkit_run" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "case_run_id" ON "evalkit_case" ("run_id")',
    'CREATE UNIQUE INDEX "case_run_id_case_id" ON "evalkit_case" ("run_id", "case_id")',
    'CREATE INDEX "evalkit_run_set_started" ON "evalkit_run" (set_identifier, started_at)',
    'CREATE INDEX "evalkit_run_started" ON "evalkit_run" (started_at)',
    'CREATE INDEX "evalkit_run_set_accepted" ON "evalkit_run" (set_identifier, accepted_at)',
    'CREATE TABLE "evalkit_run_lease" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" VARCHAR(64) NOT NULL, "part" TEXT NOT NULL, "shard_index" INTEGER, "shard_count" INTEGER, "owner_host" TEXT, "owner_pid" INTEGER, "owner_token" TEXT, "acquired_at" REAL NOT NULL, "heartbeat_at" REAL, "done_at" REAL, FOREIGN KEY ("run_id") REFERENCES "evalkit_run" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "runlease_run_id" ON "evalkit_run_lease" ("run_id")',
    'CREATE UNIQUE INDEX "runlease_run_id_part" ON "evalkit_run_lease" ("run_id", "part")',
)

#: The tables :data:`STATEMENTS` creates (read from them): a file holding any is left to the migrations.
TABLES = tuple(statement.split('"')[1] for statement in STATEMENTS if statement.startswith("CREATE TABLE "))


def migrated_statements() -> tuple[int, tuple[str, ...]]:
    """The latest schema version and ``sqlite_master.sql`` after every migration, one by one, on
    an empty in-memory database (the migration log's table left out) — what :data:`VERSION` and
    :data:`STATEMENTS` must be."""
    from . import schema
    from .engine import connect

    db = connect("sqlite:///:memory:")
    db.connect()
    try:
        schema.upgrade(db, target=schema.SCHEMA_VERSION)  # a target: the migrations, never this module
        rows = db.execute_sql(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name != 'evalkit_schema_migration' ORDER BY rowid"
        ).fetchall()
    finally:
        db.close()
    return schema.SCHEMA_VERSION, tuple(sql for (sql,) in rows)


def module_constants() -> str:
    """:data:`VERSION` and :data:`STATEMENTS` as this module spells them, from the migrations."""
    version, statements = migrated_statements()
    lines = [f"VERSION = {version}", "", "STATEMENTS = ("]
    for statement in statements:
        lines.append(f"    {statement!r},")
    lines.append(")")
    return "\n".join(lines)


if __name__ == "__main__":
    print(module_constants())
