"""One run's life, the same for prompt and retrieval runs: begin or resume it, lease it, commit each
case, finish it, decide its verdict — or stop it cleanly when Ctrl-C, a failing store or a set
that changed under it interrupts it.

::

    execute(plan, repository)
      begin      run id (given, resumed or new) → refuse what cannot join → begin_run (inside the
                 guard the lease is taken in: no interruption leaves it running unleased)
      lease      acquire the lease on the whole run or on this shard; a heartbeat thread renews it;
                 the limit stop an earlier attempt of this part kept is cleared (limit_stops)
      answer     the answering's slice (its shard, minus what is stored), each case committed
                 through a CaseRecorder (group commit) and told to the observers
      finish     the answering's Finish → keep the limit that stopped this part, if one did
                 (limit_stops) → give the lease up (this part is in, unless a budget stopped it)
                 → finish_run
      decide     pending while shards are missing; else decide.settle (baseline, comparison,
                 verdict, acceptance)
      interrupt  Ctrl-C, a set that changed, evalkit's own bug, an EvalkitError found late (once the
                 lease is taken): mark the run interrupted; a failing store: say what was kept —
                 each time with the command that resumes it

Where a newcomer finds "lease a run": :class:`RunLease`; "store a case": :class:`CaseRecorder`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any, cast

import attrs

from .. import hooks
from ..errors import (
    EvalkitError,
    RunInternalError,
    RunInterrupted,
    RunStoreFailed,
    RunTakenOver,
    SetChangedError,
    StorageError,
    StoreFailure,
    StoreUnavailable,
    UsageError,
)
from ..leases import LeaseKeeper
from ..run_lookup import unknown_run
from ..runs import CaseResult, Run, RunStatus
from ..shapes import exception_text
from ..storage import plugin_store_failure
from ..storage.protocols import Capabilities, ResultRepository, RunLeases, StreamedCases, capabilities
from ..storage.values import PENDING, WHOLE_RUN, LeaseOwner, ShardMismatchError, shard_part
from ..timeouts import HostAlarm, callers_call, host_alarms
from ..verdict import Verdict
from ..wording import argument, counted, quoted
from . import stored_runs
from .answering import Answering, Slice
from .continuing import resume_hint
from .decide import Judging, recorded_verdict, settle
from .limit_stops import provenance_after, reached_words, run_stopped_by, stops_of
from .outcome import Outcome, ShardFigures
from .placement import as_typed, regrade_again, regraded_from, with_latest_command, with_resumed_options
from .plan import RunPlan, check_run_id, new_run_id

__all__ = [
    "COMMIT_BATCH",
    "COMMIT_WAIT_S",
    "CaseRecorder",
    "Commits",
    "RunLease",
    "error_stopped",
    "execute",
    "internal_error",
    "mark_interrupted",
    "plugin_store_failure",
    "redact_secrets",
    "store_failed",
]

#: The longest a finished case waits for its group commit (see :class:`CaseRecorder`).
COMMIT_WAIT_S = 0.05
#: The most cases one group commit stores.
COMMIT_BATCH = 256


def execute(plan: RunPlan, repository: ResultRepository) -> Outcome:
    """Run ``plan`` against the open store ``repository`` (see the module docstring). The host
    program's own ``SIGALRM`` exception (:func:`~evalkit.timeouts.host_alarms`) stops the run,
    marked interrupted, and is raised as it is."""
    with host_alarms():
        return _Lifecycle(plan, capabilities(repository)).run()


# -- store a case --------------------------------------------------------------------------------


def redact_secrets(case: CaseResult, secrets: tuple[str, ...]) -> CaseResult:
    """``case`` with every exact credential value replaced by ``***`` in all of its text."""
    if not secrets:
        return case
    import json

    from ..privacy import remove_secrets

    def clean(text: str | None) -> str | None:
        return None if text is None else remove_secrets(text, secrets)

    checks = tuple(attrs.evolve(c, error=clean(c.error), detail=clean(c.detail)) for c in case.checks)
    identity = case.identity
    if identity is not None:
        identity = attrs.evolve(
            identity,
            provider_instance=clean(identity.provider_instance),
            model_alias=clean(identity.model_alias),
            reported_model=clean(identity.reported_model),
        )
    detail = case.detail
    if detail is not None:
        detail = json.loads(clean(json.dumps(detail, ensure_ascii=False)) or "null")
    transcript = case.transcript
    if transcript:
        from ..conversations import messages_of, transcript_data

        transcript = messages_of(transcript_data(transcript, clean))
    return attrs.evolve(
        case, answer_text=clean(case.answer_text), error=clean(case.error), checks=checks, detail=detail, identity=identity,
        transcript=transcript,
    )  # fmt: skip


@attrs.define
class CaseRecorder:
    """Commits finished cases in groups, without the answering's credentials.

    With a ``window`` (prompt runs: :data:`COMMIT_WAIT_S`, inside the runner's event loop), a case
    that finishes when nothing was committed for ``window`` seconds is committed at once (a slow
    generator gets a commit per case); one that finishes sooner after a commit waits for the next,
    at most ``window`` after the last one, in one transaction with every case finishing meanwhile
    (at most :data:`COMMIT_BATCH`). A group costs about what one case's commit costs: at 64 in
    flight a run stores 2,000 cases in ~40 transactions instead of ~540, 0.3 s less CPU
    (``bench/throughput.py``). A hard kill therefore loses at most the cases that finished in the
    last ``window`` (a resume answers them again); every other way out of the run (the end, Ctrl-C,
    an error) commits what is pending first (:meth:`flush`). A commit that fails on the timer is
    raised by the next :meth:`commit` or :meth:`flush`, in a worker, so the run stops on it.
    Without a window (``0``, retrieval runs, no event loop) every case is committed as it comes.
    """

    repository: ResultRepository
    run_id: str
    privacy: str
    secrets: tuple[str, ...] = ()
    #: Called after each commit with its cases as the store reads them back (see :class:`StreamedCases`).
    on_stored: Callable[[list[CaseResult]], None] | None = None
    window: float = COMMIT_WAIT_S
    pending: list[CaseResult] = attrs.Factory(list)
    _timer: asyncio.TimerHandle | None = None
    _failure: BaseException | None = None
    _committed_at: float = -math.inf

    def commit(self, case: CaseResult) -> None:
        """Commit ``case`` now, or with the group that is gathering (see the class docstring)."""
        if self._failure is not None:
            raise self._failure
        self.pending.append(redact_secrets(case, self.secrets))
        if self._timer is not None and len(self.pending) < COMMIT_BATCH:
            return
        waited = time.monotonic() - self._committed_at
        if waited >= self.window or len(self.pending) >= COMMIT_BATCH:
            self.flush()
        else:
            self._timer = asyncio.get_running_loop().call_later(self.window - waited, self._flush_due)

    def _flush_due(self) -> None:
        self._timer = None
        try:
            self.flush()
        except BaseException as exc:  # raised again by the next commit() or flush(), in a worker
            self._failure = exc

    def flush(self) -> None:
        """Commit what is pending (also on cancellation, so Ctrl-C keeps every finished case)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._failure is not None:
            raise self._failure
        if self.pending:
            batch, self.pending = self.pending, []
            # on_stored is given only for a store that streams its cases (it says how they read back)
            record = self.repository.record_cases if self.on_stored is None else cast(StreamedCases, self.repository).record_cases_as_stored
            stored = record(self.run_id, batch, self.privacy)
            self._committed_at = time.monotonic()
            if stored is not None and self.on_stored is not None:
                self.on_stored(stored)


@attrs.frozen
class Commits:
    """The :class:`~evalkit.run.answering.CaseSink` the lifecycle hands an answering: each case is
    committed by the recorder, then told to the observers (``told``); ``held`` first raises when
    the run is no longer this process's (:meth:`RunLease.check`)."""

    recorder: CaseRecorder
    told: Callable[[CaseResult], None]
    held: Callable[[], None] = lambda: None

    def commit(self, case: CaseResult) -> None:
        """Commit ``case``, then tell the observers."""
        self.held()
        self.recorder.commit(case)
        self.told(case)

    def flush(self) -> None:
        """Commit what is pending."""
        self.recorder.flush()


# -- lease a run ---------------------------------------------------------------------------------


class RunLease:
    """This process's lease on its part of a run (``*`` or ``I/N``), when the store keeps leases.

    :meth:`take` acquires it — refused (exit 2, nothing called) while another live process answers
    an overlapping part — and starts the heartbeat; :meth:`give_up` stops the heartbeat and releases
    it, once (``done``: this part's cases are all in). A store without
    :class:`~evalkit.storage.RunLeases` takes no lease and refuses nothing. The heartbeat is a
    :class:`~evalkit.leases.LeaseKeeper` (see :mod:`evalkit.leases` for the rules).
    """

    def __init__(self, leases: RunLeases | None, run_id: str, part: str) -> None:
        self._leases = leases
        self._run_id = run_id
        self.part = part
        self._owner = LeaseOwner.this_process()
        self._keeper: LeaseKeeper | None = None

    def take(self, shard_count: int | None) -> RunLease:
        """Acquire the lease and start its heartbeat."""
        if self._leases is not None:
            self._leases.acquire_lease(self._run_id, self.part, self._owner, shard_count=shard_count)
            self._keeper = LeaseKeeper(self._leases, self._run_id, self.part, self._owner).start()
        return self

    @property
    def lost(self) -> bool:
        """True once another process took the lease over (this one's heartbeat went stale)."""
        return self._keeper is not None and self._keeper.lost.is_set()

    def check(self) -> None:
        """Raise :class:`~evalkit.errors.RunTakenOver` once the lease was taken over."""
        if self.lost:
            from ..leases import STALE_AFTER_S

            raise RunTakenOver(self._run_id, self.part, STALE_AFTER_S)

    def give_up(self, *, done: bool) -> None:
        """Stop the heartbeat and release the lease (a store that fails here changes nothing)."""
        keeper, self._keeper = self._keeper, None
        if keeper is None or self._leases is None:
            return
        keeper.stop()
        try:
            self._leases.release_lease(self._run_id, self.part, self._owner, done=done)
        except StoreFailure:
            pass


# -- interrupt -----------------------------------------------------------------------------------


def mark_interrupted(store: Capabilities, run_id: str) -> bool:
    """Mark the run ``interrupted``; ``False`` when the store cannot say (or does not answer)."""
    if store.resumable is None:
        return False
    try:
        store.resumable.mark_status(run_id, RunStatus.INTERRUPTED.value)
    except StorageError:
        return False
    return True


def _kept(store: Capabilities, run_id: str) -> int | None:
    if store.resumable is None:
        return None
    try:
        return len(store.resumable.answered_case_ids(run_id))
    except StorageError:
        return None


def store_failed(
    store: Capabilities, run: Run, failure: StoreFailure, command: str | None = None, *, held: bool = True
) -> RunStoreFailed:
    """The error to raise after ``failure`` stopped ``run``: marks the run interrupted where the
    store still answers and counts the cases it kept; ``command`` resumes it. A run the fault met
    after it was stored complete (its verdict being recorded) keeps that status, and is said so.
    A run this process does not hold (``held`` false: it never took its lease) is not touched; it
    is said to be another process's only when one may answer it (:func:`_answered_elsewhere`)."""
    marked = held and mark_interrupted(store, run.id)
    complete = marked and _stored_status(store, run.id) is RunStatus.COMPLETE
    return RunStoreFailed(
        run.id, run.set_identifier, failure.cause, kept=_kept(store, run.id), marked=marked, command=command, complete=complete,
        can_mark=store.resumable is not None, held=held, elsewhere=held or _answered_elsewhere(store, run.id),
    )


def _answered_elsewhere(store: Capabilities, run_id: str) -> bool:
    """True when a process may be answering run ``run_id``: a live lease of it, or its leases not
    known (a store without leases, or one that does not answer)."""
    if store.leases is None:
        return True
    try:
        live = store.leases.lease_liveness([run_id]).get(run_id)
    except StorageError:
        return True
    return live is not None and live.live


def _stored_status(store: Capabilities, run_id: str) -> RunStatus | None:
    """The run's status as the store has it (``None``: not stored, or the store does not answer)."""
    try:
        stored = store.repository.get_run(run_id, with_cases=False)
    except StorageError:
        return None
    return stored.status if stored is not None else None


def internal_error(
    store: Capabilities, run: Run, exc: Exception, command: str | None = None, *, held: bool = True
) -> RunInternalError:
    """The error to raise after ``exc`` — evalkit's own bug — stopped ``run``, which is in the
    store: marks the run interrupted where the store can and counts the cases it kept; ``command``
    resumes it. (Exit 2 would say "nothing stored", which is not so.) A run this process does not
    hold (``held`` false: it never took its lease) is not touched."""
    if held:
        mark_interrupted(store, run.id)  # a finished run keeps its status
    try:
        stored = store.repository.get_run(run.id, with_cases=False)
    except StorageError:
        stored = None
    status = stored.status.value if stored is not None else None
    return RunInternalError(
        run.id, run.set_identifier, exception_text(exc), kept=_kept(store, run.id), status=status, command=command, held=held
    )


def error_stopped(store: Capabilities, run: Run, exc: EvalkitError, command: str) -> None:
    """After ``exc`` — an error of evalkit's own kind (a usage, configuration or set problem found
    late, a plugin's own refusal) — stopped ``run``, whose lease this process holds: mark the run
    interrupted where the store can (a finished run keeps its status) and, when it is, say so with
    the cases kept and ``command``, which continues it: to the command that is running
    (:func:`evalkit.run.stored_runs.stopped`, said under the error, exit 3) and to a library caller
    (a note on ``exc``). ``exc`` itself is raised as it is."""
    if not mark_interrupted(store, run.id) or _stored_status(store, run.id) is not RunStatus.INTERRUPTED:
        return
    kept = _kept(store, run.id)
    cases = "its committed cases are kept" if kept is None else f"{counted(kept, 'case')} committed before it {'is' if kept == 1 else 'are'} kept"
    stored_runs.stopped(run.id, cases, command)
    exc.add_note(f"evalkit: raised during run {run.id}: {stored_runs.stopped_sentence(cases, command)}")


class CallerCallbackFailed(Exception):
    """A library caller's own callback (``on_start``, ``on_case``, ``on_stored``) raised ``cause``:
    the caller's error, not evalkit's. The lifecycle marks the run interrupted and raises ``cause``
    itself, with a note naming the callback, the run and its resume command."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(name, cause)
        self.name = name
        self.cause = cause


def callers(name: str, callback: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """``callback`` (``None`` stays ``None``), what it raises carried as :class:`CallerCallbackFailed`
    — ``sys.exit()`` too, which is the caller's as much as a ``ValueError`` is (it was said to be
    "a plugin's"); Ctrl-C, the host's own alarm and a cancellation keep their own ways."""
    if callback is None:
        return None

    def called(*args: Any) -> Any:
        try:
            return callers_call(name, callback, *args)  # the caller's own code: its SIGALRM handler is the host's
        except (KeyboardInterrupt, HostAlarm, asyncio.CancelledError):
            raise
        except BaseException as exc:
            raise CallerCallbackFailed(name, exc) from exc

    return called


