"""What a retriever returned for one question, read into one shape: distinct ids, best first, with scores when given.

A retriever may return plain ids (``["d1", "d2"]``), ``(id, score)`` pairs or
:class:`~evalkit.retrieval.contracts.ScoredDocument` results. :func:`read_ranking` turns any of
them into a :class:`Ranking`: at most ``limit`` entries as returned (the rest are counted, not
kept), then empty ids skipped and repeats collapsed onto their first occurrence, which keeps its
score. The retriever's order is the ranking; scores are recorded, never used to re-sort.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from evalkit.errors import RetrievalError
from evalkit.shapes import finite_number, plain_text, short_repr, too_long

from .contracts import ScoredDocument
from .scoring import rank_distinct

__all__ = ["COUNTED_BEYOND_LIMIT", "MAX_DOCUMENT_ID_CHARS", "Ranking", "read_ranking"]

#: How many results past ``limit`` are read (and counted) from a retriever that returns an
#: iterator rather than a list; the rest are never asked for.
COUNTED_BEYOND_LIMIT = 10_000
#: The longest document id a ranking takes, in characters: an id names a document, and a
#: retriever returning ids of 50 million characters made a 6 GB store and took 3 GB and two
#: minutes for 61 questions.
MAX_DOCUMENT_ID_CHARS = 1_000


@attrs.frozen
class Ranking:
    """One question's distinct ranked ids, best first, and the retriever's scores for them (``None``: none given)."""

    ids: tuple[str, ...]
    scores: tuple[float, ...] | None = None

    def pairs(self) -> list[list[Any]]:
        """``[[id, score or None], ...]``, as ``--json`` and the store keep it."""
        if self.scores is None:
            return [[i, None] for i in self.ids]
        return [[i, s] for i, s in zip(self.ids, self.scores, strict=True)]


def _check_lengths(ids: Sequence[Any]) -> None:
    """Refuse a document id longer than :data:`MAX_DOCUMENT_ID_CHARS` (ids of other types are
    named where they are read)."""
    for at, doc_id in enumerate(ids, start=1):
        if isinstance(doc_id, str) and (long := too_long(doc_id, MAX_DOCUMENT_ID_CHARS)):
            raise RetrievalError(f"result {at}: the document id {short_repr(doc_id)} {long}")


def _score(value: Any, at: int) -> float:
    if not finite_number(value):
        raise RetrievalError(f"result {at}: the score must be a finite number, not {short_repr(value)}")
    return float(value)


def _scored(raw: Sequence[Any]) -> tuple[list[str], list[float]]:
    ids: list[str] = []
    scores: list[float] = []
    for at, item in enumerate(raw, start=1):
        if isinstance(item, ScoredDocument):
            doc_id, score = item.id, item.score
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            doc_id, score = item
        else:
            raise RetrievalError(
                f"result {at} is {type(item).__name__} {str(item)[:60]!r}; a ranking is all ids, "
                "all (id, score) pairs or all ScoredDocument results"
            )
        if not isinstance(doc_id, str):
            raise RetrievalError(f"a retriever returned a document id that is not a string: {short_repr(doc_id)}")
        ids.append(plain_text(doc_id))
        scores.append(_score(score, at))
    return ids, scores


def read_ranking(raw: Any, limit: int) -> tuple[Ranking, int]:
    """The :class:`Ranking` of a retriever's return value, and how many results it returned
    beyond ``limit`` (``0`` when within it; those are dropped before anything else). An iterator
    that is no list or tuple is read up to :data:`COUNTED_BEYOND_LIMIT` results past the limit.

    Raises :class:`RetrievalError` for anything that is not a list of ids, of ``(id, score)``
    pairs or of :class:`ScoredDocument` (a string, a mapping, a set, which has no order, a mixed
    list, a non-finite score).
    """
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise RetrievalError(f"returned {type(raw).__name__} {str(raw)[:60]!r}, not a list of document ids")
    if isinstance(raw, (set, frozenset)):
        # Its order is the hash seed's: the same retriever scored differently in every process.
        raise RetrievalError(f"returned {type(raw).__name__}, which has no order: a ranking is a list, best first")
    # Any other iterable is read only up to a count past the limit: list() of an endless generator
    # took every byte of memory the machine had.
    items = raw if isinstance(raw, (list, tuple)) else list(itertools.islice(raw, limit + COUNTED_BEYOND_LIMIT))
    over = len(items) if len(items) > limit else 0
    if over:
        items = items[:limit]
    if not items or isinstance(items[0], str):
        # Plain str before anything hashes or compares them: a str subclass's own == runs later,
        # in the scoring outside the retriever's time limit (an internal error when it raised).
        items = [plain_text(item) for item in items]
        _check_lengths(items)
        return Ranking(rank_distinct(items)), over
    ids, scores = _scored(items)
    _check_lengths(ids)
    kept: dict[str, float] = {}
    for doc_id, score in zip(ids, scores, strict=True):
        if doc_id and doc_id not in kept:
            kept[doc_id] = score
    return Ranking(tuple(kept), tuple(kept.values())), over
