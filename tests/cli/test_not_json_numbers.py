"""``NaN``, ``Infinity``, ``-Infinity`` and numbers past a float (``1e400``) are not JSON (RFC 8259),
though Python's ``json.loads`` reads them: in a set file, a replay answer file or an endpoint's
reply they are the reader's "not JSON" problem at their line and column, never a value that
reaches a check, the model, the store or a ``--json`` document."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_openai_runs import KEY, arithmetic, cases, configure, runs
from tests.cli.test_set_files_cmd import project_with, stored_runs
from tests.support.chat_server import Fault

#: A set file main read without a word (tool_results' result is free-form JSON) and ran: the tool
#: turn sent to the model and stored said ``{"temp_c":NaN,...}``.
WEATHER = """\
{
  "identifier": "nan.weather",
  "name": "Weather",
  "prompts": [
    {
      "id": "agent",
      "prompt": "Weather in Paris?",
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
      "tool_results": [{"name": "get_weather", "result": {"temp_c": @}}],
      "assertions": [{"tool_called": "get_weather"}, {"contains": "18"}]
    }
  ]
}
"""

#: Other places a value may stand: a JSON Schema, an assertion's value, a number where the schema
#: wants one, an item of a list.
ARITH = """\
{"identifier": "nan.arith", "name": "Arithmetic", "prompts": [
  {"id": "a", "prompt": "2+2?", "reference": "4", "assertions": [{"contains": "4"}]},
  {"id": "b", "prompt": "Give JSON.", "reference": "{}",
   "assertions": [{"json_schema": {"type": "object", "properties": {"n": {"maximum": @}}}}]},
  {"id": "c", "prompt": "3+3?", "reference": "6", "assertions": [{"max_words": @}]},
  {"id": "d", "prompt": "Pick one.", "reference": "5", "assertions": [{"json_schema": {"enum": [1, @]}}]}
]}
"""

VALUES = ["NaN", "Infinity", "-Infinity", "1e400", "-2.5E999"]


def reason(value: str) -> str:
    return f"{value} is not JSON" if "Infinity" in value or value == "NaN" else f"the number {value} is out of range"


def position(text: str, value: str, nth: int = 0) -> tuple[int, int]:
    """Line and column of the ``nth`` ``value`` in ``text`` (1-based, as the problem names them)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(value, at + 1)
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def assert_refused(result, file: str, line: int, column: int, why: str) -> None:  # noqa: ANN001
    assert result.code == 2, result.stdout + result.stderr
    assert f"{file}:{line}:{column}: JSON syntax: {why}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize(("template", "identifier"), [(WEATHER, "nan.weather"), (ARITH, "nan.arith")], ids=["tool-result", "assertions"])
def test_a_json_set_file_with_nan_or_an_infinity_is_refused_at_the_value_and_nothing_is_stored(
    evalkit_cli, project: Path, value: str, template: str, identifier: str
) -> None:
    text = template.replace("@", value)
    project_with(project, {"set.json": text}, paths='["evals/*.json"]')
    line, column = position(text, value)
    validated = evalkit_cli("validate", "evals/set.json")
    assert_refused(validated, "evals/set.json", line, column, reason(value))
    as_json = evalkit_cli("validate", "evals/set.json", "--json")
    assert as_json.code == 2
    (problem,) = as_json.json()["problems"]
    assert (problem["file"], problem["line"], problem["column"], problem["reason"]) == (
        "evals/set.json", line, column, f"JSON syntax: {reason(value)}"
    )
    run = evalkit_cli("run", identifier, "--json")
    assert_refused(run, "evals/set.json", line, column, reason(value))
    assert "the set files are invalid" in run.stderr
    assert stored_runs(project) == 0
    assert evalkit_cli("run", "evalkit.smoke").code == 0 and stored_runs(project) == 1  # the store itself is fine


def test_the_same_set_without_them_runs(evalkit_cli, project: Path) -> None:
    """The files above fail for the value alone: with finite numbers the same text runs."""
    project_with(project, {"set.json": ARITH.replace("@", "5")}, paths='["evals/*.json"]')
    run = evalkit_cli("run", "nan.arith", "--json")
    assert run.code == 0, run.stdout + run.stderr
    assert {case["id"] for case in run.json()["cases"]} == {"a", "b", "c", "d"} and stored_runs(project) == 1


def test_every_line_of_a_json_lines_set_file_holding_one_is_named(evalkit_cli, project: Path) -> None:
    lines = [
        '{"identifier": "nan.lines", "name": "Lines"}',
        '{"id": "a", "prompt": "2+2?", "reference": "4", "assertions": [{"contains": "4"}]}',
        '{"id": "b", "prompt": "3+3?", "reference": "6", "assertions": [{"max_words": -Infinity}]}',
        '{"id": "c", "prompt": "4+4?", "reference": "8", "assertions": [{"kind": "contains", "value": "8", "weight": NaN}]}',
        '{"id": "d", "prompt": "NaN or Infinity?", "reference": "NaN", "assertions": [{"contains": "Infinity"}, {"max_words": 1e999}]}',
    ]
    text = "\n".join(lines) + "\n"
    project_with(project, {"set.jsonl": text}, paths='["evals/*.jsonl"]')
    expected = [
        ("evals/set.jsonl", 3, lines[2].index("-Infinity") + 1, "-Infinity is not JSON"),
        ("evals/set.jsonl", 4, lines[3].index("NaN") + 1, "NaN is not JSON"),
        ("evals/set.jsonl", 5, lines[4].index("1e999") + 1, "the number 1e999 is out of range"),
    ]
    for result in (evalkit_cli("validate", "evals/set.jsonl"), evalkit_cli("run", "nan.lines")):
        for file, line, column, why in expected:
            assert_refused(result, file, line, column, why)
        assert "3 problems" in result.stderr
    assert stored_runs(project) == 0


