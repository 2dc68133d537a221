"""The ``replay`` generator: answers from a JSONL file of outputs produced elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
from evalkit import Answer, GenerationRequest
from evalkit.errors import ConfigError, GenerationError
from evalkit.jsonparse import parse_json
from evalkit.options import option, text
from evalkit.textfiles import read_whole_file

#: The largest file of recorded answers read, in bytes.
MAX_REPLAY_BYTES = 1024 * 1024 * 1024


@attrs.frozen
class ReplayOptions:
    """The options of a ``replay`` provider instance."""

    path: str = option(
        "JSONL file of recorded answers, one {\"id\", \"text\", \"model\"} object a line; relative to the config file",
        path=True,
    )
    model: str | None = option("the model reported when a line names none", default=None, validator=attrs.validators.optional(text()))


class ReplayGenerator:
    """Answers each prompt with the line of ``path`` whose ``id`` is the prompt id.

    Each line is ``{"id": ..., "text": ..., "model": ...}`` and may carry ``abstained``,
    ``citations`` (source ids, or ``{"source_id": ..., "passage": "quoted text"}`` with either key)
    and ``passages`` (the passages sent with the prompt: strings, or ``{"source_id": ..., "text":
    ...}``). ``model`` on a line wins over the instance's ``model`` option as the reported model.
    """

    concurrency = 1
    Options = ReplayOptions

    def __init__(self, options: ReplayOptions) -> None:
        file = Path(options.path)
        self.path = file
        self.model = options.model
        self._answers: dict[str, dict[str, Any]] = {}
        try:
            lines = read_whole_file(file, MAX_REPLAY_BYTES).decode("utf-8-sig").splitlines()
        except OSError as exc:
            raise ConfigError(f"replay file {file}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"replay file {file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = parse_json(line)
            except ValueError as exc:
                raise ConfigError(f"replay file {file}, line {number}: not JSON ({exc})") from None
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("text"), str):
                raise ConfigError(f'replay file {file}, line {number}: needs string fields "id" and "text"')
            if not isinstance(item.get("model"), (str, type(None))) or not isinstance(item.get("abstained"), (bool, type(None))):
                raise ConfigError(f'replay file {file}, line {number}: "model" must be a string or null, "abstained" true, false or null')
            self._answers[item["id"]] = item

    def generate(self, request: GenerationRequest) -> Answer:
        """The recorded answer for the prompt."""
        prompt_id = request.case_id
        item = self._answers.get(prompt_id or "")
        if item is None:
            raise GenerationError(f"replay file {self.path} has no line for prompt id {prompt_id!r}")
        return Answer(
            text=item["text"],
            model=item.get("model") or self.model,
            abstained=item.get("abstained"),
            citations=item.get("citations", ()),
            passages=item.get("passages", ()),
        )
