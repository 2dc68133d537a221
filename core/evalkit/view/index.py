"""A run's cases as a compact index, so every page is cut on the server without reading the run again.

The store can stream a run's cases in stored order (:meth:`ReadOnlyStore.cases`) but cannot
seek into them. The first page of a run reads them once into a :class:`RunIndex`: one small
:class:`CaseRow` per case (id, result, score, latency, tokens, fingerprint — no text), a few
dozen bytes each, kept in a :class:`IndexCache` bounded by the number of rows it holds. Filters,
sorting and paging work on the index; only the cases of the page shown are read in full again
(:func:`fetch_cases`: a pass that stops at the last one needed, and reads only the failed ones
when all it needs failed). Comparisons pair two indexes in memory (:func:`case_pairs`), in the
order the store's ``paired_cases`` gives.

A complete run never changes, so its index is kept until evicted; a run still being answered
is indexed again when the store counts other cases than the index holds.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import closing

import attrs

from ..runs import CaseResult
from ..storage import CaseMark, CasePair
from .store import ReadOnlyStore

__all__ = ["CaseRow", "IndexCache", "RunIndex", "build_index", "case_pairs", "fetch_cases"]


@attrs.frozen(slots=True)
class CaseRow:
    """What the index keeps of one case (``position``: its place in the run's stored order)."""

    position: int
    case_id: str
    passed: bool
    errored: bool
    score: float
    latency_s: float
    unstable: bool = False
    fingerprint: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def notable(self) -> bool:
        """True for a case the store lists with ``notable_only`` (failed, errored or unstable)."""
        return not self.passed or self.unstable

    def mark(self) -> CaseMark:
        """The case as a comparison sees it."""
        return CaseMark(self.passed, self.score, self.unstable, self.position, self.fingerprint)

    @classmethod
    def of(cls, position: int, case: CaseResult) -> CaseRow:
        """The row of ``case`` at ``position``."""
        usage = case.usage
        return cls(
            position, case.case_id, case.passed, case.errored, case.score, case.latency_s, case.unstable,
            case.fingerprint, usage.input_tokens if usage else None, usage.output_tokens if usage else None,
        )  # fmt: skip


@attrs.frozen
class RunIndex:
    """Every case of one run as a :class:`CaseRow`, in stored order, with its id's position.

    ``version`` says which state of the run it was read from (see :class:`IndexCache`);
    ``seconds`` how long reading it took.
    """

    run_id: str
    rows: tuple[CaseRow, ...]
    positions: Mapping[str, int]
    version: Hashable = None
    seconds: float = 0.0

    def row(self, case_id: str) -> CaseRow | None:
        """The row of ``case_id``, or ``None``."""
        position = self.positions.get(case_id)
        return None if position is None else self.rows[position]

    def __len__(self) -> int:
        return len(self.rows)


def build_index(store: ReadOnlyStore, run_id: str, version: Hashable = None) -> RunIndex:
    """Read the run's cases once into a :class:`RunIndex`."""
    started = time.monotonic()
    rows = tuple(CaseRow.of(position, case) for position, case in enumerate(store.cases(run_id)))
    positions = {row.case_id: row.position for row in rows}
    return RunIndex(run_id, rows, positions, version, time.monotonic() - started)


def fetch_cases(store: ReadOnlyStore, index: RunIndex, case_ids: Iterable[str]) -> dict[str, CaseResult]:
    """The full stored cases of ``case_ids`` (those the index knows), read in one pass that stops
    at the last one needed; only failed, errored and unstable cases are read when all the wanted
    ones are such."""
    wanted = {case_id for case_id in case_ids if case_id in index.positions}
    if not wanted:
        return {}
    notable = all(index.rows[index.positions[case_id]].notable for case_id in wanted)
    found: dict[str, CaseResult] = {}
    with closing(store.cases(index.run_id, notable_only=notable)) as cases:
        for case in cases:
            if case.case_id in wanted:
                found[case.case_id] = case
                if len(found) == len(wanted):
                    break
    return found


def case_pairs(current: RunIndex, baseline: RunIndex) -> Iterator[CasePair]:
    """Both runs' cases matched by id, as :meth:`StreamedCases.paired_cases` gives them: the
    current run's in stored order, then the baseline's cases it lacks, in the baseline's order."""
    for row in current.rows:
        before = baseline.row(row.case_id)
        yield CasePair(row.case_id, row.mark(), None if before is None else before.mark())
    for row in baseline.rows:
        if row.case_id not in current.positions:
            yield CasePair(row.case_id, None, row.mark())


class IndexCache:
    """Run indexes by run id, least recently used evicted first once they hold more than
    ``max_rows`` rows together (the index being read is always kept). Two requests for one
    run's index wait for one read."""

    def __init__(self, max_rows: int = 600_000) -> None:
        """An empty cache holding at most ``max_rows`` rows (about 150 bytes each)."""
        self.max_rows = max_rows
        self._indexes: OrderedDict[str, RunIndex] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}

    def get(self, run_id: str, version: Hashable, build: Callable[[], RunIndex]) -> RunIndex:
        """The index of ``run_id`` read at ``version``, built with ``build`` when the cache has
        none or one of another version."""
        with self._lock:
            found = self._indexes.get(run_id)
            if found is not None and found.version == version:
                self._indexes.move_to_end(run_id)
                return found
            building = self._building.setdefault(run_id, threading.Lock())
        with building:
            with self._lock:
                found = self._indexes.get(run_id)
                if found is not None and found.version == version:
                    return found
            index = build()
            with self._lock:
                self._indexes[run_id] = index
                self._indexes.move_to_end(run_id)
                self._evict(keep=run_id)
                self._building.pop(run_id, None)
            return index

    def _evict(self, keep: str) -> None:
        total = sum(len(index) for index in self._indexes.values())
        for run_id in list(self._indexes):
            if total <= self.max_rows:
                return
            if run_id != keep:
                total -= len(self._indexes.pop(run_id))
