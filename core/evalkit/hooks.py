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

from .errors import PLUGIN_FAILURES
from .printable import visible

if TYPE_CHECKING:
    from .checks import AssertionKind
    from .runs import CaseResult, Run

__all__ = ["hookimpl", "hookspec", "HookSpecs", "Observers", "plugin_manager"]

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
    for record in registry.records("evalkit.hooks"):
        try:
            manager.register(registry.load(record), name=f"{record.distribution}:{record.name}")
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


@attrs.define
class Observers:
    """Calls the observer hooks, one implementation at a time, so one that raises cannot take the
    run down; each plugin's failure in each hook is reported once (:attr:`failures`)."""

    manager: pluggy.PluginManager
    _raised: dict[tuple[str, str], tuple[str, int]] = attrs.Factory(dict)

    def notify(self, hook: str, **arguments: Any) -> None:
        """Call every implementation of ``hook`` (in pluggy's order) with the arguments it accepts."""
        for impl in reversed(getattr(self.manager.hook, hook).get_hookimpls()):
            try:
                impl.function(*(arguments[name] for name in impl.argnames))
            except PLUGIN_FAILURES as exc:  # an observer must not stop, fail or orphan the run
                key = (impl.plugin_name, hook)
                first, count = self._raised.get(key, (visible(f"{type(exc).__name__}: {exc}"), 0))
                self._raised[key] = (first, count + 1)

    @property
    def failures(self) -> tuple[str, ...]:
        """One line per plugin and hook that raised: the plugin, the hook, the first error, how often."""
        lines = []
        for (plugin, hook), (first, count) in self._raised.items():
            times = "" if count == 1 else f" ({count} times; the first shown)"
            lines.append(f'hook plugin "{visible(plugin)}" raised in {hook}{times}: {first}; the run went on without it')
        return tuple(lines)
