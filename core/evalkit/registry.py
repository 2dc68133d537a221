"""Plugin discovery and loading: the installed metadata read once per process, stevedore to load.

Discovery is one ``importlib.metadata.entry_points()`` call per process (the scan stevedore itself
makes when its cache misses), kept as :class:`PluginRecord` s with their distribution's name and
version; as in ``importlib.metadata``, the first distribution of a name on ``sys.path`` shadows
later ones. Listing reads only these records, so no plugin module is imported and a broken plugin
cannot break ``evalkit list``.

Loading is stevedore's (:mod:`evalkit.plugin_managers`): a ``NamedExtensionManager`` per group
imports the plugins a command needs and isolates one that fails through its load-failure
callback; a ``DriverManager`` loads the one implementation a name chooses (a deployment's
retriever, a provider instance's adapter, a grader, a reporter, a repository). A plugin that
fails is reported with its name, distribution and error, and never takes the others down.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from .environment import variable
from .errors import PLUGIN_FAILURES, EvalkitWarning, PluginError, PluginLoadInterrupted, UnknownPluginError, carried
from .plugin_attributes import offers
from .plugin_modules import entry_point_target, missing_modules
from .problem_texts import bounded_problem, clipped, too_long
from .wording import EvalkitWords, did_you_mean, quoted

__all__ = [
    "DISABLE_ENV",
    "GROUPS",
    "KIND_BY_GROUP",
    "Loaded",
    "MAX_ENTRY_POINT_NAME_CHARS",
    "MAX_ENTRY_POINT_VALUE_CHARS",
    "MAX_METADATA_CHARS",
    "PluginFailure",
    "PluginRecord",
    "build",
    "disabled",
    "driver",
    "enabled",
    "is_disabled",
    "find",
    "forget",
    "instantiate",
    "instantiate_within",
    "load",
    "load_group",
    "records",
    "refused",
    "require_offered",
    "scan",
    "unloadable",
    "unusable_choices",
]

#: The entry-point groups evalkit reads, with the words a message uses for their members.
KIND_BY_GROUP = {
    "evalkit.golden_sets": "golden prompt set provider",
    "evalkit.question_sets": "golden question set provider",
    "evalkit.calibration_sets": "calibration set provider",
    "evalkit.retrievers": "retriever",
    "evalkit.graders": "grader",
    "evalkit.generators": "generator",
    "evalkit.repositories": "repository",
    "evalkit.hooks": "hook plugin",
    "evalkit.reporters": "reporter",
}
GROUPS = tuple(KIND_BY_GROUP)
PLURALS = {"repository": "repositories"}
#: Comma-separated entry-point names that are neither found by name nor loaded with their group.
DISABLE_ENV = "EVALKIT_DISABLE_PLUGINS"
#: The name of a record standing for a distribution's entry points in a group when its
#: ``entry_points.txt`` cannot be read: evalkit's words, not a name (messages write it unquoted).
UNREADABLE_ENTRY_POINTS = EvalkitWords("(unreadable)")
#: Why an entry point whose value is not ``module:attribute`` cannot be loaded (``.format(value)``).
NOT_MODULE_ATTRIBUTE = "its entry point {!r} is not module:attribute"


def plural(kind: str) -> str:
    """``retriever`` → ``retrievers``, ``repository`` → ``repositories``."""
    return PLURALS.get(kind, kind + "s")


class PluginRecord(NamedTuple):
    """One entry point in an evalkit group, as its distribution's metadata declares it.

    It is also the entry point evalkit's stevedore managers list and load (``name``, ``value``,
    ``group`` and :meth:`load` are the part of ``importlib.metadata.EntryPoint`` they use), so the
    distribution travels with it into every failure they report. A NamedTuple rather than an attrs
    class: listing plugins must not pay for importing attrs.
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
        """``"name" (distribution version)``, the name quoted (:func:`evalkit.wording.quoted`): the
        entry-point name is a third party's word, and one holding a space, a bracket, a quote or a
        line break must read as one name that ends where its quotes do. For a sentence that has
        said the plugin's kind already; every other message uses :attr:`label`."""
        return f"{quoted(self.name)} ({self.distribution} {self.version})"

    @property
    def label(self) -> str:
        """``kind "name" (distribution version)`` (:meth:`describe` after the kind): how every
        message names the plugin — a load failure, a call failure, a wrong option
        (:func:`evalkit.options.check_options`), its factory raising when created or giving what
        evalkit cannot use, its secrets that cannot be kept out of sight — one wording for them all.
        A listing's row names it by :func:`evalkit.wording.word_named` instead."""
        return f"{self.kind} {self.describe()}"

    def load(self) -> Any:
        """Import the object the entry point names (``module:attr.attr`` [extras]) with
        ``importlib.metadata.EntryPoint.load``; any failure is a :class:`PluginError` naming the plugin.

        ``SystemExit`` and ``AssertionError`` become that error too: stevedore's managers catch
        ``Exception`` and re-raise ``AssertionError``, so either would otherwise end the command
        instead of reaching their load-failure callback.
        """
        from importlib.metadata import EntryPoint

        target = entry_point_target(self.value)
        if target is None:
            raise PluginError.for_plugin(self, f"{self.label} failed to load: {NOT_MODULE_ATTRIBUTE.format(self.value)}")
        module_name, path = target
        try:
            return carried(
                EntryPoint(self.name, f"{module_name}:{'.'.join(path)}" if path else module_name, self.group).load
            )
        except PluginLoadInterrupted:  # one plugin's import loads another: the innermost is named
            raise
        except KeyboardInterrupt as exc:  # still an interrupt, but naming the plugin whose import it stopped
            raise PluginLoadInterrupted(self.label) from exc
        except (
            PLUGIN_FAILURES
        ) as exc:  # a plugin that fails to import (or exits) names itself, and never takes the others down
            from .shapes import exception_text

            raise PluginError.for_plugin(self, f"{self.label} failed to load: {exception_text(exc)}") from exc


