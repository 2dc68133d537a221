"""The golden sets that installed providers ship, with where each one came from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from . import registry
from .components import offers
from .errors import (
    PLUGIN_FAILURES,
    ConfigError,
    DuplicateSetError,
    PluginCallAbandoned,
    PluginError,
    SetValidationError,
    UnknownSetError,
    carried,
    quoted,
)
from .options import DeclaresOptions, TableOptions
from .prompts import PromptStream
from .set_file_heads import set_file_hint
from .shapes import MAX_NAME_CHARS, clipped, exception_message, exception_name, read_up_to, short_repr, too_long
from .timeouts import TimeLimitExceeded

__all__ = [
    "ConfigAware", "LocatesSets", "RefusesSets", "SetCatalog", "SourcedSet", "calibration_set_catalog", "clash", "load_catalog",
    "prompt_set_catalog", "question_set_catalog",
]  # fmt: skip


@runtime_checkable
class ConfigAware(Protocol):
    """A set provider that reads the project configuration (the ``evalkit.files`` provider does).

    The catalog hands it the configuration the command was given before asking for sets.
    """

    def bind_config(self, config: Any) -> None:
        """Remember ``config`` (an :class:`evalkit.config.Config`)."""


@runtime_checkable
class RefusesSets(Protocol):
    """A set provider that, asked for its sets, leaves out the ones it could not read and says why
    (the ``evalkit.collections`` provider, one set per configuration table): each is a failure of
    the catalog, and the provider's other sets still count."""

    def refused_sets(self) -> Sequence[str]:
        """One problem per set left out of the last listing, naming the set."""
        ...


@runtime_checkable
class LocatesSets(Protocol):
    """A set provider that can say where in the project one of its sets is declared (the
    ``evalkit.files`` provider: ``the set file evals/faq.yaml:1``), so a clash with an installed
    set names the file rather than the provider's distribution."""

    def set_location(self, identifier: str) -> str | None:
        """Where the set ``identifier`` is declared, or ``None`` when unknown."""
        ...


@attrs.frozen
class SourcedSet:
    """A set together with the entry point of the provider that shipped it, and that provider."""

    set: Any
    record: registry.PluginRecord
    provider: Any = None


@attrs.frozen
class SetCatalog:
    """Every set the providers of one group shipped, the providers that failed, and clashes."""

    kind: str
    sets: dict[str, SourcedSet]
    failures: tuple[registry.PluginFailure, ...]
    duplicates: dict[str, tuple[registry.PluginRecord, ...]]
    providers: tuple[Any, ...] = ()
    #: Of a duplicated identifier, where the owners that know it declare it (:class:`LocatesSets`).
    locations: dict[str, dict[registry.PluginRecord, str]] = attrs.field(factory=dict)
    #: The providers of the group that ``EVALKIT_DISABLE_PLUGINS`` switched off (not loaded).
    disabled: tuple[registry.PluginRecord, ...] = ()

    def identifiers(self) -> list[str]:
        """Identifiers in discovery order."""
        return list(self.sets)

    def get(self, identifier: str) -> SourcedSet:
        """The set named ``identifier``; raises for unknown or duplicated identifiers.

        When the set is not found and a provider refused invalid sets (set files with mistakes),
        that provider's :class:`SetValidationError` is raised instead: the set may be among them.
        """
        if identifier in self.duplicates:
            raise DuplicateSetError(f'{self.kind} {quoted(identifier)} {self.clash(identifier)}')
        if identifier not in self.sets:
            refused = self.invalid_sets()
            if refused is not None:
                raise refused
            raise UnknownSetError(
                identifier,
                self.identifiers(),
                self.kind,
                failures=[f.named() for f in self.failures],
                notes=[note for note in (set_file_hint(identifier, _RUN_BY_KIND.get(self.kind), self.sets), self.disabled_hint()) if note],
            )
        return self.sets[identifier]

    def clash(self, identifier: str) -> str:
        """What ships the duplicated ``identifier`` more than once (:func:`clash`), a set file
        named by its path and line."""
        return clash(self.duplicates[identifier], self.locations.get(identifier))

    def disabled_hint(self) -> str:
        """A sentence naming the providers ``EVALKIT_DISABLE_PLUGINS`` switched off, or ``""``:
        an unknown set may be one of theirs."""
        if not self.disabled:
            return ""
        names = ", ".join(dict.fromkeys(r.describe() for r in self.disabled))
        one = len(self.disabled) == 1
        return (
            f"{registry.DISABLE_ENV} switches off {'the provider' if one else 'the providers'} {names}, "
            f"which may ship it."
        )

    def invalid_sets(self) -> SetValidationError | None:
        """The first provider failure that is a refusal of invalid sets, if any."""
        for failure in self.failures:
            if isinstance(failure.exception, SetValidationError):
                return failure.exception
        return None


