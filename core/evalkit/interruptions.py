"""What a run does when it stops before its end: Ctrl-C, or a results store that fails under it.

Either way the cases committed so far stay in the store, the run is marked ``interrupted`` when
the store still answers (a lost PostgreSQL connection is re-opened once for that), and the error
says how to continue. Nothing here raises anything but the error it returns.
"""

from __future__ import annotations

from typing import Any

from .errors import RunStoreFailed, StorageError, StoreFailure
from .runs import Run, RunStatus
from .storage import ResumableRuns

__all__ = ["mark_interrupted", "store_failed"]


def mark_interrupted(repository: Any, run_id: str) -> bool:
    """Mark the run ``interrupted``; ``False`` when the store cannot say (or does not answer)."""
    if not isinstance(repository, ResumableRuns):
        return False
    try:
        repository.mark_status(run_id, RunStatus.INTERRUPTED.value)
    except StorageError:
        return False
    return True


def _kept(repository: Any, run_id: str) -> int | None:
    if not isinstance(repository, ResumableRuns):
        return None
    try:
        return len(repository.answered_case_ids(run_id))
    except StorageError:
        return None


def store_failed(repository: Any, run: Run, failure: StoreFailure, *, resumable: bool = True) -> RunStoreFailed:
    """The error to raise after ``failure`` stopped ``run``: marks the run interrupted where the
    store still answers and counts the cases it kept."""
    marked = mark_interrupted(repository, run.id)
    return RunStoreFailed(
        run.id, run.set_identifier, failure.cause, kept=_kept(repository, run.id), marked=marked, resumable=resumable
    )
