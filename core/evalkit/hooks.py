"""Lifecycle hooks (pluggy): the specifications are the documentation.

A hook plugin is a module or object with ``@evalkit.hookimpl`` functions, registered through the
``evalkit.hooks`` entry-point group. Implementations may accept fewer arguments than a spec
passes, so specs can grow without breaking plugins. An exception raised by an observer hook
(run started, case graded, run finished) is reported once per plugin and hook, naming the plugin,
and does not stop, fail or orphan the run: :class:`Observers` calls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from .checks import BUILTIN_KINDS, AssertionKind
from .errors import PLUGIN_FAILURES, carried
from .printable import visible
from .shapes import exception_text
from .timeouts import TimeLimitExceeded, alarm_bounded, alarms_reach_this_thread

if TYPE_CHECKING:
    from .runs import CaseResult, Run

__all__ = ["hookimpl", "hookspec", "HookSpecs", "Observers", "assertion_kinds", "plugin_manager"]

hookspec = pluggy.HookspecMarker("evalkit")
hookimpl = pluggy.HookimplMarker("evalkit")


class HookSpecs:
    """The hooks evalkit calls."""

    @hookspec
    def evalkit_assertion_kinds(self) -> Sequence[AssertionKind]:
        """Return extra assertion kinds (:class:`evalkit.AssertionKind`) a set may use.

        Called once when a run or validation needs the kinds; a kind whose name is already taken
        by a built-in kind is ignored with a warning.
        """

    @hookspec
    def evalkit_run_started(self, run: Run, total: int) -> None:
        """Called after validation, when the run row exists and before the first generator call."""

    @hookspec
    def evalkit_case_graded(self, run: Run, case: CaseResult) -> None:
        """Called for every case once it is graded (or errored), in completion order."""

    @hookspec
    def evalkit_run_finished(self, run: Run) -> None:
        """Called with the stored run (cases included) after it is marked complete or incomplete."""


def plugin_manager(extra: Sequence[Any] = ()) -> tuple[pluggy.PluginManager, list[Any]]:
    """A manager with every ``evalkit.hooks`` plugin registered; returns it and the load failures.

    ``extra`` objects (tests, library callers) are registered as well.
    """
    from . import registry

    manager = pluggy.PluginManager("evalkit")
    manager.add_hookspecs(HookSpecs)
    failures: list[registry.PluginFailure] = []
    for record, plugin, error in registry.load_group("evalkit.hooks"):
        if error is not None:
            failures.append(registry.PluginFailure(record, str(error)))
            continue
        try:
            manager.register(plugin, name=f"{record.distribution}:{record.name}")
        except PLUGIN_FAILURES as exc:
            failures.append(registry.PluginFailure(record, str(exc)))
    for plugin in extra:
        manager.register(plugin, name=_extra_name(manager, plugin))
    manager.check_pending()
    return manager, failures


def _extra_name(manager: pluggy.PluginManager, plugin: Any) -> str:
    """A readable, unique name for a plugin object a library caller registers."""
    base = getattr(plugin, "__name__", None) or type(plugin).__qualname__
    name, number = base, 1
    while manager.has_plugin(name):
        number += 1
        name = f"{base}#{number}"
    return name


class _HookStalled(TimeLimitExceeded):
    """An observer call's own limit passed (its own class: an outer limit is never taken for it)."""