#: The most sets evalkit reads from one provider's listing. A listing is read whole before a
#: command goes on, and a generator that never ends (a provider's bug) filled memory for as long
#: as ``set_load_timeout`` let it run: 330 MB in 5 s, gigabytes in the default 300 s.
MAX_SETS_PER_PROVIDER = 10_000


def _listed(listing: Any) -> tuple[Any, ...]:
    """What ``listing()`` returns, an iterator read up to one set past :data:`MAX_SETS_PER_PROVIDER`."""
    return read_up_to(carried(listing), MAX_SETS_PER_PROVIDER)


def load_catalog(
    group: str, method: str, kind: str, extra_providers: Iterable[Any] = (), config: Any = None, set_type: type | None = None
) -> SetCatalog:
    """Load every enabled provider of ``group``, call ``method`` on it and index the sets it returns.

    A returned item that is no ``set_type`` (a question set in the prompt sets' group) is a
    failure of its provider, as one without an identifier is: every command reading it would fail.

    A provider that declares options (:mod:`evalkit.options`) gets them from its table in
    ``config`` (found from the working directory when not given, and only then). A
    :class:`ConfigAware` provider is given ``config`` first (when one is passed). A provider that
    fails to import, is missing an option, or raises is recorded in ``failures``; the others still
    count. So is one whose ``method`` does not return within ``config.set_load_timeout`` seconds
    (default 300; in the main thread, where :func:`~evalkit.timeouts.alarm_bounded` can interrupt it),
    and one whose factory does not return within that limit (in any thread: it is called as a
    retriever's factory is, on a daemon thread of its own that is abandoned at the limit,
    :func:`evalkit.registry.instantiate_within`). The provider's hooks (``bind_config``,
    ``refused_sets``, ``set_location``) are bounded as its factory is (:func:`_hook_call`).
    """
    from .options import provider_table

    configs: list[Any] = [config]

    def project_config() -> Any:
        if configs[0] is None:
            from .config import load_config

            configs[0] = load_config()
        return configs[0]

    # A provider that never returns (a download that stalls, a connection that never answers) would
    # hang every command that lists sets: its factory and its listing each have a time limit.
    from .config import DEFAULT_SET_LOAD_TIMEOUT_S
    from .timeouts import alarm_bounded, alarms_reach_this_thread

    limit = getattr(config, "set_load_timeout", DEFAULT_SET_LOAD_TIMEOUT_S)
    sets: dict[str, SourcedSet] = {}
    owners: dict[str, list[registry.PluginRecord]] = {}
    failures = list(registry.refused(group))  # entry points refused at the scan (a name of millions of characters)
    providers: list[Any] = []
    loaded: list[tuple[registry.PluginRecord, Any]] = []
    for record, factory, error in registry.load_group(group):  # stevedore isolates a provider that fails to load
        if error is not None:
            failures.append(registry.PluginFailure(record, str(error)))
            continue
        try:
            options: dict[str, Any] = {}
            refused_tables: list[str] = []  # a set's own invalid table fails that set only
            if isinstance(factory, (DeclaresOptions, TableOptions)):
                _, options = provider_table(record, factory, project_config(), refused=refused_tables)
            # bounded as a retriever's factory is (registry.instantiate_within), by the limit its
            # listing has: one that never returned hung `list`, `validate` and `run` for ever
            loaded.append((record, registry.instantiate_within(record, factory, options, (limit, "set_load_timeout"))))
        except (PluginError, ConfigError) as exc:
            failures.append(registry.PluginFailure(record, str(exc)))
        failures.extend(registry.PluginFailure(record, problem) for problem in refused_tables)
    for provider in extra_providers:
        local = registry.PluginRecord(group, type(provider).__name__, "", "(in process)", "")
        loaded.append((local, provider))
    # the listing, in the main thread (where signals arrive), is interrupted at the limit
    bounded = alarms_reach_this_thread()
    for record, provider in loaded:
        try:
            if config is not None and offers(provider, ConfigAware):
                _hook_call(lambda p=provider: p.bind_config(config), "bind_config", limit)
            listing = getattr(provider, method)
            shipped = alarm_bounded(carried, (_listed, listing), limit, _ListingStalled) if bounded else carried(_listed, listing)
        except _ListingStalled:
            failures.append(registry.PluginFailure(record, f"{method}() did not return within {limit:g} s (set_load_timeout); it was interrupted"))
            continue
        except PluginCallAbandoned as exc:
            failures.append(registry.PluginFailure(record, str(exc)))
            continue
        except SetValidationError as exc:
            failures.append(registry.PluginFailure(record, "; ".join(exc.problems), exc))
            continue
        except PLUGIN_FAILURES as exc:  # a provider's bug must not hide the other providers' sets
            failures.append(registry.PluginFailure(record, f"{exception_name(exc)} in {method}(): {exception_message(exc)}"))
            continue
        if len(shipped) > MAX_SETS_PER_PROVIDER:
            failures.append(registry.PluginFailure(
                record, f"{method}() returned more than {MAX_SETS_PER_PROVIDER:,} sets, the most evalkit reads from one provider; it was not read further",
            ))  # fmt: skip
            continue
        providers.append(provider)
        if offers(provider, RefusesSets):  # the sets it could not read, each failed alone
            try:
                refused = _hook_call(lambda p=provider: list(p.refused_sets()), "refused_sets", limit)
                failures.extend(registry.PluginFailure(record, str(problem)) for problem in refused)
            except PluginCallAbandoned as exc:
                failures.append(registry.PluginFailure(record, str(exc)))
            except PLUGIN_FAILURES as exc:
                failures.append(registry.PluginFailure(record, f"{exception_name(exc)} in refused_sets(): {exception_message(exc)}"))
        for item in shipped:
            if set_type is not None and not isinstance(item, set_type):
                failures.append(registry.PluginFailure(record, f"{method}() returned {short_repr(item)}, which is no {set_type.__name__}"))
                continue
            identifier = getattr(item, "identifier", None)
            if not isinstance(identifier, str):
                failures.append(registry.PluginFailure(record, f"{method}() returned {short_repr(item)}, which has no identifier"))
                continue
            # The identifier is the catalog's key and the label of every line about the set (its
            # row, each of its problems): one of millions of characters is refused here, once.
            if (length := too_long(identifier, MAX_NAME_CHARS)) is not None:
                failures.append(registry.PluginFailure(
                    record, f"{method}() returned a set whose identifier {length}: {clipped(identifier, 60)!r}",
                ))  # fmt: skip
                continue
            stream = getattr(item, "prompts", None)
            if isinstance(stream, PromptStream):  # its producer may stall as the listing could
                stream.time_limit = limit
            owners.setdefault(identifier, []).append(record)
            sets.setdefault(identifier, SourcedSet(item, record, provider))
    duplicates = {i: tuple(rs) for i, rs in owners.items() if len(rs) > 1}
    for identifier in duplicates:
        sets.pop(identifier, None)
    off = registry.disabled()
    switched_off = tuple(r for r in registry.records(group) if registry.is_disabled(r, off)) if off else ()
    return SetCatalog(
        kind, sets, tuple(failures), duplicates, tuple(providers), _locations(duplicates, loaded, limit), switched_off
    )


