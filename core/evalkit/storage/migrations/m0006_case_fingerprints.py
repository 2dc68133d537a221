"""Migration 6: each case keeps its own fingerprint, moved from the run's map, and each run says
whether it kept them.

Frozen: never edit.

Migration 3's run column ``case_fingerprints`` held one JSON map of the whole set (8 MiB at 100,000
cases, rewritten with every later update of the row). Each run's readable map is moved onto its
case rows — runs paged by id, a few maps in memory at a time, cases updated in batches; cases the
map lacks stay ``NULL`` and count as unchanged — and the run is marked ``fingerprints_kept``; a run
with no map (stored before version 3) or an unreadable one is not, as version 5 read it. The column
is then dropped (on SQLite older than 3.35, which has no ``DROP COLUMN``, it stays, emptied).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import peewee as pw

from ..textcodec import decode_text, encode_text

NAME = "each case keeps its fingerprint, moved from the run's map (dropped); runs say if they kept them"

#: Runs whose ids are read per query while fingerprints move, and the most map text (characters)
#: read into memory at once: a 100,000-case run's map is about 8 MiB.
RUN_PAGE = 500
TEXT_BUDGET = 32 * 1024 * 1024
#: Case rows updated per statement (batch) while fingerprints move.
CASE_BATCH = 2000
#: The run column whose entries move onto the case rows, then dropped.
DROPPED_RUN_COLUMN = "case_fingerprints"


def case_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the case table: the case's fingerprint (a prompt's or question's, see
    :mod:`evalkit.set_versions`); null for a case stored without one (it counts as unchanged)."""
    return [("fingerprint", pw.TextField(null=True))]


def run_columns(db: pw.Database) -> list[tuple[str, pw.Field]]:
    """Columns added to the run table: whether the run keeps its cases' fingerprints.

    ``fingerprints_kept`` is true for a run whose cases carry the fingerprint of the set version it
    answered, false for a run stored before fingerprints were kept (before schema 3, or with a map
    that could not be read): a comparison with such a run counts every case present in both runs
    as unchanged and says so. ``NOT NULL`` with a default, added in that one ``ADD COLUMN`` (a
    nullable column made ``NOT NULL`` afterwards would make SQLite rebuild the run table, which the
    case rows refer to).
    """
    false = pw.SQL("DEFAULT 0" if isinstance(db, pw.SqliteDatabase) else "DEFAULT false")
    return [("fingerprints_kept", pw.BooleanField(default=False, constraints=[false]))]


def fingerprint_map(text: str | None) -> dict[str, str] | None:
    """A run's stored ``case_fingerprints`` as migration 3 wrote them (JSON ``{case id: fingerprint}``,
    through :mod:`evalkit.storage.textcodec`), or ``None`` when absent or unreadable — as version 5
    read them: such a run counted as stored without fingerprints."""
    if not text:
        return None
    try:
        value = json.loads(decode_text(text))
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    return value


def move_run_fingerprints(db: pw.Database, run_id: str, prints: dict[str, str]) -> None:
    """Write one run's map onto its case rows (cases the map lacks keep ``NULL``), a batch per statement."""
    items = list(prints.items())
    cursor = db.cursor()
    for start in range(0, len(items), CASE_BATCH):
        batch = [(run_id, encode_text(case_id), encode_text(fingerprint)) for case_id, fingerprint in items[start : start + CASE_BATCH]]
        if isinstance(db, pw.PostgresqlDatabase):
            from psycopg2.extras import execute_values

            execute_values(
                cursor,
                "UPDATE evalkit_case AS c SET fingerprint = v.fingerprint FROM (VALUES %s) AS v(run_id, case_id, fingerprint) "
                "WHERE c.run_id = v.run_id AND c.case_id = v.case_id",
                batch,
                page_size=len(batch),
            )
        else:
            cursor.executemany(
                "UPDATE evalkit_case SET fingerprint = ? WHERE run_id = ? AND case_id = ?",
                [(fingerprint, run, case_id) for run, case_id, fingerprint in batch],
            )
    db.execute_sql(f"UPDATE evalkit_run SET fingerprints_kept = {db.param} WHERE id = {db.param}", (True, run_id))


def can_drop_column(db: pw.Database) -> bool:
    """True when the engine has ``ALTER TABLE … DROP COLUMN`` (PostgreSQL; SQLite from 3.35)."""
    if not isinstance(db, pw.SqliteDatabase):
        return True
    version = getattr(db, "server_version", None)
    return (version if isinstance(version, tuple) and version else sqlite3.sqlite_version_info) >= (3, 35, 0)


def move_fingerprints(db: pw.Database) -> None:
    """Each run's map onto its case rows: run ids a page at a time (keyset), the maps read a few at
    a time within a text budget, so a store of many large runs never sits in memory at once."""
    param = db.param
    after = ""
    while True:
        page = db.execute_sql(
            f"SELECT id, LENGTH({DROPPED_RUN_COLUMN}) FROM evalkit_run "
            f"WHERE {DROPPED_RUN_COLUMN} IS NOT NULL AND id > {param} ORDER BY id LIMIT {RUN_PAGE}",
            (after,),
        ).fetchall()
        if not page:
            return
        after = page[-1][0]
        chunks: list[list[str]] = [[]]
        budget = 0
        for run_id, length in page:
            if chunks[-1] and budget + (length or 0) > TEXT_BUDGET:
                chunks.append([])
                budget = 0
            chunks[-1].append(run_id)
            budget += length or 0
        for chunk in chunks:
            rows = db.execute_sql(
                f"SELECT id, {DROPPED_RUN_COLUMN} FROM evalkit_run WHERE id IN ({', '.join(param for _ in chunk)})", tuple(chunk)
            ).fetchall()
            for run_id, text in rows:
                prints = fingerprint_map(text)
                if prints is not None:
                    move_run_fingerprints(db, run_id, prints)
            del rows


def up(migrator: Any, db: pw.Database) -> None:
    """Add the columns (those missing), move the maps onto the cases, drop (or empty) the map column."""
    existing = {column.name for column in db.get_columns("evalkit_case")}
    migrator.migrate(*(migrator.add_column("evalkit_case", name, field) for name, field in case_columns() if name not in existing))
    existing = {column.name for column in db.get_columns("evalkit_run")}
    migrator.migrate(
        *(
            migrator.add_column("evalkit_run", name, field, allow_not_null=True)
            for name, field in run_columns(db)
            if name not in existing
        )
    )
    if DROPPED_RUN_COLUMN not in {column.name for column in db.get_columns("evalkit_run")}:
        return
    move_fingerprints(db)
    # One source of truth: the map goes (emptied where this SQLite cannot drop a column).
    if can_drop_column(db):
        migrator.migrate(migrator.drop_column("evalkit_run", DROPPED_RUN_COLUMN, cascade=False))
    else:
        db.execute_sql(f'UPDATE "evalkit_run" SET "{DROPPED_RUN_COLUMN}" = NULL WHERE "{DROPPED_RUN_COLUMN}" IS NOT NULL')
