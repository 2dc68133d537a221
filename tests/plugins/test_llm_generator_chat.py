"""The ``llm`` adapter's conversations and tools, through the CLI, against llm test models
registered as an llm plugin: ``toolbot`` (supports tools, plays a script of turns and records
every conversation it is sent) and ``plainbot`` (no tools)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

llm = pytest.importorskip("llm")

SCRIPT: list[Any] = []  # toolbot's turns, in order: text, or a list of (tool name, arguments)
SEEN: list[list[dict[str, Any]]] = []  # the conversation of each toolbot call, as llm messages


class ToolBot(llm.Model):
    """Plays :data:`SCRIPT`, one turn per prompt, and records :data:`SEEN`."""

    model_id = "toolbot"
    supports_tools = True

    def execute(self, prompt, stream, response, conversation) -> Iterator[str]:
        SEEN.append([message.to_dict() for message in prompt.messages])
        SEEN[-1].append({"tools": [tool.name for tool in prompt.tools]})
        turn = SCRIPT.pop(0) if SCRIPT else "done"
        response.set_usage(input=10, output=2)
        if isinstance(turn, str):
            yield turn
            return
        for number, (name, arguments) in enumerate(turn, start=1):
            response.add_tool_call(llm.ToolCall(name=name, arguments=arguments, tool_call_id=f"tc{len(SEEN)}_{number}"))


class PlainBot(llm.Model):
    """A model that takes no tools."""

    model_id = "plainbot"

    def execute(self, prompt, stream, response, conversation) -> Iterator[str]:
        SEEN.append([message.to_dict() for message in prompt.messages])
        yield "plain"


@contextmanager
def registered(*models: llm.Model) -> Iterator[None]:
    """``models`` registered with llm, by a plugin of their own, while the block runs."""

    class Models:
        @llm.hookimpl
        def register_models(self, register) -> None:
            for model in models:
                register(model)

    plugin = Models()
    llm.plugins.pm.register(plugin, name=f"evalkit-test-models-{models[0].model_id}")
    try:
        yield
    finally:
        llm.plugins.pm.unregister(plugin)


@pytest.fixture
def llm_models(monkeypatch, tmp_path):
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    SCRIPT.clear()
    SEEN.clear()
    with registered(ToolBot(), PlainBot()):
        yield


TOOLS = """\
    tools:
      - {type: function, function: {name: get_weather, parameters: {type: object, properties: {city: {type: string}}, required: [city]}}}
      - {type: function, function: {name: get_forecast, parameters: {type: object, properties: {city: {type: string}}}}}
    tool_results:
      - {name: get_weather, arguments: {properties: {city: {const: Paris}}}, result: {temp_c: 18}}
      - {name: get_forecast, result: rain tomorrow}
"""


def write(project, model: str, prompts: str) -> None:
    (project / "evals").mkdir(exist_ok=True)
    (project / "evals" / "agent.yaml").write_text(f"identifier: llm.agent\nname: Agent\nprompts:\n{prompts}")
    (project / "evalkit.toml").write_text(f'privacy = "full"\n\n[sets]\npaths = ["evals/*.yaml"]\n\n[providers.bot]\nadapter = "llm"\nmodel = "{model}"\n')


def case_of(result) -> dict:
    assert result.code in (0, 1), result.stdout + result.stderr
    (case,) = result.json()["cases"]
    return case


def test_an_llm_model_calls_two_tools_answered_from_canned_results(llm_models, project, evalkit_cli) -> None:
    SCRIPT.extend([[("get_weather", {"city": "Paris"})], [("get_forecast", {"city": "Paris"})], "18 °C, rain tomorrow."])
    write(project, "toolbot", f"""\
  - id: weather
    prompt: Weather in Paris, and tomorrow?
    system_prompt: Be brief.
{TOOLS}    assertions:
      - tool_sequence: {{names: [get_weather, get_forecast], strict: true}}
      - contains: rain