class _Failure(NamedTuple):
    record: PluginRecord
    error: str
    exception: BaseException | None = None


class PluginFailure(_Failure):
    """A plugin that could not be loaded or raised, and why (with the exception, when one was kept).

    ``error`` is cut to :data:`~evalkit.shapes.MAX_PROBLEM_CHARS` (:func:`~evalkit.shapes.bounded_problem`):
    it quotes what the plugin raised or returned, and every listing and ``--json`` document prints it.
    """

    __slots__ = ()

    def __new__(cls, record: PluginRecord, error: str, exception: BaseException | None = None) -> PluginFailure:
        return super().__new__(cls, record, bounded_problem(error), exception)  # type: ignore[arg-type]

    @property
    def plugin(self) -> str:
        """The plugin that failed, as every message names it: its record's :attr:`PluginRecord.label`."""
        return self.record.label

    @property
    def reason(self) -> str:
        """``error`` without the plugin's name it may begin with (a :class:`PluginError` names its
        plugin, as :attr:`plugin` says it): for a listing that shows the plugin beside it
        (``validate``'s ``set``/``reason``)."""
        if self.error.startswith(self.plugin):
            return self.error[len(self.plugin) :].removeprefix(":").lstrip() or self.error
        return self.error

    def named(self, problem: str | None = None) -> str:
        """One sentence naming the plugin once: ``problem`` (by default ``error``) as it is when it
        already begins with the plugin's name (``… failed to load: …``, ``… raised … when created``,
        as :attr:`plugin` says it), else after it. Every message that prints a failure goes through here."""
        text = self.error if problem is None else problem
        return text if text.startswith(self.plugin) else f"{self.plugin}: {text}"


class Loaded(NamedTuple):
    """What loading one record of a group gave: the object its entry point names, or the error."""

    record: PluginRecord
    plugin: Any = None
    #: A :class:`PluginError` naming the plugin, its distribution and what went wrong.
    error: BaseException | None = None


_scanned: tuple[PluginRecord, ...] | None = None
_refused: tuple[PluginFailure, ...] = ()

#: How much of a distribution's name and version a record keeps (:func:`evalkit.shapes.clipped`,
#: with the length): they come from a ``METADATA`` anyone can write, and every line naming a
#: plugin (``list``, its ``--json``, each failure) printed a 1,000,000-character version whole.
MAX_METADATA_CHARS = 200

#: The longest entry-point name a record is made of: a name is how a plugin is found (a grader, a
#: generator's adapter, ``EVALKIT_DISABLE_PLUGINS``), so it cannot be cut, and it is printed in
#: every listing and failure naming the plugin; a longer one is refused at the scan (:func:`refused`).
MAX_ENTRY_POINT_NAME_CHARS = 200
#: The longest entry-point value (``module:attribute [extras]``) a record is made of; the same.
MAX_ENTRY_POINT_VALUE_CHARS = 1_000
#: How much of a refused entry point's name and value its failure shows (with their lengths).
_SHOWN_REFUSED_CHARS = 60


