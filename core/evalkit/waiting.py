"""Waiting for a sharded run: the final CI job polls the store until every shard is in.

The run is finished when its stored status is no longer ``running`` (the last shard closes it)
and, on a store that keeps verdicts, its verdict is recorded. A run a shard's spending limit closed
``incomplete`` is not finished while another shard has not ended (not started, or still answering:
:func:`~evalkit.run.continuing.unended`): that shard reopens it. A run that does not exist yet is
waited for too: the final job may start before the first shard has written anything, and so is a
sharded run some of whose shards have not taken their lease yet — unless its id is one no shard can
store (``evalkit run --run-id`` refuses it: ``ci-1/feature/x``), refused at once (exit 2) instead of
waited for until the time limit. A run no process answers any more
— every lease it took is dead, and was last heard from more than :data:`~evalkit.leases.STALE_AFTER_S`
ago (:meth:`~evalkit.leases.RunLiveness.given_up`) — is not waited for until the time limit: the
wait ends there, naming the command that continues it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .durations import MAX_WAIT_S, read_duration
from .errors import RunNotFinished
from .runs import Run, RunStatus
from .storage import counted_so_far
from .storage.protocols import ResultRepository, capabilities
from .wording import counted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .run.continuing import ResumeDefaults

__all__ = ["MAX_WAIT_S", "parse_duration", "wait_for_run"]



def parse_duration(text: str, named: str = "a duration") -> float:
    """``90``, ``90s``, ``30m``, ``1.5h``, ``2d`` → seconds, from 1 ms to :data:`MAX_WAIT_S`
    (:func:`evalkit.durations.read_duration`, the one rule); a usage error naming ``named``
    otherwise."""
    return read_duration(text, named, most=MAX_WAIT_S)


def _finished(repository: ResultRepository, run: Run | None) -> bool:
    if run is None or run.status is RunStatus.RUNNING:
        return False
    if run.status is RunStatus.INCOMPLETE and _unended(repository, run):
        return False  # a shard a limit stopped closed it while other shards are still to answer
    baselines = capabilities(repository).baselines
    if run.status is RunStatus.COMPLETE and baselines is not None:
        return run.id in baselines.verdicts_for([run.id])
    return True


def _unended(repository: ResultRepository, run: Run) -> tuple[int, ...]:
    """The shards of ``run`` that have not ended (:func:`evalkit.run.continuing.unended`), as its leases
    say; none when the store keeps no leases."""
    from .run.continuing import unended

    leases = capabilities(repository).leases
    if leases is None:
        return ()
    return unended(run, leases.lease_liveness([run.id]).get(run.id))


def _pending_words(repository: ResultRepository, run: Run) -> str:
    """``a spending limit stopped part of it (…) and shards 2, 3 of 3 have not ended …``: why a run
    stored incomplete is still waited for (:func:`_unended`); empty when it is not."""
    from .run.limit_stops import run_stopped_by

    shards = _unended(repository, run) if run.status is RunStatus.INCOMPLETE else ()
    if not shards:
        return ""
    stopped = run_stopped_by(run)
    said = f"a spending limit stopped part of it ({stopped}) and " if stopped else "it was closed incomplete and "
    many = len(shards) > 1
    return (
        f"{said}shard{'s' if many else ''} {', '.join(map(str, shards))} {'have' if many else 'has'} not ended "
        "(not started yet, or still answering)"
    )


def _refuse_gone(repository: ResultRepository, run: Run, defaults: ResumeDefaults | None = None) -> None:
    """:class:`RunNotFinished` when no process answers ``run`` any more and none has for longer
    than a lease stays live (a run that is answered, or has a shard still to start, is waited for;
    ``defaults``: see :func:`evalkit.run.continuing.resume_hint`)."""
    from .leases import liveness
    from .run.continuing import gone_sentence, stopped_by_limit

    live = liveness(repository, [run]).get(run.id)
    # Shards a spending limit stopped ended: nothing answers them until they are run again, so
    # there is no lease to wait to go stale.
    if live is None or not (live.given_up() or stopped_by_limit(run, live)):
        return
    raise RunNotFinished(
        f"run {run.id}: {run.answered_count} of {counted(run.case_count, 'case')} are in and the run is still "
        f"running, but it has {gone_sentence(run, live, defaults)}, then wait again; "
        "the verdict is pending"
    )


def wait_for_run(
    repository: ResultRepository,
    run_id: str,
    *,
    timeout_s: float,
    poll_s: float = 5.0,
    on_poll: Callable[[Run | None], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    defaults: ResumeDefaults | None = None,
) -> Run:
    """The run ``run_id`` once every shard is in (with its cases); :class:`RunNotFinished` when
    ``timeout_s`` passes first, or when no process answers the run any more (see the module); a
    usage error at once when the run is not stored and no shard could store it (its id refused).
    ``defaults``: what a bare continuing command answers with, for the command that continues a run
    no process answers (:func:`evalkit.run.continuing.resume_defaults`)."""
    deadline = clock() + timeout_s
    first = True
    while True:
        run = repository.get_run(run_id, with_cases=False)
        if run is None and first:  # an id every shard refuses never appears: not waited for
            from .run.placement import check_run_id

            check_run_id(run_id)
        first = False
        if _finished(repository, run):
            full = repository.get_run(run_id)
            assert full is not None
            return full
        if run is not None:
            run = counted_so_far(repository, run)  # its row's counts are written when it ends
            _refuse_gone(repository, run, defaults)
        if on_poll is not None:
            on_poll(run)
        if clock() >= deadline:
            if run is None:
                raise RunNotFinished(f"run {run_id} did not appear in the store within {timeout_s:g} s; did any shard start?")
            pending = _pending_words(repository, run)
            if pending:
                raise RunNotFinished(
                    f"run {run_id}: {run.answered_count} of {counted(run.case_count, 'case')} are in after {timeout_s:g} s: "
                    f"{pending}; the verdict is pending (run the missing shards, then wait again)"
                )
            raise RunNotFinished(
                f"run {run_id}: {run.answered_count} of {counted(run.case_count, 'case')} are in after {timeout_s:g} s "
                "and the run is still running; the verdict is pending (resume the missing shards, then wait again)"
            )
        sleep(max(0.0, min(poll_s, deadline - clock())))
