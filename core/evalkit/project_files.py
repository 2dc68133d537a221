"""Files a configuration or a set file names must lie inside the project, unless allowed.

A cloned project is someone else's text: a set file that is a symbolic link to
``~/.aws/credentials``, or ``[sets] paths = ["/proc/**/*.json"]``, would make evalkit read files
that were never the project's and quote them in its messages, its reports and a CI log. So every
file evalkit reads because the configuration or a set file names it must resolve (symbolic links
followed) inside the project root — the configuration file's folder — or inside a place listed in
``[sets] allow_outside``::

    [sets]
    paths = ["evals/*.yaml", "/srv/shared-evals/*.yaml"]
    allow_outside = ["/srv/shared-evals", "~/datasets/**/*.jsonl"]   # folders, or globs

A file named on the command line is the user's own choice and is read wherever it is. Every kind of
file a configuration names calls :func:`check_inside_project` (or :meth:`ProjectBoundary.outside`
where problems are collected rather than raised), so the rule is one rule.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import ConfigError
from .wording import path_named, quoted, table_key

__all__ = [
    "ALLOW_OUTSIDE",
    "NUL_IN_NAME",
    "OutsideProjectError",
    "ProjectBoundary",
    "allowed_outside",
    "check_inside_project",
]

#: Where the configuration lists the places outside the project that may be read.
ALLOW_OUTSIDE = "[sets] allow_outside"

#: Why a path holding a NUL character (``"answers\u0000.jsonl"`` in a TOML string) is refused,
#: following its name: every system call raised ``ValueError: embedded null byte`` for it, an
#: internal error with a traceback.
NUL_IN_NAME = "holds a NUL character, which no file name can"


class OutsideProjectError(ConfigError):
    """A file a configuration or a set file names resolves outside the project (exit 2)."""


def allowed_outside(table: Any, where: str) -> tuple[str, ...]:
    """The ``allow_outside`` entries of a ``[sets]`` table (checked: a list of non-empty strings)."""
    if not isinstance(table, Mapping) or "allow_outside" not in table:
        return ()
    entries = table["allow_outside"]
    problem = allow_outside_problem(entries)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return tuple(entries)


def allow_outside_problem(entries: Any) -> str | None:
    """What is wrong with ``[sets] allow_outside`` as read from the configuration, naming the option
    and the entry at fault (``None`` when it is a list of non-empty texts without a NUL): the one
    wording of every command's check (:mod:`evalkit.config_schema`) and the boundary's. A NUL in an
    entry was said as "not all non-empty texts", though the entry was text and not empty."""
    rule = 'must be a list of folders or globs, like ["/srv/shared-evals"]'
    if not isinstance(entries, list):
        return f"{ALLOW_OUTSIDE} {rule}, got {_kind(entries)}"
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, str):
            return f"{ALLOW_OUTSIDE} {rule}; entry {number} is {_kind(entry)}, not text"
        if not entry.strip():
            return f"{ALLOW_OUTSIDE} {rule}; entry {number} is empty text"
        if "\x00" in entry:
            return (
                f"{ALLOW_OUTSIDE} entry {number} {quoted(entry)} holds a NUL character (\\u0000), "
                "which no folder or file name can hold: remove it"
            )
    return None


def _kind(value: Any) -> str:
    """A value read from TOML, said by its type (a short text or number as it is)."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (str, int, float)) and len(repr(value)) <= 60:
        return f"{type(value).__name__} {value!r}"
    return {dict: "a table", list: "an array"}.get(type(value), type(value).__name__)


