"""A fresh SQLite store gets its tables in one step, and they are exactly what the migrations build."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from evalkit.storage import open_repository, schema_status, sqlite_schema
from evalkit.storage import schema as schema_module
from evalkit.storage.sql import connect

VERSIONS = [version for version, _, _ in schema_module.MIGRATIONS]
#: Before 3.35 SQLite has no DROP COLUMN: migration 6 leaves its column, emptied, so the migrated
#: tables differ from the one-step ones by design (no model declares that column).
drops_columns = pytest.mark.skipif(
    sqlite3.sqlite_version_info < (3, 35, 0), reason="this SQLite cannot drop a column (migration 6 keeps it)"
)


def _schema_of(path: Path) -> tuple[list[tuple[str, ...]], list[tuple[str, tuple[tuple[object, ...], ...]]], list[tuple[int, str]]]:
    """Everything SQLite knows of a file's tables: ``sqlite_master`` (autoindexes too), every
    table's columns, and the migration log (versions and names)."""
    connection = sqlite3.connect(path)
    try:
        master = sorted(connection.execute("SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master"))
        columns = [
            (table, tuple(connection.execute(f'PRAGMA table_info("{table}")')))
            for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        log = list(connection.execute("SELECT version, name FROM evalkit_schema_migration ORDER BY version"))
    finally:
        connection.close()
    return master, columns, log


@drops_columns
def test_the_one_step_schema_is_what_the_migrations_build() -> None:
    assert sqlite_schema.migrated_statements() == (sqlite_schema.VERSION, sqlite_schema.STATEMENTS), (
        "a migration changed the SQLite schema: replace VERSION and STATEMENTS in "
        "core/evalkit/storage/sqlite_schema.py with what `python -m evalkit.storage.sqlite_schema` prints:\n"
        + sqlite_schema.module_constants()
    )


@drops_columns
def test_a_fresh_store_is_the_migrated_one_table_for_table(tmp_path: Path) -> None:
    migrated, fresh = tmp_path / "migrated.db", tmp_path / "fresh.db"
    db = connect(f"sqlite:///{migrated}")
    db.connect()
    assert schema_module.upgrade(db, target=schema_module.SCHEMA_VERSION) == VERSIONS  # one migration at a time
    db.close()
    open_repository(f"sqlite:///{fresh}").close()

    assert _schema_of(fresh) == _schema_of(migrated)
    assert schema_status(f"sqlite:///{fresh}").up_to_date


def test_opening_a_fresh_store_does_not_replay_the_migrations(tmp_path: Path) -> None:
    """The one-step path is the one taken: the migrations' ``playhouse.migrate`` is never imported."""
    script = textwrap.dedent(
        f"""
        import sys
        from evalkit.storage import open_repository
        open_repository({f"sqlite:///{tmp_path / 'fresh.db'}"!r}).close()
        print("playhouse.migrate" in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_file_already_holding_store_tables_goes_through_the_migrations(tmp_path: Path) -> None:
    """Tables without a migration log (written by hand, or half by another tool) are migrated and
    their rows kept; creating them again in one step would fail on "table already exists"."""
    path = tmp_path / "unlogged.db"
    db = connect(f"sqlite:///{path}")
    db.connect()
    tables = schema_module.v1_tables(db)
    db.create_tables([tables.Run, tables.Case])
    db.execute_sql(
        "INSERT INTO evalkit_run (id, kind, set_identifier, set_fingerprint, grader, status, verified, "
        "benchmark_fingerprint, variant_fingerprint, case_count, answered_count, passed_count, errored_count, "
        "pass_rate, mean_score, started_at, privacy) VALUES "
        "('r1', 'prompts', 's', 'f', 'g', 'complete', 1, 'b', 'v', 0, 0, 0, 0, 1.0, 1.0, 1.0, 'full')"
    )
    db.close()

    open_repository(f"sqlite:///{path}").close()

    assert schema_status(f"sqlite:///{path}").up_to_date
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT id FROM evalkit_run").fetchall() == [("r1",)]
    connection.close()


def test_a_stale_one_step_schema_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Until it is regenerated for a new migration, the migrations build a fresh store."""
    monkeypatch.setattr(sqlite_schema, "VERSION", schema_module.SCHEMA_VERSION - 1)
    monkeypatch.setattr(sqlite_schema, "STATEMENTS", ("CREATE TABLE evalkit_run (stale INTEGER)",))
    fresh = tmp_path / "fresh.db"

    open_repository(f"sqlite:///{fresh}").close()

    master, _, log = _schema_of(fresh)
    assert [version for version, _ in log] == VERSIONS
    assert "stale" not in " ".join(sql for *_, sql in master)
