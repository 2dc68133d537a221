"""Through the CLI against a real model: SmolLM2-135M served by llama.cpp. Its answers are fluent and
often wrong — exactly what an evaluation tool must handle without a traceback or a guessed verdict."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.realmodel.llama_support import ALIAS, KEY_ENV, Relay, llama_config

pytestmark = pytest.mark.realmodel

TIMEOUT = 900


def stored_cases(project: Path, run_id: str) -> list[sqlite3.Row]:
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        connection.row_factory = sqlite3.Row
        return connection.execute("SELECT * FROM evalkit_case WHERE run_id = ?", (run_id,)).fetchall()


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr.lower(), result.stderr


def test_the_smoke_set_runs_is_stored_and_compared_with_itself(llama_server, project, evalkit_cli) -> None:
    (project / "evalkit.toml").write_text(llama_config(llama_server))
    first = evalkit_cli("run", "evalkit.smoke", "--provider", "smol", "--json", env=KEY_ENV, timeout=TIMEOUT)
    assert_no_traceback(first)
    assert first.code == 0, first.stderr
    document = first.json()
    assert document["status"] == "complete" and document["answered"] == 7
    identity = document["identity"]
    assert (identity["provider_instance"], identity["model_alias"], identity["reported_model"]) == ("smol", ALIAS, ALIAS)
    assert document["metrics"]["serving"]["reported_model_is_alias"] is True  # llama.cpp echoes the name sent
    for row in stored_cases(project, document["run_id"]):
        assert row["latency_s"] > 0
        input_tokens, output_tokens = json.loads(row["usage"])[:2]  # then total and cached prompt tokens, as reported
        assert input_tokens > 0 and output_tokens > 0
        assert (row["provider_instance"], row["reported_model"]) == ("smol", ALIAS)
    second = evalkit_cli("run", "evalkit.smoke", "--provider", "smol", env=KEY_ENV, timeout=TIMEOUT)
    assert_no_traceback(second)
    assert second.code == 0
    assert "No regression" in second.stdout  # temperature 0: the same answers, the same pass rate
    assert "reported model is the alias sent; the server does not report its own" in second.stdout
    history = evalkit_cli("history", "evalkit.smoke", "--json").json()["runs"]
    assert len({run["pass_rate"] for run in history}) == 1


def _judged(document: dict) -> tuple[list[dict], list[dict]]:
    """The cases with a verdict, and the cases whose grading failed (never a guessed level)."""
    verdicts, failures = [], []
    for case in document["cases"]:
        names = {check["name"] for check in case["checks"]}
        if "grading" in names:
            failures.append(case)
            assert not case["passed"] and case["score"] == 0
        else:
            assert "fulfilment" in names, case
            verdicts.append(case)
    return verdicts, failures


def test_the_model_judging_itself_ends_as_the_rules_say_whatever_it_replies(llama_server, project, evalkit_cli) -> None:
    (project / "evalkit.toml").write_text(llama_config(llama_server))
    result = evalkit_cli(
        "run", "evalkit.smoke", "--provider", "smol", "--grader", "decision", "--judge", "smol", "--allow-self-judge", "--json",
        env=KEY_ENV, timeout=TIMEOUT,
    )
    assert_no_traceback(result)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["status"] == "complete"
    verdicts, failures = _judged(document)
    if not verdicts:
        assert document["grader"] == "decision:failed"
    elif failures:
        assert document["grader"] == "decision" and document["verdict"]["state"] == "not_comparable"
    else:
        assert document["grader"] == f"decision:smol:{ALIAS}:v1"
    judge = document["metrics"]["judge"]
    # llama-cpp-python's server refuses response_format json_schema (HTTP 500, a validation error):
    # the judge falls back once and keeps what was accepted for the rest of the run.
    assert judge["structured_output"] in ("json_object", "none")
    assert judge["structured_output_refused"][0].startswith("json_schema:")


def test_judge_repeats_at_a_temperature_above_zero_report_a_real_self_agreement(llama_server, project, evalkit_cli) -> None:
    (project / "evalkit.toml").write_text(llama_config(llama_server))
    result = evalkit_cli(
        "run", "evalkit.smoke", "--provider", "smol", "--grader", "decision", "--judge", "smol", "--allow-self-judge",
        "--judge-repeats", "3", "--judge-temperature", "0.9", "--json",
        env=KEY_ENV, timeout=TIMEOUT,
    )
    assert_no_traceback(result)
    assert result.code == 0, result.stderr
    document = result.json()
    judge = document["metrics"]["judge"]
    assert judge["repeats"] == 3 and judge["temperature"] == 0.9
    verdicts, _failures = _judged(document)
    for case in verdicts:
        assert len([c for c in case["checks"] if c["name"].startswith("verdict ")]) == 3
    if verdicts:
        assert judge["judged_cases"] == len(verdicts)
        assert 0.0 <= judge["self_agreement"] <= 1.0
        assert judge["agreeing_cases"] == judge["judged_cases"] - len(judge["unstable_cases"])


def test_a_retrieval_augmented_answer_is_graded_for_groundedness(llama_server, project, evalkit_cli, plugin_dists) -> None:
    """Plumbing, not quality: the lexical retriever's passages go with the prompt to the real model,
    and the groundedness judge (the same model) grades the answer against exactly those passages."""
    (project / "evalkit.toml").write_text(
        llama_config(llama_server)
        + f"""