def _discover() -> tuple[tuple[PluginRecord, ...], tuple[PluginFailure, ...]]:
    """Every entry point in evalkit's groups, from one ``importlib.metadata.entry_points()`` call,
    and those refused.

    In the order the metadata lies on ``sys.path``, distributions of one folder by name (whatever
    order the file system lists them in), each one's entry points as its ``entry_points.txt``
    lists them. ``METADATA`` is parsed once per distribution, and only for distributions with an
    evalkit entry point. Its name and version are cut to :data:`MAX_METADATA_CHARS` here, once.
    An entry point whose name or value is longer than :data:`MAX_ENTRY_POINT_NAME_CHARS` or
    :data:`MAX_ENTRY_POINT_VALUE_CHARS` is no record: it is a :class:`PluginFailure` naming the
    distribution and the cut name (:func:`_refusal`), and the distribution's others are records.
    """
    from importlib.metadata import entry_points

    position: dict[str, int] = {}
    for index, entry in enumerate(sys.path):
        position.setdefault(os.path.abspath(entry or "."), index)
    found: list[tuple[int, str, PluginRecord]] = []
    refused: list[tuple[int, str, PluginFailure]] = []
    by_dist: dict[int, Any] = {}
    try:
        every = entry_points()  # on Python 3.11 grouped, so each distribution's own list gives the file's order
    except Exception:  # noqa: BLE001 - one installed distribution whose metadata cannot be read
        every = None
    if every is not None:
        for group in GROUPS:
            for ep in every.select(group=group):
                if ep.dist is not None:
                    by_dist.setdefault(id(ep.dist), ep.dist)
    else:
        for dist, failures in _readable_distributions():
            if dist is not None:
                by_dist.setdefault(id(dist), dist)
            refused += ((len(position), failure.record.distribution, failure) for failure in failures)
    for dist in by_dist.values():
        try:
            meta = dist.metadata
            whole_name = meta.get("Name") or "(unnamed)"
            whole_version = meta.get("Version") or ""
        except Exception:  # noqa: BLE001 - a METADATA that is not UTF-8: named by its folder instead
            whole_name, whole_version = _folder_name(dist), "(its METADATA cannot be read)"
        name = clipped(whole_name, MAX_METADATA_CHARS)
        version = clipped(whole_version, MAX_METADATA_CHARS)
        at = position.get(os.path.abspath(str(dist.locate_file(""))), len(position))
        key = whole_name.lower().replace("-", "_").replace(".", "_")
        for ep in dist.entry_points:
            if ep.group not in KIND_BY_GROUP:
                continue
            record = PluginRecord(ep.group, ep.name, ep.value, name, version)
            # two len() a record: a name or a value of millions of characters goes no further
            if len(ep.name) > MAX_ENTRY_POINT_NAME_CHARS or len(ep.value) > MAX_ENTRY_POINT_VALUE_CHARS:
                refused.append((at, key, _refusal(record)))
            else:
                found.append((at, key, record))
    found.sort(key=lambda item: item[:2])  # stable: a distribution's own order stays
    refused.sort(key=lambda item: item[:2])
    return tuple(item[2] for item in found), tuple(item[2] for item in refused)


def _folder_name(dist: Any) -> str:
    """A distribution's metadata folder (``name-1.0.dist-info``), where its ``METADATA`` cannot be read."""
    folder = getattr(dist, "_path", None)
    return str(getattr(folder, "name", None) or "(unnamed distribution)")


def _folder_place(dist: Any) -> str:
    """``in FOLDER``: where a distribution's metadata folder lies, for a failure naming it by that folder."""
    folder = getattr(dist, "_path", None)
    return f"in {getattr(folder, 'parent', None) or '?'}"


