"""What a results store offers: a base protocol and optional capabilities checked at runtime."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from ..answers import ServingIdentity
from ..baselines import Acceptance, BaselineScope
from ..leases import LeaseOwner, ShardProgress
from ..runs import CaseResult, Run

__all__ = [
    "AcceptedBaselines",
    "CaseMark",
    "CasePair",
    "CaseTally",
    "FirstAcceptance",
    "ResultRepository",
    "GeneratorScopedResults",
    "ProviderModelQualityScores",
    "ProviderModelQualityRuns",
    "ResumableRuns",
    "RetrievalBaselines",
    "RunLeases",
    "RunHistory",
    "RunVerdicts",
    "StoredCaseForms",
    "StoredVerdict",
    "StreamedCases",
    "VERDICT_STATES",
]

#: What a stored verdict says: first comparable run, compared within tolerance, compared and
#: regressed, or stored without a comparison (the note says why).
VERDICT_STATES = ("baseline", "ok", "regressed", "not_compared")


@runtime_checkable
class ResultRepository(Protocol):
    """The minimum a store must do: keep runs and their cases, and give them back."""

    def begin_run(self, run: Run) -> Run:
        """Create the run (status running), or return the existing one with that id (a shard joining)."""
        ...

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        """Commit finished cases; a case id already stored for the run is left as it is, unless the
        stored one is errored (a resume answering it again replaces it)."""
        ...

    def finish_run(
        self,
        run_id: str,
        status: str,
        finished_at: float,
        *,
        grader: str | None = None,
        identity: ServingIdentity | None = None,
        identity_note: str | None = None,
        metrics: Mapping[str, Any] | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> Run:
        """Recompute the aggregates from the stored cases, set the status and return the run with cases.

        ``grader`` is the yardstick the run is stored under; ``identity`` the verified serving
        identity (``None``: unverified, ``identity_note`` says why); ``metrics`` and ``provenance``
        are kept as given when not ``None``.
        """
        ...

    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, or ``None``."""
        ...


@runtime_checkable
class GeneratorScopedResults(Protocol):
    """Reads scoped to one serving identity: the baseline and verified quality scores."""

    def baseline_for(
        self, set_identifier: str, identity: ServingIdentity, grader: str, *, exclude_run_id: str | None = None
    ) -> Run | None:
        """The latest complete, verified run of the set under exactly this identity and yardstick."""
        ...

    def mean_quality_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> float | None:
        """Mean of the latest verified run per set for this instance and alias (``None``: no data)."""
        ...


@runtime_checkable
class RetrievalBaselines(Protocol):
    """The read a retrieval run is compared through: its predecessor in one set, retriever and deployment."""

    def latest_retrieval_run(
        self,
        set_identifier: str,
        retriever: str,
        *,
        deployment: str | None = None,
        exclude_run_id: str | None = None,
    ) -> Run | None:
        """The newest complete retrieval run of the set with this retriever in this deployment
        (``None``: runs without a deployment), whatever its fingerprints, with its cases."""
        ...


@runtime_checkable
class ProviderModelQualityScores(Protocol):
    """Quality per alias across instances; ``None`` when the alias was measured through several."""

    def mean_quality_for_model(self, model_alias: str, grader: str = "deterministic") -> float | None:
        """Mean of the latest verified run per set for the alias, or ``None`` (no data or ambiguous)."""
        ...


@runtime_checkable
class ProviderModelQualityRuns(Protocol):
    """The evidence behind a provider-model quality score: which runs it was averaged from."""

    def quality_runs_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> list[Run]:
        """The latest verified complete run per set for this instance and alias, without cases."""
        ...


@runtime_checkable
class RunHistory(Protocol):
    """Listing and retention."""

    def recent_runs(self, set_identifier: str | None = None, limit: int = 20) -> list[Run]:
        """Runs newest first by start time, without their cases."""
        ...

    def purge_older_than(self, cutoff: float) -> int:
        """Delete whole runs (with their cases) started strictly before ``cutoff``; return how many."""
        ...