@attrs.define
class Observers:
    """Calls the observer hooks, one implementation at a time, so one that raises cannot take the
    run down; each plugin's failure in each hook is reported once (:attr:`failures`).

    A call that outlives ``time_limit`` seconds (``hook_timeout``; in the main thread, where
    ``SIGALRM`` can interrupt it) is interrupted, and that plugin is not called again in this run:
    a webhook that stopped answering would otherwise hold every case for as long.
    """

    manager: pluggy.PluginManager
    time_limit: float | None = None
    _raised: dict[tuple[str, str], tuple[str, int]] = attrs.Factory(dict)
    #: Plugins interrupted at the time limit, and the hook they were in: not called again.
    _stalled: dict[str, str] = attrs.Factory(dict)

    def notify(self, hook: str, **arguments: Any) -> None:
        """Call every implementation of ``hook`` (in pluggy's order) with the arguments it accepts."""
        limit = self.time_limit if alarms_reach_this_thread() else None
        for impl in reversed(getattr(self.manager.hook, hook).get_hookimpls()):
            if impl.plugin_name in self._stalled:
                continue
            called = tuple(arguments[name] for name in impl.argnames)
            try:
                if limit is None:
                    carried(impl.function, *called)
                else:
                    alarm_bounded(carried, (impl.function, *called), limit, _HookStalled)
            except _HookStalled:
                self._stalled[impl.plugin_name] = hook
            except PLUGIN_FAILURES as exc:  # an observer must not stop, fail or orphan the run
                key = (impl.plugin_name, hook)
                first, count = self._raised.get(key, (visible(exception_text(exc)), 0))
                self._raised[key] = (first, count + 1)

    @property
    def failures(self) -> tuple[str, ...]:
        """One line per plugin and hook that raised (the first error, how often) or was interrupted."""
        lines = [
            f'hook plugin "{visible(plugin)}" did not return from {hook} within {self.time_limit:g} s (hook_timeout): '
            "it was interrupted and not called again; the run went on without it"
            for plugin, hook in self._stalled.items()
        ]
        for (plugin, hook), (first, count) in self._raised.items():
            times = "" if count == 1 else f" ({count} times; the first shown)"
            lines.append(f'hook plugin "{visible(plugin)}" raised in {hook}{times}: {first}; the run went on without it')
        return tuple(lines)


def assertion_kinds(manager: pluggy.PluginManager) -> dict[str, AssertionKind]:
    """Built-in assertion kinds plus those hook plugins add (built-ins win a name clash, with an
    :class:`~evalkit.errors.EvalkitWarning` naming the plugin).

    Each plugin's ``evalkit_assertion_kinds`` is called on its own, under the rule of a plugin's
    call (:func:`~evalkit.errors.carried`): one that raises, returns no iterable or an item that is
    no :class:`AssertionKind` is a :class:`~evalkit.errors.PluginError` naming the plugin
    (``distribution:entry-point``) and quoting what it gave — the sets that use its kinds cannot be
    checked without them, so nothing runs (exit 2). It was an internal error ("an evalkit bug")
    with a traceback, naming no plugin and printing the plugin's message as it was."""
    import warnings

    from .errors import EvalkitWarning, PluginError
    from .shapes import short_repr
    from .wording import quoted

    kinds: dict[str, AssertionKind] = dict(BUILTIN_KINDS)
    for impl in reversed(manager.hook.evalkit_assertion_kinds.get_hookimpls()):
        plugin = f"hook plugin {quoted(impl.plugin_name)}"
        try:
            returned = carried(impl.function, method="evalkit_assertion_kinds")
            listed = carried(lambda: () if returned is None else tuple(returned))  # noqa: B023 — called at once
        except PLUGIN_FAILURES as exc:
            raise PluginError(f"{plugin} raised in evalkit_assertion_kinds(): {exception_text(exc)}") from None
        for kind in listed:
            if not isinstance(kind, AssertionKind):
                raise PluginError(
                    f"{plugin} returned {type(kind).__name__} {short_repr(kind)} from evalkit_assertion_kinds(), "
                    "not an evalkit.AssertionKind"
                )
            if kind.name in BUILTIN_KINDS:
                warnings.warn(
                    f"{plugin} adds the assertion kind {quoted(kind.name)}, which is built in: the built-in kind is used",
                    EvalkitWarning,
                    stacklevel=2,
                )
            elif kind.name not in kinds:
                kinds[kind.name] = kind
    return kinds
