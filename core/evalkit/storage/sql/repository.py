"""The Peewee repository, whole: every part of :mod:`evalkit.storage.sql` in one class.

Each repository builds its own model classes bound to its own database, so several stores can be
open in one process.
"""

from __future__ import annotations

from .baselines import BaselinesAndVerdicts
from .cache import AnswerCacheStore
from .calibrations import Calibrations
from .history import HistoryAndQuality
from .leases import Leases
from .retrieval import RetrievalReads

__all__ = ["SqlRepository"]


class SqlRepository(BaselinesAndVerdicts, RetrievalReads, HistoryAndQuality, Leases, Calibrations, AnswerCacheStore):
    """A :class:`~evalkit.storage.ResultRepository` with every optional capability, over Peewee.

    Composed of one part per concern, each over the open database of :class:`.store.SqlStore`:
    runs and cases (:mod:`.runs`), verdicts and baselines (:mod:`.baselines`), retrieval reads
    (:mod:`.retrieval`), history, retention and quality (:mod:`.history`), leases (:mod:`.leases`),
    judge calibrations (:mod:`.calibrations`) and the answer cache (:mod:`.cache`).
    ``SqlRepository(url, create=True)`` opens ``url`` as :class:`.store.SqlStore` does.
    """
