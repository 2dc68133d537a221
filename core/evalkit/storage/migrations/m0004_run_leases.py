"""Migration 4: run leases — which process (host, pid, token) answers a run or one shard of it,
its heartbeat, and when each shard's slice was in.

Frozen: never edit. The table is built from a copy of the model class as this version declared it
(:func:`lease_table`), not from :mod:`evalkit.storage.models`.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

from .m0001_initial import tables

NAME = "run leases: who is answering a run or shard, with a heartbeat; which shards are in"


def lease_table(db: pw.Database, run_table: type[pw.Model]) -> type[pw.Model]:
    """The lease table as schema version 4 created it, bound to ``db``.

    One row per part of a run a process answers: ``*`` for the whole run (a run, or a resume) or
    ``I/N`` for a shard. The owner (host, pid, random token) refreshes ``heartbeat_at`` while it
    answers and clears itself when it stops; ``done_at`` is set when a shard's slice is in.
    """

    class RunLease(pw.Model):
        id = pw.AutoField()
        run = pw.ForeignKeyField(run_table, column_name="run_id", on_delete="CASCADE", field="id")
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
            database = db
            table_name = "evalkit_run_lease"
            indexes = ((("run", "part"), True),)

    return RunLease


def up(migrator: Any, db: pw.Database) -> None:
    """Create the lease table (kept when the database already holds it)."""
    db.create_tables([lease_table(db, tables(db).Run)], safe=True)