@attrs.frozen
class ProjectBoundary:
    """The project root and the places outside it a configuration allows to be read."""

    #: The project root with its links resolved.
    root: Path
    #: ``allow_outside`` entries, absolute, with the links of their fixed part resolved.
    allowed: tuple[str, ...] = ()
    #: The configuration file the entries come from (for messages), if any.
    config_path: Path | None = None

    @classmethod
    def of(cls, config: Any) -> ProjectBoundary:
        """The boundary of a :class:`~evalkit.config.Config`: its root and its ``[sets] allow_outside``."""
        root = Path(os.path.realpath(config.root))
        where = str(config.path) if config.path is not None else "configuration"
        entries = allowed_outside(config.raw.get("sets"), where)
        return cls(root, tuple(_absolute(entry, root) for entry in entries), config.path)

    def allowing(self, folders: Iterable[str | os.PathLike[str]]) -> ProjectBoundary:
        """This boundary with ``folders`` allowed too (folders named on the command line)."""
        extra = tuple(os.path.realpath(folder) for folder in folders)
        return attrs.evolve(self, allowed=self.allowed + extra)

    def outside(self, path: str | os.PathLike[str], *, folder: bool = False) -> str | None:
        """``None`` when ``path`` (relative to the root; links followed) lies inside the project or
        an allowed place, else why it may not be read — where it leads, and how to allow it —
        to follow the path's name in a message (``evals/creds.yaml`` *resolves to …*). A path holding
        a NUL character is no file's name, inside or out: :data:`NUL_IN_NAME` says so."""
        if "\x00" in os.fsdecode(os.fspath(path)):
            return NUL_IN_NAME
        absolute = os.path.abspath(os.path.join(self.root, path))
        real = os.path.realpath(absolute)
        if self._inside(real):
            return None
        leads = f"resolves to {path_named(real)}, outside" if real != absolute else "lies outside"
        place = real if folder else os.path.dirname(real)
        return (
            f"{leads} the project ({path_named(self.root)}); evalkit reads a file outside it only when the file is named "
            f"on the command line or its place is listed in {ALLOW_OUTSIDE}{self._of_config()} (allow_outside = [{table_key(place, always_quoted=True)}])"
        )

    def may_hold_allowed(self, folder: str | os.PathLike[str]) -> bool:
        """Whether anything under ``folder`` could be read: it is inside the project or an allowed
        place, or holds one (so a glob over it is worth walking)."""
        real = os.path.realpath(os.path.join(self.root, folder))
        if self._inside(real):
            return True
        for entry in (str(self.root), *self.allowed):
            fixed = _fixed_part(entry)
            if fixed == real or fixed.startswith(real.rstrip(os.sep) + os.sep) or real.startswith(fixed.rstrip(os.sep) + os.sep):
                return True
        return False

    def _inside(self, real: str) -> bool:
        root = str(self.root)  # a folder, never a pattern: a project in proj[1] is not the pattern proj1
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return True
        for place in self.allowed:
            if glob.has_magic(place):
                if fnmatch.fnmatchcase(real, place):
                    return True
            elif real == place or real.startswith(place.rstrip(os.sep) + os.sep):
                return True
        return False

    def _of_config(self) -> str:
        return f" of {path_named(self.config_path)}" if self.config_path is not None else ""


def check_inside_project(config: Any, path: str | os.PathLike[str], what: str) -> Path:
    """``path`` (relative to the project root) as an absolute path, when it may be read: inside the
    project or a place ``[sets] allow_outside`` lists; else :class:`OutsideProjectError` naming
    ``what`` it is (``the replay file of [providers.x]``) — the one check every file a
    configuration or a set file names goes through. A file the user named on the command line
    does not come here."""
    boundary = ProjectBoundary.of(config)
    reason = boundary.outside(path)
    if reason is not None:
        raise OutsideProjectError(f"{what} {path_named(path)} {reason}")
    return Path(os.path.join(boundary.root, path))


def _absolute(entry: str, root: Path) -> str:
    """An ``allow_outside`` entry as an absolute path (``~`` expanded, relative to ``root``), the
    links of its part before any wildcard resolved."""
    entry = os.path.expanduser(entry)
    if not glob.has_magic(entry):
        return os.path.realpath(os.path.join(root, entry))
    full = entry if os.path.isabs(entry) else os.path.join(glob.escape(str(root)), entry)
    parts = os.path.normpath(full).split(os.sep)
    fixed = 0
    while fixed < len(parts) and not glob.has_magic(parts[fixed]):
        fixed += 1
    return os.path.join(os.path.realpath(os.sep.join(parts[:fixed]) or os.sep), *parts[fixed:])


def _fixed_part(entry: str) -> str:
    """The folder part of ``entry`` before its first wildcard (all of it when it has none)."""
    if not glob.has_magic(entry):
        return entry
    parts = entry.split(os.sep)
    fixed = 0
    while fixed < len(parts) and not glob.has_magic(parts[fixed]):
        fixed += 1
    return os.sep.join(parts[:fixed]) or os.sep
