"""The sets in the store, and one set's runs with the trend of each series.

A series is what a baseline is kept for — a set answered by one serving identity under one
grader, or one retriever in one deployment (:func:`evalkit.reports.assemble.scope_key`) — drawn
by the HTML report's own trend chart (inline SVG, accepted baselines ringed).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..baselines import Acceptance
from ..leases import RunLiveness
from ..privacy import scrub
from ..reports.assemble import accepted as counts_as_accepted
from ..reports.assemble import scope_key
from ..reports.model import Figure, HistoryPoint, Report, figures_of, verdict_word
from ..reports.trend_chart import trend_svg
from ..run.continuing import status_label
from ..runs import Run, RunKind
from ..storage import StoredVerdict
from .state import SetSummary, ViewerState

__all__ = ["RUNS_LISTED", "RunLine", "Series", "SetPage", "SetsPage", "build_set_page", "build_sets_page"]

#: How many of a set's newest runs its page lists and charts.
RUNS_LISTED = 500
#: How many runs of one series a trend chart draws.
TREND_POINTS = 60


@attrs.frozen
class SetsPage:
    """Every set in the store (among the newest runs scanned); ``partial`` when older runs were left out."""

    sets: tuple[SetSummary, ...]
    partial: bool
    lists_runs: bool

    def verdict_word(self, summary: SetSummary) -> str:
        """The newest run's verdict in a word."""
        return verdict_word(summary.latest, summary.verdict, False)

    @staticmethod
    def headline(summary: SetSummary) -> str:
        """The newest run's first headline figure (pass rate, or hit@1)."""
        figure = Report(run=summary.latest).figures()[0]
        return f"{figure.label} {figure.show(figure.value)}"


@attrs.frozen
class RunLine:
    """One run of a set as its page lists it."""

    run: Run
    verdict: StoredVerdict | None
    acceptance: Acceptance | None
    accepted: bool
    identity: str
    figures: tuple[Figure, ...]
    series: int
    #: Whether a process answers the run now (``None``: not running, or the store cannot tell).
    liveness: RunLiveness | None = None

    @property
    def status(self) -> str:
        """The run's status as ``history`` says it (:func:`evalkit.run.continuing.status_label`)."""
        return status_label(self.run, self.liveness)

    @property
    def verdict_word(self) -> str:
        """The run's verdict in a word."""
        return verdict_word(self.run, self.verdict, False)


@attrs.frozen
class Series:
    """The runs of one serving identity and grader (or retriever and deployment), with its trend chart."""

    number: int
    label: str
    grader: str
    runs: int
    accepted: int
    svg: str
    figures: tuple[Figure, ...]


@attrs.frozen
class SetPage:
    """One set's page: its runs newest first, its series and their trends."""

    identifier: str
    kind: RunKind
    runs: tuple[RunLine, ...]
    series: tuple[Series, ...]
    partial: bool


def build_sets_page(state: ViewerState) -> SetsPage:
    """The sets page."""
    sets, partial = state.sets()
    return SetsPage(tuple(sets), partial, state.store.lists_runs)


def _is_accepted(run: Run, verdict: StoredVerdict | None, acceptances: Mapping[str, Acceptance] | None) -> bool:
    if acceptances is None:  # a store that keeps no acceptances: the rule reports use
        return counts_as_accepted(run, verdict)
    return run.id in acceptances and run.status.value == "complete"


def build_set_page(state: ViewerState, identifier: str) -> SetPage | None:
    """The page of the set ``identifier``, or ``None`` when the store has no run of it."""
    runs = state.store.runs(identifier, limit=RUNS_LISTED)
    if not runs:
        return None
    ids = [run.id for run in runs]
    verdicts = state.store.verdicts(ids)
    acceptances = state.store.acceptances(ids)
    alive = state.store.liveness(runs)
    keys: dict[tuple[object, ...], int] = {}
    members: dict[int, list[Run]] = {}
    for run in reversed(runs):  # oldest first: series are numbered by their first run
        number = keys.setdefault(scope_key(run), len(keys) + 1)
        members.setdefault(number, []).append(run)
    series_of = {run.id: number for number, listed in members.items() for run in listed}
    lines = tuple(
        RunLine(run, verdicts.get(run.id), (acceptances or {}).get(run.id), _is_accepted(run, verdicts.get(run.id), acceptances),
                Report(run=run).identity, Report(run=run).figures(), series_of[run.id], alive.get(run.id))  # fmt: skip
        for run in runs
    )
    accepted_ids = {line.run.id for line in lines if line.accepted}
    series = []
    for number, listed in members.items():
        history = [
            HistoryPoint(
                run_id=scrub(run.id), started_at=run.started_at, status=run.status, figures=figures_of(run),
                verdict_state=verdicts[run.id].state if run.id in verdicts else None, accepted=run.id in accepted_ids,
                label=scrub(run.label) if run.label else None,
            )  # fmt: skip
            for run in listed[-TREND_POINTS:]
        ]
        latest = listed[-1]
        figures = Report(run=latest).figures()
        series.append(
            Series(number, Report(run=latest).identity, latest.grader, len(listed),
                   sum(1 for run in listed if run.id in accepted_ids), trend_svg(history, figures), figures)  # fmt: skip
        )
    return SetPage(identifier, runs[0].kind, lines, tuple(series), len(runs) >= RUNS_LISTED)