[providers.rag]
adapter = "rag-app"
base_url = "{llama_server}"
model = "{ALIAS}"
index_dir = "{(project / 'index').as_posix()}"
"""
    )
    env = {"PYTHONPATH": plugin_dists("evalkit-rag-app"), **KEY_ENV}
    result = evalkit_cli(
        "run", "rag.stdlib", "--provider", "rag", "--grader", "groundedness", "--judge", "smol", "--json", "--privacy", "full",
        env=env, timeout=TIMEOUT,
    )
    assert_no_traceback(result)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["status"] == "complete" and document["answered"] == 2
    for case in document["cases"]:
        names = {check["name"] for check in case["checks"]}
        assert "grounded" in names or "grading" in names, case
        assert case["answer"]


TOOL_SET = """\
identifier: realmodel.tools
name: Tools against a real model
prompts:
  - id: weather
    prompt: What is the weather in Paris? Call get_weather.
    max_steps: 2
    tool_choice: get_weather
    tools:
      - type: function
        function:
          name: get_weather
          description: The weather in a city now.
          parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    tool_results:
      - {name: get_weather, arguments: {required: [city]}, result: {temp_c: 18, sky: clear}}
    assertions:
      - tool_called: get_weather
      - max_tool_calls: 3
      - tool_args: {name: get_weather, schema: {required: [city]}}
"""


def test_a_tool_using_prompt_runs_against_the_function_calling_chat_format(llama_tools_server, project, evalkit_cli) -> None:
    """Plumbing, not quality: the tools go to llama.cpp in its function-calling format with the
    prompt's tool_choice (the one tool, so the model's call is made through the tool's JSON Schema
    grammar: llama-cpp-python 0.3's "auto" path answers a text reply empty), each call is answered
    from the canned results and fed back until max_steps, the run completes and is stored, and the
    tool checks and the loop's own checks are evaluated on it."""
    (project / "evals").mkdir()
    (project / "evals" / "tools.yaml").write_text(TOOL_SET)
    with Relay(llama_tools_server) as relay:
        (project / "evalkit.toml").write_text(
            llama_config(relay.base_url).replace("max_tokens = 48", "max_tokens = 64") + '\n[sets]\npaths = ["evals/*.yaml"]\n'
        )
        result = evalkit_cli("run", "realmodel.tools", "--provider", "smol", "--json", "--privacy", "full", env=KEY_ENV, timeout=TIMEOUT)
    assert_no_traceback(result)
    assert result.code in (0, 1), result.stderr  # a model's wrong call fails a check, never the run
    document = result.json()
    assert document["status"] == "complete" and document["answered"] == 1
    (case,) = document["cases"]
    assert not case["errored"], case
    names = {check["name"] for check in case["checks"]}
    assert {"tool_called", "max_tool_calls", "max_steps", "canned_results"} <= names
    chats = [body for body in relay.bodies if "messages" in body]
    assert len(chats) == 2  # the forced tool is called on every step: max_steps ends the loop
    forced = {"type": "function", "function": {"name": "get_weather"}}
    assert [tool["function"]["name"] for tool in chats[0]["tools"]] == ["get_weather"] and chats[0]["tool_choice"] == forced
    checks = {check["name"]: check["passed"] for check in case["checks"]}
    assert checks["tool_called"] is True and checks["max_steps"] is False  # it called; it never replied
    for later in chats[1:]:  # each call the model made was answered from the canned results and sent back
        assert later["messages"][-1]["role"] == "tool" and later["messages"][-2]["tool_calls"]
    stored = stored_cases(project, document["run_id"])
    assert len(stored) == 1 and stored[0]["case_id"] == "weather"
    shown = evalkit_cli("show", document["run_id"], "--show-all")
    assert shown.code == 0 and "weather" in shown.stdout
