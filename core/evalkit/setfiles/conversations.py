"""Conversations and tools in set files: the kernel's rules (:mod:`evalkit.conversation_rules`)
placed at their lines.

::

    - id: return-a-lamp
      mode: fixed                       # the model answers the last user turn of a fixed history
      messages:
        - {role: system, content: You are the shop's assistant.}
        - {role: user, content: I bought a lamp last week.}
        - {role: assistant, content: Which order is it?}
        - {role: user, content: A-1234. Can I still return it?}
      assertions: [{contains: "30 days"}]

A conversation is sent whole, turn by turn, to a generator that can take turns (see
:class:`evalkit.components.ChatGenerator`); ``mode: scripted`` sends each user turn in order and
feeds the model's replies back; ``tools`` and ``tool_results`` run the agent loop against canned
results. The rules — turn order, a conversation ending on the user turn it asks about, ``turn: N``
within the replies, tool schemas that are JSON Schemas, canned results naming declared tools — are
the kernel's, so a set written in Python is held to the same ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..conversation_rules import conversation_problems as prompt_problems
from ..conversation_rules import is_conversation_prompt
from ..prompts import GoldenPrompt
from .documents import SetDocument
from .problems import FileProblem, JsonPath

__all__ = ["conversation_problems"]

#: The keys that make a prompt object one the conversation rules are about.
_CONVERSATION_KEYS = ("messages", "mode", "tools", "tool_results", "max_steps", "tool_choice")


def conversation_problems(
    document: SetDocument, at: JsonPath, raw: dict[str, Any], build: Callable[[dict[str, Any]], GoldenPrompt]
) -> Iterator[FileProblem]:
    """The conversation rules of the prompt object ``raw`` at ``at`` (built into a golden prompt by
    ``build``), each at its JSON path; nothing for a template. The caller leaves out a prompt the
    schema already reported a part of (one mistake is reported once)."""
    if "template" in raw or not isinstance(raw.get("id"), str):
        return
    uses = any(key in raw for key in _CONVERSATION_KEYS) or any(
        isinstance(a, dict) and ("turn" in a or any(k.startswith(("tool_", "max_tool")) for k in a)) for a in raw.get("assertions", ())
    )
    if not uses:
        return
    prompt = build(raw)
    if not is_conversation_prompt(prompt):
        return
    for path, reason in prompt_problems(prompt):
        yield document.problem(at + path, reason)
