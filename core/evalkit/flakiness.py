"""Flaky cases: a case whose outcome differs among its repeats, or flips back and forth between runs
of one serving identity while the case itself did not change (at least twice: one flip that stays
is a change of the model, a regression or a fix, not noise).

The data is each case's outcomes over the scope's recent complete runs (oldest first), read in one
query from a store with :class:`~evalkit.storage.CaseHistory`, else run by run through
:class:`~evalkit.storage.RunHistory`. A change of the case's content (its fingerprint) starts
its history afresh: an edited case that now fails did not flip. :func:`flaky_cases` summarises
each case (:func:`evalkit.stats.flip_history`); ``evalkit flaky SET`` prints them, a run's output
marks its flaky cases, and ``[gate] quarantine`` keeps named cases out of the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from .runs import Run, RunStatus
from .stats import flip_history
from .storage.protocols import Capabilities
from .storage.values import BaselineScope, CaseOutcome, RunOutcomes

__all__ = ["FlakyCase", "HISTORY_RUNS", "flaky_cases", "flaky_marks", "scope_history"]

#: How many of a scope's recent runs a case's history spans by default.
HISTORY_RUNS = 20
#: The flips that make a case flaky: back and forth (a single flip that stays is a change).
FLIPS = 2
#: The most cases whose history a run's output reads (beyond, it marks none from history).
MARKED_CASES = 1_000


@attrs.frozen
class FlakyCase:
    """One flaky case of a scope: ``runs`` compared (the runs since its content last changed),
    ``flips`` between consecutive ones, its ``last_outcomes`` (oldest first, at most five), and
    ``disagreeing_runs``, how many of those runs answered it several times with answers that
    disagreed (``latest_fraction``: its pass fraction in the newest run, when repeated there)."""

    case_id: str
    runs: int
    flips: int
    last_outcomes: tuple[bool, ...]
    disagreeing_runs: int = 0
    latest_fraction: float | None = None

    @property
    def why(self) -> str:
        """Why it is flaky, in words: ``flipped 3 times in 8 runs``, ``answers disagreed in 2 runs``."""
        parts = []
        if self.flips:
            parts.append(f"flipped {self.flips} time{'s' if self.flips != 1 else ''} in {self.runs} runs")
        if self.disagreeing_runs:
            parts.append(f"answers disagreed in {self.disagreeing_runs} run{'s' if self.disagreeing_runs != 1 else ''}")
        return ", ".join(parts)


def _from_runs(store: Capabilities, scope: BaselineScope, runs: int, case_ids: Sequence[str] | None) -> list[RunOutcomes]:
    """:meth:`~evalkit.storage.CaseHistory.case_history` through the base reads: the scope's recent
    complete runs, read one by one."""
    if store.history is None:
        return []
    wanted = set(case_ids) if case_ids is not None else None
    chosen: list[Run] = []
    for run in store.history.recent_runs(scope.set_identifier, limit=runs * 4):
        if run.status is RunStatus.COMPLETE and BaselineScope.of_run(run) == scope:
            chosen.append(run)
        if len(chosen) == runs:
            break
    found = []
    for run in chosen:
        cases = store.streamed.iter_cases(run.id) if store.streamed is not None else (store.repository.get_run(run.id) or run).cases
        outcomes = {
            case.case_id: CaseOutcome(case.case_id, case.passed, case.fingerprint, case.answers, case.passes if case.answers > 1 else None)
            for case in cases
            if not case.errored and (wanted is None or case.case_id in wanted)
        }
        found.append(RunOutcomes(run.id, run.started_at, outcomes))
    return found


def scope_history(
    store: Capabilities, scope: BaselineScope, *, runs: int = HISTORY_RUNS, case_ids: Sequence[str] | None = None
) -> list[RunOutcomes]:
    """The scope's ``runs`` most recent complete runs, newest first, with their cases' outcomes."""
    if store.case_history is not None:
        return store.case_history.case_history(scope, runs=runs, case_ids=case_ids)
    return _from_runs(store, scope, runs, case_ids)


def flaky_cases(history: Sequence[RunOutcomes]) -> list[FlakyCase]:
    """The flaky cases of a scope's history (runs newest first, as :func:`scope_history` gives
    them), most flips first: each case's outcomes since its content last changed, oldest first."""
    series: dict[str, list[CaseOutcome]] = {}
    for run in reversed(history):  # oldest first
        for case_id, outcome in run.outcomes.items():
            seen = series.setdefault(case_id, [])
            if seen and outcome.fingerprint is not None and seen[-1].fingerprint is not None and seen[-1].fingerprint != outcome.fingerprint:
                seen.clear()  # the case changed: its history starts again
            seen.append(outcome)
    found = []
    for case_id, outcomes in series.items():
        flips = flip_history([o.passed for o in outcomes])
        disagreeing = sum(1 for o in outcomes if o.passes is not None and 0 < o.passes < o.answers)
        if flips.flips < FLIPS and not disagreeing:
            continue
        latest = outcomes[-1]
        fraction = latest.passes / latest.answers if latest.passes is not None else None
        found.append(FlakyCase(case_id, flips.runs, flips.flips, flips.last_outcomes, disagreeing, fraction))
    found.sort(key=lambda c: (-c.flips, -c.disagreeing_runs, c.case_id))
    return found


def flaky_marks(store: Capabilities, run: Run, case_ids: Sequence[str]) -> Mapping[str, str]:
    """``{case id: why}`` for those of ``case_ids`` (a run's listed cases; at most
    :data:`MARKED_CASES`) that are flaky in the history of ``run``'s scope, this run included."""
    scope = BaselineScope.of_run(run)
    if scope is None or not case_ids or len(case_ids) > MARKED_CASES:
        return {}
    return {c.case_id: c.why for c in flaky_cases(scope_history(store, scope, case_ids=list(case_ids)))}
