"""Run leases in the SQL repository: which process answers a run or one shard of it.

A lease is taken in a transaction serialised on the run row (``SELECT … FOR UPDATE`` on PostgreSQL,
the write lock on SQLite), so two processes asking at once cannot both get an overlapping part. The
rules — which parts overlap, when a holder is live — are :mod:`evalkit.leases`'.

Every lease time (taken, heartbeat, done) is the store's clock, never the process's: shard hosts
whose clocks disagree compare heartbeats written by one clock (``now()`` on PostgreSQL; on SQLite,
whose store is a file on this machine, SQLite's own ``julianday('now')``). A lease row holding
something that is not a number where a time, a process id or a shard number belongs (a hand or
another program wrote it) is refused naming the row (exit 3), not read as a crash.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...errors import StorageError, StoreUnavailable
from ...shapes import short_repr
from ..values import (
    WHOLE_RUN,
    LeaseHolder,
    LeaseOwner,
    RunBusyError,
    RunLiveness,
    ShardMismatchError,
    ShardProgress,
    overlaps,
)
from .store import SqlStore, guarded

__all__ = ["Leases"]

#: The lease columns that hold numbers, and whether each holds a whole number.
_NUMBERS = (
    ("acquired_at", False), ("heartbeat_at", False), ("done_at", False),
    ("owner_pid", True), ("shard_index", True), ("shard_count", True),
)  # fmt: skip


def _checked(row: Any) -> Any:
    """``row`` when each of its number columns holds a number (or nothing); else
    :class:`StoreUnavailable` naming the row, the column and what it holds."""
    for column, whole in _NUMBERS:
        value = getattr(row, column)
        if value is None:
            continue
        fine = type(value) is int or (not whole and type(value) is float and math.isfinite(value))
        if not fine:
            raise StoreUnavailable(
                f"lease row {row.id} of run {short_repr(row.run_id)} (part {short_repr(row.part)}) in the store has "
                f"{column} {short_repr(value)}, not a {'whole number' if whole else 'finite number'}: it was written by "
                "something else than evalkit; delete that row (evalkit_run_lease) to let the run go on"
            )
    return row


class Leases(SqlStore):
    """``RunLeases`` over the lease table (``release_thread_connection`` is :class:`SqlStore`'s)."""

    @guarded
    def acquire_lease(self, run_id: str, part: str, owner: LeaseOwner, *, shard_count: int | None = None) -> None:
        """Take the lease on ``part`` of the run in one transaction serialised on the run row (taken
        again, the part is no longer in: its ``done_at`` is cleared); refused (:class:`RunBusyError`) while a live lease overlaps it, and
        (:class:`ShardMismatchError`) when a stored shard of the run gives another N."""
        L = self.Lease
        with self._atomic():
            now = self._store_now()
            locked = self.Run.select(self.Run.id).where(self.Run.id == run_id)
            if (locked if self.is_sqlite else locked.for_update()).first() is None:
                raise StorageError(f"run {run_id} is not in the store, so no lease can be taken on it")
            rows = [_checked(row) for row in L.select().where(L.run == run_id)]
            if shard_count is not None:
                counts = {r.shard_count for r in rows if r.shard_count is not None}
                if counts - {shard_count}:
                    raise ShardMismatchError(run_id, part, counts)
            for row in rows:
                holder = LeaseHolder(row.part, row.owner_host, row.owner_pid, row.heartbeat_at)
                if row.owner_token != owner.token and overlaps(part, row.part) and holder.is_live(now):
                    raise RunBusyError(run_id, part, holder, now)
            index = int(part.split("/", 1)[0]) if part != WHOLE_RUN else None
            # A part taken again (a shard re-run, a run resumed) is not in until this attempt says
            # so: the earlier attempt's done time would count it in while it is answered again.
            claim = {
                L.owner_host: owner.host, L.owner_pid: owner.pid, L.owner_token: owner.token,
                L.acquired_at: now, L.heartbeat_at: now, L.done_at: None,
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
            changed = L.update({L.heartbeat_at: self._store_now()}).where(
                (L.run == run_id) & (L.part == part) & (L.owner_token == owner.token)
            ).execute()
        return bool(changed)

    @guarded
    def release_lease(self, run_id: str, part: str, owner: LeaseOwner, *, done: bool) -> None:
        """Clear this owner from the lease; ``done`` stamps the part as in."""
        L = self.Lease
        update: dict[Any, Any] = {L.owner_host: None, L.owner_pid: None, L.owner_token: None, L.heartbeat_at: None}
        with self._atomic():
            if done:
                update[L.done_at] = self._store_now()
            L.update(update).where((L.run == run_id) & (L.part == part) & (L.owner_token == owner.token)).execute()

    @guarded
    def shard_progress(self, run_id: str) -> ShardProgress:
        """The run's N (``None``: not sharded), the shards whose slice is in and those answered now."""
        L = self.Lease
        now = self._store_now()
        rows = [_checked(row) for row in L.select().where((L.run == run_id) & L.shard_count.is_null(False))]
        if not rows:
            return ShardProgress(None)
        return ShardProgress(
            count=max(r.shard_count for r in rows),
            done=frozenset(r.shard_index for r in rows if r.done_at is not None),
            answering=frozenset(
                r.shard_index for r in rows if LeaseHolder(r.part, r.owner_host, r.owner_pid, r.heartbeat_at).is_live(now)
            ),
        )

    @guarded
    def lease_liveness(self, run_ids: Sequence[str]) -> dict[str, RunLiveness]:
        """Whether a process answers each run now (:meth:`RunLiveness.of` its leases); runs without
        a lease are absent."""
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return {}
        L = self.Lease
        now = self._store_now()
        holders: dict[str, list[LeaseHolder]] = {}
        for start in range(0, len(ids), 500):
            for row in map(_checked, L.select().where(L.run.in_(ids[start : start + 500]))):
                holders.setdefault(row.run_id, []).append(
                    LeaseHolder(row.part, row.owner_host, row.owner_pid, row.heartbeat_at, row.acquired_at, row.done_at)
                )
        return {run_id: RunLiveness.of(leases, now) for run_id, leases in holders.items()}
