"""What a provider built from configuration tables shares: one options object per table
(``[question_sets."ID"]``, ``[calibration_sets."ID"]``), and where they were read from, for messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from evalkit.config import Config
from evalkit.errors import ConfigError
from evalkit.wording import path_named, table_key

__all__ = ["ConfigTables"]

OptionsT = TypeVar("OptionsT")


class ConfigTables(Generic[OptionsT]):
    """The options of each configured table, by its identifier (evalkit builds the provider with
    them, see ``config_table``), and the configuration file they came from (:meth:`bind_config`)."""

    #: The tables this provider is built from, e.g. ``"question_sets.*"``.
    config_table: str

    def __init__(self, instances: Mapping[str, OptionsT] | None = None) -> None:
        self._instances: Mapping[str, OptionsT] = dict(instances or {})
        self._where = "configuration"
        self._refused: list[str] = []

    def bind_config(self, config: Config) -> None:
        """Name the configuration file the tables were read from, in messages."""
        self._where = path_named(config.path) if config.path else "configuration"

    def refused_sets(self) -> list[str]:
        """The problem of each table the last listing left out (:class:`evalkit.catalog.RefusesSets`)."""
        return list(self._refused)

    def _loaded(self, load: Any) -> list[Any]:
        """``load(identifier, options, where)`` for every table, ``where`` naming the configuration
        file and the table; a table whose ``load`` raises :class:`~evalkit.errors.ConfigError` is
        left out and its problem kept (:meth:`refused_sets`): one bad table fails only its own set.

        Every problem names its table: one raised by a reader of the table's files (a queries or
        qrels line, :func:`evalkit_plugins.collections.read_qrels`), which knows only its file, is
        said after ``where`` — it named the file alone, so a project with several tables reading
        one folder did not say which set failed."""
        family = self.config_table.removesuffix(".*")
        loaded, self._refused = [], []
        for identifier, options in self._instances.items():
            where = f"{self._where} [{family}.{table_key(identifier, always_quoted=True)}]"
            try:
                loaded.append(load(identifier, options, where))
            except ConfigError as exc:
                problem = str(exc)
                self._refused.append(problem if problem.startswith(f"{where}: ") else f"{where}: {problem}")
        return loaded
