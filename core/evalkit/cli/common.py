"""Pieces several commands share: the run-start hook and the store a command uses.

What commands print goes through :mod:`.console` (people) and :mod:`.json_output` (``--json``);
their options are declared in :mod:`.params`."""

from __future__ import annotations

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["database_url", "run_started"]


def run_started(progress_start: Callable[[Any, int], None]) -> Callable[[Any, int], None]:
    """``progress_start``, preceded by :func:`gc.freeze` and :func:`gc.enable`: called when every
    plugin is loaded and the first request is about to go out, so the objects built so far
    (modules, classes, plugins, the configuration) are left out of every later garbage collection
    — and out of the interpreter's collections at exit, which took 40-50 ms of a run's wall time
    walking them. Until then the collector is off (:func:`evalkit.cli.main` turns it off for a
    command that sets ``collects_garbage_from_run_start``): collections while ~400 modules are
    imported found nothing to free and cost ~30 ms of a run's start-up."""

    def start(run: Any, total: int) -> None:
        import gc

        gc.freeze()
        gc.enable()
        progress_start(run, total)

    return start


def database_url(args: Any, config: Any) -> str:
    """The database a command uses: --database, EVALKIT_DATABASE_URL, the config, then the default."""
    from ..storage import resolve_database_url

    return resolve_database_url(getattr(args, "database", None), config)
