"""Lifecycle hooks (pluggy): the specifications are the documentation.

A hook plugin is a module or object with ``@evalkit.hookimpl`` functions, registered through the
``evalkit.hooks`` entry-point group. Implementations may accept fewer arguments than a spec
passes, so specs can grow without breaking plugins. An exception raised by an observer hook is
reported and does not stop the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .checks import AssertionKind
    from .runs import CaseResult, Run

__all__ = ["hookimpl", "hookspec", "HookSpecs", "plugin_manager"]

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
        except Exception as exc:
            failures.append(registry.PluginFailure(record, str(exc)))
    for plugin in extra:
        manager.register(plugin)
    manager.check_pending()
    return manager, failures
