"""What a results store offers: the base protocol every store implements, and a few optional
capabilities, each asked for once per command through :func:`capabilities`.

Every store implements :class:`ResultRepository` (a third party's store, found through the
``evalkit.repositories`` entry points, often nothing more). Each capability below is a promise a
store may make — the repository contract suite (:func:`evalkit.testing.check_repository`) holds a
store to every one it claims — and each has a stated behaviour when a store lacks it:

* :class:`ResumableRuns` — without it ``--resume`` needs the run id, the stored cases are read
  with ``get_run``, and Ctrl-C cannot mark the run interrupted;
* :class:`AcceptedBaselines` — without it runs are stored and reported ``not_comparable`` with the
  reason, no verdict is kept with a run, and ``evalkit baseline`` exits 2;
* :class:`GeneratorScopedResults` — without it prompt runs are not compared (the reason says so)
  and routing has no quality per instance;
* :class:`ProviderModelQualityScores` — without it routing has no quality per alias;
* :class:`RunHistory` — without it ``evalkit history`` and ``evalkit db prune`` exit 2 and
  reports show no trend;
* :class:`RunLeases` — without it nothing refuses a second process answering the same run or shard,
  and a run whose process was killed is shown ``running`` like one that is answered now;
* :class:`StreamedCases` — without it the end of a run reads every case back and compares in
  memory (the same verdict, memory growing with the set);
* :class:`CaseHistory` — without it ``evalkit flaky`` and the flaky marks of a run's output read
  the scope's recent runs one by one (through :class:`RunHistory`; nothing without that either).
* :class:`RunSpending` — without it a run's spend is summed from its cases read back whole, and
  shards sharing a ``--budget`` see only their own spending;
* :class:`AnswerCache` — without it ``--cache`` is refused (exit 2) naming the capability;
* :class:`RevisableProvenance` — without it the spending limit that stopped a shard is written
  through ``finish_run(provenance=...)``, read just before (two shards stopped at the same instant
  can lose one's), and a shard run again keeps its earlier attempt's until it finishes.

:func:`capabilities` asks a store for all of them once and hands the kernel a typed
:class:`Capabilities`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from ..answers import ServingIdentity
from ..costs import CaseUsage
from ..runs import CaseResult, Run
from .values import (
    VERDICT_STATES,
    Acceptance,
    BaselineScope,
    CalibrationRecord,
    CaseMark,
    CasePair,
    CaseTally,
    LeaseOwner,
    RunLiveness,
    RunOutcomes,
    ShardProgress,
    StoredVerdict,
)

__all__ = [
    "AcceptedBaselines",
    "AnswerCache",
    "CachedAnswer",
    "CacheStats",
    "RunSpending",
    "Capabilities",
    "JudgeCalibrations",
    "CaseHistory",
    "CaseMark",
    "CasePair",
    "CaseTally",
    "CaseUsage",
    "ClosableRepository",
    "GeneratorScopedResults",
    "ProviderModelQualityScores",
    "ResultRepository",
    "ResumableRuns",
    "RevisableProvenance",
    "RunHistory",
    "RunLeases",
    "STORE_PROTOCOLS",
    "StoredVerdict",
    "StreamedCases",
    "VERDICT_STATES",
    "capabilities",
    "latest_unfinished_run_of",
    # older names of merged capabilities
    "FirstAcceptance",
    "ProviderModelQualityRuns",
    "ResumableRetrievalRuns",
    "RunVerdicts",
    "StoredCaseForms",
]


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

        ``finished_at`` is kept only for a status that ends the run: one left ``running`` (a shard in,
        others still to come) has no finish time (``finished_at`` ``None``, as a run just begun).

        ``grader`` is the yardstick the run is stored under; ``identity`` the verified serving
        identity (``None``: unverified, ``identity_note`` says why); ``metrics`` and ``provenance``
        are kept as given when not ``None``.
        """
        ...

    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, or ``None``."""
        ...


@runtime_checkable
class ResumableRuns(Protocol):
    """What ``--resume``, a shard joining a run, and an interrupted run need beyond the base protocol.

    Without it: ``--resume`` needs the run's id, the cases already stored are read with
    ``get_run``, and a run stopped by Ctrl-C or a failing store is not marked ``interrupted``.
    """

    def answered_case_ids(self, run_id: str) -> set[str]:
        """The ids of the run's stored cases that have an answer (errored cases are not answered)."""
        ...

    def mark_status(self, run_id: str, status: str) -> None:
        """Set a run's status (``interrupted`` on Ctrl-C, ``running`` on resume); a complete run
        keeps its status. ``running`` reopens a run to be answered again (``--resume``, a shard
        taken again), so a store that keeps verdicts (:class:`AcceptedBaselines`) forgets the one
        recorded when the run last closed: it is no longer the run's, and ``show``/``history``
        would give it beside a running or killed run. A store that keeps it — written before
        this was asked — shows that earlier verdict until the run closes again and its verdict
        replaces it (no reader depends on it meanwhile: a run not complete is decided again)."""
        ...

    def latest_unfinished_run(
        self,
        set_identifier: str,
        provider_instance: str | None,
        model_alias: str | None,
        grader: str,
        adapter: str | None = None,
    ) -> Run | None:
        """The newest prompt run of the set for this instance, alias and grader that is not complete,
        passing over re-grade runs (``answers_reused == "regrade"``: re-graded again, never resumed)
        and, given an ``adapter``, ad-hoc runs (no instance) of another adapter (a run that stored
        none is not passed over): another adapter's answers would not continue it. A store written
        before ``adapter`` was asked for is called without it (see
        :func:`latest_unfinished_run_of`)."""
        ...

    def latest_unfinished_retrieval_run(
        self, set_identifier: str, retriever: str, *, deployment: str | None = None
    ) -> Run | None:
        """The newest retrieval run of the set with this retriever in this deployment that is not complete."""
        ...