def _readable_distributions() -> Iterator[tuple[Any, tuple[PluginFailure, ...]]]:
    """Each installed distribution whose entry points can be read (the first of a name on
    ``sys.path``, as ``entry_points()`` takes them), or the failures of one whose
    ``entry_points.txt`` cannot be read (not UTF-8, unreadable) and names evalkit's groups: one per
    group, naming the distribution by its folder. The slow path, taken only when the one
    ``entry_points()`` call of :func:`_discover` failed: every command that lists or loads plugins
    ended in an internal error over one broken distribution, evalkit's plugins or not."""
    from importlib.metadata import distributions

    from .shapes import exception_text

    seen: set[str] = set()
    for dist in distributions():
        try:
            key = getattr(dist, "_normalized_name", None) or _folder_name(dist)
        except Exception:  # noqa: BLE001 - its name is read from a METADATA that is not UTF-8
            key = _folder_name(dist)
        if key in seen:
            continue
        seen.add(key)
        try:
            dist.entry_points  # noqa: B018 - read now, so that a failure is this distribution's
        except Exception as exc:  # noqa: BLE001
            folder = getattr(dist, "_path", None)
            try:
                raw = (folder / "entry_points.txt").read_bytes() if folder is not None else b""
            except OSError:
                raw = b""
            named = [group for group in GROUPS if f"[{group}]".encode() in raw]
            reason = (
                f"its entry_points.txt cannot be read ({exception_text(exc)}); none of its plugins is listed or loaded"
            )
            yield (
                None,
                tuple(
                    PluginFailure(
                        PluginRecord(group, UNREADABLE_ENTRY_POINTS, "", _folder_name(dist), _folder_place(dist)),
                        reason,
                    )
                    for group in named
                ),
            )
            continue
        yield dist, ()


def _refusal(record: PluginRecord) -> PluginFailure:
    """The failure of an entry point whose name or value is past its bound: its record with both
    cut by :func:`~evalkit.shapes.clipped` (so that every line naming it is short), and why."""
    reasons = [
        f"its {what} {length}" for what, text, limit in (
            ("name", record.name, MAX_ENTRY_POINT_NAME_CHARS), ("value", record.value, MAX_ENTRY_POINT_VALUE_CHARS),
        ) if (length := too_long(text, limit)) is not None
    ]  # fmt: skip
    shown = record._replace(
        name=clipped(record.name, _SHOWN_REFUSED_CHARS), value=clipped(record.value, _SHOWN_REFUSED_CHARS)
    )
    return PluginFailure(shown, f"the entry point is refused: {' and '.join(reasons)}; it is neither listed nor loaded")


def scan(refresh: bool = False) -> tuple[PluginRecord, ...]:
    """Every entry point in evalkit's groups, read once per process from the installed metadata.

    Like ``importlib.metadata``, the first distribution of a name on ``sys.path`` shadows later
    ones. ``refresh`` forgets the earlier scan first (:func:`forget`) and scans again.
    """
    global _scanned, _refused
    if refresh:
        forget()
    if _scanned is None:
        _scanned, _refused = _discover()
    return _scanned


def refused(group: str | None = None) -> tuple[PluginFailure, ...]:
    """The entry points of the scan (of ``group``, or of every group) refused for a name or a
    value past its bound, each a :class:`PluginFailure` naming its distribution: ``evalkit list``
    shows them, and a set catalog counts those of its group among its failures."""
    scan()
    return tuple(failure for failure in _refused if group is None or failure.record.group == group)


def forget() -> None:
    """Forget this process's scan; the next listing or lookup reads the metadata again.

    For tests and long-lived processes that change ``sys.path`` or install distributions; the
    import system's finder caches are invalidated too, so a distribution installed since is found
    and imported. stevedore's own caches (its class-level ``ENTRY_POINT_CACHE``, the files under
    ``~/.cache/python-entrypoints``) are never used by evalkit's managers: nothing of theirs to forget.
    """
    global _scanned, _refused
    _scanned, _refused = None, ()
    import importlib

    importlib.invalidate_caches()


def records(group: str) -> tuple[PluginRecord, ...]:
    """The entry points of one group, in discovery order (disabled ones included: listing shows them)."""
    return tuple(r for r in scan() if r.group == group)


#: The names in :data:`DISABLE_ENV` already looked up among the installed plugins (each warned
#: about, when it names none, once per process).
_looked_up: set[str] = set()


def disabled() -> frozenset[str]:
    """What :data:`DISABLE_ENV` names, comma-separated: entry-point names, or ``DISTRIBUTION:NAME``
    (:func:`is_disabled`); read each time, library callers may set it. A name no installed plugin
    has is warned about (:func:`_warn_unknown`), never refused."""
    listed = variable(DISABLE_ENV, "plugin names separated by commas", "switch no plugin off") or ""
    off = frozenset(n.strip() for n in listed.split(",") if n.strip())
    if not off <= _looked_up:
        _warn_unknown(off)
    return off


