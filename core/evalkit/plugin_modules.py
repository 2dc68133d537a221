"""Whether an entry point's module can be found, told without executing any plugin code.

``evalkit list`` shows every installed plugin from the metadata alone: importing a plugin may be
slow, or hostile (a module that exits, or writes, at import). ``importlib.util.find_spec`` on a
dotted name imports the parent packages (their ``__init__`` runs), so :func:`missing_module`
walks the name itself: the top-level name through the finders of ``sys.meta_path`` (the path on
``sys.path``, a built-in or frozen module, an editable install's import hook), each further part
with ``importlib.machinery.PathFinder`` along the search locations of the part before it. No
module is loaded, so nothing of the plugin runs.

It only says "not found" when it can be sure: a finder that raises, or a module already imported
(its ``__path__`` read as it is), answers "found". A regular package's ``__init__`` may add to its
``__path__`` when it runs; the same-named folders on its parent's search path — what
``pkgutil.extend_path`` (and ``pkg_resources``' namespace packages) add — are searched too; one
that builds its ``__path__`` any other way is beyond what can be seen without running it.

:func:`entry_point_target` is the one reading of an entry point's value (``module:attr.attr
[extras]``), used here and where a plugin is loaded (:meth:`evalkit.registry.PluginRecord.load`).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

# typing is imported only for type checkers: `evalkit list` imports this module, and its start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["entry_point_target", "missing_module", "missing_modules"]


def entry_point_target(value: str) -> tuple[str, list[str]] | None:
    """The module an entry point's ``value`` names and the attribute path in it
    (``"pkg.mod:Thing.make [extra]"`` → ``("pkg.mod", ["Thing", "make"])``; no ``:`` → ``[]``), or
    ``None`` when it is not ``module:attribute`` of dotted Python identifiers."""
    target = value.partition("[")[0].strip()
    module_name, colon, attribute = (part.strip() for part in target.partition(":"))
    path = attribute.split(".") if colon else []
    if not all(part.isidentifier() for part in (*module_name.split("."), *path)):
        return None
    return module_name, path


def missing_module(name: str) -> str | None:
    """The first of the module ``name`` and its parent packages that no finder finds (``"a"`` for
    ``"a.b.c"`` when there is no ``a``; ``"a.b"`` when ``a`` is no package), or ``None`` when each
    is found — or when that cannot be told without running code. Nothing is imported."""
    return missing_modules([name])[name]


def missing_modules(names: Iterable[str]) -> dict[str, str | None]:
    """:func:`missing_module` of each of ``names``, each package on the way looked up once (a
    listing's plugins mostly share their top-level package)."""
    walked: dict[str, Any] = {}  # a dotted name → its search locations (None: no package), or _MISSING
    return {name: _walk(name, walked) for name in names}


def _walk(name: str, walked: dict[str, Any]) -> str | None:
    """:func:`missing_module` of ``name``, the lookups of its parents taken from and kept in ``walked``."""
    parts = name.split(".")
    locations: list[str] | None = None  # the search locations of the part before (None: the top level)
    for index, part in enumerate(parts):
        dotted = ".".join(parts[: index + 1])
        if dotted not in walked:
            try:
                if dotted in sys.modules:
                    walked[dotted] = _imported(dotted)
                elif index and locations is None:  # its parent is a module, not a package: nothing is inside it
                    walked[dotted] = _MISSING
                else:
                    walked[dotted] = _found(part, dotted, locations)
            except Exception:  # noqa: BLE001 - a finder (an import hook, a module's __path__) that fails: cannot be told
                walked[dotted] = _UNKNOWN
        found = walked[dotted]
        if found is _MISSING:
            return dotted
        if found is _UNKNOWN:
            return None
        locations = found
    return None


#: What :func:`_found` gives for a module no finder finds.
_MISSING = object()
#: A module whose lookup failed (a finder raised): whether it is there cannot be told.
_UNKNOWN = object()


def _imported(dotted: str) -> list[str] | None:
    """Where the submodules of ``dotted``, a module already imported (evalkit's own, or one
    imported before), are searched: its ``__path__`` (``None``: it is no package)."""
    path = getattr(sys.modules[dotted], "__path__", None)
    return None if path is None else [str(entry) for entry in path]


def _found(part: str, dotted: str, locations: list[str] | None) -> Any:
    """Where the submodules of ``dotted`` (``part`` its last name), found in ``locations``
    (``None``: at the top level) by the import system's finders, are searched (``None``: it is no
    package); :data:`_MISSING` when no finder finds it."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        # PathFinder is asked for the last name alone: for a namespace package it builds a path that
        # reads the parent module from sys.modules (not imported, and not to be)
        spec = find_spec(part, locations) if finder is PathFinder else find_spec(dotted, locations)
        if spec is not None:
            return _search_locations(spec, part, locations)
    return _MISSING


def _search_locations(spec: Any, part: str, locations: list[str] | None) -> list[str] | None:
    """Where the submodules of the package ``spec`` describes are searched (``None``: no package):
    its own locations and, for a regular package (whose ``__init__`` may extend ``__path__`` as
    ``pkgutil.extend_path`` does), the folders named ``part`` on its parent's search path."""
    own = spec.submodule_search_locations
    if own is None:
        return None
    found = [str(entry) for entry in own]
    if spec.origin is not None:  # a regular package (a namespace package's portions are all in `own`)
        for entry in sys.path if locations is None else locations:
            folder = os.path.join(entry or ".", part)
            if folder not in found and os.path.isdir(folder):
                found.append(folder)
    return found
