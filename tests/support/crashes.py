"""Killing a running ``evalkit`` process outright, as a crash would, and reading what its store kept."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from typing import TypeVar

from evalkit.runs import Run
from evalkit.storage import open_repository

T = TypeVar("T")


def sigkill_when(process: subprocess.Popen[str], ready: Callable[[], T]) -> T:
    """Wait for ``ready()``, then SIGKILL ``process`` (no cleanup runs); returns what ``ready`` returned."""
    try:
        found = ready()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    return found


def kept_by_store(database_url: str, run_id: str) -> tuple[Run, set[str]]:
    """The run as stored, and the ids of the cases it had committed."""
    repository = open_repository(database_url)
    try:
        return repository.get_run(run_id), repository.answered_case_ids(run_id)
    finally:
        repository.close()
