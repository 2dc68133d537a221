"""Conversations and tools in the kernel, without the CLI: the Python form of a golden prompt, the
loop of converse() against canned results and max_steps, the tool checks, the rules and fingerprints."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from evalkit import Answer, Assertion, GoldenPrompt, GoldenPromptSet
from evalkit.answers import Turn
from evalkit.conversations import ConversationMode, Message, ToolCall
from evalkit.errors import SetValidationError
from evalkit.run.answering.conversation import converse
from evalkit.set_versions import case_fingerprint
from evalkit.validation import validate_prompt_set
from evalkit_plugins.deterministic import DeterministicGrader

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "get_forecast", "parameters": {"type": "object"}}},
]
CANNED = [
    {"name": "get_weather", "arguments": {"properties": {"city": {"const": "Paris"}}}, "result": {"temp_c": 18}},
    {"name": "get_forecast", "result": "rain"},
]


def agent(*assertions: Assertion, max_steps: int | None = None) -> GoldenPrompt:
    return GoldenPrompt(id="agent", prompt="Weather?", tools=TOOLS, tool_results=CANNED, max_steps=max_steps, assertions=assertions)


def played(*turns: Turn):  # noqa: ANN202 - the TurnCall converse() awaits
    """A generator's turns in order, the requests it was sent kept on the function."""
    queue = list(turns)

    async def call(request):  # noqa: ANN001, ANN202
        call.requests.append(request)
        return queue.pop(0) if len(queue) > 1 else queue[0]

    call.requests = []
    return call


def grade(prompt: GoldenPrompt, answer: Answer) -> dict[str, bool]:
    return {check.name: check.passed for check in DeterministicGrader().grade(prompt, answer).checks}


def test_an_agent_calls_two_tools_in_order_and_every_tool_check_reads_its_calls() -> None:
    call = played(
        Turn(None, [ToolCall("get_weather", {"city": "Paris"}, "c1")]),
        Turn(None, [ToolCall("get_forecast", {"days": 1}, "c2")]),
        Turn("18 °C, rain tomorrow."),
    )
    prompt = agent(
        Assertion.tool_called("get_weather"), Assertion.tool_not_called("send_email", name="no_mail"),
        Assertion.tool_args("get_forecast", {"required": ["days"]}), Assertion.tool_sequence(["get_weather", "get_forecast"], strict=True),
        Assertion.max_tool_calls(2), Assertion.contains("rain"),
    )  # fmt: skip
    answered = asyncio.run(converse(prompt, call, "Base.", {"model": "m"}))
    assert answered.answer.text == "18 °C, rain tomorrow."
    assert [m.role for m in answered.answer.transcript] == ["assistant", "tool", "assistant", "tool", "assistant"]
    assert answered.answer.transcript[1].content == '{"temp_c":18}'
    assert {c.name: c.passed for c in answered.checks} == {"max_steps": True, "canned_results": True}
    assert call.requests[0].messages[0] == Message.system("Base.")
    assert grade(prompt, answered.answer) == {
        "tool_called": True, "no_mail": True, "tool_args": True, "tool_sequence": True, "max_tool_calls": True, "contains": True,
    }  # fmt: skip
    fewer = agent(Assertion.max_tool_calls(1), Assertion.tool_sequence(["get_forecast", "get_weather"]))
    assert grade(fewer, answered.answer) == {"max_tool_calls": False, "tool_sequence": False}


def test_a_loop_that_never_replies_stops_at_max_steps_and_an_unmatched_call_gets_an_error_result() -> None:
    call = played(Turn(None, [ToolCall("get_weather", {"city": "Rome"}, "c1")]))
    answered = asyncio.run(converse(agent(max_steps=3), call, None, {}))
    assert len(call.requests) == 3 and answered.answer.text == ""
    checks = {c.name: c for c in answered.checks}
    assert not checks["max_steps"].passed and not checks["canned_results"].passed
    assert "no canned result for get_weather with these arguments" in answered.answer.transcript[1].content


