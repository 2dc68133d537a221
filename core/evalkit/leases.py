"""Run leases: which process is answering a run (or one shard of it), kept alive by a heartbeat.

A process that answers cases of a run first takes a lease on its part of it — ``*`` for the
whole run (a run, or ``--resume``), ``I/N`` for a shard — as an owner (host, pid, random token).
While it answers, a background thread refreshes the lease's heartbeat every
:data:`HEARTBEAT_S` seconds; when it stops (done, Ctrl-C, a failing store) it releases the lease.
Another process asking for a part that overlaps a *live* lease is refused before anything is
called. A lease is stale, and can be taken over, when its heartbeat is older than
:data:`STALE_AFTER_S` seconds, or when its owner ran on this host and that process is gone (a
``kill -9`` is taken over at once).

A run whose process was killed keeps its status ``running`` (nothing could mark it); its leases
tell it apart: :func:`liveness` reads :class:`RunLiveness` (no live lease, no shard still to start:
the run is *gone*), which ``history``, ``show`` and the viewer's pages print
(:func:`evalkit.run.continuing.status_label`, :func:`evalkit.run.continuing.gone_sentence`: what is
said of such a run, and the line that continues it), and after which ``report --wait`` stops
waiting once :data:`STALE_AFTER_S` has passed since the run was last heard from.

Two leases overlap when either is ``*`` or both name the same shard. Every shard of a run must
give the same N; the store refuses a shard that does not.

The lease values (owner, holder, shard progress, the refusals) live below the store, in
:mod:`evalkit.storage.values`; this module keeps the heartbeat. :mod:`evalkit.run.lifecycle` takes,
beats and gives up a run's lease.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .runs import Run
from .storage.protocols import ResultRepository, RunLeases, capabilities
from .storage.values import (
    HEARTBEAT_S,
    STALE_AFTER_S,
    WHOLE_RUN,
    LeaseHolder,
    LeaseOwner,
    RunBusyError,
    RunLiveness,
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
    "RunLiveness",
    "ShardMismatchError",
    "ShardProgress",
    "liveness",
    "overlaps",
    "shard_part",
]


def liveness(repository: ResultRepository, runs: Sequence[Run]) -> dict[str, RunLiveness]:
    """The :class:`RunLiveness` of each of ``runs`` that is marked running, as the store's leases
    say; absent for the others, for runs no lease was taken on and when the store keeps no leases
    (such a run is shown ``running``, as it is stored)."""
    from .runs import RunStatus

    leases = capabilities(repository).leases
    running = [run.id for run in runs if run.status is RunStatus.RUNNING]
    if leases is None or not running:
        return {}
    return leases.lease_liveness(running)


































class LeaseKeeper:
    """Refreshes a lease's heartbeat from a background thread until :meth:`stop`.

    The thread uses its own connection to the store (or none, when the repository says so); a
    refresh that fails is retried at the next beat — the run itself reports a failing store. A
    refresh the store refuses (another process took the lease over: this one's heartbeat was stale)
    sets :attr:`lost` and ends the beating: the run stops at its next case.
    """

    def __init__(
        self, repository: RunLeases, run_id: str, part: str, owner: LeaseOwner, interval: float = HEARTBEAT_S
    ) -> None:
        self._repository = repository
        self._run_id = run_id
        self._part = part
        self._owner = owner
        self._interval = interval
        self._stop = threading.Event()
        #: Set once another process took the lease over.
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="evalkit-lease", daemon=True)

    def start(self) -> LeaseKeeper:
        """Start beating."""
        self._thread.start()
        return self

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                try:
                    renewed = self._repository.renew_lease(self._run_id, self._part, self._owner)
                except Exception:  # noqa: BLE001,S112 - a failing store is reported by the run itself
                    continue
                if renewed is False:  # another process holds it now
                    self.lost.set()
                    return
        finally:
            self._repository.release_thread_connection()

    def stop(self) -> None:
        """Stop beating (the lease itself is released by the caller)."""
        self._stop.set()
        self._thread.join(timeout=self._interval + 5)
