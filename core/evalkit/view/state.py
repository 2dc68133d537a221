"""What every page reads, and the caches that keep a 100,000-case run responsive.

:class:`ViewerState` holds the read-only store, the run indexes (:mod:`.index`), the installed
sets (:mod:`.installed`), and small caches of comparisons and searches keyed by the state of the
runs they were made from, so a page is recomputed only when the store changed under it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from ..baselines import Acceptance
from ..case_texts import CaseSource, InstalledSets
from ..leases import RunLiveness
from ..privacy import scrub
from ..prompts import displayed_check_name
from ..run.continuing import ResumeDefaults, resume_defaults, status_label
from ..runs import CaseResult, Run, RunKind, RunStatus
from ..storage import StoredVerdict
from ..tolerance import Tolerances
from ..verdict import Comparison, compare_pairs
from .index import IndexCache, RunIndex, build_index, case_pairs, fetch_cases, index_cases
from .search import Query, SearchError, SearchTimeout
from .settings import ViewerSettings
from .store import open_read_only

__all__ = [
    "SETS_SCANNED",
    "SearchResult",
    "SetSummary",
    "ViewerState",
    "progress_state",
    "run_version",
    "searchable_texts",
]

#: How many of the newest runs the sets page groups by set.
SETS_SCANNED = 20_000
_T = TypeVar("_T")


@attrs.frozen
class SetSummary:
    """One set in the store: how many runs it has (among those scanned), its newest run and that
    run's verdict, and how many of its runs are accepted baselines."""

    identifier: str
    kind: RunKind
    runs: int
    latest: Run
    verdict: StoredVerdict | None
    accepted: int | None


@attrs.frozen
class SearchResult:
    """The ids of the cases that match a search, or why there are none (``error``)."""

    case_ids: frozenset[str] = frozenset()
    error: str | None = None
    seconds: float = 0.0


