"""Exceptions Python itself reports, because no caller can catch them: one raised in an object's
``__del__`` or a weak reference's callback (``sys.unraisablehook``) and one that ends a thread a
plugin started (``threading.excepthook``).

Python's own hooks print the exception's message as it is, with a traceback: a plugin whose
``__del__`` raised ``RuntimeError("\\x1b[2J…\\nevalkit: error: …")`` cleared the terminal and printed a
line that read as evalkit's. While the command runs, each is said as one ``evalkit: warning:``
line instead: the exception quoted as every plugin's exception is
(:func:`evalkit.shapes.exception_text`: escapes, cut), where it was raised (the function and its
module, with the distribution of the plugin whose package it is), and that evalkit went on.
"""

from __future__ import annotations

import contextlib
import sys
import threading

# typing and the modules that word a warning are imported only when one is said: every command
# enters this at start-up, whose budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType

__all__ = ["stray_errors_said"]


def _raised_in(trace: TracebackType | None, fallback: object) -> str:
    """Where the exception was raised: the innermost frame's function and module (``fallback``,
    the object Python names, when there is no traceback), with the module's distribution."""
    from ..wording import quoted

    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is not None:
        code = trace.tb_frame.f_code
        where = getattr(code, "co_qualname", code.co_name)
        module = trace.tb_frame.f_globals.get("__name__")
    else:
        where = getattr(fallback, "__qualname__", None) or type(fallback).__qualname__
        module = getattr(fallback, "__module__", None) or type(fallback).__module__
    shown = f"{quoted(str(where))}"
    if isinstance(module, str):
        shown += f" of module {quoted(module)}{_distribution_of(module)}"
    return shown


def _distribution_of(module: str) -> str:
    """`` (DIST VERSION)`` of the installed evalkit plugin whose entry point names a module of
    ``module``'s top-level package (the registry's scan, read once per process), or ``""``."""
    from ..registry import scan

    top = module.partition(".")[0]
    for record in scan():
        if record.value.partition(":")[0].strip().partition(".")[0] == top:
            return f" ({record.distribution} {record.version})"
    return ""


def _say(text: str) -> None:
    from .console import console

    console(stderr=True).message(f"evalkit: warning: {text}")


@contextlib.contextmanager
def stray_errors_said() -> Iterator[None]:
    """Say the exceptions Python reports itself (see the module) as ``evalkit: warning:`` lines
    while the block runs: the first of each place and exception class, and at the end how often
    each said one was raised in all when more than once (a ``__del__`` that raises for every
    answer prints one line, not one per case). The hooks set before are restored after it."""
    before_unraisable, before_thread = sys.unraisablehook, threading.excepthook
    counts: dict[tuple[str, str], int] = {}
    lock = threading.Lock()

    def exception_text(exc: BaseException) -> str:
        from ..shapes import exception_text as text_of

        return text_of(exc)

    def said_once(where: str, exc: BaseException, text: str) -> None:
        key = (where, type(exc).__qualname__)
        with lock:
            counts[key] = counts.get(key, 0) + 1
            if counts[key] > 1:
                return
        _say(text)

    def unraisable(report: sys.UnraisableHookArgs) -> None:
        if not isinstance(report.exc_value, Exception):
            before_unraisable(report)  # a KeyboardInterrupt, a SystemExit: Python's own report
            return
        try:
            said_unraisable(report)
        except Exception:  # noqa: BLE001 — a warning that cannot be worded is left to Python's report
            before_unraisable(report)

    def said_unraisable(report: sys.UnraisableHookArgs) -> None:
        where = _raised_in(report.exc_traceback, report.object)
        said_once(where, report.exc_value,
                  f"{where} raised {exception_text(report.exc_value)}, where nothing can catch it "
                  "(Python ignores it); evalkit went on")  # fmt: skip

    def thread_ended(report: threading.ExceptHookArgs) -> None:
        if not isinstance(report.exc_value, Exception):
            before_thread(report)
            return
        try:
            said_thread_ended(report)
        except Exception:  # noqa: BLE001 — as for an unraisable exception
            before_thread(report)

    def said_thread_ended(report: threading.ExceptHookArgs) -> None:
        from ..wording import quoted

        name = report.thread.name if report.thread is not None else "?"
        where = _raised_in(report.exc_traceback, report.thread)
        said_once(where, report.exc_value,
                  f"{where} raised {exception_text(report.exc_value)}, which ended thread {quoted(name)}; evalkit went on")  # fmt: skip

    sys.unraisablehook, threading.excepthook = unraisable, thread_ended
    try:
        yield
    finally:
        sys.unraisablehook, threading.excepthook = before_unraisable, before_thread
        for (where, name), count in counts.items():
            if count > 1:
                _say(f"{where} raised {name} {count:,} times in all (the first shown above)")
