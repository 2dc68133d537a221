"""A run's cases as a compact index, so every page is cut on the server without reading the run again.

The store can stream a run's cases in stored order (:meth:`ReadOnlyStore.cases`) but cannot
seek into them. The first page of a run reads them once into a :class:`RunIndex`: one small
:class:`CaseRow` per case (id, result, score, latency, tokens, fingerprint — no text) for
filtering, sorting and paging, and the cases themselves :data:`CHUNK_CASES` at a time, pickled
and compressed (about a tenth of their size in memory), so the cases of any page, and a search
through all of them, are read from memory instead of from the start of the run again. A run whose
compressed cases would pass :data:`KEPT_CASE_BYTES` keeps rows only; its pages are then read from
the store (:func:`fetch_cases`: a pass that stops at the last case needed, and reads only the
failed ones when all it needs failed). Comparisons pair two indexes in memory
(:func:`case_pairs`), in the order the store's ``paired_cases`` gives.

Indexes live in an :class:`IndexCache` bounded by what they hold. A complete run never changes, so
its index is kept until evicted; a run still being answered is indexed again when the store
counts other cases than the index holds.
"""

from __future__ import annotations

import pickle
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import closing

import attrs

from ..runs import CaseResult
from ..storage import CaseMark, CasePair
from .store import ReadOnlyStore

__all__ = [
    "CHUNK_CASES", "KEPT_CASE_BYTES", "CaseRow", "IndexCache", "RunIndex", "build_index", "case_pairs", "fetch_cases",
    "index_cases",
]  # fmt: skip

#: How many cases one compressed chunk of a run's cases holds.
CHUNK_CASES = 256
#: The most compressed bytes of cases one run's index keeps (beyond: rows only).
KEPT_CASE_BYTES = 256 * 1024 * 1024
#: What a row is counted as in the cache's budget (bytes; measured about 150).
ROW_BYTES = 160


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
    #: The run's cases in stored order, :data:`CHUNK_CASES` a chunk, pickled and compressed;
    #: ``None`` when they were too large to keep.
    chunks: tuple[bytes, ...] | None = None

    def row(self, case_id: str) -> CaseRow | None:
        """The row of ``case_id``, or ``None``."""
        position = self.positions.get(case_id)
        return None if position is None else self.rows[position]

    @property
    def weight(self) -> int:
        """About how many bytes the index holds."""
        return len(self.rows) * ROW_BYTES + sum(len(chunk) for chunk in self.chunks or ())

    def chunk(self, number: int) -> list[CaseResult]:
        """The cases of chunk ``number`` (kept chunks only)."""
        assert self.chunks is not None
        cases: list[CaseResult] = pickle.loads(zlib.decompress(self.chunks[number]))
        return cases

    def __len__(self) -> int:
        return len(self.rows)


def _packed(cases: list[CaseResult]) -> bytes:
    return zlib.compress(pickle.dumps(cases, protocol=pickle.HIGHEST_PROTOCOL), 1)


def build_index(store: ReadOnlyStore, run_id: str, version: Hashable = None, kept_bytes: int = KEPT_CASE_BYTES) -> RunIndex:
    """Read the run's cases once into a :class:`RunIndex` (their chunks too, up to ``kept_bytes``)."""
    started = time.monotonic()
    rows: list[CaseRow] = []
    chunks: list[bytes] | None = []
    pending: list[CaseResult] = []
    kept = 0
    for position, case in enumerate(store.cases(run_id)):
        rows.append(CaseRow.of(position, case))
        if chunks is None:
            continue
        pending.append(case)
        if len(pending) == CHUNK_CASES:
            chunks.append(_packed(pending))
            kept += len(chunks[-1])
            pending = []
            if kept > kept_bytes:
                chunks = None
    if chunks is not None and pending:
        chunks.append(_packed(pending))
        if kept + len(chunks[-1]) > kept_bytes:
            chunks = None
    positions = {row.case_id: row.position for row in rows}
    return RunIndex(run_id, tuple(rows), positions, version, time.monotonic() - started, None if chunks is None else tuple(chunks))


def index_cases(store: ReadOnlyStore, index: RunIndex) -> Iterator[CaseResult]:
    """Every case of the indexed run, in stored order: from the kept chunks, else from the store."""
    if index.chunks is None:
        yield from store.cases(index.run_id)
        return
    for number in range(len(index.chunks)):
        yield from index.chunk(number)


def fetch_cases(store: ReadOnlyStore, index: RunIndex, case_ids: Iterable[str]) -> dict[str, CaseResult]:
    """The full stored cases of ``case_ids`` (those the index knows): from the kept chunks, else
    read in one pass that stops at the last one needed, of only the failed, errored and unstable
    cases when all the wanted ones are such."""
    wanted = {case_id for case_id in case_ids if case_id in index.positions}
    if not wanted:
        return {}
    if index.chunks is not None:
        numbers = sorted({index.positions[case_id] // CHUNK_CASES for case_id in wanted})
        return {case.case_id: case for number in numbers for case in index.chunk(number) if case.case_id in wanted}
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
    ``max_bytes`` together (:attr:`RunIndex.weight`; the index being read is always kept). Two
    requests for one run's index wait for one read."""

    def __init__(self, max_bytes: int = 768 * 1024 * 1024) -> None:
        """An empty cache holding indexes of at most ``max_bytes`` together."""
        self.max_bytes = max_bytes
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
        total = sum(index.weight for index in self._indexes.values())
        for run_id in list(self._indexes):
            if total <= self.max_bytes:
                return
            if run_id != keep:
                total -= self._indexes.pop(run_id).weight
