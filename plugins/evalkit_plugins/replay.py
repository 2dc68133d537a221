"""The ``replay`` generator: answers from a JSONL file of outputs produced elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
from evalkit import Answer, GenerationRequest
from evalkit.answers import ChatRequest, Turn
from evalkit.conversations import ToolCall
from evalkit.errors import ConfigError, GenerationError
from evalkit.jsonparse import json_lines, parse_json
from evalkit.options import option, text
from evalkit.shapes import short_repr
from evalkit.textfiles import read_whole_file, utf8_text
from evalkit.wording import counted, path_named

#: The largest file of recorded answers read, in bytes.
MAX_REPLAY_BYTES = 1024 * 1024 * 1024


@attrs.frozen
class ReplayOptions:
    """The options of a ``replay`` provider instance."""

    path: str = option(
        "JSONL file of recorded answers, one {\"id\", \"text\", \"model\"} object a line (\"turns\" for a conversation's "
        "model turns with their tool calls); relative to the config file",
        path=True,
    )
    model: str | None = option("the model reported when a line names none", default=None, validator=attrs.validators.optional(text()))


class ReplayGenerator:
    """Answers each prompt with the line of ``path`` whose ``id`` is the prompt id.

    Each line is ``{"id": ..., "text": ..., "model": ...}`` and may carry ``abstained``,
    ``citations`` (source ids, or ``{"source_id": ..., "passage": "quoted text"}`` with either key)
    and ``passages`` (the passages sent with the prompt: strings, or ``{"source_id": ..., "text":
    ...}``). ``model`` on a line wins over the instance's ``model`` option as the reported model.

    A conversation (:meth:`chat`) replays a line's ``turns``: the model turns in the order the
    conversation asks for them (every reply and tool-calling turn, across a scripted conversation's
    user turns), each ``{"text": ..., "tool_calls": [{"id", "name", "arguments"}], "model": ...}``
    with text, tool calls or both. A line without ``turns`` answers a conversation with its
    ``tool_calls`` (when it has some: ``evalkit import otel`` writes them) in a first turn, then
    its ``text`` for every turn after.
    """

    concurrency = 1
    Options = ReplayOptions

    def __init__(self, options: ReplayOptions) -> None:
        file = Path(options.path)
        shown = path_named(file)  # as messages name a path: a line break in it would start a line
        self.path = file
        self.model = options.model
        self._answers: dict[str, dict[str, Any]] = {}
        first_line: dict[str, int] = {}
        try:
            lines = json_lines(utf8_text(read_whole_file(file, MAX_REPLAY_BYTES)))
        except OSError as exc:
            raise ConfigError(f"replay file {shown}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"replay file {shown}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = parse_json(line, unique_keys=True)
            except ValueError as exc:
                raise ConfigError(f"replay file {shown}, line {number}: not JSON ({exc})") from None
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise ConfigError(f'replay file {shown}, line {number}: needs string fields "id" and "text" (or "turns")')
            if not isinstance(item.get("text"), str) and not (item.get("text") is None and "turns" in item):
                raise ConfigError(f'replay file {shown}, line {number}: needs string fields "id" and "text" (or "turns")')
            if not isinstance(item.get("model"), (str, type(None))) or not isinstance(item.get("abstained"), (bool, type(None))):
                raise ConfigError(f'replay file {shown}, line {number}: "model" must be a string or null, "abstained" true, false or null')
            problem = _turns_problem(item)
            if problem is not None:
                raise ConfigError(f"replay file {shown}, line {number}: {problem}")
            if item["id"] in first_line:  # which answer is the recorded one? the last used to win, unsaid
                raise ConfigError(
                    f"replay file {shown}, line {number}: id {short_repr(item['id'])} is answered again "
                    f"(first on line {first_line[item['id']]}); keep one answer per prompt id"
                )
            first_line[item["id"]] = number
            self._answers[item["id"]] = item
        #: Whether a line names no model of its own, so it reports the instance's ``model``.
        self._unnamed = any(not _names_a_model(item) for item in self._answers.values())

    @property
    def echoed_model_note(self) -> str | None:
        """What the run says when its reported model is the alias the instance names: no server is
        asked, so it is the instance's ``model`` option, taken by lines that name none; ``None``
        when every line names its own (the recorded model, no echo)."""
        return "reported model is the instance's model option: the replay file's lines name none" if self._unnamed else None

    def chat(self, request: ChatRequest) -> Turn:
        """The recorded model turn number ``request.step`` of the prompt's conversation."""
        item = self._line(request.case_id)
        turns = item.get("turns")
        if turns is None:
            calls = item.get("tool_calls") or ()
            if calls and request.step == 0:
                return Turn(None, calls, model=item.get("model") or self.model)
            return Turn(item.get("text") or "", model=item.get("model") or self.model)
        if request.step >= len(turns):
            raise GenerationError(
                f"replay file {self.path} holds {counted(len(turns), 'model turn')} for prompt id {request.case_id!r}; "
                f"the conversation asked for turn {request.step + 1}"
            )
        turn = turns[request.step]
        return Turn(turn.get("text"), turn.get("tool_calls") or (), model=turn.get("model") or item.get("model") or self.model)

    def _line(self, prompt_id: str | None) -> dict[str, Any]:
        item = self._answers.get(prompt_id or "")
        if item is None:
            raise GenerationError(f"replay file {self.path} has no line for prompt id {prompt_id!r}")
        return item

    def generate(self, request: GenerationRequest) -> Answer:
        """The recorded answer for the prompt."""
        item = self._line(request.case_id)
        return Answer(
            text=_final_text(item),
            model=item.get("model") or self.model,
            abstained=item.get("abstained"),
            citations=item.get("citations", ()),
            passages=item.get("passages", ()),
        )


def _names_a_model(item: dict[str, Any]) -> bool:
    """Whether a line reports a model of its own: its ``model``, or one on each of its ``turns``."""
    turns = item.get("turns")
    return bool(item.get("model")) or bool(turns and all(turn.get("model") for turn in turns))


def _final_text(item: dict[str, Any]) -> str:
    """A line's answer to a single prompt: its ``text``, else the text of its last turn that has one."""
    if isinstance(item.get("text"), str):
        return item["text"]
    return next((turn["text"] for turn in reversed(item.get("turns") or ()) if turn.get("text")), "")


def _calls_problem(calls: Any, where: str) -> str | None:
    if not isinstance(calls, list):
        return f"{where} must be a list of tool calls"
    for call in calls:
        try:
            ToolCall.coerce(call)
        except TypeError:
            return f'{where}: each tool call is {{"id", "name", "arguments"}} with a string "name"'
    return None


def _turns_problem(item: dict[str, Any]) -> str | None:
    """What makes a line's ``tool_calls`` or ``turns`` unusable, else ``None``."""
    if item.get("tool_calls") is not None:
        problem = _calls_problem(item["tool_calls"], '"tool_calls"')
        if problem is not None:
            return problem
    turns = item.get("turns")
    if turns is None:
        return None
    if not isinstance(turns, list) or not turns:
        return '"turns" must be a non-empty list of {"text", "tool_calls", "model"} objects'
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), (str, type(None))) or not isinstance(turn.get("model"), (str, type(None))):
            return f'"turns"[{index}] must be an object whose "text" and "model" are strings or null'
        if turn.get("tool_calls") is not None:
            problem = _calls_problem(turn["tool_calls"], f'"turns"[{index}].tool_calls')
            if problem is not None:
                return problem
        if not turn.get("text") and not turn.get("tool_calls"):
            return f'"turns"[{index}] has no text and no tool call'
    return None
