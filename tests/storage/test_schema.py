"""The schema is declared once, by the models: a fresh store gets its tables from them in one step,
and they are exactly what the numbered migrations build from an empty database, on each engine."""

from __future__ import annotations

import ast
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from evalkit.storage import migrations, open_repository, schema_status
from evalkit.storage import schema as schema_module
from evalkit.storage.migrations.m0001_initial import tables as v1_tables
from evalkit.storage.sql import connect

from tests.storage.conftest import fresh_postgres_database

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


def _postgres_schema_of(url: str) -> tuple[list[tuple[object, ...]], ...]:
    """Everything PostgreSQL knows of a database's tables: each table's columns in order (type,
    length, nullability, default), its indexes and constraints as PostgreSQL prints them, and the
    migration log. Positions are not compared: a dropped column keeps its number."""
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default "
                "FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
            )
            columns = cursor.fetchall()
            cursor.execute("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1, 2")
            indexes = cursor.fetchall()
            cursor.execute(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2"
            )
            constraints = cursor.fetchall()
            cursor.execute("SELECT version, name FROM evalkit_schema_migration ORDER BY version")
            log = cursor.fetchall()
    finally:
        connection.close()
    return columns, indexes, constraints, log


def _migrate_from_zero(url: str) -> None:
    db = connect(url)
    db.connect()
    try:
        assert schema_module.upgrade(db, target=schema_module.SCHEMA_VERSION) == VERSIONS  # one migration at a time
    finally:
        db.close()


@drops_columns
def test_a_fresh_store_is_the_migrated_one_table_for_table(tmp_path: Path) -> None:
    migrated, fresh = tmp_path / "migrated.db", tmp_path / "fresh.db"
    _migrate_from_zero(f"sqlite:///{migrated}")
    open_repository(f"sqlite:///{fresh}").close()

    assert _schema_of(fresh) == _schema_of(migrated)
    assert schema_status(f"sqlite:///{fresh}").up_to_date


@pytest.mark.postgres
def test_a_fresh_postgresql_store_is_the_migrated_one_table_for_table() -> None:
    with fresh_postgres_database() as migrated, fresh_postgres_database() as fresh:
        _migrate_from_zero(migrated)
        open_repository(fresh).close()

        assert _postgres_schema_of(fresh) == _postgres_schema_of(migrated)
        assert schema_status(fresh).up_to_date


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
    tables = v1_tables(db)
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


def test_the_migrations_are_numbered_modules_applied_in_order() -> None:
    modules = sorted(path.stem for path in Path(migrations.__file__).parent.glob("m[0-9][0-9][0-9][0-9]_*.py"))
    assert [int(name[1:5]) for name in modules] == VERSIONS == list(range(1, len(VERSIONS) + 1))
    assert schema_module.SCHEMA_VERSION == VERSIONS[-1]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_shipped_migration_stands_alone(version: int) -> None:
    """A migration declares what it changes itself: it imports neither the models (they change
    with every release) nor ``playhouse`` (its migrator is handed to it when it runs)."""
    [path] = Path(migrations.__file__).parent.glob(f"m{version:04d}_*.py")
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert not {name for name in imported if name.endswith("models") or name.startswith("playhouse")}