def _hook_call(call: Any, name: str, limit: float) -> Any:
    """``call()`` — a set provider's hook ``name`` (``bind_config``, ``refused_sets``,
    ``set_location``) — bounded as the provider's factory is, by the one rule
    (:func:`evalkit.bounded.plugin_call_within`): abandoned at ``limit`` seconds
    (``set_load_timeout``). Unbounded, a hook that never returned hung ``list``, ``validate`` and ``run``."""
    # the thread pool only where a provider is asked (as registry.instantiate_within imports it)
    from .bounded import plugin_call_within

    return plugin_call_within(call, (limit, "set_load_timeout"), f"{name}()", f"evalkit-{name}")


#: The command that runs a set of each kind by its identifier, for :func:`~evalkit.set_file_heads.set_file_hint`.
_RUN_BY_KIND = {"golden prompt set": "evalkit run", "golden question set": "evalkit retrieval"}


def _locations(
    duplicates: dict[str, tuple[registry.PluginRecord, ...]], loaded: Sequence[tuple[registry.PluginRecord, Any]], limit: float
) -> dict[str, dict[registry.PluginRecord, str]]:
    """Of each duplicated identifier, where the providers that can say so (:class:`LocatesSets`)
    declare it; a provider whose ``set_location`` raises or outlives ``limit`` (:func:`_hook_call`)
    is named by its distribution, as one that cannot say."""
    locating = [(record, provider) for record, provider in loaded if offers(provider, LocatesSets)]
    found: dict[str, dict[registry.PluginRecord, str]] = {}
    for identifier, owners in duplicates.items():
        for record, provider in locating:
            if record not in owners:
                continue
            try:
                at = _hook_call(lambda p=provider, i=identifier: p.set_location(i), "set_location", limit)
            except (PluginCallAbandoned, *PLUGIN_FAILURES):
                continue
            if isinstance(at, str):
                found.setdefault(identifier, {})[record] = at
    return found


