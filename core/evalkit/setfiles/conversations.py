"""Conversations in set files: a prompt's ``messages``, read ahead of the runs that send them whole.

::

    - id: return-a-lamp
      mode: fixed                       # the model answers the last user turn of a fixed history
      messages:
        - {role: system, content: You are the shop's assistant.}
        - {role: user, content: I bought a lamp last week.}
        - {role: assistant, content: Which order is it?}
        - {role: user, content: A-1234. Can I still return it?}
      assertions: [{contains: "30 days"}]

This is the shape conversations keep once evalkit sends them turn by turn (``evalkit import otel``
writes it). Until then a conversation runs as its **last user turn**, with the turns before it as
context in the system prompt (:func:`single_prompt`), so its fingerprint changes, and its cases
count as edited, on the release that sends it whole. A conversation holding tool calls cannot be
sent as one prompt: it must carry ``skip: REASON`` until evalkit runs tools, and a skipped prompt
is kept, checked and listed by ``evalkit validate`` but never run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .documents import SetDocument
from .problems import FileProblem, JsonPath

__all__ = ["CONTEXT_HEADING", "conversation_problems", "single_prompt"]

#: What introduces the earlier turns in the system prompt of a conversation run as one prompt.
CONTEXT_HEADING = "The conversation so far (the user's next message follows):"
_SPEAKERS = {"user": "User", "assistant": "Assistant"}


def conversation_problems(document: SetDocument, at: JsonPath, raw: dict[str, Any]) -> Iterator[FileProblem]:
    """The turn-order rules of a prompt's ``messages`` (the schema checked each turn's shape)."""
    messages = raw["messages"]
    where = at + ("messages",)
    if "prompt" in raw:
        yield document.problem(at + ("prompt",), "a prompt has either prompt or messages, not both")
    if "system_prompt" in raw:
        yield document.problem(at + ("system_prompt",), "a conversation's system prompt is its first turn: {role: system, content: ...}")
    calls: set[str] = set()
    answered = False  # the previous turn was an assistant's with tool calls, or a tool's answer
    started = False  # a turn other than a system turn came before
    for index, turn in enumerate(messages):
        role = turn["role"]
        path = where + (index,)
        if role == "system":
            if started:
                yield document.problem(path, "a system turn comes before every other turn")
        elif role == "tool":
            if not answered:
                yield document.problem(path, "a tool turn answers a tool call of the assistant turn before it")
            elif turn.get("tool_call_id") not in calls:
                yield document.problem(path, "a tool turn names, as tool_call_id, the id of a tool call of the assistant turn before it")
        if role in ("system", "user", "tool") and not isinstance(turn.get("content"), str):
            yield document.problem(path, f"a {role} turn needs content")
        if role == "assistant" and "content" not in turn and "tool_calls" not in turn:
            yield document.problem(path, "an assistant turn needs content or tool_calls")
        if role != "assistant" and "tool_calls" in turn:
            yield document.problem(path + ("tool_calls",), "only an assistant turn makes tool calls")
        if role != "tool" and "tool_call_id" in turn:
            yield document.problem(path + ("tool_call_id",), "only a tool turn answers a tool call")
        started = started or role != "system"
        if role == "assistant":
            calls = {call.get("id") for call in turn.get("tool_calls", ()) if call.get("id")}
            answered = bool(turn.get("tool_calls"))
        elif role != "tool":
            answered = False
    if not any(turn["role"] == "user" for turn in messages):
        yield document.problem(where, "a conversation needs a user turn")
        return
    tools = any(turn["role"] == "tool" or "tool_calls" in turn for turn in messages)
    if tools and "skip" not in raw:
        yield document.problem(where, "holds tool calls, which evalkit cannot send yet; mark the prompt skip: REASON until it can")
    last = messages[-1]["role"]
    if last in ("assistant", "system"):
        yield document.problem(where + (len(messages) - 1,), f"a conversation ends on the user turn the model answers, not on a{'n' if last == 'assistant' else ''} {last} turn")


def single_prompt(messages: list[dict[str, Any]]) -> tuple[str, str | None]:
    """The prompt and system prompt a conversation of system, user and assistant text turns runs
    as, until evalkit sends conversations whole: its last user turn, and its system turns followed
    by the turns before that one under :data:`CONTEXT_HEADING`."""
    last = max(i for i, turn in enumerate(messages) if turn["role"] == "user")
    system = [turn["content"] for turn in messages if turn["role"] == "system"]
    earlier = [f"{_SPEAKERS[turn['role']]}: {turn.get('content', '')}" for turn in messages[:last] if turn["role"] in _SPEAKERS]
    if earlier:
        system.append(CONTEXT_HEADING + "\n" + "\n".join(earlier))
    return messages[last]["content"], "\n\n".join(system) if system else None
