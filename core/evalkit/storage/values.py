"""The values a results store takes and gives back, below the store and the services that use it.

A store (the built-in one in :mod:`evalkit.storage.sql`, or a third party's) imports these, and so
do the kernel's services (:mod:`evalkit.baselines`, :mod:`evalkit.leases`, :mod:`evalkit.run`):
nothing here imports a store or a service, so no import circle runs through them.

* baselines: :class:`BaselineScope` (what must be equal for two runs to be compared) and
  :class:`Acceptance` (why a run is its scope's baseline);
* verdicts as a store keeps them: :class:`StoredVerdict` and its words (:data:`VERDICT_STATES`);
* leases: :class:`LeaseOwner`, :class:`LeaseHolder`, :class:`ShardProgress`, :class:`RunLiveness`
  (is any process still answering a run), the overlap rule and the two refusals a store raises (:class:`RunBusyError`, :class:`ShardMismatchError`);
* what a store counts or pairs for a streamed verdict: :class:`CaseTally`, :class:`CaseMark`,
  :class:`CasePair`.

What a run's spend and its limits are summed from, a store's ``case_usage`` row
(:class:`~evalkit.costs.CaseUsage`), lives with the summing in :mod:`evalkit.costs`.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..answers import ServingIdentity
from ..errors import UsageError
from ..runs import Run, RunKind
from ..wording import argument, quoted

__all__ = [
    "ACCEPTANCE_KINDS",
    "BASELINE",
    "FUTURE_MARGIN_S",
    "HEARTBEAT_S",
    "INCONCLUSIVE",
    "NOT_COMPARABLE",
    "NO_REGRESSION",
    "PENDING",
    "REGRESSED",
    "STALE_AFTER_S",
    "STORED_VERDICT_STATES",
    "VERDICT_STATES",
    "VERDICT_WORDS",
    "WHOLE_RUN",
    "ANSWERS",
    "PASSES",
    "PASS_FRACTION",
    "Acceptance",
    "BaselineScope",
    "CalibrationRecord",
    "CaseMark",
    "CaseOutcome",
    "CasePair",
    "RunOutcomes",
    "CaseTally",
    "LeaseHolder",
    "LeaseOwner",
    "RunBusyError",
    "RunLiveness",
    "ShardMismatchError",
    "ShardProgress",
    "STORED_STATE_PREFIX",
    "StoredVerdict",
    "overlaps",
    "shard_part",
    "split_stored_note",
]

# -- verdict words -------------------------------------------------------------------------------

#: The first comparable run of its scope: recorded as the baseline.
BASELINE = "baseline"
#: Compared with its baseline; no gated figure dropped beyond its tolerance.
NO_REGRESSION = "no_regression"
#: Compared with its baseline; a gated figure dropped beyond its tolerance.
REGRESSED = "regressed"
#: Compared under the paired gate; the set cannot tell whether a gated figure dropped beyond its
#: tolerance (neither a significant drop beyond it, nor an interval within it).
INCONCLUSIVE = "inconclusive"
#: Stored, but not compared (the reason says why): incomplete, no verified identity, another
#: benchmark, a store that keeps no baselines… A failure under ``--fail-on-regression``.
NOT_COMPARABLE = "not_comparable"
#: A shard finished its slice; the run is not complete, so there is no verdict yet (never stored).
PENDING = "pending"

#: The words of a verdict, for prompt and retrieval runs alike.
VERDICT_WORDS = (BASELINE, NO_REGRESSION, REGRESSED, INCONCLUSIVE, NOT_COMPARABLE, PENDING)
#: What a stored verdict says (a run is stored with a verdict only once it is finished).
STORED_VERDICT_STATES = (BASELINE, NO_REGRESSION, REGRESSED, INCONCLUSIVE, NOT_COMPARABLE)
#: The words stores wrote before this release, read as today's.
_LEGACY_VERDICT_STATES = {"ok": NO_REGRESSION, "not_compared": NOT_COMPARABLE}
#: What a store's verdict column may hold: today's words and the older ``ok`` and ``not_compared``
#: (a :class:`StoredVerdict` made of one of those says ``no_regression`` or ``not_comparable``).
VERDICT_STATES = (*STORED_VERDICT_STATES, *_LEGACY_VERDICT_STATES)


def _current_word(state: object) -> object:
    return _LEGACY_VERDICT_STATES.get(state, state) if isinstance(state, str) else state


#: How the stored note of a not-compared retrieval run begins: ``baseline state WORD: REASON``
#: keeps its benchmark provenance word, read back by the job that reports a sharded run.
STORED_STATE_PREFIX = "baseline state "
#: The benchmark provenance words such a note may keep (:mod:`evalkit.retrieval.provenance`).
_PROVENANCE_WORDS = ("baseline", "comparable", "mismatch", "unknown")


def split_stored_note(note: str | None) -> tuple[str | None, str | None]:
    """A stored verdict note as (its retrieval provenance word, the reason as the run said it).

    ``baseline state mismatch: Regression comparison skipped: …`` gives ``("mismatch",
    "Regression comparison skipped: …")``; any other note is its own reason, without a word."""
    if note is None or not note.startswith(STORED_STATE_PREFIX):
        return None, note
    word, separator, rest = note[len(STORED_STATE_PREFIX) :].partition(": ")
    if not separator or word not in _PROVENANCE_WORDS:
        return None, note
    return word, rest


@attrs.frozen
class StoredVerdict:
    """The verdict a run got when it was stored: one of :data:`STORED_VERDICT_STATES` (the words
    older stores kept, ``ok`` and ``not_compared``, are read as ``no_regression`` and
    ``not_comparable``), the baseline it was compared with, and a one-line note (the summary, or
    why it was not compared)."""

    state: str = attrs.field(converter=_current_word, validator=attrs.validators.in_(STORED_VERDICT_STATES))
    baseline_id: str | None = None
    note: str | None = None

    @property
    def reason(self) -> str | None:
        """The note as the run said it: what people read (``show``, ``history``, reports), without
        the provenance word a not-compared retrieval run keeps in front of it in the store."""
        return split_stored_note(self.note)[1]


# -- baselines -----------------------------------------------------------------------------------

#: How a run came to be accepted: first of its scope, compared without regression, accepted by a
#: person, or counted as accepted when an older database was upgraded (migration 3).
ACCEPTANCE_KINDS = ("first", "no_regression", "manual", "migrated")


@attrs.frozen
class Acceptance:
    """Why a run is an accepted baseline: ``how`` (one of :data:`ACCEPTANCE_KINDS`), when (Unix
    time), by whom (``None`` for evalkit itself) and a one-line reason."""

    how: str = attrs.field(validator=attrs.validators.in_(ACCEPTANCE_KINDS))
    at: float
    by: str | None = None
    reason: str | None = None

    def describe(self) -> str:
        """One line: how and why, e.g. ``accepted by alice: new prompt wording``."""
        if self.how == "manual":
            return f"accepted by {self.by or 'unknown'}: {self.reason or '(no reason given)'}"
        if self.how == "first":
            return "accepted automatically: the first run of its scope"
        if self.how == "no_regression":
            return f"accepted automatically: {self.reason or 'its comparison found no regression'}"
        return f"accepted when the database was upgraded: {self.reason or 'a complete run that did not regress'}"


@attrs.frozen
class BaselineScope:
    """What must be equal for two runs to be compared automatically.

    Prompt runs fill ``provider_instance``, ``model_alias``, ``reported_model``, ``grader`` (the
    yardstick) and ``base_prompt`` (the digest of the instance's base system prompt, ``""`` for
    none); retrieval runs fill ``retriever`` and ``deployment`` (``None``: no deployment).
    """

    kind: RunKind
    set_identifier: str
    provider_instance: str | None = None
    model_alias: str | None = None
    reported_model: str | None = None
    grader: str | None = None
    retriever: str | None = None
    deployment: str | None = None
    base_prompt: str = ""

    @classmethod
    def of_run(cls, run: Run) -> BaselineScope | None:
        """The scope of a stored run; ``None`` for a prompt run without a verified serving identity
        (it belongs to no scope and is never a baseline)."""
        if run.kind is RunKind.RETRIEVAL:
            return cls(RunKind.RETRIEVAL, run.set_identifier, retriever=run.retriever or "", deployment=run.deployment)
        if run.identity is None:
            return None
        who = run.identity
        return cls(
            RunKind.PROMPTS, run.set_identifier, who.provider_instance, who.model_alias, who.reported_model, run.grader,
            base_prompt=who.base_prompt,
        )

    def describe(self) -> str:
        """The scope in words, for messages."""
        if self.kind is RunKind.RETRIEVAL:
            where = f"deployment {quoted(self.deployment)}" if self.deployment is not None else "no deployment"
            return f"set {quoted(self.set_identifier)}, retriever {quoted(self.retriever)}, {where}"
        base = f", base system prompt {self.base_prompt}" if self.base_prompt else ""
        who = quoted(f"{self.provider_instance}/{self.model_alias}")  # as components.answered_by names them
        return f"set {quoted(self.set_identifier)}, {quoted(self.reported_model)} ({who}{base}), grader {quoted(self.grader)}"


# -- leases --------------------------------------------------------------------------------------

#: How often a running process refreshes its lease (seconds).
HEARTBEAT_S = 10.0
#: A lease whose heartbeat is older than this is stale and may be taken over (seconds).
STALE_AFTER_S = 90.0
#: A heartbeat later than the store's clock by more than this is suspect (seconds): every heartbeat
#: is written with the store's own clock, so one ahead of it was written by another clock or by hand.
FUTURE_MARGIN_S = 5.0
#: The part a lease takes when the process answers the whole run (not one shard).
WHOLE_RUN = "*"


@attrs.frozen
class LeaseOwner:
    """The process taking a lease: host name, process id and a random token unique to this run."""

    host: str
    pid: int
    token: str

    @classmethod
    def this_process(cls) -> LeaseOwner:
        """An owner for the current process, with a fresh token."""
        return cls(socket.gethostname(), os.getpid(), secrets.token_hex(8))


@attrs.frozen
class LeaseHolder:
    """A lease as stored: the part of the run it covers, its owner and its last heartbeat."""

    part: str
    host: str | None
    pid: int | None
    heartbeat_at: float | None
    #: When the lease was taken, and when its part was in (``None``: not in); the store's clock.
    acquired_at: float | None = None
    done_at: float | None = None

    @property
    def last_seen(self) -> float | None:
        """The latest time the lease says its owner was heard from (taken, beat, done), or ``None``."""
        times = [t for t in (self.acquired_at, self.heartbeat_at, self.done_at) if t is not None]
        return max(times) if times else None

    def is_live(self, now: float, stale_after: float = STALE_AFTER_S) -> bool:
        """True while the owner is answering: a recent heartbeat, and (on this host) a live process.

        ``now`` is the store's clock, which wrote every heartbeat. A heartbeat in the future beyond
        :data:`FUTURE_MARGIN_S` (a tampered row, a store whose clock was set back) proves nothing:
        such a lease is live only while its owner is a live process on this host."""
        if self.host is None or self.heartbeat_at is None or now - self.heartbeat_at > stale_after:
            return False
        on_this_host = self.host == socket.gethostname() and self.pid is not None
        if self.is_suspect(now):
            return on_this_host and _process_exists(self.pid)  # type: ignore[arg-type]
        if on_this_host:
            return _process_exists(self.pid)  # type: ignore[arg-type]
        return True

    def is_this_process(self) -> bool:
        """True when the lease names this host and this process's id: a call of this very process
        holds it (another thread), not another process."""
        return self.host == socket.gethostname() and self.pid == os.getpid()

    def is_suspect(self, now: float) -> bool:
        """True when the heartbeat is later than ``now`` (the store's clock) by more than :data:`FUTURE_MARGIN_S`."""
        return self.heartbeat_at is not None and self.heartbeat_at - now > FUTURE_MARGIN_S

    def describe(self, now: float) -> str:
        """``pid 123 on host h (heartbeat 4 s ago)``, or ``(heartbeat 3600 s in the future: suspect…)``."""
        if self.is_suspect(now):
            ahead = (self.heartbeat_at or now) - now
            return (
                f"pid {self.pid} on host {self.host} (heartbeat {ahead:.0f} s in the future by the store's clock: "
                "suspect, written by another clock or by hand)"
            )
        age = max(0.0, now - (self.heartbeat_at or now))
        return f"pid {self.pid} on host {self.host} (heartbeat {age:.0f} s ago)"


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def overlaps(part: str, other: str) -> bool:
    """True when two parts of a run cannot be answered at once (either is the whole run, or the same shard)."""
    return part == WHOLE_RUN or other == WHOLE_RUN or part == other


def shard_part(index: int, count: int) -> str:
    """The part name of shard ``index`` of ``count``: ``I/N``."""
    return f"{index}/{count}"


@attrs.frozen
class ShardProgress:
    """Where the shards of a run stand: N (``None`` when the run was not sharded), the shards whose
    slice is in, and those a live process is answering now."""

    count: int | None
    done: frozenset[int] = frozenset()
    answering: frozenset[int] = frozenset()

    @property
    def missing(self) -> tuple[int, ...]:
        """The shards whose slice is not in yet, in order."""
        return tuple(i for i in range(1, (self.count or 0) + 1) if i not in self.done)

    @property
    def all_in(self) -> bool:
        """True when every shard's slice is in (or the run is not sharded)."""
        return not self.missing

    def describe(self) -> str:
        """``shards 1, 3 of 4 are in; waiting for shards 2, 4``: shard numbers always follow
        "shard", so "waiting for 1, 2, 4" is never read as a count."""
        if self.count is None:
            return "the run is not sharded"
        done = sorted(self.done)
        if not done:
            said = f"no shard of {self.count} is in yet"
        elif len(done) == 1:
            said = f"shard {done[0]} of {self.count} is in"
        else:
            said = f"shards {', '.join(map(str, done))} of {self.count} are in"
        missing = self.missing
        if missing:
            said += f"; waiting for shard{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}"
        return said


@attrs.frozen
class RunLiveness:
    """Whether any process is still answering a run, as its leases say, by the store's clock ``now``.

    ``live``: a lease of the run is live. ``last_seen``: the latest time any lease of the run was
    taken, beat or done. For a sharded run, ``shard_count`` (N), the shards whose slice is not in
    (``missing``), and of those the ones that have taken no lease yet (``unstarted``: they may simply
    not have started, so the run is not given up on), and the missing ones whose lease still names
    an owner (``held``: taken and never given up — answered now, or killed; an earlier attempt that
    a spending limit stopped gave its lease up, so what that attempt kept says nothing of this one).

    A run is :attr:`gone` when no lease of it is live and no shard is still to start: its process
    was killed (or lost its machine) without ending it. Built from a run's leases by :meth:`of`;
    a run no lease was ever taken on has none (a store without leases, a run older than them).
    """

    live: bool
    now: float
    last_seen: float | None = None
    shard_count: int | None = None
    missing: tuple[int, ...] = ()
    unstarted: tuple[int, ...] = ()
    held: tuple[int, ...] = ()

    @classmethod
    def of(cls, holders: Sequence[LeaseHolder], now: float) -> RunLiveness:
        """The liveness of a run whose leases (every one taken, released ones too) are ``holders``.
        A time in the future by more than :data:`FUTURE_MARGIN_S` proves nothing and is not "seen"."""
        seen = [t for t in (h.last_seen for h in holders) if t is not None and t - now <= FUTURE_MARGIN_S]
        last_seen = max(seen) if seen else None
        live = any(h.is_live(now) for h in holders)
        parts = [(h, h.part.partition("/")) for h in holders]
        # a part that is no I/N (a row another program wrote) names no shard
        shards = [(h, int(i), int(n)) for h, (i, _, n) in parts if (i + n).isascii() and i.isdigit() and n.isdigit()]
        if not shards:
            return cls(live, now, last_seen)
        count = max(n for _, _, n in shards)
        taken = {i for _, i, _ in shards}
        done = {i for h, i, _ in shards if h.done_at is not None}
        missing = tuple(i for i in range(1, count + 1) if i not in done)
        held = tuple(i for h, i, _ in shards if h.host is not None and i in missing)
        return cls(live, now, last_seen, count, missing, tuple(i for i in missing if i not in taken), held)

    @property
    def gone(self) -> bool:
        """True when no process answers the run and none of its shards is still to start."""
        return not self.live and not self.unstarted

    def given_up(self, stale_after: float = STALE_AFTER_S) -> bool:
        """True when the run is :attr:`gone` and was last heard from more than ``stale_after``
        seconds ago: long enough that a lease with that heartbeat is stale on any host."""
        return self.gone and (self.last_seen is None or self.now - self.last_seen > stale_after)


class RunBusyError(UsageError):
    """A live lease overlaps the part of the run asked for: another process's, or another call's of
    this very process (another thread: the lease names this host and pid, and is said to be so)."""

    def __init__(self, run_id: str, part: str, holder: LeaseHolder, now: float) -> None:
        self.run_id = run_id
        self.holder = holder
        what = "the whole run" if holder.part == WHOLE_RUN else f"shard {holder.part}"
        mine = "" if part == WHOLE_RUN else f" (shard {part})"
        if holder.is_this_process():  # its heartbeat goes on while that call runs: it is never taken over
            super().__init__(
                f"run {run_id} is being answered by another call in this process (another thread){mine}: {what} is "
                f"held by this process, {holder.describe(now)}; wait for that call to return, or answer another run"
            )
            return
        super().__init__(
            f"run {run_id} is being answered by another process{mine}: {what} is held by {holder.describe(now)}; "
            f"wait for it to finish, or stop it — a lease with no heartbeat for {STALE_AFTER_S:.0f} s is taken over"
        )


class ShardMismatchError(UsageError):
    """A shard names a different N from the shards already stored for the run."""

    def __init__(self, run_id: str, part: str, counts: Iterable[int]) -> None:
        known = sorted(set(counts))
        super().__init__(
            f"{argument('shard', part)}: run {run_id} is split into {' and '.join(map(str, known))} shards by the shards "
            "already stored; every shard of a run must give the same N"
        )


# -- what a streamed verdict reads ---------------------------------------------------------------

#: The measure a prompt case answered (or judged) several times keeps its pass fraction under.
PASS_FRACTION = "pass_fraction"
#: The measure counting a repeated prompt case's answers, and the one counting those that passed.
ANSWERS = "answers"
PASSES = "passes"


@attrs.frozen
class CaseTally:
    """What the end of a run needs to know of its stored cases, counted by the store without
    reading them back: the aggregates, who answered and under which yardsticks.

    ``identities`` counts the answered (not errored) cases per serving identity (``None``: the
    case carries none); ``yardsticks`` are the non-empty yardsticks of those cases. ``score_sum``
    sums the scored (not errored) cases' scores, what :attr:`~evalkit.runs.Run.mean_score` is over.
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
    itself on it, its place in its run's stored order, the fingerprint of its content
    (:attr:`~evalkit.runs.CaseResult.fingerprint`; ``None`` when the case was stored without one)
    and its measures (:attr:`~evalkit.runs.CaseResult.measures`: a retrieval question's reciprocal
    rank, recall and nDCG; a repeated prompt's pass fraction — ``None`` when it has none)."""

    passed: bool
    score: float
    unstable: bool = False
    position: int = 0
    fingerprint: str | None = None
    measures: Mapping[str, float] | None = None

    @property
    def pass_fraction(self) -> float:
        """The case's pass value: the share of its answers (and its judge's verdicts) that passed
        when it was answered or judged several times, else 1.0 or 0.0."""
        measures = self.measures
        if measures is not None:
            share = measures.get(PASS_FRACTION)
            if isinstance(share, (int, float)) and not isinstance(share, bool) and 0 <= share <= 1:
                return float(share)
        return 1.0 if self.passed else 0.0

    @property
    def repeats(self) -> int:
        """How many answers the case's result stands for (1 unless it was answered several times)."""
        answers = (self.measures or {}).get(ANSWERS)
        return int(answers) if isinstance(answers, (int, float)) and not isinstance(answers, bool) and answers >= 1 else 1


@attrs.frozen
class CaseOutcome:
    """One case's result in one stored run, as its history reads it: passed or not, the
    fingerprint of its content (``None``: stored before fingerprints were kept) and, for a case
    answered several times, how many answers it had and how many passed."""

    case_id: str
    passed: bool
    fingerprint: str | None = None
    answers: int = 1
    passes: int | None = None


@attrs.frozen
class RunOutcomes:
    """A stored run of a scope and the outcomes of (some of) its cases, by case id."""

    run_id: str
    started_at: float
    outcomes: Mapping[str, CaseOutcome] = attrs.field(factory=dict)


@attrs.frozen
class CasePair:
    """One case id of two runs: its mark in the current run and in the baseline (``None`` where
    the run has no such case)."""

    case_id: str
    current: CaseMark | None
    baseline: CaseMark | None


# -- judge calibration ---------------------------------------------------------------------------


@attrs.frozen
class CalibrationRecord:
    """A judge measured against people's labels, as stored (``evalkit judge calibrate``).

    The judge's identity is its ``yardstick`` (grader, instance, reported model, prompt version)
    and ``temperature``: a changed model or prompt is another yardstick, with no record until it
    is calibrated again. ``report`` is the whole calibration document (``--json``'s).
    """

    yardstick: str
    temperature: float
    grader: str
    judge_instance: str
    judge_model: str
    prompt_version: int
    set_identifier: str
    repeats: int
    n: int
    agreement: float
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    self_agreement: float | None
    calibrated_at: float
    report: Mapping[str, Any] = attrs.field(factory=dict)