def _warn_unknown(off: frozenset[str]) -> None:
    """Warn (an :class:`~evalkit.errors.EvalkitWarning`), once per process for each, about the
    names of :data:`DISABLE_ENV` that switch off no installed plugin, with the installed names
    close to each (``Did you mean "evalkit.smoke"?``): a misspelt name switched nothing off,
    silently. Only a warning: a deployment may list a plugin that is not installed on every one of
    its machines. A library caller's warning filters decide what becomes of it; the CLI says it on
    stderr (``evalkit: warning: …``). Never printed here: a library does not write to stderr."""
    fresh = sorted(off - _looked_up)
    _looked_up.update(fresh)
    installed = scan()
    for entry in fresh:
        if any(is_disabled(record, frozenset([entry])) for record in installed):
            continue
        pool = [f"{r.distribution}:{r.name}" for r in installed] if ":" in entry else [r.name for r in installed]
        warnings.warn(
            f"{DISABLE_ENV} names {quoted(entry)}, which no installed plugin is, so it switches "
            f"nothing off.{did_you_mean(entry, pool)} (Not an error: a deployment may list a plugin that is not "
            "installed on every machine.)",
            EvalkitWarning,
            stacklevel=3,  # the caller of disabled()
        )


def is_disabled(record: PluginRecord, off: frozenset[str]) -> bool:
    """Whether ``off`` (:func:`disabled`) names ``record``: by its entry-point name (``openai``,
    every distribution's), or by distribution and name (``acme-openai:openai``, that one only —
    the way to keep one of two distributions that declare the same name; the distribution's name
    compared as pip does, case and ``-_.`` aside)."""
    if record.name in off:
        return True
    return any(
        name == record.name and _canonical(distribution) == _canonical(record.distribution)
        for distribution, colon, name in (entry.partition(":") for entry in off)
        if colon
    )


def _canonical(distribution: str) -> str:
    """A distribution's name as PEP 503 compares it: ``Acme_OpenAI`` → ``acme-openai``."""
    import re

    return re.sub(r"[-_.]+", "-", distribution).lower()


def enabled(group: str) -> tuple[PluginRecord, ...]:
    """The entry points of one group that :data:`DISABLE_ENV` does not name (:func:`is_disabled`)."""
    off = disabled()
    return tuple(r for r in records(group) if not is_disabled(r, off))


def switched_off_note(group: str, name: str) -> str:
    """A sentence saying that :data:`DISABLE_ENV` switches off the plugin ``name`` of ``group``
    (with its distributions), or ``""`` when it switches off none of that name: a bare "Unknown
    generator" sent the user looking for a package that is installed."""
    off = disabled()
    switched_off = list(
        dict.fromkeys(f"{r.distribution} {r.version}" for r in records(group) if r.name == name and is_disabled(r, off))
    )
    if not switched_off:
        return ""
    return f"{DISABLE_ENV} switches it off ({quoted(name)} of {', '.join(switched_off)}); take it out of {DISABLE_ENV} to use it."


def find(group: str, name: str) -> PluginRecord:
    """The one record named ``name`` in ``group``, or :class:`UnknownPluginError` listing the others.

    Two distributions declaring the name is a :class:`PluginError` naming both (each once); one
    declaring it twice in the group, one naming it and how often.
    """
    candidates = enabled(group)
    matches = [r for r in candidates if r.name == name]
    if not matches:
        raise UnknownPluginError(
            KIND_BY_GROUP[group], name, sorted({r.name for r in candidates}), switched_off_note(group, name)
        )
    if len(matches) > 1:
        owners = list(dict.fromkeys(f"{r.distribution} {r.version}" for r in matches))
        switches = " or ".join(f"{DISABLE_ENV}={d}:{name}" for d in dict.fromkeys(r.distribution for r in matches))
        declared = (
            f"is declared {len(matches)} times by distribution {owners[0]}" if len(owners) == 1
            else f"is declared by more than one distribution: {', '.join(owners)}; keep the one you want by switching "
            f"the other off by distribution and name ({switches}), or uninstall it"
        )  # fmt: skip
        raise PluginError(f"{KIND_BY_GROUP[group]} {quoted(name)} {declared}", group=group, name=name)
    return matches[0]


