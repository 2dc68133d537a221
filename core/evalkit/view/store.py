"""The reads the viewer makes of a results store, and nothing else.

:class:`ReadOnlyStore` wraps a repository and offers only reading methods: no page handler can
reach ``record_cases``, ``finish_run``, ``accept_run`` or any other write, whatever the
repository implements. A built-in store is opened on a connection that refuses every change
(``read_only=True``: SQLite's ``query_only``, PostgreSQL's read-only transactions) and never takes
SQLite's write lock, so a run being written goes on while it is viewed; a SQLite file that does not
exist is refused before it is opened (opening it would create it).
Each optional capability (:mod:`evalkit.storage`) is asked for with ``isinstance`` and its
absence degrades a page instead of failing it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..baselines import Acceptance
from ..components import offers
from ..leases import RunLiveness
from ..runs import CaseResult, Run
from ..storage import (
    SQL_SCHEMES,
    AcceptedBaselines,
    CaseTally,
    RunHistory,
    RunVerdicts,
    StoredVerdict,
    StreamedCases,
    close_repository,
    missing_store,
    open_repository,
)

__all__ = ["ReadOnlyStore", "open_read_only"]


def open_read_only(url: str) -> ReadOnlyStore:
    """The store ``url`` names, for reading; :class:`~evalkit.errors.StorageError` when there is
    none (a SQLite file that does not exist is never created) or it cannot be read."""
    from ..errors import StorageError
    from ..shapes import clipped
    from ..wording import path_named

    path = missing_store(url)
    if path is not None:
        raise StorageError(f"there is no results store at {clipped(path_named(path))}: nothing has been run there yet")
    scheme = url.split(":", 1)[0].lower()
    # The built-in stores' connection itself refuses every change (SQLite query_only, PostgreSQL's
    # read-only transactions); a plugin's repository is read through the methods below only.
    repository = open_repository(url, create=False, read_only=True) if scheme in SQL_SCHEMES else open_repository(url)
    return ReadOnlyStore(repository)


class ReadOnlyStore:
    """A repository seen through its reading methods only (see the module docstring)."""

    def __init__(self, repository: Any) -> None:
        """Wrap ``repository``; :meth:`close` closes it."""
        self._repository = repository

    @property
    def lists_runs(self) -> bool:
        """True when the store can list runs (``RunHistory``): the sets and set pages need it."""
        return offers(self._repository, RunHistory)

    @property
    def counts_cases(self) -> bool:
        """True when the store counts a run's cases itself (:meth:`tally`)."""
        return offers(self._repository, StreamedCases)

    def run(self, run_id: str) -> Run | None:
        """The run, without its cases, or ``None``."""
        return self._repository.get_run(run_id, with_cases=False)

    def runs(self, set_identifier: str | None = None, limit: int = 200) -> list[Run]:
        """Runs newest first, of one set or of all (empty when the store cannot list them)."""
        if not self.lists_runs:
            return []
        return list(self._repository.recent_runs(set_identifier, limit=limit))

    def cases(self, run_id: str, *, notable_only: bool = False) -> Iterator[CaseResult]:
        """The run's cases in stored order, a page at a time where the store streams them
        (``notable_only``: the failed, errored and unstable ones)."""
        if offers(self._repository, StreamedCases):
            yield from self._repository.iter_cases(run_id, notable_only=notable_only)
            return
        run = self._repository.get_run(run_id, with_cases=True)
        for case in run.cases if run is not None else ():
            if not notable_only or case.needs_a_look:
                yield case

    def tally(self, run_id: str) -> CaseTally | None:
        """The run's stored cases counted by the store (``None``: the store cannot count them)."""
        if offers(self._repository, StreamedCases):
            return self._repository.case_tally(run_id)
        return None

    def verdicts(self, run_ids: Sequence[str]) -> Mapping[str, StoredVerdict]:
        """The verdicts stored with these runs (empty when the store keeps none)."""
        if not run_ids or not isinstance(self._repository, RunVerdicts):
            return {}
        return self._repository.verdicts_for(list(run_ids))

    def acceptances(self, run_ids: Sequence[str]) -> Mapping[str, Acceptance] | None:
        """The acceptances of these runs; ``None`` when the store does not keep acceptances."""
        if not offers(self._repository, AcceptedBaselines):
            return None
        return self._repository.acceptances_for(list(run_ids)) if run_ids else {}

    def liveness(self, runs: Sequence[Run]) -> Mapping[str, RunLiveness]:
        """Whether a process answers each of ``runs`` that is running, as its leases say
        (:func:`evalkit.leases.liveness`: absent for the others, and when the store keeps no leases)."""
        from ..leases import liveness

        return liveness(self._repository, runs)

    def failure_said(self, exc: Exception) -> Exception:
        """``exc``, or — raised in or through the methods of a third-party store (its damaged file,
        its client's lost connection) — that store's failure, a :class:`~evalkit.errors.StorageError`
        naming it, as every command says it (:func:`evalkit.storage.store_failure_said`)."""
        from ..storage import store_failure_said

        return store_failure_said(exc, [self._repository])

    def close(self) -> None:
        """Close the repository (the calling thread's connection)."""
        close_repository(self._repository)
