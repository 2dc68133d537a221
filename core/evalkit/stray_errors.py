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


class _Hooks:
    """The process's hooks while :func:`stray_errors_warned` blocks are open (the hooks are the
    process's, the blocks may be several threads' library calls at once): the first block to open
    installs them, the last to close restores the hooks that were set before and says the counts.
    Every field is written under ``_open_lock``."""

    def __init__(self) -> None:
        self.open = 0  # how many blocks are open, in every thread
        self.before_unraisable: Callable[[sys.UnraisableHookArgs], object] = sys.unraisablehook
        self.before_thread: Callable[[threading.ExceptHookArgs], object] = threading.excepthook
        #: How often each warned place and exception class was raised while any block was open.
        self.counts: dict[tuple[str, str], int] = {}


_hooks = _Hooks()
#: Re-entrant: a ``__del__`` the garbage collector runs while a thread holds it raises into the hook,
#: which takes it again in that thread.
_open_lock = threading.RLock()


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


def _exception_text(exc: BaseException) -> str:
    """``exc`` as every plugin's exception is quoted (:func:`evalkit.shapes.exception_text`)."""
    from .shapes import exception_text

    return exception_text(exc)


def _warned_once(where: str, exc: BaseException, text: str) -> bool:
    """Warn with ``text`` the first time ``where`` raised ``exc``'s class while blocks are open
    (``True`` for a repeat: it is counted, said at the end); see :func:`_warned`."""
    key = (where, type(exc).__qualname__)
    with _open_lock:
        _hooks.counts[key] = _hooks.counts.get(key, 0) + 1
        if _hooks.counts[key] > 1:
            return True
    return _warned(text)


def _unraisable(report: sys.UnraisableHookArgs) -> None:
    """The ``sys.unraisablehook`` while a block is open: a warning, else the hook set before."""
    if isinstance(report.exc_value, Exception):
        try:
            where = _raised_in(report.exc_traceback, report.object)
            if _warned_once(where, report.exc_value,
                    f"{where} raised {_exception_text(report.exc_value)}, where nothing can catch it "
                    "(Python ignores it); evalkit went on"):  # fmt: skip
                return
        except Exception:  # noqa: BLE001 — a warning that cannot be worded is left to Python's report
            pass
    # a KeyboardInterrupt, a SystemExit, or a warning the caller's filters made an error: the
    # hook set before reports it
    _hooks.before_unraisable(report)


def _thread_ended(report: threading.ExceptHookArgs) -> None:
    """The ``threading.excepthook`` while a block is open: a warning, else the hook set before."""
    if isinstance(report.exc_value, Exception):
        try:
            from .wording import quoted

            name = report.thread.name if report.thread is not None else "?"
            where = _raised_in(report.exc_traceback, report.thread)
            if _warned_once(where, report.exc_value,
                    f"{where} raised {_exception_text(report.exc_value)}, which ended thread "
                    f"{quoted(name)}; evalkit went on"):  # fmt: skip
                return
        except Exception:  # noqa: BLE001 — as for an unraisable exception
            pass
    _hooks.before_thread(report)


@contextlib.contextmanager
def stray_errors_warned() -> Iterator[None]:
    """Warn of the exceptions Python reports itself (see the module) while the block runs, as
    :class:`~evalkit.errors.EvalkitWarning`: the first of each place and exception class, and at
    the end how often each warned one was raised in all when more than once (a ``__del__`` that
    raises for every answer is one warning, not one per case). The hooks are the process's, so
    blocks open at once share them, whichever thread opened them (a library call the CLI makes, two
    library calls in two threads): the first to open installs them, the last to close restores the
    hooks set before and says the counts of all."""
    with _open_lock:
        if _hooks.open == 0:
            _hooks.before_unraisable, _hooks.before_thread = sys.unraisablehook, threading.excepthook
            _hooks.counts = {}
            sys.unraisablehook, threading.excepthook = _unraisable, _thread_ended
        _hooks.open += 1
    try:
        yield
    finally:
        with _open_lock:
            _hooks.open -= 1
            last = _hooks.open == 0
            if last:
                sys.unraisablehook, threading.excepthook = _hooks.before_unraisable, _hooks.before_thread
                counts, _hooks.counts = _hooks.counts, {}
        if last:
            for (where, name), count in counts.items():
                if count > 1:
                    _warned(f"{where} raised {name} {count:,} times in all (the first shown above)")