def test_a_replay_answer_file_holding_nan_names_its_line(evalkit_cli, project: Path) -> None:
    """Recorded tool-call arguments went into the transcript as a NaN."""
    project_with(project, {"set.json": WEATHER.replace("@", "18")}, paths='["evals/*.json"]')
    (project / "evalkit.toml").write_text(
        (project / "evalkit.toml").read_text() + '[providers.rec]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "rec-1"\n'
    )
    call = '{"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris", "days": NaN}}]}'
    (project / "answers.jsonl").write_text('{"id": "agent", "turns": [' + call + ', {"text": "18 C now."}]}\n')
    result = evalkit_cli("run", "nan.weather", "--provider", "rec")
    assert result.code == 2, result.stdout + result.stderr
    assert "replay file" in result.stderr and "answers.jsonl, line 1: not JSON (NaN is not JSON" in result.stderr, result.stderr
    assert stored_runs(project) == 0
    (project / "answers.jsonl").write_text((project / "answers.jsonl").read_text().replace("NaN", "1"))
    assert evalkit_cli("run", "nan.weather", "--provider", "rec").code == 0 and stored_runs(project) == 1


NAN_USAGE = (
    b'{"id":"x","object":"chat.completion","model":"gpt-test","choices":[{"index":0,"finish_reason":"stop",'
    b'"message":{"role":"assistant","content":"4"}}],"usage":{"prompt_tokens":NaN,"completion_tokens":1,"total_tokens":Infinity}}'
)
NAN_ARGUMENTS = (
    b'{"id":"x","object":"chat.completion","model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",'
    b'"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
    b'"function":{"name":"get_weather","arguments":{"days":-Infinity}}}]}}]}'
)


@pytest.mark.parametrize("body", [NAN_USAGE, NAN_ARGUMENTS], ids=["usage", "tool-arguments"])
def test_an_endpoint_reply_holding_nan_is_an_errored_case_and_no_nan_is_stored(evalkit_cli, project, chat_server, body) -> None:
    """An OpenAI-compatible reply is JSON or it is not: one with NaN is the same unusable reply as
    any other body that is not JSON (an errored case showing what came back), not a crash, and no
    NaN reaches the store."""
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    chat_server.fail_at(2, Fault.garbage(body))  # the first request is the readiness probe
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", "--json", env=env)
    assert result.code == 3, result.stdout + result.stderr
    document = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"{name} in --json"))
    (errored,) = [case for case in document["cases"] if case["errored"]]
    assert "answered HTTP 200 with a body that is not JSON (not retried)" in errored["error"], errored["error"]
    (row,) = runs(project)
    assert row["errored_count"] == 1
    strict = {"parse_constant": lambda name: pytest.fail(f"{name} in the store")}
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        texts = conn.execute("select checks, detail, measures, usage, transcript, judge_usage from evalkit_case").fetchall()
        texts += conn.execute("select metrics, provenance, pricing, spend, generator_provenance from evalkit_run").fetchall()
    for text in (value for row in texts for value in row if value is not None):
        json.loads(text, **strict)
    assert len(cases(project, row["id"])) == 6
    assert KEY not in result.stdout + result.stderr


# --- YAML's .nan and .inf, TOML's nan and inf, and a Python set's floats --------------------------
# They read as floats, not as a syntax problem: the rule every free-form value of a set crosses
# (evalkit.shapes.value_fault) refuses them, naming the file, line, prompt and field.

YAML_SET = """\
identifier: nan.yaml
name: Weather
prompts:
  - id: agent
    prompt: Weather in Paris?
    tools:
      - {type: function, function: {name: get_weather, parameters: {type: object}}}
    tool_results:
      - name: get_weather
        result: {temp_c: .nan, wind: [3, .inf]}
    assertions:
      - tool_called: get_weather
      - contains: "18"
  - id: schema
    prompt: Give JSON.
    reference: "{}"
    assertions:
      - json_schema: {type: object, properties: {n: {maximum: .NaN}}}
      - {kind: contains_any, value: [-.inf]}
  - id: history
    tools:
      - {type: function, function: {name: get_weather, parameters: {type: object}}}
    messages:
      - {role: user, content: Weather?}
      - role: assistant
        tool_calls: [{id: c1, name: get_weather, arguments: {city: Paris, days: .Inf}}]
      - {role: tool, tool_call_id: c1, content: "18 C"}
      - {role: user, content: And tomorrow?}
    assertions: [{contains: "x"}]
"""

