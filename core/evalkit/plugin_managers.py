"""stevedore's managers over evalkit's plugin records (imported only when a plugin is listed or loaded).

Each manager lists the records :func:`evalkit.registry.scan` read from the installed metadata
(``list_entry_points`` is stevedore's documented way to say what a namespace holds) instead of
stevedore's own entry-point cache: that cache hands back entry points without their distribution,
is keyed on ``sys.path`` modification times packed as 32-bit floats (so a distribution reinstalled
within the same ~two minutes is served stale), and writes a file under ``~/.cache`` per
environment that nothing prunes. Loading, failure isolation and the driver pattern are stevedore's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stevedore.driver import DriverManager
from stevedore.named import NamedExtensionManager

__all__ = ["GroupManager", "RecordDriver"]

#: ``(manager, entry point, exception)``, as stevedore calls ``on_load_failure_callback``.
FailureCallback = Callable[[Any, Any, BaseException], None]


class GroupManager(NamedExtensionManager):  # type: ignore[type-arg]
    """One entry-point group: imports the plugins named ``names`` (none: nothing is imported).

    A plugin that fails to load is handed to ``on_failure`` and left out; the others still load.
    ``manager.extensions`` holds the loaded ones, each ``entry_point`` being its record.
    """

    def __init__(self, group: str, records: Sequence[Any], names: Sequence[str], on_failure: FailureCallback) -> None:
        self._records = list(records)  # before stevedore's __init__, which lists and loads
        super().__init__(group, names=list(names), on_load_failure_callback=on_failure)

    def list_entry_points(self) -> list[Any]:
        """The group's records, as :func:`evalkit.registry.scan` found them (nothing imported)."""
        return self._records


class RecordDriver(DriverManager):  # type: ignore[type-arg]
    """stevedore's driver pattern for one record: ``.driver`` is the object its entry point names.

    The record was chosen by name before (:func:`evalkit.registry.find`: deny-list, clashes,
    suggestions), so the driver lists that one record; a failure goes to ``on_failure``, which
    raises it.
    """

    def __init__(self, record: Any, on_failure: FailureCallback) -> None:
        self._records = [record]
        super().__init__(record.group, record.name, on_load_failure_callback=on_failure)

    def list_entry_points(self) -> list[Any]:
        """The one record this driver loads."""
        return self._records
