"""Conversations (``messages``) and ``skip`` in set files, read ahead of the runs that send them whole."""

from __future__ import annotations

from pathlib import Path

from evalkit.setfiles import load_set_files
from evalkit.setfiles.conversations import CONTEXT_HEADING

CONVERSATION = """\
identifier: chat.support
name: Support
prompts:
  - id: lamp
    mode: fixed
    messages:
      - {role: system, content: You are the shop's assistant.}
      - {role: user, content: I bought a lamp.}
      - {role: assistant, content: Which order?}
      - {role: user, content: A-1234. Can I return it?}
    assertions: [{contains: "30 days"}]
  - id: weather
    messages:
      - {role: user, content: Weather in Paris?}
      - role: assistant
        tool_calls: [{id: call_1, name: get_weather, arguments: {city: Paris}}]
      - {role: tool, tool_call_id: call_1, name: get_weather, content: '{"temp": 18}'}
    skip: holds tool calls
    reference: 18 degrees.
"""


def test_a_conversation_runs_as_its_last_user_turn_with_the_earlier_turns_as_context(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    path.write_text(CONVERSATION)
    loaded = load_set_files([path], root=tmp_path)
    assert loaded.problems == ()
    (golden,) = loaded.prompt_sets
    (lamp,) = golden.prompts  # the skipped one is kept out of the set
    assert lamp.prompt == "A-1234. Can I return it?"
    assert lamp.system_prompt == f"You are the shop's assistant.\n\n{CONTEXT_HEADING}\nUser: I bought a lamp.\nAssistant: Which order?"
    (skipped,) = loaded.skipped
    assert str(skipped) == "chat.yaml:12: prompts[1] 'weather': holds tool calls"


def test_turn_order_mistakes_are_named_at_their_turn(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("""\
identifier: chat.bad
name: Bad
prompts:
  - id: a
    prompt: x
    system_prompt: y
    messages:
      - {role: user, content: hi}
      - {role: system, content: late}
      - {role: assistant}
    reference: r
  - id: b
    messages:
      - {role: user, content: Weather?}
      - {role: tool, tool_call_id: call_1, content: x}
      - role: assistant
        tool_calls: [{id: call_1, name: get_weather}]
      - {role: tool, tool_call_id: call_2, content: x}
    reference: r
  - id: c
    messages: [{role: system, content: only}]
    reference: r
""")
    assert [str(p) for p in load_set_files([path], root=tmp_path).problems] == [
        "bad.yaml:5:13: prompt 'a': prompt: a prompt has either prompt or messages, not both",
        "bad.yaml:6:20: prompt 'a': system_prompt: a conversation's system prompt is its first turn: {role: system, content: ...}",
        "bad.yaml:9:9: prompt 'a': messages[1]: a system turn comes before every other turn",
        "bad.yaml:10:9: prompt 'a': messages[2]: an assistant turn needs content or tool_calls",
        "bad.yaml:10:9: prompt 'a': messages[2]: a conversation ends on the user turn the model answers, not on an assistant turn",
        "bad.yaml:14:7: prompt 'b': messages: holds tool calls, which evalkit cannot send yet; mark the prompt skip: REASON until it can",
        "bad.yaml:15:9: prompt 'b': messages[1]: a tool turn answers a tool call of the assistant turn before it",
        "bad.yaml:18:9: prompt 'b': messages[3]: a tool turn names, as tool_call_id, the id of a tool call of the assistant turn before it",
        "bad.yaml:21:15: prompt 'c': messages: a conversation needs a user turn",
    ]


def test_a_set_whose_every_prompt_is_skipped_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "skipped.yaml"
    path.write_text("identifier: a.b\nname: N\nprompts:\n  - {id: p, prompt: q, reference: r, skip: not yet}\n")
    (problem,) = load_set_files([path], root=tmp_path).problems
    assert "prompts must hold at least one prompt" in str(problem)


def test_a_conversation_on_the_first_line_of_a_jsonl_file_is_a_prompt_not_the_header(tmp_path: Path) -> None:
    import json

    path = tmp_path / "chat.support.jsonl"
    path.write_text(json.dumps({"id": "c", "messages": [{"role": "user", "content": "hi"}], "reference": "hello"}) + "\n")
    loaded = load_set_files([path], root=tmp_path)
    assert loaded.problems == ()
    assert [(s.identifier, [p.prompt for p in s.prompts]) for s in loaded.prompt_sets] == [("chat.support", ["hi"])]