TOML_SET = """\
identifier = "nan.toml"
name = "Weather"

[[prompts]]
id = "agent"
prompt = "Weather in Paris?"
tools = [{type = "function", function = {name = "get_weather", parameters = {type = "object"}}}]
tool_results = [{name = "get_weather", result = {temp_c = nan}}]
assertions = [{tool_called = "get_weather"}]

[[prompts]]
id = "schema"
prompt = "Give JSON."
reference = "{}"
assertions = [{json_schema = {type = "object", properties = {n = {minimum = -inf}}}}, {kind = "contains_any", value = [+inf]}]
"""

YAML_PROBLEMS = [
    "evals/set.yaml:10:26: prompt 'agent': tool_results[0].result.temp_c: NaN is not a number JSON can carry",
    "evals/set.yaml:18:63: prompt 'schema': assertions[0].json_schema.properties.n.maximum: NaN is not a number JSON can carry",
    "evals/set.yaml:19:38: prompt 'schema': assertions[1].value[0]: -Infinity is not a number JSON can carry",
    "evals/set.yaml:26:81: prompt 'history': messages[1].tool_calls[0].arguments.days: Infinity is not a number JSON can carry",
]
TOML_PROBLEMS = [  # TOML's reader gives the line of each value
    "evals/set.toml:8:1: prompt 'agent': tool_results[0].result.temp_c: NaN is not a number JSON can carry",
    "evals/set.toml:15:1: prompt 'schema': assertions[0].json_schema.properties.n.minimum: -Infinity is not a number JSON can carry",
    "evals/set.toml:15:1: prompt 'schema': assertions[1].value[0]: Infinity is not a number JSON can carry",
]


@pytest.mark.parametrize(
    ("name", "text", "identifier", "problems"),
    [("set.yaml", YAML_SET, "nan.yaml", YAML_PROBLEMS), ("set.toml", TOML_SET, "nan.toml", TOML_PROBLEMS)],
    ids=["yaml", "toml"],
)
def test_nan_and_infinities_in_a_yaml_or_toml_set_file_are_refused_naming_file_prompt_and_field(
    evalkit_cli, project: Path, name: str, text: str, identifier: str, problems: list[str]
) -> None:
    """Before: validate said nothing of the tool result and the run sent {"temp_c":NaN} to the model."""
    project_with(project, {name: text}, paths=f'["evals/{name}"]')
    validated = evalkit_cli("validate", f"evals/{name}")
    assert validated.code == 2, validated.stdout + validated.stderr
    shown = [line for line in validated.stderr.splitlines() if line.startswith("evals/")]
    assert shown == problems, validated.stderr
    as_json = evalkit_cli("validate", f"evals/{name}", "--json")
    assert as_json.code == 2
    fields = [line.split(": ")[2] for line in problems]  # prompts[N].FIELD, the prompt named by its id above
    assert [p["path"].split(".", 1)[1] for p in as_json.json()["problems"]] == fields
    run = evalkit_cli("run", identifier, "--json")
    assert run.code == 2, run.stdout + run.stderr
    assert "the set files are invalid" in run.stderr and all(problem in run.stderr for problem in problems)
    assert "Traceback" not in run.stderr and stored_runs(project) == 0
    fixed = text.replace("-.inf", '"x"').replace("[+inf]", '["x"]')
    for word in (".nan", ".NaN", ".inf", ".Inf", "-inf", "nan"):
        fixed = fixed.replace(f" {word}", " 18").replace(f"[{word}", "[18")
    project_with(project, {name: fixed}, paths=f'["evals/{name}"]')
    assert evalkit_cli("validate", f"evals/{name}").code == 0  # the values alone were the problems


def test_a_python_sets_nan_in_a_free_form_value_is_refused_by_name(evalkit_cli, project: Path, plugin_dists) -> None:
    """A set from a provider holds the floats it was built with: validate and run name the set,
    the prompt and the field, and nothing is run or stored."""
    env = {"PYTHONPATH": plugin_dists("evalkit-hostile-sets"), "EVALKIT_HOSTILE_NAN": "1"}
    problems = [
        'set "hostile.nan_values", prompt "result": field tool_results[0].result.temp_c: NaN is not a number JSON can carry',
        'set "hostile.nan_values", prompt "value": field assertions[1] (json_schema): its value holds Infinity at '
        "properties.n.maximum, which is not a number JSON can carry",
        'set "hostile.nan_values", prompt "history": field messages[1].tool_calls[0].arguments.days[1]: -Infinity is not a number JSON can carry',
    ]
    for command in ("validate", "run"):
        result = evalkit_cli(command, "hostile.nan_values", env=env)
        assert result.code == 2, result.stdout + result.stderr
        text = " ".join(result.stderr.split())
        assert all(problem in text for problem in problems), result.stderr
        assert "Traceback" not in result.stderr
    assert stored_runs(project) == 0
    assert evalkit_cli("run", "hostile.nan_values", env={"PYTHONPATH": env["PYTHONPATH"]}).code == 2  # no such set without the switch
