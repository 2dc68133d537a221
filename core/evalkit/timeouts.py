"""Bounded-time calls, so a catastrophically backtracking pattern or a stuck grader cannot hang a run.

In the main thread the call is guarded by ``SIGALRM`` (CPython's regex engine checks for
signals while it backtracks, so the alarm interrupts it). Elsewhere the call runs in a helper
process that is killed when the time is up; the function and its arguments must then pickle.

:func:`search_with_timeout` bounds one regular-expression search (the ``regex`` assertion kind);
:func:`call_with_timeout` bounds any call (the ``json_schema`` kind validates an answer with it when
the schema holds ``pattern`` or ``patternProperties`` regexes); :func:`alarm_bounded` bounds a call
in the main thread only, raising the caller's exception into it (a synchronous grader).

Guards nest: a regex search inside a guarded grader keeps both limits, the alarm is set for the
nearer one, and when the outer limit passes first its exception is the one raised. A timer the
process had set before the outermost guard (``pytest-timeout``'s, say) is set again afterwards,
less the time the call took.

A guard costs two ``signal()`` and two to four ``setitimer()`` calls. Inside :func:`alarm_scope`
(a run wraps its answering in one) the handler stays installed and the timer is set only when a
guard's limit is nearer than the one already set: a guarded call that ends in time leaves the timer
running, and the alarm, when it rings with nothing due, sets itself for the nearest limit still in
force or stays off. Thousands of short guarded calls then cost no system call at all.
"""

from __future__ import annotations

# The C functions under the signal module: its wrappers turn every handler and number into an enum
# and back, 13 µs of the 15 a guarded call spent installing and restoring the handler.
import _signal
import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = [
    "RegexTimeout",
    "TimeLimitExceeded",
    "alarm_bounded",
    "alarm_scope",
    "alarms_reach_this_thread",
    "call_with_timeout",
    "search_with_timeout",
    "DEFAULT_REGEX_TIMEOUT_S",
]

DEFAULT_REGEX_TIMEOUT_S = 1.0

T = TypeVar("T")


class RegexTimeout(Exception):
    """The call did not finish in time."""


class TimeLimitExceeded(BaseException):
    """Raised into a call that outlived its time limit (see :func:`alarm_bounded`). Not an
    :class:`Exception`, so the call's own ``except Exception`` cannot swallow it."""


#: Once a limit has passed, the alarm rings again this often until the guarded call has ended:
#: a call that catches the first exception (a retry loop) gets another.
_RING_AGAIN_S = 0.1


class _Deadline:
    __slots__ = ("at", "error")

    def __init__(self, at: float, error: type[BaseException]) -> None:
        self.at = at
        self.error = error


#: The guards in force in the main thread, outermost first.
_deadlines: list[_Deadline] = []


class _Scope:
    """An :func:`alarm_scope` in force: when the timer rings (``None``: it is off)."""

    __slots__ = ("rings_at",)

    def __init__(self) -> None:
        self.rings_at: float | None = None


#: The alarm scope in force in the main thread, if any.
_scope: _Scope | None = None


def _on_alarm(signum: int, frame: object) -> None:
    now = time.monotonic()
    for deadline in _deadlines:
        if now >= deadline.at:
            _set_timer(now, now + _RING_AGAIN_S)
            raise deadline.error()
    _arm_nearest()


def _set_timer(now: float, at: float | None) -> None:
    """Ring at ``at`` (``None``: not at all), remembering it in the scope in force."""
    _signal.setitimer(_signal.ITIMER_REAL, 0 if at is None else max(at - now, 1e-6))
    if _scope is not None:
        _scope.rings_at = at


def _arm_nearest() -> None:
    if _deadlines:
        _set_timer(time.monotonic(), min(deadline.at for deadline in _deadlines))
    elif _scope is not None:
        _set_timer(0.0, None)


