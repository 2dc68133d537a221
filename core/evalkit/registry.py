"""Plugin discovery: one metadata scan per process, loading by name only when a command needs it.

Listing reads ``entry_points.txt`` files directly — no plugin module and no heavy library is
imported — so ``evalkit list`` stays fast and a broken plugin cannot break it. Loading imports the
one object a record names, only when a command needs it; a plugin that fails is reported with its
name and distribution and never takes the others down.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .errors import PLUGIN_FAILURES, PluginError, UnknownPluginError

__all__ = [
    "GROUPS",
    "KIND_BY_GROUP",
    "PluginFailure",
    "PluginRecord",
    "load",
    "records",
    "scan",
    "instantiate",
    "build",
]

#: The entry-point groups evalkit reads, with the words a message uses for their members.
KIND_BY_GROUP = {
    "evalkit.golden_sets": "golden prompt set provider",
    "evalkit.question_sets": "golden question set provider",
    "evalkit.retrievers": "retriever",
    "evalkit.graders": "grader",
    "evalkit.generators": "generator",
    "evalkit.repositories": "repository",
    "evalkit.hooks": "hook plugin",
    "evalkit.reporters": "reporter",
}
GROUPS = tuple(KIND_BY_GROUP)
PLURALS = {"repository": "repositories"}


def plural(kind: str) -> str:
    """``retriever`` → ``retrievers``, ``repository`` → ``repositories``."""
    return PLURALS.get(kind, kind + "s")


class PluginRecord(NamedTuple):
    """One entry point in an evalkit group, as its distribution's metadata declares it.

    A NamedTuple rather than an attrs class: listing plugins must not pay for importing attrs.
    """

    group: str
    name: str
    value: str
    distribution: str
    version: str

    @property
    def kind(self) -> str:
        """What the group's members are called in messages."""
        return KIND_BY_GROUP.get(self.group, self.group)

    def describe(self) -> str:
        """``name (distribution version)``."""
        return f"{self.name} ({self.distribution} {self.version})"


class PluginFailure(NamedTuple):
    """A plugin that could not be loaded or raised, and why (with the exception, when one was kept)."""

    record: PluginRecord
    error: str
    exception: BaseException | None = None


def _parse_entry_points(text: str) -> Iterable[tuple[str, str, str]]:
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        if group in KIND_BY_GROUP and "=" in line:
            name, _, value = line.partition("=")
            yield group, name.strip(), value.strip()


def _dist_name_version(folder: str, meta_dir: str) -> tuple[str, str]:
    """The distribution's name and version as its metadata spells them (read only for evalkit plugins)."""
    stem = folder.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    version = version.split("-")[0]
    for meta in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(meta_dir, meta), encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Name:"):
                        name = line[5:].strip()
                    elif line.startswith("Version:"):
                        version = line[8:].strip()
                    elif not line.strip():
                        break
            break
        except OSError:
            continue
    return name, version


_cache: tuple[PluginRecord, ...] | None = None


def scan(refresh: bool = False) -> tuple[PluginRecord, ...]:
    """Every entry point in evalkit's groups, read once per process from the installed metadata.

    Like ``importlib.metadata``, the first distribution of a name on ``sys.path`` shadows later
    ones.
    """
    global _cache
    if _cache is not None and not refresh:
        return _cache
    found: list[PluginRecord] = []
    seen: set[str] = set()
    for path in sys.path:
        try:
            entries = os.scandir(path or ".")
        except OSError:
            continue
        with entries:
            folders = sorted(e.name for e in entries if e.name.endswith((".dist-info", ".egg-info")))
        for folder in folders:
            meta_dir = os.path.join(path or ".", folder)
            key = folder.partition("-")[0].rsplit(".", 1)[0].lower().replace("-", "_").replace(".", "_")
            if key in seen:
                continue
            seen.add(key)
            try:
                with open(os.path.join(meta_dir, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            if "[evalkit." not in text:
                continue
            entries = list(_parse_entry_points(text))
            if entries:
                name, version = _dist_name_version(folder, meta_dir)
                found.extend(PluginRecord(g, n, v, name, version) for g, n, v in entries)
    _cache = tuple(found)
    return _cache


def records(group: str) -> tuple[PluginRecord, ...]:
    """The entry points of one group, in discovery order."""
    return tuple(r for r in scan() if r.group == group)


def _disabled() -> set[str]:
    return {n.strip() for n in os.environ.get("EVALKIT_DISABLE_PLUGINS", "").split(",") if n.strip()}


def find(group: str, name: str) -> PluginRecord:
    """The one record named ``name`` in ``group``, or :class:`UnknownPluginError` listing the others."""
    matches = [r for r in records(group) if r.name == name and r.name not in _disabled()]
    if not matches:
        available = sorted({r.name for r in records(group)} - _disabled())
        raise UnknownPluginError(KIND_BY_GROUP[group], name, available)
    if len(matches) > 1:
        owners = ", ".join(f"{r.distribution} {r.version}" for r in matches)
        raise PluginError(
            f'{KIND_BY_GROUP[group]} "{name}" is declared by more than one distribution: {owners}',
            group=group,
            name=name,
        )
    return matches[0]


def load(record: PluginRecord) -> Any:
    """Import the object an entry point names (``module:attr.attr`` [extras]), as
    ``importlib.metadata.EntryPoint.load`` does; failures become :class:`PluginError`.

    The record already says where the object is, so nothing scans the metadata again (stevedore's
    ``DriverManager`` did, through ``importlib.metadata``: ~30 ms of imports per run).
    """
    import importlib

    target = record.value.partition("[")[0].strip()
    module_name, colon, attribute = (part.strip() for part in target.partition(":"))
    path = attribute.split(".") if colon else []
    if not all(part.isidentifier() for part in (*module_name.split("."), *path)):
        raise PluginError.for_plugin(
            record, f"{record.kind} {record.describe()} failed to load: its entry point {record.value!r} is not module:attribute"
        )
    try:
        loaded = importlib.import_module(module_name)
        for name in path:
            loaded = getattr(loaded, name)
    except PLUGIN_FAILURES as exc:  # a plugin that fails to import (or exits) names itself, and never takes the others down
        raise PluginError.for_plugin(
            record, f"{record.kind} {record.describe()} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return loaded


def instantiate(record: PluginRecord, factory: Callable[..., Any], **options: Any) -> Any:
    """Call a plugin's factory with ``options``; anything it raises names the plugin.

    A created component that holds credentials (``secret_values()``) is remembered, so the CLI
    scrubs its secrets from every line it prints (see :func:`evalkit.privacy.secrets_to_hide`).
    """
    from .components import SecretHolder
    from .errors import EvalkitError
    from .privacy import remember_secret_holder

    try:
        created = factory(**options)
    except EvalkitError:
        raise
    except PLUGIN_FAILURES as exc:
        raise PluginError.for_plugin(
            record,
            f"{record.kind} {record.describe()} raised {type(exc).__name__} when created: {exc}",
        ) from exc
    if isinstance(created, SecretHolder):
        remember_secret_holder(created)  # its secrets are scrubbed from everything printed, too
    return created


def build(record: PluginRecord, factory: Callable[..., Any], options: Any, table: str) -> Any:
    """Check ``options`` against what the factory declares (:mod:`evalkit.options`), then call it.

    ``table`` says where the options came from (``[providers.my-app] of /path/evalkit.toml``), for
    the messages about a missing, unknown or mistyped option.
    """
    from .options import check_options

    return instantiate(record, factory, **check_options(record, factory, options, table))