# -- the run -------------------------------------------------------------------------------------


def _not_joined(existing: Run) -> str:
    """Why ``evalkit run`` (``--resume``, ``--run-id``, ``--shard``) cannot answer re-grade run
    ``existing``: it would ask the model for answers a re-grade only grades again; and the command
    that continues it (:func:`evalkit.run.placement.regrade_again`), unless it is complete."""
    what = f"run {existing.id} is a re-grade run (the stored answers of run {regraded_from(existing)} graded again)"
    if existing.status is RunStatus.COMPLETE:
        return f"{what} and is complete; no other run joins it: choose a new {argument('run_id')}"
    return (
        f"{what}: `evalkit run` cannot continue it, it would ask the model; continue it with "
        f"`{regrade_again(existing)}`, which re-grades those answers again as a new run"
    )


def _complete_shard_of(existing: Run, placement: Any) -> bool:
    """True when a shard joins a run that is already complete (not a ``--resume``)."""
    return existing.status is RunStatus.COMPLETE and placement.shard is not None and not placement.resume



@attrs.define
class _Lifecycle:
    """One execution of a plan (see the module docstring); used once."""

    plan: RunPlan
    store: Capabilities
    notes: list[str] = attrs.Factory(list)
    observers: hooks.Observers | None = None
    #: Plugins that failed around the run without changing it (the answering's Finish says them).
    plugin_failures: list[str] = attrs.Factory(list)
    #: The cases this process stored errored (its own slice's, not another shard's).
    errored_here: int = 0
    #: The cases this process stored, and of those the ones that passed (a shard says them: :class:`ShardFigures`).
    answered_here: int = 0
    passed_here: int = 0
    #: Whether this process's slice is all in: answered to its end (no limit stopped it).
    slice_in: bool = False

    @property
    def answering(self) -> Answering:
        return self.plan.answering

    def run(self) -> Outcome:
        self.notes = list(self.plan.notes)
        header, existing, joining = self._begin()
        if existing is not None and _complete_shard_of(existing, self.plan.placement):
            stored_runs.note(header.id)  # complete: an error past here says the run is stored (evalkit.cli._failed)
            return self._complete_already(existing)
        shard = self.plan.placement.shard
        part = WHOLE_RUN if shard is None else shard_part(shard.index, shard.count)
        lease = RunLease(self.store.leases, header.id, part)
        observing = self.plan.observing
        self.observers = hooks.Observers(observing.manager, observing.hook_timeout) if observing.manager is not None else None
        complete: Run | None = None
        began: Run | KeyboardInterrupt | HostAlarm | StoreFailure | None = None
        leased = False

        def held() -> bool:
            # A process changes the status only of a run it holds: its lease taken, or a run it
            # began whose lease it could not take (evalkit's bug, Ctrl-C, a lock timeout) while no
            # other process answers it (it is marked interrupted, not left running for ever) — one
            # begin_run was stopped in after its commit too: it is stored running.
            stored = isinstance(began, Run) or _stored_status(self.store, header.id) is RunStatus.RUNNING
            return (leased and not lease.lost) or (not leased and stored and self._unanswered(header.id, joining))

        def unstored() -> bool:
            # What the one guard around begin_run raised (nothing stored) is raised as it is; a
            # Ctrl-C or the host's alarm met as it returned (``began`` not set yet) finds the run
            # stored, and is the stop of a stored run.
            return began is None and _stored_status(self.store, header.id) is None

        try:
            # begin_run inside: a Ctrl-C met as it returns, between begin_run's commit and the
            # lease, or a lease that could not be taken, leaves no run stored as running without a
            # lease — it is marked interrupted and said resumable (when it is this process's: see held).
            began = self._store_header(header)
            if not isinstance(began, Run):
                raise began  # Ctrl-C, the host's alarm or a failing store in begin_run, the run stored all the same
            stored_header = began
            if not joining or stored_header.status is RunStatus.COMPLETE:
                # this process began the run, or it is complete: an error past here that is not the
                # run's own (printing the outcome) says the run is stored (evalkit.cli._failed)
                stored_runs.note(header.id)
            if joining and stored_header.status is RunStatus.COMPLETE:
                complete = stored_header  # closed by another shard meanwhile: its verdict is given below
            else:
                lease.take(None if shard is None else shard.count)
                leased = True
                self._clear_earlier_stop(header.id, stored_header)
                if joining:
                    self._keep_latest_options(header.id, header, stored_header)
                stored_runs.note(header.id)  # joined: this process answers it from here (a refused lease stores nothing)
                stored, verdict = self._answer_and_finish(header, stored_header, joining, lease)
        except KeyboardInterrupt:
            if unstored():
                raise
            if held():
                mark_interrupted(self.store, header.id)
            raise RunInterrupted(header.id, header.set_identifier, command=self._resume_command(header.id)) from None
        except SetChangedError:
            mark_interrupted(self.store, header.id)  # never complete, never compared
            raise
        except StoreFailure as exc:
            raise store_failed(self.store, header, exc, self._resume_command(header.id), held=held()) from None
        except CallerCallbackFailed as failed:  # the caller's callback raised: its error, raised as it is
            mark_interrupted(self.store, header.id)
            resume = self._resume_command(header.id)
            failed.cause.add_note(
                f"evalkit: raised by the {failed.name} callback during run {header.id}, which is marked interrupted"
                + (f"; continue it with `{resume}`" if resume else "")
            )
            raise failed.cause from None
        except HostAlarm as alarm:  # the host program's own time limit: its exception, raised as it is
            if unstored():
                raise
            mine = held()
            if mine:
                mark_interrupted(self.store, header.id)
            resume = self._resume_command(header.id)
            alarm.cause.add_note(
                f"evalkit: raised by {alarm.by} during run {header.id}"
                + (", which is marked interrupted" if mine else " (its lease not taken: its status is left as it is)")
                + (f"; continue it with `{resume}`" if resume else "")
            )
            raise
        except EvalkitError as exc:
            # Found late (a configuration, a set, a plugin's own refusal): the run this process holds
            # stops here, marked interrupted; a refused lease (another process answers the run) is left alone.
            if leased and not lease.lost:
                error_stopped(self.store, header, exc, self._resume_command(header.id))
            raise
        except Exception as exc:  # evalkit's own bug: the run is stored, so it is marked interrupted and said so (exit 3)
            if began is None:
                raise  # raised by begin_run's guard as it is
            failure = plugin_store_failure(exc, (self.store.repository,))
            resume, mine = self._resume_command(header.id), held()
            if failure is not None:  # a third-party store's own exception (its disk full): the store failed
                raise store_failed(self.store, header, failure, resume, held=mine) from exc
            raise internal_error(self.store, header, exc, resume, held=mine) from exc
        except BaseException as exc:  # a plugin's, where no call carried it (evalkit.errors.carried)
            if began is None:
                raise  # raised by begin_run's guard as it is
            if held():
                mark_interrupted(self.store, header.id)
            cause = f"{exception_text(exc)}, which a plugin raised and is no Exception"
            raise RunInterrupted(header.id, header.set_identifier, command=self._resume_command(header.id), cause=cause) from exc
        finally:
            lease.give_up(done=False)  # nothing when the slice was done (given up then)
        if complete is not None:
            return self._complete_already(complete)
        finished = stored
        if not stored.cases and stored.answered_count and self._hooked("evalkit_run_finished"):
            finished = self.store.repository.get_run(header.id) or stored  # the hook's contract: the run with its cases
        self._notify("evalkit_run_finished", run=finished)
        failures = observing.hook_failures + (self.observers.failures if self.observers is not None else ()) + tuple(self.plugin_failures)
        # A shard's own slice, stored whole without an error: the run's errored cases are other shards' to answer again.
        slice_clean = shard is not None and self.slice_in and not self.errored_here
        figures = None
        if shard is not None:
            figures = ShardFigures(shard.index, shard.count, self.answered_here, self.passed_here, self.errored_here)
        return Outcome(
            stored, verdict, tuple(self.notes), failures, concurrency=self.answering.concurrency,
            detail=self.answering.detail(stored, verdict, self.store), slice_clean=slice_clean, shard=figures,
        )  # fmt: skip

    def _store_header(self, header: Run) -> Run | KeyboardInterrupt | HostAlarm | StoreFailure:
        """``begin_run(header)``: the stored header; or, when the run is in the store all the same
        (stored before it failed, or before this process came: a resume, a shard joining), what
        stopped it — a Ctrl-C, the host's alarm, a failing store — for the caller to raise as the
        stop of a stored run. When the run is not stored, a failing store says so, nothing stored:
        exit 3 for the environment's fault (a full disk, a lock held too long) and for a third-party
        store's own exception, exit 2 for a store that cannot be used as it is (a damaged file), as
        when it is opened. Anything else is raised as it is."""
        try:
            return self.store.repository.begin_run(header)
        except (KeyboardInterrupt, HostAlarm) as stop:
            if _stored_status(self.store, header.id) is None:
                raise  # stopped before begin_run's commit: nothing is stored
            return stop
        except Exception as exc:
            failure = exc if isinstance(exc, StoreFailure) else None
            if failure is None and not isinstance(exc, EvalkitError):
                failure = plugin_store_failure(exc, (self.store.repository,))
            if failure is None:
                raise  # evalkit's own bug or refusal: raised as it is
            if _stored_status(self.store, header.id) is not None:
                return failure
            error = StorageError if failure is exc and not failure.environment else StoreUnavailable
            raise error(
                f"the results store failed before run {header.id} was stored: {failure} — nothing was stored; "
                "run the command again once the store is fixed"
            ) from (None if failure is exc else exc)

    def _resume_command(self, run_id: str) -> str:
        """The command that continues the run (a shard's continues its own slice)."""
        return self.answering.resume_command(run_id, self.plan.placement.shard)

    def _unanswered(self, run_id: str, joining: bool) -> bool:
        """Whether this process may mark the run whose lease it could not take: only one it began
        (not one stored before it: another process's) on which no other process holds a live
        lease (shards that began one run at once); ``False`` when the store does not say."""
        if joining:
            return False
        if self.store.leases is None:
            return True
        try:
            live = self.store.leases.lease_liveness([run_id]).get(run_id)
        except StorageError:
            return False
        return live is None or not live.live

    # -- begin ---------------------------------------------------------------------------------

    def _begin(self) -> tuple[Run, Run | None, bool]:
        """The run's header (its id given, resumed or new), the run stored under its id before
        (``None``: a new run) and whether this process joins it; refuses, before anything is
        written, a run the header cannot join. It writes nothing: the run is begun (``begin_run``)
        where its lease is taken, so no interruption between the two leaves it running unleased."""
        placement = self.plan.placement
        started = time.time()
        run_id = placement.run_id
        if run_id is not None:
            check_run_id(run_id)
        if placement.resume and run_id is None:
            run_id = self.answering.unfinished_run(self.store)
        if placement.shard is not None and run_id is None:
            raise UsageError(
                f"{argument('shard')} needs {argument('run_id')}: every shard joins one run "
                f"(e.g. {argument('run_id', chr(34) + '$CI_PIPELINE_ID' + chr(34))})"
            )
        header = self.answering.header(run_id or new_run_id(started), started, placement)
        # what a line printed from the stored run repeats, as the live one does (a new run keeps it)
        header = with_resumed_options(header, placement.options)
        repository = self.store.repository
        existing = repository.get_run(header.id, with_cases=False) if run_id is not None else None
        if placement.resume and existing is None:
            raise unknown_run(repository, header.id, option=argument("resume"))
        if existing is not None and existing.set_identifier != header.set_identifier:
            # one rule for every kind of run, before "already complete": naming the other set says why
            raise UsageError(f'run {existing.id} is a run of set {quoted(existing.set_identifier)}, not {quoted(header.set_identifier)}')
        if existing is not None and regraded_from(existing) is not None and not (placement.resume and existing.status is RunStatus.COMPLETE):
            raise UsageError(_not_joined(existing))
        if existing is not None and _complete_shard_of(existing, placement):
            # A later attempt of the pipeline (a CI's "re-run"): the run is in, its verdict is given —
            # unless the shard gives another N than the run was stored with (a changed job matrix):
            # refused as it is while the run is open, not answered with a verdict it had no part in.
            self._refuse_another_shard_count(existing.id, placement.shard)
            self.answering.check_joinable(attrs.evolve(existing, status=RunStatus.RUNNING), header, False)
            return header, existing, True
        if existing is not None:
            self.answering.check_joinable(existing, header, placement.resume)
            self.answering.check_stored(existing, self.store)
            # Every case of a run is kept at the level the run was started with.
            header = attrs.evolve(header, privacy=existing.privacy or header.privacy)
        if placement.resume or run_id is not None:
            # resuming or joining: the checks that need the store came first, and still precede any write
            self.notes.extend(self.answering.before_joining())
        return header, existing, existing is not None

    def _refuse_another_shard_count(self, run_id: str, shard: Any) -> None:
        """:class:`~evalkit.storage.values.ShardMismatchError` when the run's stored shards give
        another N than ``shard`` (nothing is said when the store keeps no leases, or no N)."""
        leases = self.store.leases
        if leases is None:
            return
        stored = leases.shard_progress(run_id).count
        if stored is not None and stored != shard.count:
            raise ShardMismatchError(run_id, shard_part(shard.index, shard.count), [stored])

    def _complete_already(self, existing: Run) -> Outcome:
        """The outcome of a shard whose run is already complete: nothing is answered or stored
        again, the verdict is the one recorded when the run closed (as the verdict job reads it)."""
        gate = self.plan.gate
        judging = Judging(
            self.store, self.answering.rules, gate.tolerances, gate.baseline_id, None, gate.fail_on_new_failures, gate.baseline_run
        )
        run = self.store.repository.get_run(existing.id, with_cases=self.plan.observing.keep_cases) or existing
        baselines = self.store.baselines
        unrecorded = baselines is not None and run.id not in baselines.verdicts_for([run.id])
        verdict = recorded_verdict(run, judging)  # one the store failed to record when the run closed is recorded now
        given = (
            "its verdict, which the store failed to record when its last shard finished, is recorded now"
            if unrecorded else "the verdict recorded when its last shard finished is given"
        )  # fmt: skip
        self.notes.append(
            f"Run {run.id} is already complete (a later attempt of its pipeline?): nothing is answered again; "
            f"{given}. Pass a new {argument('run_id')} to start a new run."
        )
        detail = self.answering.detail(run, verdict, self.store)
        return Outcome(run, verdict, tuple(self.notes), self.plan.observing.hook_failures, detail=detail)

    # -- answer and finish ---------------------------------------------------------------------

    def _answer_and_finish(self, header: Run, stored_header: Run, joining: bool, lease: RunLease) -> tuple[Run, Verdict]:
        """Answer what is missing of the run (or of its shard), then store its status and verdict."""
        placement, observing = self.plan.placement, self.plan.observing
        skip = self._answered(header, stored_header, joining)
        todo = self.answering.select(Slice(header.id, placement.shard, skip, self.store, header.privacy))
        note = self.answering.resumed(header.id, len(skip), len(todo)) if placement.resume else None
        if note is not None:
            self.notes.append(note)
        self._notify("evalkit_run_started", run=header, total=len(todo))
        on_start = callers("on_start", observing.on_start)
        if on_start is not None:
            on_start(header, len(todo))
        self.answering.answer(todo, Commits(self._recorder(header, joining), self._case_done(header), lease.check))
        lease.check()  # a run taken over is the other process's to finish
        streamed = not observing.keep_cases and self.store.streamed is not None
        finish = self.answering.finish(header, self.store, streamed)
        # kept before the lease is given up: a reader that finds the part ended finds its stop
        provenance = self._limit_provenance(header.id, stored_header, finish.limit_stop)
        lease.give_up(done=finish.slice_in)  # a slice its budget stopped is not in
        self.slice_in = finish.slice_in
        finish_options: dict[str, Any] = {"with_cases": False} if streamed else {}
        if self.store.spending is not None:  # a store that keeps spend (others are given what they take)
            if finish.spend is not None:
                finish_options["spend"] = finish.spend
            if finish.answers_reused is not None:
                finish_options["answers_reused"] = finish.answers_reused
        self.notes.extend(finish.notes)
        self.plugin_failures.extend(finish.plugin_failures)
        if provenance is not None:
            finish_options["provenance"] = provenance
        stored = self.store.repository.finish_run(
            header.id, finish.status.value, time.time(), grader=finish.grader, identity=finish.identity,
            identity_note=finish.identity_note, metrics=finish.metrics, **finish_options,
        )  # fmt: skip
        if finish.stored_notes is not None:  # what the store finished the run with: one figure, its own
            self.notes.extend(finish.stored_notes(stored))
        # The stored status wins: another shard may have closed the run after this one read its cases.
        if stored.status is RunStatus.RUNNING:
            return stored, self._pending(header, stored)
        # Whole runs only: a shard's count may miss what the other shards stored after it.
        tally = finish.tally if streamed and placement.shard is None else None
        gate = self.plan.gate
        reused = self.plan.answers_reused or stored.answers_reused is not None
        judging = Judging(
            self.store, self.answering.rules, gate.tolerances, gate.baseline_id, tally, gate.fail_on_new_failures,
            baseline_run=gate.baseline_run, gate=gate.settings, answers_reused=reused,
            stopped_by=self._stopped_by(stored, finish.stopped_by, finish.limit_stop is None),
        )  # fmt: skip
        return stored, settle(stored, judging)

    def _stopped_by(self, stored: Run, own: str | None, slice_done: bool) -> str | None:
        """What stopped the run this process finished, as its verdict says it: this part's own
        limit (``own``), or — a shard whose run another shard's limit stop closed ``incomplete``
        while it answered — the limits the run keeps as data, read as the verdict job
        (``--wait-for-shards``) reads them; a shard whose own slice is in says so in a note."""
        shard = self.plan.placement.shard
        if shard is None or stored.status is not RunStatus.INCOMPLETE:
            return own
        stops = stops_of(stored)
        mine = shard_part(shard.index, shard.count)
        others = {part: stop for part, stop in stops.items() if part != mine}
        if slice_done and others:
            which = ", ".join(sorted(others))
            words = "; ".join(dict.fromkeys(reached_words(stop) for stop in others.values()))
            ends = [part.partition("/") for part in others]
            indices = tuple(sorted(int(i) for i, _, n in ends if i.isdigit() and n == str(shard.count)))
            self.notes.append(
                f"Shard {mine} done: its slice is in; run {stored.id} was closed incomplete because a spending limit "
                f"stopped shard{'s' if len(others) > 1 else ''} {which} ({words}); continue "
                f"{'them' if len(others) > 1 else 'it'} with a higher limit: {resume_hint(stored, indices, shard.count)}"
            )
        return run_stopped_by(stored) or own

    def _part(self) -> str:
        """This process's part of the run: ``*`` or its shard's ``I/N``."""
        shard = self.plan.placement.shard
        return WHOLE_RUN if shard is None else shard_part(shard.index, shard.count)

    def _limit_provenance(self, run_id: str, stored_header: Run, stop: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """Keep the limit that stopped this process's part (or clear the one that stopped it before:
        it finished again), as :mod:`evalkit.run.limit_stops` keeps it. A store that revises a run's
        provenance (:class:`~evalkit.storage.RevisableProvenance`) merges it with the run row locked,
        so shards stopped at once each keep theirs; ``None`` is returned, nothing left to write.
        Another store is given the provenance to write through ``finish_run`` (returned; ``None``:
        nothing to write), read again first — a shard finishing between that read and this write
        loses its entry (see docs/architecture.md)."""
        part = self._part()
        if provenance_after(stored_header.provenance, part, stop) is None and stop is None:
            return None  # nothing kept for this part when it began, nothing to keep now
        if self.store.revisable is not None:
            self.store.revisable.revise_provenance(run_id, lambda stored: provenance_after(stored, part, stop))
            return None
        if provenance_after(stored_header.provenance, part, stop) is None:
            return None
        fresh = self.store.repository.get_run(run_id, with_cases=False)
        return provenance_after((fresh or stored_header).provenance, part, stop)

    def _clear_earlier_stop(self, run_id: str, stored_header: Run) -> None:
        """This part taken again: the limit that stopped its earlier attempt no longer holds, so its
        entry is cleared now (a whole run's: every shard's), where the store can revise a run's
        provenance — killed before it finishes, the part reads as killed, its resume line without the
        earlier attempt's higher limit. Another store keeps the entry until the part finishes; its
        readers pass over it while the part's lease is held."""
        part = self._part()
        if self.store.revisable is None or provenance_after(stored_header.provenance, part, None) is None:
            return
        self.store.revisable.revise_provenance(run_id, lambda stored: provenance_after(stored, part, None))

    def _keep_latest_options(self, run_id: str, header: Run, stored_header: Run) -> None:
        """The run resumed or joined by a command: what it keeps of how its command was typed, for
        the line printed later from the store (:data:`~evalkit.run.placement.AS_TYPED`: its options,
        :data:`~evalkit.run.placement.RESUMED_OPTIONS`, and whether the deployment chose its
        retriever), becomes this command's (``header``'s), as its lease is taken — the line that
        continues a run killed after ``--resume x --concurrency 5`` repeats ``--concurrency 5``, not
        the first process's ``--concurrency 3``, and names the retriever typed on ``--resume`` that
        the first process left to its deployment. A run's shards each write theirs: the latest to
        take its lease is kept (each shard's line is its own command's anyway). Nothing for a
        library call (no command typed: the run keeps what it kept), or a store that cannot revise a
        run's provenance (:class:`~evalkit.storage.RevisableProvenance`)."""
        if self.plan.placement.options is None or self.store.revisable is None or as_typed(stored_header) == as_typed(header):
            return
        self.store.revisable.revise_provenance(run_id, lambda stored: with_latest_command(stored, header))

    def _answered(self, header: Run, stored_header: Run, joining: bool) -> Collection[str]:
        """The ids of the run's cases stored with an answer (what this process skips)."""
        resumable = self.store.resumable
        if resumable is not None:
            skip = resumable.answered_case_ids(header.id)
            interrupted = stored_header.status is RunStatus.INTERRUPTED
            # A shard joining an incomplete run is a re-run job: it answers its slice's errored cases again.
            reopened = self.plan.placement.resume or self.plan.placement.shard is not None
            if interrupted or (reopened and stored_header.status is RunStatus.INCOMPLETE):
                resumable.mark_status(header.id, RunStatus.RUNNING.value)
            return skip
        joined = self.store.repository.get_run(header.id) if joining else None
        return {c.case_id for c in joined.cases if not c.errored} if joined is not None else set()

    def _recorder(self, header: Run, joining: bool) -> CaseRecorder:
        """The recorder of this slice's cases: ``on_stored`` only for a run this process began, and
        only when the store can say how its cases read back."""
        on_stored = self.plan.observing.on_stored
        if joining or not isinstance(self.store.streamed, StreamedCases):
            on_stored = None
        window = COMMIT_WAIT_S if self.answering.groups_commits else 0.0
        return CaseRecorder(self.store.repository, header.id, header.privacy, self.answering.secrets(), callers("on_stored", on_stored), window)

    def _case_done(self, header: Run) -> Callable[[CaseResult], None]:
        on_case = callers("on_case", self.plan.observing.on_case)

        def told(case: CaseResult) -> None:
            self.answered_here += 1
            if case.errored:
                self.errored_here += 1
            elif case.passed:
                self.passed_here += 1
            self._notify("evalkit_case_graded", run=header, case=case)
            if on_case is not None:
                on_case(case)

        return told

    def _pending(self, header: Run, stored: Run) -> Verdict:
        """The verdict of a shard that finished its slice while the run is not complete yet."""
        shards = self.store.leases.shard_progress(header.id) if self.store.leases is not None else None
        where = f" ({shards.describe()})" if shards is not None and shards.count is not None else ""
        unit = self.answering.rules.unit
        self.notes.append(
            f"Shard done: {stored.answered_count} of {counted(header.case_count, unit)} of run {header.id} are in{where}; "
            "the run completes when the other shards finish."
        )
        return Verdict(
            PENDING, f"verdict pending: run {header.id} is not complete yet{where}; its verdict is given when the last shard finishes"
        )

    # -- observers -----------------------------------------------------------------------------

    def _notify(self, hook: str, **arguments: Any) -> None:
        if self.observers is not None:
            self.observers.notify(hook, **arguments)

    def _hooked(self, hook: str) -> bool:
        manager = self.plan.observing.manager
        return manager is not None and bool(getattr(manager.hook, hook).get_hookimpls())
