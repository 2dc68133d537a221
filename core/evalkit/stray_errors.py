"""Exceptions Python itself reports, because no caller can catch them: one raised in an object's
``__del__`` or a weak reference's callback (``sys.unraisablehook``) and one that ends a thread a
plugin started (``threading.excepthook``).

Python's own hooks print the exception's message as it is, with a traceback: a plugin whose
``__del__`` raised ``RuntimeError("\\x1b[2J…\\nevalkit: error: …")`` cleared the terminal and printed a
line that read as evalkit's. While evalkit works (:func:`stray_errors_warned`: a CLI command, a
library call of :func:`evalkit.evaluate_set` or :func:`evalkit.evaluate_retrieval`), each is an
:class:`~evalkit.errors.EvalkitWarning` instead (``warnings.warn``: a library caller's filters
decide what becomes of it, the CLI says it as one ``evalkit: warning:`` line): the exception quoted
as every plugin's exception is (:func:`evalkit.shapes.exception_text`: escapes, cut), where it was
raised (the function and its module, with the distribution of the plugin whose package it is), and
that evalkit went on. The rule was the CLI's alone: a library caller got Python's raw report.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading

# typing and the modules that word a warning are imported only when one is said: every command
# enters this at start-up, whose budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import TracebackType
    from typing import Any, TypeVar

    Call = TypeVar("Call", bound=Callable[..., Any])

__all__ = ["stray_errors_warned", "stray_errors_warned_within"]

#: How many :func:`stray_errors_warned` blocks are open in the process (the hooks are the process's):
#: an inner one (a library call the CLI made) leaves the warning to the outer one.
_open_blocks = [0]
_open_lock = threading.Lock()


def _raised_in(trace: TracebackType | None, fallback: object) -> str:
    """Where the exception was raised: the innermost frame's function and module (``fallback``,
    the object Python names, when there is no traceback), with the module's distribution."""
    from .wording import quoted

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
    from .registry import scan

    top = module.partition(".")[0]
    for record in scan():
        if record.value.partition(":")[0].strip().partition(".")[0] == top:
            return f" ({record.distribution} {record.version})"
    return ""


def _warned(text: str) -> bool:
    """Warn with ``text`` as an :class:`~evalkit.errors.EvalkitWarning`; ``False`` when the caller's
    filters made it an exception (nothing can raise it where Python reports the stray error:
    Python's own report says it instead)."""
    import warnings

    from .errors import EvalkitWarning

    try:
        warnings.warn(text, EvalkitWarning, stacklevel=2)
    except Exception:  # noqa: BLE001 — a filter of "error": the caller's hook reports it
        return False
    return True


def stray_errors_warned_within(function: Call) -> Call:
    """``function`` (a library entry: :func:`evalkit.evaluate_set`) run inside :func:`stray_errors_warned`."""

    @functools.wraps(function)
    def within(*args: Any, **kwargs: Any) -> Any:
        with stray_errors_warned():
            return function(*args, **kwargs)

    return within  # type: ignore[return-value]


@contextlib.contextmanager
def stray_errors_warned() -> Iterator[None]:
    """Warn of the exceptions Python reports itself (see the module) while the block runs, as
    :class:`~evalkit.errors.EvalkitWarning`: the first of each place and exception class, and at
    the end how often each warned one was raised in all when more than once (a ``__del__`` that
    raises for every answer is one warning, not one per case). The hooks set before are restored
    after it; a block inside another (a library call the CLI makes) is the outer one's."""
    with _open_lock:
        nested = _open_blocks[0] > 0
        _open_blocks[0] += 1
    if nested:
        try:
            yield
        finally:
            with _open_lock:
                _open_blocks[0] -= 1
        return
    before_unraisable, before_thread = sys.unraisablehook, threading.excepthook
    counts: dict[tuple[str, str], int] = {}
    lock = threading.Lock()

    def exception_text(exc: BaseException) -> str:
        from .shapes import exception_text as text_of

        return text_of(exc)

    def warned_once(where: str, exc: BaseException, text: str) -> bool:
        key = (where, type(exc).__qualname__)
        with lock:
            counts[key] = counts.get(key, 0) + 1
            if counts[key] > 1:
                return True
        return _warned(text)

    def unraisable(report: sys.UnraisableHookArgs) -> None:
        if not isinstance(report.exc_value, Exception):
            before_unraisable(report)  # a KeyboardInterrupt, a SystemExit: Python's own report
            return
        try:
            warned = warned_unraisable(report)
        except Exception:  # noqa: BLE001 — a warning that cannot be worded is left to Python's report
            warned = False
        if not warned:
            before_unraisable(report)

    def warned_unraisable(report: sys.UnraisableHookArgs) -> bool:
        where = _raised_in(report.exc_traceback, report.object)
        return warned_once(where, report.exc_value,
                  f"{where} raised {exception_text(report.exc_value)}, where nothing can catch it "
                  "(Python ignores it); evalkit went on")  # fmt: skip

    def thread_ended(report: threading.ExceptHookArgs) -> None:
        if not isinstance(report.exc_value, Exception):
            before_thread(report)
            return
        try:
            warned = warned_thread_ended(report)
        except Exception:  # noqa: BLE001 — as for an unraisable exception
            warned = False
        if not warned:
            before_thread(report)

    def warned_thread_ended(report: threading.ExceptHookArgs) -> bool:
        from .wording import quoted

        name = report.thread.name if report.thread is not None else "?"
        where = _raised_in(report.exc_traceback, report.thread)
        return warned_once(where, report.exc_value,
                  f"{where} raised {exception_text(report.exc_value)}, which ended thread {quoted(name)}; evalkit went on")  # fmt: skip

    sys.unraisablehook, threading.excepthook = unraisable, thread_ended
    try:
        yield
    finally:
        sys.unraisablehook, threading.excepthook = before_unraisable, before_thread
        with _open_lock:
            _open_blocks[0] -= 1
        for (where, name), count in counts.items():
            if count > 1:
                _warned(f"{where} raised {name} {count:,} times in all (the first shown above)")