""")
    result = evalkit_cli("run", "llm.agent", "--json")
    case = case_of(result)
    assert case["passed"], case
    assert {c["name"]: c["passed"] for c in case["checks"]} == {
        "tool_sequence": True, "contains": True, "max_steps": True, "canned_results": True,
    }  # fmt: skip
    assert case["answer"] == "18 °C, rain tomorrow."
    assert result.json()["identity"]["reported_model"].startswith("toolbot@")
    first, second, third = SEEN
    assert first[-1] == {"tools": ["get_weather", "get_forecast"]}
    assert first[:-1] == [
        {"role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "text": "Weather in Paris, and tomorrow?"}]},
    ]  # fmt: skip
    # the model's own call and the canned result evalkit answered it with, fed back
    assert second[2] == {"role": "assistant", "parts": [{"type": "tool_call", "name": "get_weather", "arguments": {"city": "Paris"}, "tool_call_id": "tc1_1"}]}
    assert second[3]["role"] == "tool" and second[3]["parts"][0]["tool_call_id"] == "tc1_1"
    assert json.loads(second[3]["parts"][0]["output"]) == {"temp_c": 18}
    assert third[5]["parts"][0]["output"] == "rain tomorrow" and len(third) == 7
    shown = evalkit_cli("show", result.json()["run_id"], "--show-all")
    assert "assistant → get_weather" in shown.stdout


def test_an_llm_model_that_keeps_calling_stops_at_max_steps(llm_models, project, evalkit_cli) -> None:
    SCRIPT.extend([[("get_forecast", {"city": "Rome"})]] * 5)
    write(project, "toolbot", f"""\
  - id: forever
    prompt: Keep checking.
    max_steps: 2
{TOOLS}    assertions: [{{tool_called: get_forecast}}]
""")
    case = case_of(evalkit_cli("run", "llm.agent", "--json"))
    assert not case["passed"] and not case["errored"]
    assert {c["name"]: c["passed"] for c in case["checks"]} == {"tool_called": True, "max_steps": False, "canned_results": True}
    assert len(SEEN) == 2


def test_a_scripted_conversation_sends_the_models_replies_back(llm_models, project, evalkit_cli) -> None:
    SCRIPT.extend(["Hello!", "In France."])
    write(project, "toolbot", """\
  - id: chat
    mode: scripted
    messages:
      - {role: user, content: Hi.}
      - {role: user, content: Where is Paris?}
    assertions: [{contains: Hello, turn: 1}, {contains: France}]
""")
    case = case_of(evalkit_cli("run", "llm.agent", "--json"))
    assert case["passed"], case
    assert [[part["text"] for part in message["parts"]] for message in SEEN[1][:-1]] == [["Hi."], ["Hello!"], ["Where is Paris?"]]
    assert [message["role"] for message in SEEN[1][:-1]] == ["user", "assistant", "user"]


def test_tools_for_a_model_without_tool_support_are_refused_before_anything_is_called(llm_models, project, evalkit_cli) -> None:
    write(project, "plainbot", f"""\
  - id: weather
    prompt: Weather?
{TOOLS}    assertions: [{{tool_called: get_weather}}]
""")
    result = evalkit_cli("run", "llm.agent")
    assert result.code == 2, result.stdout + result.stderr
    assert 'the llm model "plainbot"' in result.stderr and "does not support tools" in result.stderr
    assert "Traceback" not in result.stderr and not SEEN
    store = project / ".evalkit" / "results.db"
    if store.exists():
        with sqlite3.connect(store) as connection:
            assert connection.execute("SELECT COUNT(*) FROM evalkit_run").fetchone() == (0,)


def test_a_fixed_conversation_without_tools_reaches_a_model_without_tool_support(llm_models, project, evalkit_cli) -> None:
    write(project, "plainbot", """\
  - id: chat
    messages:
      - {role: user, content: Hi.}
      - {role: assistant, content: Hello.}
      - {role: user, content: Bye.}
    assertions: [{contains: plain}]
""")
    case = case_of(evalkit_cli("run", "llm.agent", "--json"))
    assert case["passed"], case
    assert [message["role"] for message in SEEN[0]] == ["user", "assistant", "user"]


def test_a_tool_choice_other_than_auto_is_refused_before_the_llm_model_is_asked(llm_models, project, evalkit_cli) -> None:
    write(project, "toolbot", f"""\
  - id: weather
    prompt: Weather in Paris?
    tool_choice: get_weather
{TOOLS}    assertions: [{{tool_called: get_weather}}]
""")
    result = evalkit_cli("run", "llm.agent")
    assert result.code == 2, result.stdout + result.stderr
    assert 'sets tool_choice (prompt "weather")' in result.stderr and "only tool_choice auto" in result.stderr
    assert SEEN == [] and not (project / ".evalkit").exists()


class WindowsBot(llm.Model):
    """A model whose id is a model file's Windows path: what a local server on Windows may name."""

    model_id = "C:\\models\\winbot.gguf"

    def execute(self, prompt, stream, response, conversation) -> Iterator[str]:
        yield "plain"


