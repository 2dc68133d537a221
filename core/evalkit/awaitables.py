"""A plugin's synchronous method that returned an awaitable: an ``async def`` under a synchronous
name (``async def generate``, ``async def check_ready``), or an asynchronous call it forgot to
await. evalkit calls such a method without awaiting, so what it returned is no value: a
``check_ready()`` whose coroutine was dropped refused nothing, and Python printed "coroutine ...
was never awaited" from evalkit's own modules. :func:`unawaited_fault` says what happened and what
to write instead, and closes the coroutine so no such warning is printed;
:func:`~evalkit.errors.carried`, the boundary of every synchronous plugin call, refuses the value
with it. An asynchronous method whose awaited value is itself awaitable (an ``async def agenerate``
returning another coroutine unawaited) is the same fault one step later:
:func:`~evalkit.errors.carried_async`, the boundary of every awaited plugin call, refuses it the
same way (it was stored as the coroutine's repr, with Python's "never awaited" warning). Both
refuse with :class:`AwaitableReturned`, a ``TypeError``.
"""

from __future__ import annotations

import inspect

from .wording import quoted

__all__ = ["AWAITED_INSTEAD", "AwaitableReturned", "NEVER_AWAITABLE", "unawaited_fault"]

#: The method evalkit awaits in place of each synchronous one that has an asynchronous twin.
AWAITED_INSTEAD = {"generate": "agenerate", "chat": "achat", "grade": "agrade"}

#: Built-in types no instance of which is awaitable (a subclass may be: matched by exact type),
#: told apart without :func:`inspect.isawaitable`'s ABC check: most plugin calls return one.
NEVER_AWAITABLE = frozenset({bool, int, float, str, bytes, list, tuple, dict, type(None)})


class AwaitableReturned(TypeError):
    """A plugin's call gave an awaitable evalkit does not await (:func:`unawaited_fault` says
    which and what to write instead); shown as the ``TypeError`` it is."""


def unawaited_fault(value: object, called: str | None, *, awaited: bool = False) -> str | None:
    """What is wrong when the plugin's synchronous method ``called`` (``None``: a call evalkit
    cannot name) returned an awaitable, or ``None`` for any other value. A coroutine is closed
    here, unawaited. The text names the method evalkit awaits instead
    (:data:`AWAITED_INSTEAD`), or says to finish the asynchronous work inside the method.
    ``awaited``: ``called`` is an asynchronous method evalkit awaited, and ``value`` what its
    awaiting gave (a coroutine it returned instead of awaiting): the text says to await it there."""
    if type(value) in NEVER_AWAITABLE or not inspect.isawaitable(value):
        return None
    if inspect.iscoroutine(value):
        try:
            value.close()
        except Exception:  # noqa: BLE001 — a coroutine that raises as it is closed is still no value
            pass
    twin = AWAITED_INSTEAD.get(called or "")
    subject = f"{called}()" if called else "the plugin's call"
    if awaited:
        instead = f"evalkit awaits {subject} once, so await what it returned inside it and return the value"
    elif twin is not None:
        instead = f"declare the method as async def {twin}() (evalkit awaits that one), or return the value itself"
    else:
        instead = f"{subject} is never awaited, so run the asynchronous work to its end inside it (asyncio.run) and return the value"
    made_by = getattr(value, "__qualname__", None)
    shown = f"{type(value).__name__} of {quoted(made_by)}" if isinstance(made_by, str) else type(value).__name__
    return f"{subject} returned a {shown}, which evalkit does not await: {instead}"
