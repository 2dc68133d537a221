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
"""

from __future__ import annotations

import asyncio
import contextvars
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
    thread's context variables, waited for."""
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["result"] = context.run(call)
        except BaseException as exc:  # carried to the caller's thread and raised there
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="evalkit-off-loop", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def run_to_completion(job: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``job()`` run on a fresh event loop: in this thread when it runs none, else in a worker
    thread (:func:`off_the_loop`)."""
    if loop_running():
        return off_the_loop(lambda: asyncio.run(job()))
    return asyncio.run(job())