def test_the_llm_adapters_reported_model_keeps_the_identity_rules_characters(llm_models, project, evalkit_cli) -> None:
    # the adapter builds the reported model from llm's model id and the plugin: the one identity rule
    # decides what stays (a Windows path's backslashes) and what is replaced, so the run is verified
    with registered(WindowsBot()):
        write(project, "C:\\\\models\\\\winbot.gguf", "  - id: one\n    prompt: Hi.\n    assertions: [{contains: plain}]\n")
        result = evalkit_cli("run", "llm.agent", "--json")
    assert result.code == 0, result.stdout + result.stderr
    document = result.json()
    assert document["verified"], document["identity_note"]
    assert document["cases"][0]["identity"]["reported_model"].startswith("C:\\models\\winbot.gguf@")


USAGES: list[dict[str, Any]] = []  # countbot's usage per prompt, in order (then 10 in, 2 out)


class CountBot(llm.Model):
    """A model whose plugin reports the token counts of :data:`USAGES`, one per prompt."""

    model_id = "countbot"

    def execute(self, prompt, stream, response, conversation) -> Iterator[str]:
        response.set_usage(**(USAGES.pop(0) if USAGES else {"input": 10, "output": 2}))
        yield "4"


@pytest.mark.parametrize(
    ("usage", "first"),
    [
        ({"input": 10**400, "output": 7}, "input of about 1e400, not a whole number from 0 below 2**63"),
        ({"input": 5, "output": -1}, "output -1, not a whole number from 0 below 2**63"),
        ({"input": "5", "output": 7}, "input '5', not a whole number from 0 below 2**63"),
        ({"input": 12.0, "output": True}, "input 12.0, not a whole number from 0 below 2**63"),
    ],
)
def test_an_llm_token_count_past_what_can_be_counted_sets_the_replys_whole_usage_aside_and_says_so(
    usage, first, llm_models, project, evalkit_cli
) -> None:
    """An llm plugin reporting 10**400 input tokens errored the case (the answer's usage broke the
    kernel's rule), where the openai adapter sets such a usage aside and says so: now one rule."""
    USAGES[:] = [usage, usage]
    prompts = "".join(f"  - id: q{n}\n    prompt: 2+2?\n    assertions: [{{contains: '4'}}]\n" for n in range(3))
    with registered(CountBot()):
        write(project, "countbot", prompts)
        result = evalkit_cli("run", "llm.agent", "--json")
    assert result.code == 0, result.stdout + result.stderr
    document = result.json()
    assert [case["errored"] for case in document["cases"]] == [False, False, False], document["cases"]
    assert [case["usage"] for case in document["cases"]][:2] == [None, None]
    assert document["spend"]["generator"]["usage_unreported"] == 2
    assert document["spend"]["generator"]["prompt_tokens"] == 10 and document["spend"]["generator"]["completion_tokens"] == 2
    note = (
        f'2 replies from the llm model "countbot" reported a usage evalkit cannot count (the first: {first}): '
        "each such reply's usage is counted as unreported, its prompt and completion tokens alike, and its cost is unknown"
    )
    assert note in document["notes"], document["notes"]


def test_a_conversation_with_a_turn_whose_usage_is_unknown_has_an_unknown_usage_and_cost(llm_models, project, evalkit_cli) -> None:
    """A conversation's usage was the sum of the turns that reported one: a turn whose usage was
    set aside (or never reported) counted as 0 tokens, so the case read as fully reported and the
    run's cost was a figure below what was spent, while its note said the cost was unknown."""
    USAGES[:] = [{"input": -1, "output": 7}]  # the first turn's usage is set aside, the second's is 10 + 2
    with registered(CountBot()):
        write(project, "countbot", """\
  - id: chat
    mode: scripted
    messages:
      - {role: user, content: Hi.}
      - {role: user, content: 2+2?}
    assertions: [{contains: '4'}]
""")
        with (project / "evalkit.toml").open("a") as config:
            config.write('price_per_million_input = 1000\nprice_per_million_output = 2000\ncurrency = "EUR"\n')
        result = evalkit_cli("run", "llm.agent", "--json")
    case = case_of(result)
    assert not case["errored"] and case["usage"] is None, case["usage"]
    spend = result.json()["spend"]
    assert spend["generator"]["usage_unreported"] == 2 and spend["cost"] is None, spend  # both turns: the case's usage is unknown
