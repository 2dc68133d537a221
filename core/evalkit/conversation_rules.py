"""The rules a golden prompt's conversation and tools follow, checked before anything is sent.

One list of rules for both ways a set is written: :func:`evalkit.validate_prompt_set` words each
problem as ``field messages[3]: …`` for a set written in Python, and the set-file loader places it
at its line and JSON path (:mod:`evalkit.setfiles.sets`). Each problem is ``(path, reason)``, the
path relative to the prompt (``("messages", 3)``, ``("assertions", 0, "turn")``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .checks import TOOL_KINDS, json_schema_problems
from .conversations import ROLES, CannedResult, ConversationMode, Message, Tool
from .prompts import Assertion, GoldenPrompt
from .shapes import value_fault
from .wording import listed

__all__ = ["Problem", "conversation_problems", "is_conversation_prompt"]

Problem = tuple[tuple[Any, ...], str]


def is_conversation_prompt(prompt: GoldenPrompt) -> bool:
    """True when ``prompt`` uses any field these rules are about (and so is checked by them)."""
    return bool(
        prompt.messages or prompt.tools or prompt.tool_results or prompt.max_steps is not None or prompt.tool_choice is not None
        or prompt.mode is not ConversationMode.FIXED
        or any(isinstance(a, Assertion) and (a.turn is not None or a.kind in TOOL_KINDS) for a in prompt.assertions)
    )  # fmt: skip


def conversation_problems(prompt: GoldenPrompt) -> list[Problem]:
    """Every problem with the conversation fields of ``prompt`` (empty for a plain prompt)."""
    if not is_conversation_prompt(prompt):
        return []
    problems: list[Problem] = []
    mode = prompt.mode
    if not isinstance(mode, ConversationMode):
        problems.append((("mode",), f"must be fixed or scripted, got {str(mode)[:40]!r}"))
    if prompt.messages:
        if prompt.prompt:
            problems.append((("prompt",), "a prompt has either prompt or messages, not both"))
        if prompt.system_prompt is not None:
            problems.append((("system_prompt",), "a conversation's system prompt is its first turn: {role: system, content: ...}"))
        problems.extend(_turn_order(prompt.messages, mode))
    elif mode is ConversationMode.SCRIPTED:
        problems.append((("mode",), "scripted needs messages: the user turns to send in order"))
    problems.extend(_tool_problems(prompt))
    if prompt.max_steps is not None and (isinstance(prompt.max_steps, bool) or not isinstance(prompt.max_steps, int) or prompt.max_steps < 1):
        problems.append((("max_steps",), "must be a whole number of at least 1 (model turns for one user turn)"))
    problems.extend(_tool_choice_problems(prompt))
    problems.extend(_assertion_problems(prompt))
    return problems


#: The ``tool_choice`` words that name no function (OpenAI's).
TOOL_CHOICE_WORDS = ("auto", "required", "none")


def _tool_choice_problems(prompt: GoldenPrompt) -> Iterator[Problem]:
    """``tool_choice`` is one of :data:`TOOL_CHOICE_WORDS` or the name of a declared tool, and
    comes with tools."""
    choice = prompt.tool_choice
    if choice is None:
        return
    if not isinstance(choice, str) or not choice:
        yield ("tool_choice",), f"must be auto, required, none or the name of a declared tool, got {type(choice).__name__}"
        return
    if not prompt.tools:
        yield ("tool_choice",), "needs tools: the functions the model may call"
        return
    declared = {tool.name for tool in prompt.tools if isinstance(tool, Tool)}
    if choice not in TOOL_CHOICE_WORDS and choice not in declared:
        names = listed(sorted(declared))
        yield ("tool_choice",), f"must be auto, required, none or a declared tool's name ({names}), got {choice[:40]!r}"


def _turn_order(messages: tuple[Message, ...], mode: Any) -> Iterator[Problem]:
    """Roles in order: system turns first, a tool turn answering a call of the assistant turn before
    it, and the last turn the user turn the model answers, or a tool result (fixed) — or only
    system and user turns (scripted: the model writes the assistant turns)."""
    calls: set[str] = set()
    answered = False  # the previous turn was an assistant's with tool calls, or a tool's answer
    started = False  # a turn other than a system turn came before
    for index, turn in enumerate(messages):
        path: tuple[Any, ...] = ("messages", index)
        if not isinstance(turn, Message):
            yield path, f"must be an evalkit Message, got {type(turn).__name__}"
            continue
        role = turn.role
        if role not in ROLES:
            yield path + ("role",), f"must be one of {', '.join(ROLES)}, got {str(role)[:40]!r}"
            continue
        if role == "system" and started:
            yield path, "a system turn comes before every other turn"
        if role in ("assistant", "tool") and mode is ConversationMode.SCRIPTED:
            yield path, f"a scripted conversation holds system and user turns only (the model writes the replies), not a{'n' if role == 'assistant' else ''} {role} turn; use mode: fixed for a history"
        elif role == "tool":
            if not answered:
                yield path, "a tool turn answers a tool call of the assistant turn before it"
            elif turn.tool_call_id not in calls:
                yield path, "a tool turn names, as tool_call_id, the id of a tool call of the assistant turn before it"
        if role in ("system", "user", "tool") and not isinstance(turn.content, str):
            yield path, f"a {role} turn needs content"
        if role == "assistant" and turn.content is None and not turn.tool_calls:
            yield path, "an assistant turn needs content or tool_calls"
        if role != "assistant" and turn.tool_calls:
            yield path + ("tool_calls",), "only an assistant turn makes tool calls"
        for number, call in enumerate(turn.tool_calls):  # sent back to the model as JSON text
            if (fault := value_fault(call.arguments)) is not None:
                yield path + ("tool_calls", number, "arguments", *fault.path), fault.sentence()
        if role != "tool" and turn.tool_call_id is not None:
            yield path + ("tool_call_id",), "only a tool turn answers a tool call"
        started = started or role != "system"
        if role == "assistant":
            calls = {call.id for call in turn.tool_calls if call.id}
            answered = bool(turn.tool_calls)
        elif role != "tool":
            answered = False
    roles = [m.role for m in messages if isinstance(m, Message)]
    if "user" not in roles:
        yield ("messages",), "a conversation needs a user turn"
        return
    last = roles[-1] if roles else None
    # A history may end on a tool turn: the model then answers with the tool's result in hand.
    if mode is not ConversationMode.SCRIPTED and last in ("assistant", "system"):
        article = "an" if last == "assistant" else "a"
        yield ("messages", len(messages) - 1), (
            f"a conversation ends on the user turn the model answers, not on {article} {last} turn"
            + ("; remove the last turn, or put the reply you expect in a check" if last == "assistant" else "")
        )


def _tool_problems(prompt: GoldenPrompt) -> Iterator[Problem]:
    names: dict[str, int] = {}
    for index, tool in enumerate(prompt.tools):
        path: tuple[Any, ...] = ("tools", index)
        if not isinstance(tool, Tool):
            yield path, f"must be an evalkit Tool or an OpenAI function object, got {type(tool).__name__}"
            continue
        if not isinstance(tool.name, str) or not tool.name.strip():
            yield path + ("function", "name"), "a tool needs a name"
            continue
        if tool.name in names:
            yield path + ("function", "name"), f"the tool {tool.name[:60]!r} is already declared at tools[{names[tool.name]}]"
        names.setdefault(tool.name, index)
        if not isinstance(tool.parameters, Mapping) or tool.parameters.get("type", "object") != "object":
            yield path + ("function", "parameters"), "must be a JSON Schema of type object (a function's arguments are an object)"
        else:
            for problem in json_schema_problems(tool.parameters):
                yield path + ("function", "parameters"), problem
    if prompt.tool_results and not prompt.tools:
        yield ("tool_results",), "canned results answer calls of declared tools; declare the tools too"
    for index, canned in enumerate(prompt.tool_results):
        path = ("tool_results", index)
        if not isinstance(canned, CannedResult):
            yield path, f"must be an evalkit CannedResult, got {type(canned).__name__}"
            continue
        if prompt.tools and canned.name not in names:
            yield path + ("name",), f"names no declared tool (tools: {', '.join(names) or 'none'})"
        for problem in json_schema_problems(canned.arguments):
            yield path + ("arguments",), problem
        if (fault := value_fault(canned.result)) is not None:
            yield path + ("result", *fault.path), fault.sentence()


def _assertion_problems(prompt: GoldenPrompt) -> Iterator[Problem]:
    replies = prompt.user_turns if isinstance(prompt.mode, ConversationMode) else 1
    declared = {tool.name for tool in prompt.tools if isinstance(tool, Tool)}
    for index, assertion in enumerate(prompt.assertions):
        if not isinstance(assertion, Assertion):
            continue
        turn = assertion.turn
        if turn is not None:
            if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
                yield ("assertions", index, "turn"), "must be a whole number of at least 1 (the model's N-th reply)"
            elif turn > replies:
                yield ("assertions", index, "turn"), (
                    f"the model gives {replies} {'reply' if replies == 1 else 'replies'} "
                    f"({'one per user turn of a scripted conversation' if prompt.mode is ConversationMode.SCRIPTED else 'a fixed conversation is answered once'}), "
                    f"so there is no reply {turn}"
                )
        if assertion.kind in TOOL_KINDS and not prompt.tools and assertion.kind != "max_tool_calls":
            yield ("assertions", index), f"{assertion.kind} looks at tool calls, but the prompt declares no tools"
        elif assertion.kind in ("tool_called", "tool_not_called", "tool_args", "tool_sequence") and declared:
            wanted = _named_tools(assertion)
            unknown = [name for name in wanted if name not in declared]
            if unknown:
                yield ("assertions", index), f"names a tool the prompt does not declare: {', '.join(unknown)} (tools: {', '.join(sorted(declared))})"


def _named_tools(assertion: Assertion) -> list[str]:
    value = assertion.value
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        if isinstance(value.get("name"), str):
            return [value["name"]]
        if isinstance(value.get("names"), (list, tuple)):
            return [v for v in value["names"] if isinstance(v, str)]
    return []