@runtime_checkable
class AcceptedBaselines(Protocol):
    """What the verdict leaves in the store: each run's verdict, and which runs are accepted baselines.

    The kernel compares a run with its scope's baseline only through this capability (see
    :mod:`evalkit.baselines` and :mod:`evalkit.run.decide`). Without it a run is stored and
    reported ``not_comparable`` with the reason (``--baseline RUN_ID`` still compares), no verdict
    is kept with the run (``history`` and ``show`` print ``—``), and ``evalkit baseline`` exits 2.
    """

    def accepted_baseline(
        self, scope: BaselineScope, *, exclude_run_id: str | None = None, with_cases: bool = True
    ) -> Run | None:
        """The scope's baseline: of the complete, accepted runs of exactly this scope (a prompt run
        also verified, with at least one answer), the most recently accepted, with its cases
        (``with_cases=False`` is passed only to a store that also has :class:`StreamedCases`)."""
        ...

    def accept_run(self, run_id: str, acceptance: Acceptance) -> None:
        """Record that the run is accepted (replacing an earlier acceptance of the same run)."""
        ...

    def accept_if_first(self, run_id: str, scope: BaselineScope, acceptance: Acceptance) -> bool:
        """Accept the run when no other run of ``scope`` is an accepted baseline, in one
        transaction that concurrent callers are serialised on; ``False`` (and nothing written) when
        one is. Two first runs of one scope finishing at the same moment (parallel CI jobs on a
        new store) must not both become "the first"."""
        ...

    def acceptances_for(self, run_ids: Sequence[str]) -> dict[str, Acceptance]:
        """The acceptances of these runs; runs that are not accepted are absent."""
        ...

    def accepted_runs(self, set_identifier: str) -> list[Run]:
        """Every complete, accepted run of the set, most recently accepted first, without cases."""
        ...

    def record_verdict(self, run_id: str, verdict: StoredVerdict) -> None:
        """Store the verdict of a finished run."""
        ...

    def verdicts_for(self, run_ids: Sequence[str]) -> dict[str, StoredVerdict]:
        """The stored verdicts of these runs; runs without one (stored before verdicts were kept,
        or not finished) are absent."""
        ...