class _Memo:
    """A small least-recently-used map, safe across request threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], _T]) -> _T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


def run_version(run: Run) -> Hashable:
    """What changes when a run's stored cases may have changed: its status, when it finished and
    its counts (a running run's come from the store's tally)."""
    return (
        run.status.value,
        run.finished_at,
        run.stored_answered_count,
        run.stored_passed_count,
        run.stored_errored_count,
    )


def progress_state(run: Run, live: RunLiveness | None = None) -> str:
    """A text that changes whenever a run's stored cases may have, or its status as shown (what a
    live page watches: a run whose process dies reads ``running (no live process)`` from then)."""
    return json.dumps(
        [status_label(run, live), run.stored_answered_count, run.stored_passed_count, run.stored_errored_count]
    )


def searchable_texts(case: CaseResult, extra: Sequence[str] = ()) -> list[str]:
    """Everything a search looks through for one case, a text per field: its id, answer, error,
    every check's name (stored, and as shown: an unnamed check's kind) and reason, the grader's detail (judge reasons) and ``extra`` (the
    installed prompt and reference)."""
    parts = [case.case_id, case.answer_text or "", case.error or ""]
    for check in case.checks:
        parts.extend((check.name, displayed_check_name(check.name), check.error or "", check.detail or ""))
    if case.detail:
        parts.extend(
            value if isinstance(value, str) else json.dumps(value, default=str)
            for value in case.detail.values()
            if isinstance(value, (str, list))
        )
    parts.extend(extra)
    return [part for part in parts if part]


class ViewerState:
    """The store and the caches behind the pages (one per app; its methods are called from
    request threads)."""

    def __init__(self, settings: ViewerSettings) -> None:
        """Open the store ``settings`` names (see :func:`~.store.open_read_only`)."""
        self.settings = settings
        self.store = open_read_only(settings.database_url)
        self.indexes = IndexCache()
        self.installed = InstalledSets(settings.config)
        self._comparisons = _Memo(16)
        self._searches = _Memo(32)
        self._sets = _Memo(1)
        self._lists = _Memo(32)

    def remember(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """``make()``, kept under ``key`` for the next page that asks (a few dozen, least recently
        used forgotten first): what a page derives from an index — a filtered, sorted list of its
        rows — is derived once per state of the runs (``key`` holds their versions)."""
        return self._lists.get(key, make)

    # -- runs ----------------------------------------------------------------------------------

    def run(self, run_id: str) -> Run | None:
        """The run without its cases; one that never ended (running, interrupted) with the counts
        of the cases the store has."""
        run = self.store.run(run_id)
        if run is None or not run.never_ended:
            return run
        tally = self.store.tally(run.id)
        if tally is None:  # the store cannot count: the index is read again every few seconds
            return run
        return run.counted_by(tally)

    def index(self, run: Run) -> RunIndex:
        """The run's case index, read when the cache has none of its present state."""
        version = run_version(run)
        if run.status is RunStatus.RUNNING and not self.store.counts_cases:
            version = (version, int(time.monotonic() // 5))
        return self.indexes.get(run.id, version, lambda: build_index(self.store, run.id, version))

    def cases(self, index: RunIndex, case_ids: Sequence[str]) -> dict[str, CaseResult]:
        """The full stored cases of ``case_ids``."""
        return fetch_cases(self.store, index, case_ids)

    def liveness(self, run: Run) -> RunLiveness | None:
        """Whether a process answers ``run`` now (``None``: it is not running, or the store cannot tell)."""
        return self.store.liveness([run]).get(run.id)

    def resume_defaults(self) -> ResumeDefaults | None:
        """What a bare continuing command answers with, as ``history`` and ``show`` read it
        (:func:`evalkit.run.continuing.resume_defaults`); ``None`` when the viewer was given no configuration."""
        config = self.settings.config
        if config is None:
            return None
        return attrs.evolve(resume_defaults(config), store=self.settings.store_options)

    def verdict(self, run_id: str) -> StoredVerdict | None:
        """The verdict stored with the run."""
        return self.store.verdicts([run_id]).get(run_id)

    def acceptances(self, run_ids: Sequence[str]) -> Mapping[str, Acceptance] | None:
        """Which of these runs are accepted baselines (``None``: the store does not say)."""
        return self.store.acceptances(run_ids)

    def baseline(self, run: Run, verdict: StoredVerdict | None) -> Run | None:
        """The run the verdict compared ``run`` with, when it is still stored."""
        if verdict is None or not verdict.baseline_id or verdict.baseline_id == run.id:
            return None
        return self.run(verdict.baseline_id)

    def comparison(
        self, run: Run, baseline: Run, tolerances: Tolerances | None = None
    ) -> tuple[Comparison, RunIndex, RunIndex]:
        """``run`` compared with ``baseline`` case by case under ``tolerances`` (default: the
        defaults; a run page's stored verdict stays its verdict), with both runs' indexes."""
        tolerances = tolerances or Tolerances()
        current, before = self.index(run), self.index(baseline)
        key = (run.id, current.version, baseline.id, before.version, tolerances)
        comparison = self._comparisons.get(
            key, lambda: compare_pairs(run, baseline, case_pairs(current, before), tolerances)
        )
        return comparison, current, before

    # -- search --------------------------------------------------------------------------------

    def search(self, run: Run, index: RunIndex, query: Query) -> SearchResult:
        """The ids of the run's cases that match ``query`` (a whole pass over the run, kept for
        the next page of the same search)."""
        key = (run.id, index.version, query)
        return self._searches.get(key, lambda: self._search(run, index, query))

    def _search(self, run: Run, index: RunIndex, query: Query) -> SearchResult:
        started = time.monotonic()
        try:
            matches = query.matcher()
        except SearchError as exc:
            return SearchResult(error=str(exc))
        installed, _ = self.installed.get(run.set_identifier, run.kind)
        texts = installed.cases if installed is not None and installed.cases is not None else {}
        found = set()
        try:
            for case in index_cases(self.store, index):
                extra: tuple[str, ...] = ()
                item = texts.get(case.case_id)
                if item is not None and case.fingerprint in (None, installed.fingerprints.get(case.case_id)):  # type: ignore[union-attr]
                    extra = _item_texts(item)
                # Matched on the text as stored, then on the text as shown (scrubbed of secrets),
                # so no search can find what no page shows — a regex must not spell a key out.
                text = "\n".join(searchable_texts(case, extra))
                if matches(text) and matches(scrub(text)):
                    found.add(case.case_id)
        except SearchTimeout:
            return SearchResult(error="the pattern took too long (it backtracks too much); the search was stopped")
        return SearchResult(frozenset(found), seconds=time.monotonic() - started)

    # -- sets ----------------------------------------------------------------------------------

    def sets(self) -> tuple[list[SetSummary], bool]:
        """Every set among the newest :data:`SETS_SCANNED` runs, newest activity first, and
        whether older runs were left out (kept for a few seconds)."""
        bucket = int(time.monotonic() // 5)
        return self._sets.get(bucket, self._read_sets)

    def _read_sets(self) -> tuple[list[SetSummary], bool]:
        runs = self.store.runs(None, limit=SETS_SCANNED)
        grouped: dict[str, list[Run]] = {}
        for run in runs:
            grouped.setdefault(run.set_identifier, []).append(run)
        latest_ids = [members[0].id for members in grouped.values()]
        verdicts = self.store.verdicts(latest_ids)
        acceptances = self.store.acceptances([run.id for run in runs])
        summaries = [
            SetSummary(
                identifier,
                members[0].kind,
                len(members),
                members[0],
                verdicts.get(members[0].id),
                None if acceptances is None else sum(1 for run in members if run.id in acceptances),
            )  # fmt: skip
            for identifier, members in grouped.items()
        ]
        return summaries, len(runs) >= SETS_SCANNED

    def sources(self, run: Run, cases: Mapping[str, str | None]) -> dict[str, CaseSource]:
        """Where each case's prompt and reference come from (``cases``: id → stored fingerprint)."""
        return self.installed.sources(run.set_identifier, run.kind, cases)

    def close(self) -> None:
        """Close the store."""
        self.store.close()


def _item_texts(item: Any) -> tuple[str, ...]:
    """The texts of an installed prompt or question that a search looks through."""
    texts = [getattr(item, name, None) for name in ("prompt", "system_prompt", "question")]
    reference = getattr(item, "reference_text", None)
    return tuple(str(text) for text in (*texts, reference) if text)