def test_a_scripted_conversation_feeds_replies_back_and_a_check_reads_one_reply() -> None:
    prompt = GoldenPrompt(
        id="s", mode=ConversationMode.SCRIPTED,
        messages=[Message.system("Tutor."), Message.user("Hi."), Message.user("Where is Paris?")],
        assertions=[Assertion.contains("Hello").at_turn(1), Assertion.contains("France").at_turn(2)],
    )  # fmt: skip
    call = played(Turn("Hello!"), Turn("In Germany."))
    answered = asyncio.run(converse(prompt, call, None, {}))
    assert [m.role for m in call.requests[1].messages] == ["system", "user", "assistant", "user"]
    assert grade(prompt, answered.answer) == {"contains@turn1": True, "contains@turn2": False}


def test_the_rules_refuse_a_conversation_ending_on_an_assistant_turn_and_an_undeclared_tool() -> None:
    ends = GoldenPrompt(id="e", messages=[Message.user("Hi."), Message.assistant("Hello!")], assertions=[Assertion.contains("x")])
    stray = GoldenPrompt(id="t", prompt="Hi.", assertions=[Assertion.tool_called("get_weather")])
    with pytest.raises(SetValidationError) as refused:
        validate_prompt_set(GoldenPromptSet("chat.bad", "Bad", prompts=[ends, stray]))
    text = str(refused.value)
    assert "not on an assistant turn" in text and "the prompt declares no tools" in text


def test_a_plain_prompts_fingerprint_ignores_the_new_fields_and_an_edited_turn_is_an_edited_case() -> None:
    plain = GoldenPrompt(id="p", prompt="Hi.", assertions=[Assertion.contains("x")])
    assert case_fingerprint(plain) == case_fingerprint(attrs.evolve(plain, messages=(), tools=(), tool_results=()))
    talk = GoldenPrompt(id="c", messages=[Message.user("Hi."), Message.assistant("Hello!"), Message.user("Bye.")], assertions=[Assertion.contains("x")])
    edited = attrs.evolve(talk, messages=[Message.user("Hi."), Message.assistant("Hey!"), Message.user("Bye.")])
    assert case_fingerprint(talk) != case_fingerprint(edited) != case_fingerprint(plain)
    assert case_fingerprint(agent()) != case_fingerprint(attrs.evolve(agent(), tool_results=CANNED[:1]))


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"city": "Paris", "days": 2}', {"city": "Paris", "days": 2}),
        # not JSON: kept as the model sent it, so a tool_args check fails on the text, and no NaN
        # reaches the check, the turn sent back or the store
        ('{"days": NaN}', '{"days": NaN}'),
        ('{"days": -Infinity}', '{"days": -Infinity}'),
        ('{"days": 1e400}', '{"days": 1e400}'),
        # deeper than json.loads follows: text too, not a RecursionError out of the run
        ("[" * 100_000, "[" * 100_000),
    ],
    ids=["json", "nan", "minus-infinity", "out-of-range", "too-deep"],
)
def test_a_tool_calls_argument_text_is_parsed_only_when_it_is_json(arguments: str, expected: object) -> None:
    assert ToolCall("get_weather", arguments).arguments == expected


NAN, INF = float("nan"), float("inf")


def test_a_nan_or_an_infinity_in_a_python_sets_free_form_values_is_a_problem_naming_its_place() -> None:
    """A set written in Python is held to the rule a set file is: no NaN reaches the model or the store."""
    canned = [{"name": "get_weather", "result": {"temp_c": NAN, "days": [1, INF]}}, CANNED[1]]
    history = [
        Message.user("Weather?"),
        # a key that is no plain name is shown in brackets, with no dot before it
        Message.assistant(tool_calls=[ToolCall("get_weather", {"city": "Paris", "days ahead": -INF}, "c1")]),
        Message.tool("c1", "18 C"),
        Message.user("And tomorrow?"),
    ]
    prompts = [
        attrs.evolve(agent(Assertion.contains("18")), tool_results=canned),
        GoldenPrompt(id="history", messages=history, tools=TOOLS, assertions=[Assertion.contains("x")]),
        GoldenPrompt(id="value", prompt="Hi", reference="x", assertions=[Assertion("contains_any", ("x", NAN))]),
    ]
    with pytest.raises(SetValidationError) as refused:
        validate_prompt_set(GoldenPromptSet("chat.nan", "NaN", prompts=prompts))
    assert list(refused.value.problems) == [
        'set "chat.nan", prompt "agent": field tool_results[0].result.temp_c: NaN is not a number JSON can carry',
        "set \"chat.nan\", prompt \"history\": field messages[1].tool_calls[0].arguments['days ahead']: -Infinity is not a number JSON can carry",
        'set "chat.nan", prompt "value": field assertions[1] (contains_any): its value holds NaN at [1], which is not a number JSON can carry',
    ]


