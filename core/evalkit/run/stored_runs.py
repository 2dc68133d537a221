"""Which runs the command that is running has in the store, for what an error ending it says.

The run lifecycle (:func:`evalkit.run.lifecycle.execute`) notes each run with :func:`note` once
the run is this process's in the store: begun by it, complete already (a later shard), or joined
by a resume or a shard once its lease is taken (a refused lease stores nothing). The CLI records
around each command (:func:`recording`), so that an evalkit bug raised outside the lifecycle's own
handling (printing the outcome, a run that was already complete), or an error of exit 2 after the
run is stored (a store failing while the outcome is read back), is said as what it is: the run is
stored and kept (exit 3), not "nothing called, nothing stored" (exit 2). A run the lifecycle
stopped on such an error and marked interrupted is also noted with :func:`stopped`, with the cases
it keeps and the command that continues it, for the CLI to say under the error.

Outside :func:`recording` (a library caller) nothing is noted.
"""

from __future__ import annotations

import contextlib
import contextvars

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["note", "recording", "stopped", "stopped_runs", "stopped_sentence"]

#: The run ids noted by the command being recorded, in the order they were stored (``None``: no
#: command is being recorded).
_noted: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("evalkit_stored_runs", default=None)
#: The runs of the command being recorded that an error stopped and the lifecycle marked
#: interrupted, each with what it keeps and the command that continues it (``None``: no command
#: is being recorded).
_stopped: contextvars.ContextVar[dict[str, tuple[str, str]] | None] = contextvars.ContextVar("evalkit_stopped_runs", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[str]]:
    """Record, while the block runs, the ids of the runs that go into the store (each once, in order)."""
    noted: list[str] = []
    token = _noted.set(noted)
    stopped_token = _stopped.set({})
    try:
        yield noted
    finally:
        _stopped.reset(stopped_token)
        _noted.reset(token)


def note(run_id: str) -> None:
    """Note that run ``run_id`` is in the store (nothing when no command is being recorded)."""
    noted = _noted.get()
    if noted is not None and run_id not in noted:
        noted.append(run_id)


def stopped(run_id: str, kept: str, command: str) -> None:
    """Note that an error stopped run ``run_id`` and it is marked interrupted; ``kept``: what it
    keeps (``3 cases committed before it are kept``), ``command``: the command that continues it.
    Nothing when no command is being recorded."""
    runs = _stopped.get()
    if runs is not None:
        runs[run_id] = (kept, command)


def stopped_runs() -> dict[str, tuple[str, str]]:
    """The runs :func:`stopped` noted in the command being recorded, each with what it keeps and
    the command that continues it."""
    return dict(_stopped.get() or {})


def stopped_sentence(kept: str, command: str) -> str:
    """``3 cases committed before it are kept, the run is marked interrupted; continue it with
    `COMMAND```: what is said of a run :func:`stopped` noted."""
    return f"{kept}, the run is marked interrupted; continue it with `{command}`"
