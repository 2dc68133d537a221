"""Bounded-time regular-expression search, so a catastrophically backtracking pattern cannot hang a run.

In the main thread the search is guarded by ``SIGALRM`` (CPython's regex engine checks for
signals while it backtracks, so the alarm interrupts it). Elsewhere the search runs in a helper
process that is killed when the time is up.
"""

from __future__ import annotations

import re
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

__all__ = ["RegexTimeout", "search_with_timeout", "DEFAULT_REGEX_TIMEOUT_S"]

DEFAULT_REGEX_TIMEOUT_S = 1.0


class RegexTimeout(Exception):
    """The search did not finish in time."""


def _raise_timeout(signum: int, frame: object) -> None:
    raise RegexTimeout()


def _search_in_child(pattern: str, flags: int, text: str) -> bool:
    return re.compile(pattern, flags).search(text) is not None


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _search_in_process(compiled: re.Pattern[str], text: str, timeout_s: float) -> bool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=1)
        pool = _pool
    future = pool.submit(_search_in_child, compiled.pattern, compiled.flags, text)
    try:
        return future.result(timeout=timeout_s)
    except FutureTimeout:
        with _pool_lock:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            _pool = None
        raise RegexTimeout() from None


def search_with_timeout(compiled: re.Pattern[str], text: str, timeout_s: float = DEFAULT_REGEX_TIMEOUT_S) -> bool:
    """Return whether ``compiled`` matches anywhere in ``text``; raise :class:`RegexTimeout` when too slow."""
    if threading.current_thread() is not threading.main_thread():
        return _search_in_process(compiled, text, timeout_s)
    previous = signal.signal(signal.SIGALRM, _raise_timeout)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return compiled.search(text) is not None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
