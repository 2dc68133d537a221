"""The progress bar's rate column: cases per second, so a long run shows how fast it goes.

Imported only when a progress bar starts (it needs rich at import time; the CLI's start-up does not).
"""

from __future__ import annotations

from rich.progress import ProgressColumn, Task
from rich.text import Text


class CaseRateColumn(ProgressColumn):
    """``123 cases/s``: rich's estimate over the last 30 seconds, the overall rate once finished."""

    def render(self, task: Task) -> Text:
        """The rate of ``task``, ``? cases/s`` before there is one."""
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("? cases/s", style="progress.data.speed")
        return Text(f"{speed:,.1f} cases/s" if speed < 10 else f"{speed:,.0f} cases/s", style="progress.data.speed")