def test_a_generators_turn_whose_tool_call_arguments_hold_nan_is_an_error_not_a_request() -> None:
    """A Python generator may hand back a float it made: the turn is refused before it is sent back
    to the model, checked or stored."""
    from evalkit.errors import GenerationError

    call = played(Turn(tool_calls=[ToolCall("get_weather", {"city": "Paris", "days": [1, NAN]}, "c1")]), Turn(text="18"))
    with pytest.raises(GenerationError) as failed:
        asyncio.run(converse(agent(), call, None, {}))
    assert str(failed.value) == (
        "the generator returned a turn evalkit cannot use: tool call 1 (get_weather): "
        "the value of its arguments holds NaN at days[1], which is not a number JSON can carry"
    )
    assert len(call.requests) == 1


def test_a_canned_result_holding_nan_in_a_set_run_unvalidated_is_an_error_not_nan_sent() -> None:
    from evalkit.conversations import CannedResult
    from evalkit.errors import GenerationError
    from evalkit.jsontext import NotJsonNumber

    with pytest.raises(NotJsonNumber, match="holds NaN at temp_c"):
        CannedResult("get_weather", {"temp_c": NAN}).content()
    prompt = attrs.evolve(agent(), tool_results=[{"name": "get_weather", "result": {"temp_c": NAN}}])
    call = played(Turn(tool_calls=[ToolCall("get_weather", {"city": "Paris"}, "c1")]), Turn(text="18"))
    with pytest.raises(GenerationError, match="the canned result of get_weather cannot be sent to the model: it holds NaN at temp_c"):
        asyncio.run(converse(prompt, call, None, {}))
    assert len(call.requests) == 1


def test_a_tool_calls_arguments_are_sent_strictly_and_shown_as_the_store_writes_them() -> None:
    from evalkit.jsontext import NotJsonNumber

    call = ToolCall("t", {"a": [1.5, INF]})
    assert call.arguments_text() == '{"a":[1.5,null]}'
    with pytest.raises(NotJsonNumber, match=r"holds Infinity at a\[1\]"):
        call.sent_arguments()
    assert ToolCall("t", {"a": "é"}).sent_arguments() == '{"a":"é"}' and ToolCall("t", "raw").sent_arguments() == "raw"


@pytest.mark.parametrize(
    ("turn", "problem"),
    [
        (Turn(text="18", usage={"prompt_tokens": -1, "completion_tokens": 2}), "usage input_tokens must be a whole number from 0 or None, got -1"),
        (Turn(text="18", usage={"prompt_tokens": 10**5000}), "usage input_tokens must be a whole number from 0 or None, got (not shown: repr() raised ValueError)"),
        (Turn(text="18", model=42), "model must be text or None, got 42"),  # type: ignore[arg-type]
        (Turn(text="18", model="m" * 1001), "model is 1,001 characters long, more than the 1,000 allowed"),
    ],
)
def test_a_generators_turn_is_held_to_the_rule_of_a_plain_answer(turn: Turn, problem: str) -> None:
    """A plain answer's usage of -1 tokens, or a model that is no text, errs its case (the kernel's
    answer_problems); a chat generator's turn carrying the same went unchecked into the stored
    case (a usage of 10**5000 tokens cannot even be written as a number)."""
    from evalkit.errors import GenerationError

    with pytest.raises(GenerationError) as failed:
        asyncio.run(converse(agent(), played(turn), None, {}))
    assert str(failed.value) == f"the generator returned a turn evalkit cannot use: {problem}"