def unloadable(records: Iterable[PluginRecord]) -> dict[PluginRecord, str]:
    """Those of ``records`` whose plugin cannot be loaded, each with why, told from its entry point
    without importing anything (``evalkit list`` marks them): its value is not ``module:attribute``,
    or no finder finds its module (``module "acme.retriver" not found``, the module quoted as every
    plugin-given word is; :func:`evalkit.plugin_modules.missing_modules`, which runs no plugin code).
    A record absent may load: whether its import succeeds is known only by importing it."""
    targets = {record: entry_point_target(record.value) for record in records}
    missing = missing_modules({target[0] for target in targets.values() if target is not None})
    found: dict[PluginRecord, str] = {}
    for record, target in targets.items():
        if target is None:
            found[record] = NOT_MODULE_ATTRIBUTE.format(record.value)
        elif (gone := missing[target[0]]) is not None:
            named = f"module {quoted(target[0])} not found"
            found[record] = named if gone == target[0] else f"{named} (there is no {quoted(gone)})"
    return found


def unusable_choices(group: str, chosen: Mapping[str, str], subject: Callable[[str], str]) -> dict[str, str]:
    """Why each configured thing of ``chosen`` (its name → the id of the ``group`` plugin it names:
    a deployment's retriever, a provider instance's adapter) cannot run here, one sentence each,
    told without importing any plugin; a name absent has no problem that can be told before its
    plugin is imported. ``subject(name)`` begins each sentence (``deployment "a" runs``).

    - the id is no installed plugin of ``group``: not declared (with a "did you mean" from the
      installed ids), or switched off by :data:`DISABLE_ENV` (:func:`find`'s refusal);
    - it is declared twice, so which one would run cannot be told;
    - its entry point cannot be loaded (:func:`unloadable`: its module is not found, or its value
      is not ``module:attribute``) — the rule ``evalkit list`` marks plugins by.

    The one check ``evalkit list deployments``, ``evalkit list providers`` and ``evalkit validate``
    make."""
    kind = KIND_BY_GROUP[group]
    installed = sorted({record.name for record in enabled(group)})
    problems: dict[str, str] = {}
    found: dict[str, PluginRecord] = {}
    for name, plugin in chosen.items():
        names = f"{subject(name)} {kind} {quoted(plugin)}"
        try:
            found[name] = find(group, plugin)
        except UnknownPluginError:
            off = switched_off_note(group, plugin)
            problems[name] = f"{names}: {off}" if off else f"{names}, which is no installed {kind}.{did_you_mean(plugin, installed)}"
        except PluginError as exc:  # declared twice: which one would run cannot be told
            problems[name] = f"{names}, which cannot be chosen: {exc}"
    broken = unloadable(found.values())
    for name, record in found.items():
        if record in broken:
            problems[name] = f"{subject(name)} {record.label}, which cannot be loaded: {broken[record]}"
    return problems


def _raise_failure(manager: Any, entry_point: Any, exc: BaseException) -> None:
    """A driver's load-failure callback: the one plugin asked for failed, so the caller hears of it."""
    raise exc


def load(record: PluginRecord) -> Any:
    """The object ``record``'s entry point names, loaded by stevedore's ``DriverManager``.

    A failure is a :class:`PluginError` naming the plugin, its distribution and the error. Nothing
    scans the metadata again: the driver lists the record it is given.
    """
    from .plugin_managers import RecordDriver

    return RecordDriver(record, _raise_failure).driver


def driver(group: str, name: str) -> tuple[PluginRecord, Any]:
    """The record ``name`` chooses in ``group`` (:func:`find`) and the object it names (:func:`load`).

    The driver pattern: a deployment's ``retriever = "ID"``, a provider instance's ``adapter``, a
    grader, reporter or repository name picks one implementation among those installed.
    """
    record = find(group, name)
    return record, load(record)


def load_group(group: str) -> tuple[Loaded, ...]:
    """Import every enabled plugin of ``group`` through stevedore's ``NamedExtensionManager``.

    One that fails is handed to the manager's load-failure callback and comes back with its error;
    the others still load. In discovery order.
    """
    from .plugin_managers import GroupManager

    errors: dict[int, BaseException] = {}

    def isolate(manager: Any, entry_point: Any, exc: BaseException) -> None:
        errors[id(entry_point)] = exc  # a PluginError: PluginRecord.load raises nothing else

    wanted = enabled(group)
    manager = GroupManager(group, records(group), [r.name for r in wanted], isolate)
    plugins = {id(extension.entry_point): extension.plugin for extension in manager.extensions}
    return tuple(Loaded(r, plugins.get(id(r)), errors.get(id(r))) for r in wanted)