@runtime_checkable
class GeneratorScopedResults(Protocol):
    """Reads scoped to one serving identity: the baseline and verified quality scores (the design's
    generator-scoped reads).

    Without it a prompt run is stored and reported ``not_comparable`` ("the configured repository
    has no generator-scoped reads"), and routing has no measured quality per instance.
    """

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

    def quality_runs_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> list[Run]:
        """The evidence behind that mean: the latest verified complete run per set for this
        instance and alias, without cases."""
        ...


@runtime_checkable
class ProviderModelQualityScores(Protocol):
    """Quality per alias across instances; ``None`` when the alias was measured through several.

    Routing's fallback read, for a store without :class:`GeneratorScopedResults`; without either,
    routing ranks without quality.
    """

    def mean_quality_for_model(self, model_alias: str, grader: str = "deterministic") -> float | None:
        """Mean of the latest verified run per set for the alias, or ``None`` (no data or ambiguous)."""
        ...


@runtime_checkable
class RunHistory(Protocol):
    """Listing and retention. Without it ``evalkit history`` and ``evalkit db prune`` exit 2 naming
    the capability, and a report shows no trend."""

    def recent_runs(self, set_identifier: str | None = None, limit: int = 20) -> list[Run]:
        """Runs newest first by start time, without their cases."""
        ...

    def purge_older_than(self, cutoff: float) -> int:
        """Delete whole runs (with their cases) started strictly before ``cutoff``; return how many.
        A store that keeps baselines keeps each scope's current baseline (the built-in one does)."""
        ...


@runtime_checkable
class RunSpending(Protocol):
    """A run's token counts read without its cases (what its spend and a shared budget are summed
    from). A store offering it also keeps a run's ``pricing`` (given to ``begin_run`` with the run),
    and takes ``spend`` and ``answers_reused`` keywords in ``finish_run``."""

    def case_usage(self, run_id: str) -> Iterator[CaseUsage | tuple[Any, ...]]:
        """Each stored case's generator usage, its judge calls' usage, its answer source, whether
        it errored, the generator requests that got a reply and the requests it sent, a failed one
        included (``None`` each: not stored, an older case): a :class:`CaseUsage`, or a plain tuple
        of its first four to six fields (a store written before a field yields fewer; they read as
        not stored). Each count is ``None`` or a whole number from 0 below 2**63; a third-party
        store's row that breaks this is refused as its failure where it is read
        (:func:`evalkit.storage.returned.usage_row_problem`)."""
        ...


@runtime_checkable
class RevisableProvenance(Protocol):
    """A run's stored ``provenance`` changed in one transaction that locks the run's row, as
    ``finish_run`` does: what concurrent writers of one run (its shards) each keep there — the
    spending limit that stopped each (:mod:`evalkit.run.limit_stops`) — is merged, not the last
    writer's alone."""

    def revise_provenance(
        self, run_id: str, change: Callable[[Mapping[str, Any] | None], Mapping[str, Any] | None]
    ) -> None:
        """Read run ``run_id``'s stored provenance, the row locked, and write ``change(provenance)``
        in the same transaction (nothing when it returns ``None``); a run not stored raises
        :class:`~evalkit.errors.StorageError`."""
        ...


@attrs.frozen
class CachedAnswer:
    """One answer in the cache, as it was answered: the text, the model the endpoint reported,
    the finish reason, the token counts of the request that produced it, and the serving identity
    (instance, alias) it was answered through."""

    text: str
    provider_instance: str
    model_alias: str | None = None
    reported_model: str | None = None
    finish_reason: str | None = None
    usage: Any = None
    created_at: float = 0.0


@attrs.frozen
class CacheStats:
    """What the cache holds: entries, their answers' total characters, the oldest and newest
    entry's time, and the entries per provider instance."""

    entries: int
    answer_chars: int
    oldest: float | None
    newest: float | None
    per_instance: Mapping[str, int] = attrs.Factory(dict)


