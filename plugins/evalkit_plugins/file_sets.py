"""``evalkit.files``: golden prompt sets and question sets declared in YAML, JSON, JSONL or TOML files.

Registered in ``evalkit.golden_sets``, ``evalkit.question_sets`` and ``evalkit.calibration_sets``. The files are the ones the
configuration names (``[sets] paths = ["evals/*.yaml"]``, relative to the configuration file);
every file is checked before any set is handed out, and any problem in any file refuses them all
(:class:`evalkit.setfiles.SetFileError`, every problem with file, line, column and JSON path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.config import Config, load_config

if TYPE_CHECKING:  # imported when a configuration names set files: most runs read none
    from evalkit.setfiles import SetFiles


class FileSetProvider:
    """Ships the sets of the configured set files.

    ``config`` is the project configuration; evalkit binds the one a command was given
    (``bind_config``), and without one the configuration of the working directory is read.
    """

    def __init__(self, config: Config | None = None) -> None:
        self._config = config
        self._loaded: SetFiles | None = None

    def bind_config(self, config: Config) -> None:
        """Use ``config`` (the command's ``--config``) instead of the working directory's."""
        if config is not self._config:
            self._config = config
            self._loaded = None

    def load(self) -> SetFiles:
        """Read and check every configured file once; raise when any has a problem."""
        from evalkit.setfiles import load_configured_sets

        if self._loaded is None:
            self._loaded = load_configured_sets(self._configuration(), _assertion_kinds())
        self._loaded.raise_for_problems()
        return self._loaded

    def golden_prompt_sets(self) -> tuple[Any, ...]:
        """The golden prompt sets the files declare."""
        return self.load().prompt_sets if self._names_files() else ()

    def golden_question_sets(self) -> tuple[Any, ...]:
        """The golden question sets the files declare."""
        return self.load().question_sets if self._names_files() else ()

    def calibration_sets(self) -> tuple[Any, ...]:
        """The calibration sets the files declare (``kind: calibration``)."""
        return self.load().calibration_sets if self._names_files() else ()

    def set_location(self, identifier: str) -> str | None:
        """Where the set ``identifier`` is declared — ``the set file FILE:LINE`` — or ``None`` when
        no file read so far declares it (:class:`evalkit.catalog.LocatesSets`)."""
        at = self._loaded.declared_at.get(identifier) if self._loaded is not None else None
        return f"the set file {at}" if at is not None else None

    def _configuration(self) -> Config:
        if self._config is None:
            self._config = load_config()
        return self._config

    def _names_files(self) -> bool:
        """Whether the configuration has a ``[sets]`` table (without one there is no file to read,
        and neither the set-file readers nor the hook plugins are loaded for it)."""
        return self._configuration().raw.get("sets") is not None


def _assertion_kinds() -> dict[str, Any]:
    """Built-in kinds plus those hook plugins add, so files may use plugin kinds."""
    from evalkit.hooks import assertion_kinds, plugin_manager

    manager, _ = plugin_manager()
    return assertion_kinds(manager)
