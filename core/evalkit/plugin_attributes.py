"""Reading a plugin's attributes: the one way evalkit looks at what a plugin object declares.

A plugin's attribute may be a property that raises (its client not set up), or a ``__getattr__``
that answers anything; these functions read such attributes without running into either. They
import nothing of evalkit, so any module may use them (:mod:`evalkit.components` hands them on).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

__all__ = ["declared", "declares", "offers", "promises", "protocol_members"]


def declared(component: Any, name: str, default: Any = None) -> Any:
    """The optional attribute ``name`` a plugin component may declare (a generator's
    ``concurrency``, ``max_tokens``, ``redacted_options``, ``supports_tools``; a grader's ``name``),
    or ``default`` when it has none — or when reading it raises (a property whose pool or client is
    not set up): the one way evalkit reads such an attribute, so a plugin's broken property is an
    attribute it did not declare, never an internal error. What is no ``Exception`` (``SystemExit``,
    a framework's own ``BaseException``) is not caught here: it stops the command as said where
    every error ends one (``evalkit: error: a plugin raised …``, exit 3)."""
    try:
        return getattr(component, name, default)
    except Exception:  # noqa: BLE001 - whatever a broken property raises
        return default


def declares(component: Any, name: str) -> bool:
    """True when ``component`` has the attribute ``name`` at all, found without running it (a
    property is not called, a ``__getattr__`` not asked): which optional protocol a plugin chose,
    where ``isinstance`` against a protocol with a data member would read the attribute (Python
    3.11 does) and fail on a property that raises. Its value is read with :func:`declared`."""
    return inspect.getattr_static(component, name, None) is not None


def offers(component: Any, protocol: type) -> bool:
    """True when ``component`` has every member of the ``runtime_checkable`` ``protocol``, each
    read with :func:`declared`: the one way evalkit asks which optional protocol a plugin offers,
    where ``isinstance(component, protocol)`` reads each member with ``hasattr`` and raises (or
    answers wrongly) when a property or ``__getattr__`` raises. One whose member raises as it is
    read does not offer it, as an optional attribute that raises is not declared."""
    for name, is_method in _protocol_members(protocol):
        value = declared(component, name, _MISSING)
        if value is _MISSING or (is_method and value is None):  # a method set to None is not offered, as for isinstance
            return False
    return True


def promises(component: Any, protocol: type) -> bool:
    """True when ``component`` has every method of the ``runtime_checkable`` ``protocol``, each
    found without running it (:func:`declares`) or, when only a ``__getattr__`` answers it, read
    with :func:`declared`: the one way evalkit asks for an optional method it must then call (a
    judge's ``bind_judge()`` and ``check_ready()``, a grader's ``aclose()``, a generator's
    ``check_ready()``). Unlike :func:`offers`, a method whose property raises as it is read is
    promised: the call reads it (:func:`evalkit.components.plugin_method`), so the raising read is
    the plugin's failure, named, never a method silently skipped (a judge left unbound, a readiness
    check never made)."""
    for name, _ in _protocol_members(protocol):
        if not declares(component, name) and declared(component, name) is None:
            return False
    return True


_MISSING = object()


def protocol_members(protocol: type) -> tuple[tuple[str, bool], ...]:
    """The members ``isinstance`` checks for the ``runtime_checkable`` ``protocol``, by name, each
    with whether it is a method."""
    return _protocol_members(protocol)


@functools.cache
def _protocol_members(protocol: type) -> tuple[tuple[str, bool], ...]:
    """The members ``isinstance`` checks for ``protocol``, each with whether it is a method."""
    members = getattr(protocol, "__protocol_attrs__", None)
    if members is None:
        import typing

        members = typing._get_protocol_attrs(protocol)  # type: ignore[attr-defined]  # Python 3.11
    return tuple((name, callable(getattr(protocol, name, None))) for name in sorted(members))
