"""Bounded-time calls, so a catastrophically backtracking pattern cannot hang a run.

In the main thread the call is guarded by ``SIGALRM`` (CPython's regex engine checks for
signals while it backtracks, so the alarm interrupts it). Elsewhere the call runs in a helper
process that is killed when the time is up; the function and its arguments must then pickle.

:func:`search_with_timeout` bounds one regular-expression search (the ``regex`` assertion kind);
:func:`call_with_timeout` bounds any call (the ``json_schema`` kind validates an answer with it when
the schema holds ``pattern`` or ``patternProperties`` regexes).
"""

from __future__ import annotations

# The C functions under the signal module: its wrappers turn every handler and number into an enum
# and back, 13 µs of the 15 a guarded call spent installing and restoring the handler.
import _signal
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["RegexTimeout", "call_with_timeout", "search_with_timeout", "DEFAULT_REGEX_TIMEOUT_S"]

DEFAULT_REGEX_TIMEOUT_S = 1.0

T = TypeVar("T")


class RegexTimeout(Exception):
    """The call did not finish in time."""


def _raise_timeout(signum: int, frame: object) -> None:
    raise RegexTimeout()


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
    if threading.current_thread() is not threading.main_thread():
        return _call_in_process(function, args, timeout_s)
    previous = _signal.signal(_signal.SIGALRM, _raise_timeout)
    _signal.setitimer(_signal.ITIMER_REAL, timeout_s)
    try:
        return function(*args)
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous)


def search_with_timeout(compiled: re.Pattern[str], text: str, timeout_s: float = DEFAULT_REGEX_TIMEOUT_S) -> bool:
    """Return whether ``compiled`` matches anywhere in ``text``; raise :class:`RegexTimeout` when too slow."""
    return call_with_timeout(_search_in_child, compiled.pattern, compiled.flags, text, timeout_s=timeout_s)