@runtime_checkable
class ResumableRuns(Protocol):
    """What ``--resume`` and an interrupted run need beyond the base protocol."""

    def answered_case_ids(self, run_id: str) -> set[str]:
        """The ids of the run's stored cases that have an answer (errored cases are not answered)."""
        ...

    def latest_unfinished_run(
        self, set_identifier: str, provider_instance: str | None, model_alias: str | None, grader: str
    ) -> Run | None:
        """The newest run of the set for this instance, alias and grader that is not complete."""
        ...

    def mark_status(self, run_id: str, status: str) -> None:
        """Set a run's status and nothing else (``interrupted`` on Ctrl-C, ``running`` on resume)."""
        ...


@runtime_checkable
class RunLeases(Protocol):
    """Who is answering a run: leases with a heartbeat (see :mod:`evalkit.leases`), and the shards' state."""

    def acquire_lease(self, run_id: str, part: str, owner: LeaseOwner, *, shard_count: int | None = None) -> None:
        """Take the lease on ``part`` (``*`` or ``I/N``) of the run, atomically; raise
        :class:`~evalkit.leases.RunBusyError` when a live lease overlaps it and
        :class:`~evalkit.leases.ShardMismatchError` when a stored shard gives another N."""
        ...

    def renew_lease(self, run_id: str, part: str, owner: LeaseOwner) -> bool:
        """Refresh the heartbeat; ``False`` when the lease is no longer this owner's."""
        ...

    def release_lease(self, run_id: str, part: str, owner: LeaseOwner, *, done: bool) -> None:
        """Give the lease up; ``done`` records that this part's cases are all in."""
        ...

    def release_thread_connection(self) -> None:
        """Close whatever connection the calling thread opened (the heartbeat thread calls it last)."""
        ...

    def shard_progress(self, run_id: str) -> ShardProgress:
        """Which shards of the run are in and which are being answered now."""
        ...


@runtime_checkable
class ResumableRetrievalRuns(Protocol):
    """What ``evalkit retrieval --resume`` without a run id needs: the unfinished run to continue."""

    def latest_unfinished_retrieval_run(
        self, set_identifier: str, retriever: str, *, deployment: str | None = None
    ) -> Run | None:
        """The newest retrieval run of the set with this retriever in this deployment that is not complete."""
        ...


@attrs.frozen
class StoredVerdict:
    """The verdict a run got when it was stored: one of :data:`VERDICT_STATES`, the baseline it
    was compared with, and a one-line note (the summary, or why it was not compared)."""

    state: str = attrs.field(validator=attrs.validators.in_(VERDICT_STATES))
    baseline_id: str | None = None
    note: str | None = None


@runtime_checkable
class RunVerdicts(Protocol):
    """Keeping each run's verdict with it, for ``evalkit history`` and ``evalkit show``."""

    def record_verdict(self, run_id: str, verdict: StoredVerdict) -> None:
        """Store the verdict of a finished run."""
        ...

    def verdicts_for(self, run_ids: Sequence[str]) -> dict[str, StoredVerdict]:
        """The stored verdicts of these runs; runs without one (stored before verdicts were kept,
        or not finished) are absent."""
        ...


@runtime_checkable
class AcceptedBaselines(Protocol):
    """Keeping which runs are accepted baselines, and reading a scope's current baseline.

    The kernel compares a run only through this capability: a store without it stores runs and
    says why it does not compare (see :mod:`evalkit.baselines`).
    """

    def accepted_baseline(self, scope: BaselineScope, *, exclude_run_id: str | None = None) -> Run | None:
        """The scope's baseline with its cases: of the complete, accepted runs of exactly this scope
        (a prompt run also verified, with at least one answer), the most recently accepted."""
        ...

    def accept_run(self, run_id: str, acceptance: Acceptance) -> None:
        """Record that the run is accepted (replacing an earlier acceptance of the same run)."""
        ...

    def acceptances_for(self, run_ids: Sequence[str]) -> dict[str, Acceptance]:
        """The acceptances of these runs; runs that are not accepted are absent."""
        ...

    def accepted_runs(self, set_identifier: str) -> list[Run]:
        """Every complete, accepted run of the set, most recently accepted first, without cases."""
        ...