@runtime_checkable
class AnswerCache(Protocol):
    """The answer cache (``--cache``): answers keyed by the digest of the canonical request that
    produced them (:mod:`evalkit.answer_cache`), kept across runs and processes sharing the store."""

    def cached_answer(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``, or ``None``."""
        ...

    def keep_answer(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` under ``key`` (an entry already there is kept: the first answer wins)."""
        ...

    def cache_stats(self) -> CacheStats:
        """What the cache holds."""
        ...

    def clear_cache(self, older_than: float | None = None) -> int:
        """Delete every entry (``older_than``: those stored before that time); return how many."""
        ...


@runtime_checkable
class RunLeases(Protocol):
    """Who is answering a run: leases with a heartbeat (see :mod:`evalkit.leases`), and the shards' state.

    Without it nothing refuses a second process answering the same run or shard, a shard's note
    does not say which shards are in, ``history`` and ``show`` cannot tell a killed run from one
    being answered (both are ``running``), and ``report --wait`` waits for a killed run until its
    ``--timeout``.
    """

    def acquire_lease(self, run_id: str, part: str, owner: LeaseOwner, *, shard_count: int | None = None) -> None:
        """Take the lease on ``part`` (``*`` or ``I/N``) of the run, atomically — a part taken
        again is no longer in (:meth:`shard_progress` does not count it done until it is released
        done again); raise
        :class:`~evalkit.storage.values.RunBusyError` when a live lease overlaps it and
        :class:`~evalkit.storage.values.ShardMismatchError` when a stored shard gives another N."""
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

    def lease_liveness(self, run_ids: Sequence[str]) -> dict[str, RunLiveness]:
        """Whether a process is answering each of these runs now: :meth:`RunLiveness.of` the
        run's leases (released ones too) by the store's clock; a run no lease was ever taken on is
        absent."""
        ...


@runtime_checkable
class StreamedCases(Protocol):
    """A run's cases a page at a time, so the end of a 100,000-case run holds no case list.

    A store offering this capability also accepts ``with_cases=False`` on ``finish_run`` and on
    ``accepted_baseline`` (the run is returned without its cases; aggregates come from the store).
    Without it the end of a run reads every case back (``get_run``) and compares whole runs in
    memory: the same verdict, with memory growing with the set.
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

    def record_cases_as_stored(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> list[CaseResult] | None:
        """Commit ``cases`` as ``record_cases`` does, and return them exactly as :meth:`iter_cases`
        reads them back (for ids the run did not hold before), in stored order; ``None`` when the
        store committed them but cannot say so. A caller that prints a run's cases as the store
        keeps them gets them as they are committed, instead of reading the run back at its end."""
        ...


@runtime_checkable
class JudgeCalibrations(Protocol):
    """Judge calibration records (``evalkit judge calibrate``, ``evalkit judge show``, and the gate
    that leaves uncalibrated judges' checks advisory)."""

    def record_calibration(self, record: CalibrationRecord) -> None:
        """Store one calibration."""
        ...

    def calibrations(self, yardstick: str | None = None) -> list[CalibrationRecord]:
        """The stored calibrations (of ``yardstick`` only, when given), newest first."""
        ...


@runtime_checkable
class CaseHistory(Protocol):
    """Each case's outcomes over a scope's recent runs, in one read: what tells a flaky case
    (its outcome flips between runs of one serving identity while the case did not change).

    Without it the kernel reads the scope's recent runs one by one through :class:`RunHistory`
    (the same answer, more reads).
    """

    def case_history(
        self, scope: BaselineScope, *, runs: int = 20, case_ids: Sequence[str] | None = None
    ) -> list[RunOutcomes]:
        """The ``runs`` most recent complete runs of exactly ``scope`` (newest first), each with
        the outcomes of its answered cases — only those of ``case_ids`` when given."""
        ...


@runtime_checkable
class ClosableRepository(Protocol):
    """A repository that holds a connection or a file open until it is closed (a resource, not a
    capability: :func:`~evalkit.storage.close_repository` closes one that has ``close``)."""

    def close(self) -> None:
        """Release what the repository holds open."""
        ...


@attrs.frozen
class Capabilities:
    """One store and what it offers, asked once: the base protocol, then each optional capability
    (``None`` when the store lacks it). The kernel reads a store through this, so "what does the
    store offer" is decided in one place (:func:`capabilities`) instead of at every call."""

    repository: ResultRepository
    resumable: ResumableRuns | None = None
    baselines: AcceptedBaselines | None = None
    scoped: GeneratorScopedResults | None = None
    alias_quality: ProviderModelQualityScores | None = None
    history: RunHistory | None = None
    leases: RunLeases | None = None
    streamed: StreamedCases | None = None
    calibrations: JudgeCalibrations | None = None
    case_history: CaseHistory | None = None
    spending: RunSpending | None = None
    cache: AnswerCache | None = None
    revisable: RevisableProvenance | None = None


_CAPABILITIES: tuple[tuple[str, type], ...] = (
    ("resumable", ResumableRuns),
    ("baselines", AcceptedBaselines),
    ("scoped", GeneratorScopedResults),
    ("alias_quality", ProviderModelQualityScores),
    ("history", RunHistory),
    ("leases", RunLeases),
    ("streamed", StreamedCases),
    ("calibrations", JudgeCalibrations),
    ("case_history", CaseHistory),
    ("spending", RunSpending),
    ("cache", AnswerCache),
    ("revisable", RevisableProvenance),
)

#: The base protocol, each optional capability and :class:`ClosableRepository`: every protocol the
#: kernel asks a store about.
STORE_PROTOCOLS: tuple[type, ...] = (ResultRepository, *(protocol for _, protocol in _CAPABILITIES), ClosableRepository)


def capabilities(repository: Any) -> Capabilities:
    """What ``repository`` offers (a :class:`Capabilities` of it is returned as it is)."""
    if isinstance(repository, Capabilities):
        return repository
    offered = {name: repository for name, protocol in _CAPABILITIES if isinstance(repository, protocol)}
    return Capabilities(repository, **offered)


def latest_unfinished_run_of(
    store: ResumableRuns,
    set_identifier: str,
    provider_instance: str | None,
    model_alias: str | None,
    grader: str,
    adapter: str | None,
) -> Run | None:
    """``store``'s :meth:`ResumableRuns.latest_unfinished_run` for a generator of this instance,
    alias and ``adapter``: a store whose method takes ``adapter`` passes over another adapter's
    ad-hoc runs itself; one written before it was asked for is called without it, and what it finds
    may be another adapter's run (the caller tells it apart: that store cannot look past it)."""
    import inspect

    method = store.latest_unfinished_run
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # a callable whose signature cannot be read: asked as before
        parameters = ()
    if any(p.name == "adapter" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return method(set_identifier, provider_instance, model_alias, grader, adapter=adapter)
    return method(set_identifier, provider_instance, model_alias, grader)


# The names capabilities had before they were merged: a store that implements the merged
# capability satisfies its old name, so third-party code that asks for the old name keeps working.
#: Merged into :class:`AcceptedBaselines` (``record_verdict``, ``verdicts_for``).
RunVerdicts = AcceptedBaselines
#: Merged into :class:`AcceptedBaselines` (``accept_if_first``).
FirstAcceptance = AcceptedBaselines
#: Merged into :class:`StreamedCases` (``record_cases_as_stored``).
StoredCaseForms = StreamedCases
#: Merged into :class:`GeneratorScopedResults` (``quality_runs_for_provider_model``).
ProviderModelQualityRuns = GeneratorScopedResults
#: Merged into :class:`ResumableRuns` (``latest_unfinished_retrieval_run``).
ResumableRetrievalRuns = ResumableRuns