@contextlib.contextmanager
def alarm_scope() -> Iterator[None]:
    """Guarded calls inside it (main thread) share one installed handler and a lazily set timer
    (see the module docstring); on leaving it the timer is stopped and the process's own handler
    put back. Off the main thread, inside another scope or guard, or when the process has a timer
    of its own running (its alarm must ring on time), it changes nothing."""
    global _scope
    if _scope is not None or _deadlines or not alarms_reach_this_thread() or _signal.getitimer(_signal.ITIMER_REAL)[0]:
        yield
        return
    previous_handler = _signal.signal(_signal.SIGALRM, _on_alarm)
    scope = _scope = _Scope()
    try:
        yield
    finally:
        _scope = None
        if scope.rings_at is not None:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous_handler)


def alarms_reach_this_thread() -> bool:
    """True in the main thread: the only one Python delivers signals to, so the only one
    :func:`alarm_bounded` can guard."""
    return threading.current_thread() is threading.main_thread()


def alarm_bounded(function: Callable[..., T], args: tuple[Any, ...], timeout_s: float, error: type[BaseException]) -> T:
    """``function(*args)``, with ``error()`` raised into it once it has run ``timeout_s`` seconds
    (and every 0.1 s after, until it ends). Main thread only (signals are delivered there);
    :class:`RuntimeError` elsewhere. The process's own ``SIGALRM`` handler and timer are put back."""
    if not alarms_reach_this_thread():
        raise RuntimeError("alarm_bounded works in the main thread only")
    started = time.monotonic()
    depth = len(_deadlines)
    scope = _scope
    if scope is not None:
        at = started + timeout_s
        _deadlines.append(_Deadline(at, error))
        if scope.rings_at is None or at < scope.rings_at:
            _set_timer(started, at)
        try:
            return function(*args)
        finally:
            del _deadlines[depth:]  # the timer runs on: when it rings with nothing due, it moves on
    if depth == 0:
        previous_handler = _signal.signal(_signal.SIGALRM, _on_alarm)
        _deadlines.append(_Deadline(started + timeout_s, error))
        previous_timer = _signal.setitimer(_signal.ITIMER_REAL, timeout_s)
    else:
        _deadlines.append(_Deadline(started + timeout_s, error))
        _arm_nearest()
    try:
        return function(*args)
    finally:
        del _deadlines[depth:]  # this guard's and any inner one an exception cut short
        if depth == 0:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
            _signal.signal(_signal.SIGALRM, previous_handler)
            delay, interval = previous_timer
            if delay or interval:
                _signal.setitimer(_signal.ITIMER_REAL, max(delay - (time.monotonic() - started), 1e-6), interval)
        else:
            _arm_nearest()


def _search_in_child(pattern: str, flags: int, text: str) -> bool:
    return re.compile(pattern, flags).search(text) is not None


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _call_in_process(function: Callable[..., T], args: tuple[Any, ...], timeout_s: float) -> T:
    # Imported here: concurrent.futures.process pulls in multiprocessing, and most runs never
    # need a helper process (the main thread's calls use SIGALRM).
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout

    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=1)
        pool = _pool
    future = pool.submit(function, *args)
    try:
        return future.result(timeout=timeout_s)
    except FutureTimeout:
        with _pool_lock:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            _pool = None
        raise RegexTimeout() from None


def call_with_timeout(function: Callable[..., T], *args: Any, timeout_s: float = DEFAULT_REGEX_TIMEOUT_S) -> T:
    """``function(*args)``, or :class:`RegexTimeout` when it runs longer than ``timeout_s``.

    Off the main thread ``function`` runs in a helper process: it must be a module-level function
    and its arguments and result must pickle.
    """
    if not alarms_reach_this_thread():
        return _call_in_process(function, args, timeout_s)
    return alarm_bounded(function, args, timeout_s, RegexTimeout)


def search_with_timeout(compiled: re.Pattern[str], text: str, timeout_s: float = DEFAULT_REGEX_TIMEOUT_S) -> bool:
    """Return whether ``compiled`` matches anywhere in ``text``; raise :class:`RegexTimeout` when too slow."""
    return call_with_timeout(_search_in_child, compiled.pattern, compiled.flags, text, timeout_s=timeout_s)
