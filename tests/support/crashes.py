"""Killing a running ``evalkit`` process outright, as a crash would, and reading what its store kept;
the endpoint those runs answer from."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from evalkit.runs import Run
from evalkit.storage import open_repository

T = TypeVar("T")


def configure_slow_endpoint(project: Path, base_url: str, concurrency: int = 2) -> None:
    """Write the project's ``[providers.slow]``: the openai instance at ``base_url`` the crash and
    store-failure tests run against (key from ``EVALKIT_TEST_KEY``)."""
    (project / "evalkit.toml").write_text(
        "[providers.slow]\n"
        'adapter = "openai"\n'
        f'base_url = "{base_url}"\n'
        'model = "gpt-test"\n'
        'api_key_env = "EVALKIT_TEST_KEY"\n'
        f"concurrency = {concurrency}\n"
    )


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


def ctrl_c_reaches_child() -> None:
    """``preexec_fn`` for a child a test interrupts with SIGINT: Ctrl-C's default action restored.

    A shell runs a background job (``… &``, ``nohup``) with SIGINT ignored, every process started
    from it inherits that, and a Python started so never turns SIGINT into KeyboardInterrupt; the
    suite run that way would see ``evalkit`` ignore the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
