"""Plugin calls with a time limit: a call that never returns costs one case, not the run.

Retrievers (each question) and synchronous generators (each answer) are called on daemon threads,
at most ``concurrency`` at once. When a call outlives its limit the
caller stops waiting (the case becomes an errored one) and a fresh thread takes the stuck
one's place; the stuck thread is abandoned — Python cannot stop it — and, being a daemon, never
keeps the process from exiting (``concurrent.futures`` threads would: they are joined at exit).
What a call raises reaches the caller as :func:`evalkit.errors.carried` hands it over.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from .errors import PluginCallAbandoned, carried

__all__ = ["BoundedCalls", "CallAbandoned", "call_within", "plugin_call_within", "wait_for"]

_T = TypeVar("_T")
_STOP = None


class CallAbandoned(TimeoutError):
    """A bounded call outlived its limit: its caller stopped waiting and its thread is abandoned.
    Told apart from a ``TimeoutError`` the call raised itself (its HTTP client's, say), which is
    the call's own failure and is handed over as it is: the two were one exception, so a plugin's
    own time-out was said as evalkit's ("the call was abandoned")."""


def wait_for(future: Future[_T], limit: float) -> _T:
    """What the call behind ``future`` returned or raised (a ``TimeoutError`` of its own
    included), waited for at most ``limit`` seconds; :class:`CallAbandoned` when it still runs."""
    try:
        return future.result(timeout=limit)
    except TimeoutError:
        if not future.done():
            raise CallAbandoned(f"no result within {limit:g} s") from None
    return future.result()  # ended as the wait did, or raised a TimeoutError of its own


class BoundedCalls:
    """A pool of daemon threads whose callers wait a bounded time for each result.

    Threads start as calls need them (as ``concurrent.futures`` pools do), at most ``concurrency``
    busy at once: a pool sized for a million calls in flight starts only as many as are made.
    """

    def __init__(self, concurrency: int, name: str = "evalkit-retrieve", *, abandon_on_cancel: bool = False) -> None:
        """``abandon_on_cancel``: a call's future cancelled while the call runs abandons it (as
        :meth:`abandon` does), for a caller that only cancels (an event loop's default executor:
        a coroutine awaiting ``asyncio.to_thread`` cancelled at its time limit cancels the future)."""
        self._abandon_on_cancel = abandon_on_cancel
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self._name = name
        self._limit = concurrency
        self._workers = 0
        self._idle = threading.Semaphore(0)  # one count per thread waiting for a call
        self._lock = threading.Lock()

    def _spawn(self) -> None:
        self._workers += 1
        threading.Thread(target=self._work, name=f"{self._name}-{self._workers}", daemon=True).start()

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is _STOP:
                return
            future, call, args = task
            if future.set_running_or_notify_cancel():
                try:
                    # StopIteration or a BaseException that is no Exception, carried: asyncio
                    # cannot take the one into its future (which then never resolved), and the
                    # caller's `except` would not take the other for the plugin's failure
                    future.set_result(carried(call, *args))
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                    future.set_exception(exc)
            self._idle.release()

    def submit(self, call: Callable[..., _T], *args: Any) -> Future[_T]:
        """Queue ``call(*args)``; an idle thread, or a new one while fewer than ``concurrency``
        run, starts it at once."""
        future: Future[_T] = _Abandonable(self) if self._abandon_on_cancel else Future()
        self._tasks.put((future, call, args))
        with self._lock:
            if not self._idle.acquire(blocking=False) and self._workers < self._limit:
                self._spawn()
        return future

    def abandon(self, future: Future[Any]) -> None:
        """Stop waiting for ``future``: its thread stays stuck, a new one takes its place."""
        if not future.cancel() and not isinstance(future, _Abandonable):  # one abandons itself
            self._replace_stuck()

    def _replace_stuck(self) -> None:
        with self._lock:
            self._limit += 1
            self._spawn()

    def close(self) -> None:
        """Let the idle threads end (stuck ones end with the process)."""
        for _ in range(self._workers):
            self._tasks.put(_STOP)


class _Abandonable(Future):  # type: ignore[type-arg]
    """A future of :class:`BoundedCalls` made with ``abandon_on_cancel``: cancelled while its call
    runs, the call is abandoned and a fresh thread takes its place (once). Without it each call
    whose waiter was cancelled at its limit held one of the pool's threads for ever, and once they
    were all held every later call waited in the queue: an async grader's ``asyncio.to_thread``
    that never returned, in six cases, failed every case after them at ``grade_timeout``."""

    def __init__(self, calls: BoundedCalls) -> None:
        super().__init__()
        self._calls: BoundedCalls | None = calls

    def cancel(self) -> bool:
        """Cancel a call not yet started; abandon one that runs (``False``, as ``Future.cancel``)."""
        if super().cancel():
            return True
        calls, self._calls = self._calls, None
        if calls is not None and not self.done():
            calls._replace_stuck()  # noqa: SLF001 - the pool's own future
        return False


def plugin_call_within(call: Callable[[], _T], within: tuple[float, str], what: str, name: str) -> _T:
    """``call()`` — a plugin's call outside a case: a factory, a set provider's hook — by
    :func:`call_within` on a daemon thread named ``name``, for at most ``within`` (seconds, and
    what set them: ``"set_load_timeout"``, ``"the deployment's timeout"``): the one rule and
    wording for them, an exception saying ``WHAT did not return within N s (SET
    BY); the call was abandoned`` (:class:`~evalkit.errors.PluginCallAbandoned`) when it outlives the limit. What the call raises reaches the
    caller as :func:`~evalkit.errors.carried` hands it over."""
    limit, set_by = within
    try:
        return call_within(call, limit, name)
    except CallAbandoned:
        raise PluginCallAbandoned(f"{what} did not return within {limit:g} s ({set_by}); the call was abandoned") from None


def call_within(call: Callable[[], _T], limit: float, name: str) -> _T:
    """``call()`` on a daemon thread of its own (named ``name``), waited for at most ``limit``
    seconds: its result, or what it raised (as :class:`BoundedCalls` hands it over), or
    :class:`CallAbandoned` when it outlives the limit — the thread is then abandoned and never
    keeps the process from exiting. For a plugin's one call outside a case (a retriever's
    factory, its ``provenance()``, its ``close()``)."""
    calls = BoundedCalls(1, name)
    try:
        return wait_for(calls.submit(call), limit)
    finally:
        calls.close()
