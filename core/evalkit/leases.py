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
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Iterable
from typing import Any

import attrs

from .errors import UsageError

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
]

#: How often a running process refreshes its lease (seconds).
HEARTBEAT_S = 10.0
#: A lease whose heartbeat is older than this is stale and may be taken over (seconds).
STALE_AFTER_S = 90.0
#: The part a lease takes when the process answers the whole run (not one shard).
WHOLE_RUN = "*"


@attrs.frozen
class LeaseOwner:
    """The process taking a lease: host name, process id and a random token unique to this run."""

    host: str
    pid: int
    token: str

    @classmethod
    def this_process(cls) -> LeaseOwner:
        """An owner for the current process, with a fresh token."""
        return cls(socket.gethostname(), os.getpid(), secrets.token_hex(8))


@attrs.frozen
class LeaseHolder:
    """A lease as stored: the part of the run it covers, its owner and its last heartbeat."""

    part: str
    host: str | None
    pid: int | None
    heartbeat_at: float | None

    def is_live(self, now: float, stale_after: float = STALE_AFTER_S) -> bool:
        """True while the owner is answering: a recent heartbeat, and (on this host) a live process."""
        if self.host is None or self.heartbeat_at is None or now - self.heartbeat_at > stale_after:
            return False
        if self.host == socket.gethostname() and self.pid is not None:
            return _process_exists(self.pid)
        return True

    def describe(self, now: float) -> str:
        """``pid 123 on host h (heartbeat 4 s ago)``."""
        age = max(0.0, now - (self.heartbeat_at or now))
        return f"pid {self.pid} on host {self.host} (heartbeat {age:.0f} s ago)"


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def overlaps(part: str, other: str) -> bool:
    """True when two parts of a run cannot be answered at once (either is the whole run, or the same shard)."""
    return part == WHOLE_RUN or other == WHOLE_RUN or part == other


def shard_part(index: int, count: int) -> str:
    """The part name of shard ``index`` of ``count``: ``I/N``."""
    return f"{index}/{count}"


@attrs.frozen
class ShardProgress:
    """Where the shards of a run stand: N (``None`` when the run was not sharded), the shards whose
    slice is in, and those a live process is answering now."""

    count: int | None
    done: frozenset[int] = frozenset()
    answering: frozenset[int] = frozenset()

    @property
    def missing(self) -> tuple[int, ...]:
        """The shards whose slice is not in yet, in order."""
        return tuple(i for i in range(1, (self.count or 0) + 1) if i not in self.done)

    @property
    def all_in(self) -> bool:
        """True when every shard's slice is in (or the run is not sharded)."""
        return not self.missing

    def describe(self) -> str:
        """``shards 1, 3 of 4 are in; waiting for 2, 4``."""
        if self.count is None:
            return "the run is not sharded"
        done = ", ".join(map(str, sorted(self.done))) or "none"
        waiting = ", ".join(map(str, self.missing))
        return f"shards in: {done} of {self.count}" + (f"; waiting for {waiting}" if waiting else "")


class RunBusyError(UsageError):
    """Another live process holds a lease that overlaps the part of the run asked for."""

    def __init__(self, run_id: str, part: str, holder: LeaseHolder, now: float) -> None:
        self.run_id = run_id
        self.holder = holder
        what = "the whole run" if holder.part == WHOLE_RUN else f"shard {holder.part}"
        mine = "" if part == WHOLE_RUN else f" (shard {part})"
        super().__init__(
            f"run {run_id} is being answered by another process{mine}: {what} is held by {holder.describe(now)}; "
            f"wait for it to finish, or stop it — a lease with no heartbeat for {STALE_AFTER_S:.0f} s is taken over"
        )


class ShardMismatchError(UsageError):
    """A shard names a different N from the shards already stored for the run."""

    def __init__(self, run_id: str, part: str, counts: Iterable[int]) -> None:
        known = sorted(set(counts))
        super().__init__(
            f"--shard {part}: run {run_id} is split into {' and '.join(map(str, known))} shards by the shards "
            "already stored; every shard of a run must give the same N"
        )


class LeaseKeeper:
    """Refreshes a lease's heartbeat from a background thread until :meth:`stop`.

    The thread uses its own connection to the store (or none, when the repository says so); a
    refresh that fails is retried at the next beat — the run itself reports a failing store.
    """

    def __init__(self, repository: Any, run_id: str, part: str, owner: LeaseOwner, interval: float = HEARTBEAT_S) -> None:
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