@runtime_checkable
class FirstAcceptance(Protocol):
    """Accepting a run as the first of its scope atomically: two first runs of one scope finishing
    at the same moment (parallel CI jobs on a new store) must not both become "the first"."""

    def accept_if_first(self, run_id: str, scope: BaselineScope, acceptance: Acceptance) -> bool:
        """Accept the run when no other run of ``scope`` is an accepted baseline, in one
        transaction that concurrent callers are serialised on; ``False`` (and nothing written) when
        one is."""
        ...


@attrs.frozen
class CaseTally:
    """What the end of a run needs to know of its stored cases, counted by the store without
    reading them back: the aggregates, who answered and under which yardsticks.

    ``identities`` counts the answered (not errored) cases per serving identity (``None``: the
    case carries none); ``yardsticks`` are the non-empty yardsticks of those cases.
    """

    answered: int = 0
    passed: int = 0
    errored: int = 0
    score_sum: float = 0.0
    identities: Mapping[ServingIdentity | None, int] = attrs.field(factory=dict)
    yardsticks: frozenset[str] = frozenset()


@attrs.frozen
class CaseMark:
    """What a comparison needs of one stored case: its result, whether the judge disagreed with
    itself on it, its place in its run's stored order and the fingerprint of its content
    (:attr:`~evalkit.runs.CaseResult.fingerprint`; ``None`` when the case was stored without one)."""

    passed: bool
    score: float
    unstable: bool = False
    position: int = 0
    fingerprint: str | None = None


@attrs.frozen
class CasePair:
    """One case id of two runs: its mark in the current run and in the baseline (``None`` where
    the run has no such case)."""

    case_id: str
    current: CaseMark | None
    baseline: CaseMark | None


@runtime_checkable
class ClosableRepository(Protocol):
    """A repository that holds a connection or a file open until it is closed."""

    def close(self) -> None:
        """Release what the repository holds open."""
        ...


@runtime_checkable
class StreamedCases(Protocol):
    """Reading a run's cases a page at a time, so the end of a 100,000-case run holds no case list.

    A store offering this capability also accepts ``with_cases=False`` on ``finish_run`` and on
    ``accepted_baseline`` (the run is returned without its cases; aggregates come from the store).
    """

    def case_tally(self, run_id: str) -> CaseTally:
        """The run's aggregates, identities and yardsticks, computed by the store."""
        ...

    def iter_cases(self, run_id: str, *, notable_only: bool = False) -> Iterator[CaseResult]:
        """The run's cases in stored order, read a page at a time; ``notable_only`` yields only
        the failed, errored and unstable ones."""
        ...

    def paired_cases(self, run_id: str, baseline_id: str) -> Iterator[CasePair]:
        """Every case id of either run: first the current run's cases in its stored order (with
        the baseline's case of the same id, if any), then the baseline's cases the current run
        does not have, in the baseline's order."""
        ...


@runtime_checkable
class StoredCaseForms(Protocol):
    """Committing cases and saying, without reading them, how they read back: a caller that prints
    a run's cases as the store keeps them (answers reduced to the privacy level, secrets scrubbed)
    gets them as they are committed, instead of reading the whole run back at its end."""

    def record_cases_as_stored(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> list[CaseResult] | None:
        """Commit ``cases`` as ``record_cases`` does, and return them exactly as
        :meth:`StreamedCases.iter_cases` reads them back (for ids the run did not hold before), in
        stored order; ``None`` when the store committed them but cannot say so."""
        ...
