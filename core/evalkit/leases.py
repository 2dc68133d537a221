"""Run leases: which process is answering a run (or one shard of it), kept alive by a heartbeat.

A process that answers cases of a run first takes a lease on its part of it — ``*`` for the
whole run (a run, or ``--resume``), ``I/N`` for a shard — as an owner (host, pid, random token).
While it answers, a background thread refreshes the lease's heartbeat every
:data:`HEARTBEAT_S` seconds; when it stops (done, Ctrl-C, a failing store) it releases the lease.
Another process asking for a part that overlaps a *live* lease is refused before anything is
called. A lease is stale, and can be taken over, when its heartbeat is older than
:data:`STALE_AFTER_S` seconds, or when its owner ran on this host and that process is gone (a
``kill -9`` is taken over at once).

Two leases overlap when either is ``*`` or both name the same shard. Every shard of a run must
give the same N; the store refuses a shard that does not.

The lease values (owner, holder, shard progress, the refusals) live below the store, in
:mod:`evalkit.storage.values`; this module keeps the heartbeat. :mod:`evalkit.run.lifecycle` takes,
beats and gives up a run's lease.
"""

from __future__ import annotations

import threading

from .storage.protocols import RunLeases
from .storage.values import (
    HEARTBEAT_S,
    STALE_AFTER_S,
    WHOLE_RUN,
    LeaseHolder,
    LeaseOwner,
    RunBusyError,
    ShardMismatchError,
    ShardProgress,
    overlaps,
    shard_part,
)

__all__ = [
    "HEARTBEAT_S",
    "STALE_AFTER_S",
    "WHOLE_RUN",
    "LeaseHolder",
    "LeaseKeeper",
    "LeaseOwner",
    "RunBusyError",
    "ShardMismatchError",
    "ShardProgress",
    "overlaps",
    "shard_part",
]


class LeaseKeeper:
    """Refreshes a lease's heartbeat from a background thread until :meth:`stop`.

    The thread uses its own connection to the store (or none, when the repository says so); a
    refresh that fails is retried at the next beat — the run itself reports a failing store.
    """

    def __init__(self, repository: RunLeases, run_id: str, part: str, owner: LeaseOwner, interval: float = HEARTBEAT_S) -> None:
        self._repository = repository
        self._run_id = run_id
        self._part = part
        self._owner = owner
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="evalkit-lease", daemon=True)

    def start(self) -> LeaseKeeper:
        """Start beating."""
        self._thread.start()
        return self

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                try:
                    self._repository.renew_lease(self._run_id, self._part, self._owner)
                except Exception:  # noqa: BLE001,S112 - a failing store is reported by the run itself
                    continue
        finally:
            self._repository.release_thread_connection()

    def stop(self) -> None:
        """Stop beating (the lease itself is released by the caller)."""
        self._stop.set()
        self._thread.join(timeout=self._interval + 5)
