"""Synchronous calls made from a thread that runs an event loop.

A library caller may call :func:`evalkit.evaluate_set` from inside a running loop: a Jupyter
cell, an ``async`` web handler, ``pytest-asyncio``. ``asyncio.run`` refuses there ("cannot be
called from a running event loop"): a run was stored, then left empty and marked interrupted, and
the caller's context was called an evalkit bug. :func:`off_the_loop` makes such a call in one
worker thread it waits for — the whole call, so the store is opened, written and closed in one
thread (an in-memory SQLite store exists in one connection only); :func:`run_to_completion` does
the same for a coroutine. The caller's loop is blocked meanwhile, as by any synchronous call, and
the worker is not the main thread, so its synchronous calls are bounded as off the main thread
(:mod:`evalkit.timeouts`).

The loops it runs have evalkit's daemon pool (:class:`~evalkit.bounded.BoundedCalls`) for their
default executor (``asyncio.to_thread``, ``run_in_executor(None, …)``), and closing one does not
wait for a call still running there: an async grader cancelled at ``grade_timeout`` whose thread
slept on held the run's end until that call returned (an hour, for ``sleep(3600)``), and its
thread, joined at exit, a library caller's process after it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_running", "off_the_loop", "run_to_completion"]

T = TypeVar("T")


def loop_running() -> bool:
    """True when this thread is running an event loop (``asyncio.run`` would refuse here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def off_the_loop(call: Callable[[], T]) -> T:
    """``call()``'s result (or its exception) from a worker thread that runs no loop, with this
    thread's context variables, waited for. Ctrl-C while waiting (a notebook's "interrupt", which
    reaches the caller's thread only) is raised in the worker too, and what the worker then raises —
    a run's :class:`~evalkit.errors.RunInterrupted`, with its resume command — is raised here. The
    host program's own alarm (:class:`~evalkit.timeouts.HostAlarm`) stops the worker likewise, and is
    raised here, what the worker said of its run added as a note."""
    from .timeouts import HostAlarm

    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()
    # Waited for on an Event, not Thread.join(): a join that Ctrl-C interrupts takes the thread for
    # ended from then on (CPython 3.11 releases its lock), and the run went on unwatched.
    done = threading.Event()

    def work() -> None:
        try:
            outcome["result"] = context.run(call)
        except BaseException as exc:  # carried to the caller's thread and raised there
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="evalkit-off-loop", daemon=True)
    worker.start()
    try:
        done.wait()
    except KeyboardInterrupt:
        _interrupt(worker)  # the worker stops as a run stops for Ctrl-C: marked interrupted, resumable
        done.wait()
        if "error" in outcome:
            raise outcome["error"] from None
        raise
    except HostAlarm as alarm:  # the host's own time limit: the run stops as for Ctrl-C, the host's exception goes on
        _interrupt(worker)
        done.wait()
        stopped = outcome.get("error")
        if stopped is not None and not isinstance(stopped, KeyboardInterrupt):
            alarm.cause.add_note(f"evalkit: {stopped}")
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


#: The event loop each thread runs in :func:`run_to_completion` now, keyed by thread id: where an
#: interrupt of :func:`off_the_loop`'s caller is delivered.
_loops: dict[int, asyncio.AbstractEventLoop] = {}


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


def _interrupt(worker: threading.Thread) -> None:
    """Raise ``KeyboardInterrupt`` in ``worker``: through its event loop when it runs one in
    :func:`run_to_completion` (which wakes a loop waiting on its sockets), else as an asynchronous
    exception at its next bytecode."""
    loop = _loops.get(worker.ident or 0)
    if loop is not None:
        try:
            loop.call_soon_threadsafe(_raise_interrupt)
            return
        except RuntimeError:  # the loop closed meanwhile
            pass
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident or 0), ctypes.py_object(KeyboardInterrupt))


class _UnwaitedExecutor(concurrent.futures.ThreadPoolExecutor):
    """A loop's default executor whose calls run on daemon threads (:class:`~evalkit.bounded.BoundedCalls`,
    as many as asyncio's own default pool has), and whose shutdown does not wait for a call still
    running. A ``ThreadPoolExecutor`` only in name: ``set_default_executor`` takes no other."""

    def __init__(self) -> None:
        from .bounded import BoundedCalls

        super().__init__(max_workers=1)  # its own threads are never started: submit is the pool's
        # a call whose awaiting coroutine was cancelled at its time limit is abandoned, its thread
        # replaced: stuck ones held the pool's threads until no call could start
        self._calls = BoundedCalls(min(32, (os.cpu_count() or 1) + 4), name="evalkit-loop", abandon_on_cancel=True)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:  # type: ignore[override]
        """``fn(*args, **kwargs)`` on one of the pool's daemon threads."""
        return self._calls.submit(functools.partial(fn, **kwargs) if kwargs else fn, *args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Let the idle threads end; a call still running is not waited for (its daemon thread ends with the process)."""
        self._calls.close()


def run_to_completion(job: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``job()`` run on a fresh event loop: in this thread when it runs none, else in a worker
    thread (:func:`off_the_loop`). The loop's default executor is not waited for as it closes (see
    the module docstring)."""
    if loop_running():
        return off_the_loop(lambda: run_to_completion(job))
    ident = threading.get_ident()
    with asyncio.Runner() as runner:
        runner.get_loop().set_default_executor(_UnwaitedExecutor())
        _loops[ident] = runner.get_loop()
        try:
            return runner.run(job())
        finally:
            _loops.pop(ident, None)
