"""`evalkit run` on a terminal: the progress bar shows count, rate and time remaining."""

from __future__ import annotations

import os
import pty
import re


def run_on_a_terminal(evalkit_process, env: dict[str, str], *args: str) -> tuple[int, str]:  # noqa: ANN001
    """Run ``evalkit ARGS`` with stdout and stderr on a pseudo-terminal; the exit code and everything it drew.

    A process of its own: its standard streams are the terminal (the in-process engine captures into files)."""
    main, child = pty.openpty()
    process = evalkit_process.start(*args, env={"COLUMNS": "160", "TERM": "xterm", "NO_COLOR": None, **env}, stdout=child, stderr=child)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    return process.wait(timeout=120), b"".join(chunks).decode(errors="replace")


def test_the_progress_bar_shows_the_rate_and_the_time_remaining(evalkit_process, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-bench-sets"), "EVALKIT_BENCH_PROMPTS": "400"}
    code, drawn = run_on_a_terminal(evalkit_process, env, "run", "bench.capitals")
    assert code == 0, drawn
    assert re.search(r"\d+/400", drawn), drawn
    assert re.search(r"(\?|[\d,.]+) cases/s", drawn), drawn
    assert "Pass rate:  100.0% (400/400)" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)
