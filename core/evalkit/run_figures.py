"""A run's pass rate and its counts as every command and report says them, once.

The rate is :attr:`evalkit.runs.Run.pass_rate`: passed cases over the *scored* ones (answered and
not errored). An errored case measured nothing: it is counted apart (``1 errored``), as the
verdict counts it (an incomplete run is not compared), never as a failure. ``evalkit retrieval``,
``evalkit run``, ``show``, ``history``, ``compare``, the reports and the ``--json`` documents all
read the rate there and say it with :func:`rate_text` and :func:`answered_text`, so one run shows
one figure wherever it is shown.
"""

from __future__ import annotations

from .runs import Run
from .wording import counted

__all__ = ["NOTHING_SCORED", "answered_text", "percent", "rate_cell", "rate_of", "rate_text"]

#: What a rate reads as when no case was scored (every answered case errored, or none is in).
NOTHING_SCORED = "none scored"


def percent(value: float) -> str:
    """``33.3%``: a rate as the commands show it."""
    return f"{float(value) * 100:.1f}%"


def rate_text(run: Run) -> str:
    """``33.3% (1/3)``: the run's pass rate over its scored cases and the counts it is made of;
    ``none scored`` when no case was scored (a ``0.0% (0/0)`` would read as a collapse)."""
    if not run.scored_count:
        return NOTHING_SCORED
    return f"{percent(run.pass_rate)} ({min(run.passed_count, run.scored_count)}/{run.scored_count})"


def rate_of(run: Run) -> float | None:
    """The run's pass rate as a number for a trend (``history``'s sparkline and ``pass_rates``);
    ``None`` — no rate, never a 0 % — when no case was scored (every answered case errored)."""
    return float(run.pass_rate) if run.scored_count else None


def rate_cell(run: Run) -> str:
    """``33.3%`` for a table's rate column; an em dash when no case was scored."""
    return percent(run.pass_rate) if run.scored_count else "—"


def answered_text(run: Run, unit: str = "case") -> str:
    """``3 of 4 cases answered, 1 errored``: the cases scored of the set's ``case_count``, the
    errored ones counted apart (``0 of 6 questions answered, 6 errored`` when every one errored)."""
    errored = f", {run.errored_count} errored" if run.errored_count else ""
    return f"{run.scored_count} of {counted(run.case_count, unit)} answered{errored}"