def instantiate(record: PluginRecord, factory: Callable[..., Any], **options: Any) -> Any:
    """Call a plugin's factory with ``options`` as they are (:func:`build` checks them first);
    anything it raises names the plugin (see :func:`instantiate_within`, with no time limit)."""
    return instantiate_within(record, factory, options, None)


def instantiate_within(
    record: PluginRecord, factory: Callable[..., Any], options: dict[str, Any], within: tuple[float, str] | None
) -> Any:
    """Call a plugin's factory with ``options`` as they are; anything it raises names the plugin.

    ``within`` (seconds, and what set them: ``"the deployment's timeout"``) bounds the call: the
    factory runs on a daemon thread of its own (:func:`evalkit.bounded.plugin_call_within`), and one that
    has not returned by then is abandoned, a :class:`PluginError` naming the plugin and the limit
    (a retriever's factory that opened a connection to a server that never answered hung the
    command for ever). ``None``: the factory is called in the caller's thread, unbounded.

    A created component that holds credentials (``secret_values()``) is remembered, so the CLI
    scrubs its secrets from every line it prints (see :func:`evalkit.privacy.secrets_to_hide`);
    one whose declaration cannot be honoured (it raises, never ends, holds a value past
    :data:`~evalkit.privacy.MAX_SECRET_CHARS` or one that is no text, or is no iterable of texts:
    :func:`~evalkit.privacy.read_secrets`) is a
    :class:`PluginError` naming the plugin, before anything is asked of it.
    """
    # the bounded call's thread pool (with the logging concurrent.futures imports) only where a
    # factory is built: `evalkit --help` and `list` import this module
    from .bounded import plugin_call_within
    from .errors import EvalkitError, PluginCallAbandoned
    from .privacy import SecretHolder, read_secrets, remember_secret_holder

    try:
        if within is None:
            created = carried(lambda: factory(**options))
        else:
            created = plugin_call_within(lambda: factory(**options), within, "its factory", "evalkit-create")
    except PluginCallAbandoned as exc:
        raise PluginError.for_plugin(record, f"{record.label}: {exc}") from None
    except EvalkitError:
        raise
    except PLUGIN_FAILURES as exc:
        from .shapes import exception_message, exception_name

        raise PluginError.for_plugin(
            record,
            f"{record.label} raised {exception_name(exc)} when created: {exception_message(exc)}",
        ) from exc

    if offers(created, SecretHolder):
        if (problem := read_secrets(created)[1]) is not None:  # its secrets could not all be kept out of sight
            raise PluginError.for_plugin(record, f"{record.label}: {problem}")
        remember_secret_holder(created)  # its secrets are scrubbed from everything printed, too
    return created


def require_offered(record: PluginRecord, created: Any, protocols: tuple[type, ...], lacking: str) -> Any:
    """``created`` — what the factory of ``record`` returned — when it offers one of ``protocols``
    (each ``runtime_checkable``, read with :func:`~evalkit.plugin_attributes.offers`); else a
    :class:`PluginError` naming the plugin, the type it returned and ``lacking`` (what it lacks, in
    words: ``"has no retrieve(question, limit) method"``), raised where the component is created:
    before anything is asked of it or stored, exit 2. A generator, grader or store of the wrong
    shape was otherwise met mid-run, as an ``AttributeError`` in every case or an internal error."""
    if any(offers(created, protocol) for protocol in protocols):
        return created
    raise PluginError.for_plugin(
        record, f"{record.label}: its factory returned {type(created).__name__!r}, which {lacking}"
    )


def build(
    record: PluginRecord,
    factory: Callable[..., Any],
    options: Any,
    table: str,
    *,
    within: tuple[float, str] | None = None,
) -> Any:
    """Check ``options`` against what the factory declares (:mod:`evalkit.options`), then call it
    by the contract it follows: with its structured ``Options`` object, with the options as keyword
    arguments (a factory written to the earlier contract), or with the table as it is (a factory
    that declares nothing) — :func:`evalkit.options.check_options` decides.

    ``table`` says where the options came from (``[providers.my-app] of /path/evalkit.toml``), for
    the messages about a missing, unknown or mistyped option. ``within`` bounds the factory's call
    (see :func:`instantiate_within`).
    """
    from .options import check_options

    return instantiate_within(record, factory, check_options(record, factory, options, table), within)