class _ListingStalled(TimeLimitExceeded):
    """A provider's listing outlived ``set_load_timeout`` (its own class: an outer limit is never
    taken for it)."""


def clash(owners: Iterable[registry.PluginRecord], locations: dict[registry.PluginRecord, str] | None = None) -> str:
    """What ships one identifier more than once, each distribution and provider named once:
    ``is shipped by more than one distribution: "a" (d 1.0) and "b" (e 2.0)``, ``is shipped by more
    than one provider of distribution d 1.0: "a" and "b"``, or ``is shipped 2 times by provider "a" (d 1.0)``
    (each provider's name quoted, as every message names a plugin).

    An owner with a ``locations`` entry (a set file) is named by it, not by the distribution that
    reads it: ``is declared in the set file evals/a.yaml:1 and shipped by the installed distribution d 1.0
    (provider "a"); give the file's set another identifier``."""
    records = list(owners)
    located = list(dict.fromkeys(locations[r] for r in records if locations and r in locations))
    if located:
        others = list(dict.fromkeys(f"{r.distribution} {r.version} (provider {quoted(r.name)})" for r in records if r not in (locations or {})))
        declared = "is declared in " + " and ".join(located)
        if not others:
            return declared
        installed = "the installed distribution" + ("s " if len(others) > 1 else " ")
        return f"{declared} and shipped by {installed}{' and '.join(others)}; give the file's set another identifier"
    providers = list(dict.fromkeys((r.name, r.distribution, r.version) for r in records))
    distributions = list(dict.fromkeys((r.distribution, r.version) for r in records))
    if len(providers) == 1:
        name, distribution, version = providers[0]
        return f"is shipped {len(records)} times by provider {quoted(name)} ({distribution} {version})"
    if len(distributions) == 1:
        distribution, version = distributions[0]
        return f"is shipped by more than one provider of distribution {distribution} {version}: " + " and ".join(quoted(n) for n, _, _ in providers)
    return "is shipped by more than one distribution: " + " and ".join(f"{quoted(n)} ({d} {v})" for n, d, v in providers)


def prompt_set_catalog(extra_providers: Iterable[Any] = (), config: Any = None) -> SetCatalog:
    """Golden prompt sets from the ``evalkit.golden_sets`` group (providers' options from ``config``)."""
    from .prompts import GoldenPromptSet

    return load_catalog("evalkit.golden_sets", "golden_prompt_sets", "golden prompt set", extra_providers, config, GoldenPromptSet)


def question_set_catalog(extra_providers: Iterable[Any] = (), config: Any = None) -> SetCatalog:
    """Golden question sets from the ``evalkit.question_sets`` group (providers' options from ``config``)."""
    from .questions import GoldenQuestionSet

    return load_catalog("evalkit.question_sets", "golden_question_sets", "golden question set", extra_providers, config, GoldenQuestionSet)


def calibration_set_catalog(extra_providers: Iterable[Any] = (), config: Any = None) -> SetCatalog:
    """Calibration sets from the ``evalkit.calibration_sets`` group (providers' options from ``config``)."""
    from .calibration import CalibrationSet

    return load_catalog("evalkit.calibration_sets", "calibration_sets", "calibration set", extra_providers, config, CalibrationSet)
