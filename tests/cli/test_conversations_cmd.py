"""Conversations and tool calls through the CLI, against the project's chat-completions server:
fixed and scripted conversations, the agent loop against canned results, max_steps, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.chat_server import Script, calls

CONFIG = """\
privacy = "{privacy}"

[sets]
paths = ["evals/*.yaml"]

[providers.bot]
adapter = "openai"
base_url = "{base_url}"
model = "bot-1"
api_key_env = ""
max_attempts = 1
timeout = 10
{extra}
"""

WEATHER_TOOLS = """\
    tools:
      - type: function
        function:
          name: get_weather
          description: The weather in a city now.
          parameters: {type: object, properties: {city: {type: string}}, required: [city]}
      - type: function
        function:
          name: get_forecast
          parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}, required: [city]}
    tool_results:
      - {name: get_weather, arguments: {properties: {city: {const: Paris}}}, result: {temp_c: 18, sky: clear}}
      - {name: get_forecast, result: "rain tomorrow"}
"""


def write_project(project: Path, server, set_text: str, extra: str = "", privacy: str = "full") -> None:
    (project / "evals").mkdir(exist_ok=True)
    (project / "evals" / "chat.yaml").write_text(set_text)
    (project / "evalkit.toml").write_text(CONFIG.format(base_url=server.base_url, extra=extra, privacy=privacy))


def case_of(run) -> dict:
    assert run.code in (0, 1), run.stdout + run.stderr
    (case,) = run.json()["cases"]
    return case


def checks_of(case: dict) -> dict[str, bool]:
    return {check["name"]: check["passed"] for check in case["checks"]}


def test_a_fixed_conversation_is_sent_whole_with_the_base_system_prompt_in_one_system_message(evalkit_cli, project, chat_server) -> None:
    script = chat_server.responder = Script("You can return it within 30 days.")
    write_project(project, chat_server, """\
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
""", extra='system_prompt = "Answer in English."')
    run = evalkit_cli("run", "chat.support", "--json")
    case = case_of(run)
    assert case["passed"] and checks_of(case) == {"contains": True}
    (body,) = script.bodies
    assert body["messages"] == [
        {"role": "system", "content": "Answer in English.\n\nYou are the shop's assistant."},
        {"role": "user", "content": "I bought a lamp."},
        {"role": "assistant", "content": "Which order?"},
        {"role": "user", "content": "A-1234. Can I return it?"},
    ]
    assert "tools" not in body


def test_a_scripted_conversation_feeds_the_replies_back_and_turn_2_fails_alone(evalkit_cli, project, chat_server) -> None:
    script = chat_server.responder = Script("Hello! How can I help?", "Paris is in Germany.", "Goodbye!")
    write_project(project, chat_server, """\
identifier: chat.script
name: Scripted
prompts:
  - id: three-turns
    mode: scripted
    messages:
      - {role: system, content: You are a geography tutor.}
      - {role: user, content: Hi.}
      - {role: user, content: Where is Paris?}
      - {role: user, content: "Thanks, bye."}
    assertions:
      - {contains: Hello, turn: 1}
      - {contains: France, turn: 2, name: paris_in_france}
      - {contains_any: [bye, Goodbye]}
""")
    run = evalkit_cli("run", "chat.script", "--json")
    case = case_of(run)
    assert not case["passed"] and not case["errored"]
    assert checks_of(case) == {"contains@turn1": True, "paris_in_france": False, "stated_the_fact": True}
    assert case["answer"] == "Goodbye!"
    assert [len(body["messages"]) for body in script.bodies] == [2, 4, 6]
    assert script.bodies[2]["messages"][1:] == [
        {"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Where is Paris?"}, {"role": "assistant", "content": "Paris is in Germany."},
        {"role": "user", "content": "Thanks, bye."},
    ]  # fmt: skip


def test_an_agent_calls_two_tools_in_order_against_canned_results(evalkit_cli, project, chat_server) -> None:
    script = chat_server.responder = Script(
        calls(("get_weather", {"city": "Paris"})),
        calls(("get_forecast", {"city": "Paris", "days": 1})),
        "It is 18 °C and clear; rain tomorrow.",
    )
    write_project(project, chat_server, f"""\
identifier: chat.agent
name: Agent
prompts:
  - id: weather
    prompt: What is the weather in Paris, and tomorrow?
{WEATHER_TOOLS}    assertions:
      - tool_called: get_weather
      - tool_args: {{name: get_forecast, schema: {{required: [days]}}}}
      - tool_sequence: {{names: [get_weather, get_forecast], strict: true}}
      - max_tool_calls: 2
      - tool_not_called: send_email
      - contains: "18"
""".replace("      - tool_not_called: send_email\n", ""))
    run = evalkit_cli("run", "chat.agent", "--json")
    case = case_of(run)
    assert case["passed"], case
    assert checks_of(case) == {
        "tool_called": True, "tool_args": True, "tool_sequence": True, "max_tool_calls": True, "contains": True,
        "max_steps": True, "canned_results": True,
    }  # fmt: skip
    first, second, third = script.bodies
    assert [tool["function"]["name"] for tool in first["tools"]] == ["get_weather", "get_forecast"]
    assert second["messages"][-1] == {"role": "tool", "content": '{"temp_c":18,"sky":"clear"}', "tool_call_id": "call_2_1", "name": "get_weather"}
    assert third["messages"][-1]["content"] == "rain tomorrow"
    assert third["messages"][-2]["tool_calls"][0]["function"] == {"name": "get_forecast", "arguments": '{"city":"Paris","days":1}'}
    assert case["answer"] == "It is 18 °C and clear; rain tomorrow."


def test_an_agent_that_never_stops_calling_fails_the_max_steps_check(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = lambda body: calls(("get_forecast", {"city": "Paris"}))
    write_project(project, chat_server, f"""\
identifier: chat.loop
name: Loop
prompts:
  - id: forever
    prompt: Keep checking the forecast.
    max_steps: 3
{WEATHER_TOOLS}    assertions: [{{tool_called: get_forecast}}]
""")
    run = evalkit_cli("run", "chat.loop", "--json")
    case = case_of(run)
    assert not case["passed"] and not case["errored"]
    assert checks_of(case) == {"tool_called": True, "max_steps": False, "canned_results": True}
    failed = next(c for c in case["checks"] if c["name"] == "max_steps")
    assert failed["detail"] == "no reply after 3 model turns (max_steps 3); the last turn called get_forecast"
    assert len([r for r in chat_server.requests if r.method == "POST"]) == 3
    shown = evalkit_cli("run", "chat.loop")
    assert "max_steps" in shown.stdout


def test_a_call_no_canned_result_matches_gets_an_error_result_and_fails_a_check(evalkit_cli, project, chat_server) -> None:
    script = chat_server.responder = Script(calls(("get_weather", {"city": "Rome"})), "I could not find the weather in Rome.")
    write_project(project, chat_server, f"""\
identifier: chat.unmatched
name: Unmatched
prompts:
  - id: rome
    prompt: Weather in Rome?
{WEATHER_TOOLS}    assertions: [{{tool_args: {{name: get_weather, schema: {{properties: {{city: {{const: Paris}}}}}}}}}}]
""")
    case = case_of(evalkit_cli("run", "chat.unmatched", "--json"))
    assert checks_of(case) == {"tool_args": False, "max_steps": True, "canned_results": False}
    assert json.loads(script.bodies[1]["messages"][-1]["content"]) == {"error": "no canned result for get_weather with these arguments"}
    canned = next(c for c in case["checks"] if c["name"] == "canned_results")
    assert canned["detail"] == 'no canned result matched get_weather({"city":"Rome"}); the model was sent an error result'


def test_a_malformed_tool_schema_is_refused_before_anything_is_sent(evalkit_cli, project, chat_server) -> None:
    write_project(project, chat_server, """\
identifier: chat.bad
name: Bad
prompts:
  - id: bad-tool
    prompt: Weather?
    tools:
      - type: function
        function: {name: get_weather, parameters: {type: object, properties: {city: {type: town}}}}
    assertions: [{tool_called: get_weather}]
""")
    run = evalkit_cli("run", "chat.bad")
    assert run.code == 2, run.stdout + run.stderr
    assert "chat.yaml:8:" in run.stderr and "prompt 'bad-tool': tools[0].function.parameters: is not a valid JSON Schema" in run.stderr
    assert "Traceback" not in run.stderr
    assert not [r for r in chat_server.requests if r.method == "POST"]


def test_a_conversation_ending_on_an_assistant_turn_is_refused_with_its_line(evalkit_cli, project, chat_server) -> None:
    write_project(project, chat_server, """\
identifier: chat.ends
name: Ends
prompts:
  - id: ends-on-assistant
    messages:
      - {role: user, content: Hi.}
      - {role: assistant, content: Hello!}
    assertions: [{contains: x}]
""")
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert "chat.yaml:7:9: prompt 'ends-on-assistant': messages[1]: a conversation ends on the user turn the model answers, not on an assistant turn" in checked.stdout + checked.stderr
    run = evalkit_cli("run", "chat.ends")
    assert run.code == 2 and "Traceback" not in run.stderr and "not on an assistant turn" in run.stderr
    assert not [r for r in chat_server.requests if r.method == "POST"]


def test_validate_names_a_turn_beyond_the_replies_and_a_scripted_history(evalkit_cli, project, chat_server) -> None:
    write_project(project, chat_server, """\
identifier: chat.turns
name: Turns
prompts:
  - id: two
    mode: scripted
    messages:
      - {role: user, content: Hi.}
      - {role: assistant, content: Hello!}
      - {role: user, content: Bye.}
    assertions: [{contains: x, turn: 3}]
""")
    checked = evalkit_cli("validate")
    assert checked.code == 2
    out = checked.stdout + checked.stderr
    assert "prompt 'two': messages[1]: a scripted conversation holds system and user turns only" in out
    assert "prompt 'two': assertions[0].turn: the model gives 2 replies (one per user turn of a scripted conversation), so there is no reply 3" in out


def test_show_displays_a_stored_conversations_turns_tool_calls_and_base_prompt(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = Script("Hello!", calls(("get_weather", {"city": "Paris"})), "18 °C and clear.")
    write_project(project, chat_server, f"""\
identifier: chat.shown
name: Shown
prompts:
  - id: talk
    mode: scripted
    messages:
      - {{role: user, content: Hi.}}
      - {{role: user, content: Weather in Paris?}}
{WEATHER_TOOLS}    assertions: [{{contains: "18"}}, {{tool_called: get_weather}}]
""", extra='system_prompt = "Answer in English."')
    run = evalkit_cli("run", "chat.shown", "--json")
    document = run.json()
    digest = document["identity"]["base_prompt"]
    assert digest.startswith("sha256:") and document["metrics"]["base_prompt"] == {"digest": digest, "opening": "Answer in English."}
    assert [turn["role"] for turn in document["cases"][0]["transcript"]] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    shown = evalkit_cli("show", document["run_id"], "--show-all")
    assert shown.code == 0, shown.stdout + shown.stderr
    assert f'System:     base system prompt {digest} "Answer in English."' in shown.stdout
    conversation = shown.stdout.split("Conversations")[1]
    for line in ("talk:", "user: Hi.", "assistant: Hello!", "user: Weather in Paris?",
                 'assistant → get_weather: {"city":"Paris"}', 'tool get_weather: {"temp_c":18,"sky":"clear"}',
                 "assistant: 18 °C and clear."):  # fmt: skip
        assert line in conversation, (line, conversation)
    assert evalkit_cli("show", document["run_id"], "--json").json()["cases"][0]["transcript"] == document["cases"][0]["transcript"]


def test_metadata_privacy_shows_the_turns_without_their_text(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = Script(calls(("get_weather", {"city": "Paris"})), "Secretly 18 °C.")
    write_project(project, chat_server, f"""\
identifier: chat.meta
name: Meta
prompts:
  - id: weather
    prompt: Weather in Paris?
{WEATHER_TOOLS}    assertions: [{{tool_called: get_weather}}]
""", privacy="metadata")
    document = evalkit_cli("run", "chat.meta", "--json").json()
    shown = evalkit_cli("show", document["run_id"], "--show-all")
    conversation = shown.stdout.split("Conversations")[1]
    assert "assistant → get_weather: (not kept)" in conversation and "tool get_weather: (not kept)" in conversation
    assert "Paris" not in shown.stdout and "Secretly" not in shown.stdout


def test_a_new_base_system_prompt_starts_a_new_comparison_scope(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = lambda body: "Fine."
    set_text = "identifier: chat.base\nname: Base\nprompts:\n  - {id: hi, prompt: Hi., assertions: [{contains: Fine}]}\n"
    write_project(project, chat_server, set_text, extra='system_prompt = "Be brief."')
    first = evalkit_cli("run", "chat.base", "--json").json()
    assert first["verdict"]["state"] == "baseline"
    write_project(project, chat_server, set_text, extra='system_prompt = "Be verbose."')
    second = evalkit_cli("run", "chat.base", "--json").json()
    assert second["verdict"]["state"] == "baseline", "another base prompt is another scope: nothing to compare with"
    assert chat_server.requests[-1].body["messages"][0] == {"role": "system", "content": "Be verbose."}
    write_project(project, chat_server, set_text, extra='system_prompt = "Be brief."')
    third = evalkit_cli("run", "chat.base", "--json").json()
    assert third["verdict"]["baseline_id"] == first["run_id"]
    refused = evalkit_cli("run", "chat.base", "--baseline", second["run_id"])
    assert refused.code == 2 and "with the base system prompt" in refused.stdout + refused.stderr


REPLAYED = [
    {"id": "agent", "turns": [
        {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}], "model": "rec-1"},
        {"tool_calls": [{"id": "c2", "name": "get_forecast", "arguments": {"city": "Paris", "days": 1}}]},
        {"text": "18 °C now, rain tomorrow."},
    ]},
    {"id": "talk", "turns": [{"text": "Hello!"}, {"text": "Paris is in Germany."}], "model": "rec-1"},
]  # fmt: skip


def test_replay_plays_recorded_tool_calls_and_scripted_replies(evalkit_cli, project, chat_server) -> None:
    (project / "answers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in REPLAYED))
    write_project(project, chat_server, f"""\
identifier: chat.replayed
name: Replayed
prompts:
  - id: agent
    prompt: Weather in Paris, and tomorrow?
{WEATHER_TOOLS}    assertions:
      - tool_sequence: {{names: [get_weather, get_forecast], strict: true}}
      - contains: rain
  - id: talk
    mode: scripted
    messages:
      - {{role: user, content: Hi.}}
      - {{role: user, content: Where is Paris?}}
    assertions: [{{contains: Hello, turn: 1}}, {{contains: France, turn: 2}}]
""")
    (project / "evalkit.toml").write_text(
        'privacy = "full"\n[sets]\npaths = ["evals/*.yaml"]\n[providers.rec]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "rec-1"\n'
    )
    run = evalkit_cli("run", "chat.replayed", "--json")
    assert run.code == 0, run.stdout + run.stderr
    cases = {case["id"]: case for case in run.json()["cases"]}
    assert cases["agent"]["passed"] and checks_of(cases["agent"])["canned_results"]
    assert checks_of(cases["talk"]) == {"contains@turn1": True, "contains@turn2": False}
    shown = evalkit_cli("show", run.json()["run_id"], "--show-all").stdout.split("Conversations")[1]
    assert 'tool get_forecast: rain tomorrow' in shown and "assistant: Paris is in Germany." in shown
    assert not [r for r in chat_server.requests if r.method == "POST"]


def test_the_reference_generator_answers_every_turn_with_the_reference(evalkit_cli, project, chat_server) -> None:
    write_project(project, chat_server, """\
identifier: chat.ref
name: Reference
prompts:
  - id: lamp
    messages:
      - {role: user, content: I bought a lamp.}
      - {role: assistant, content: Which order?}
      - {role: user, content: A-1234. Can I return it?}
    reference: You can return it within 30 days.
    assertions: [{contains: "30 days"}]
""")
    run = evalkit_cli("run", "chat.ref", "--provider", "reference", "--json")
    assert run.code == 0, run.stdout + run.stderr
    (case,) = run.json()["cases"]
    assert case["passed"] and case["answer"] == "You can return it within 30 days."
    shown = evalkit_cli("show", run.json()["run_id"], "--show-all").stdout
    assert "assistant: You can return it within 30 days." in shown.split("Conversations")[1]


def test_a_base_system_prompt_file_is_read_beside_the_configuration_and_a_missing_one_refused(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = lambda body: "Fine."
    set_text = "identifier: chat.file\nname: File\nprompts:\n  - {id: hi, prompt: Hi., system_prompt: Be kind., assertions: [{contains: Fine}]}\n"
    write_project(project, chat_server, set_text, extra='system_prompt_file = "base.txt"')
    missing = evalkit_cli("run", "chat.file")
    assert missing.code == 2 and "system_prompt_file of [providers.bot], base.txt, cannot be read" in missing.stderr
    assert not [r for r in chat_server.requests if r.method == "POST"]
    (project / "base.txt").write_text("You work for the shop.\n")
    run = evalkit_cli("run", "chat.file")
    assert run.code == 0, run.stdout + run.stderr
    assert chat_server.requests[-1].body["messages"] == [
        {"role": "system", "content": "You work for the shop.\n\nBe kind."}, {"role": "user", "content": "Hi."},
    ]  # fmt: skip
    assert 'System:     base system prompt sha256:' in run.stdout and '"You work for the shop."' in run.stdout


def test_the_html_report_shows_a_conversations_turns_escaped(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = Script(calls(("get_weather", {"city": "<Paris>"})), "It is <b>18</b> °C.")
    write_project(project, chat_server, f"""\
identifier: chat.page
name: Page
prompts:
  - id: weather
    prompt: Weather in Paris?
{WEATHER_TOOLS}    assertions: [{{tool_called: send_email}}]
""".replace("tool_called: send_email", "tool_not_called: get_weather"))
    document = evalkit_cli("run", "chat.page", "--json").json()
    page = project / "run.html"
    made = evalkit_cli("report", document["run_id"], "--format", "html", "-o", str(page))
    assert made.code == 0, made.stdout + made.stderr
    html = page.read_text()
    assert "<summary>conversation (3 turns)</summary>" in html
    assert "assistant → get_weather: {&quot;city&quot;:&quot;&lt;Paris&gt;&quot;}" in html
    assert "tool get_weather: {&quot;error&quot;" in html and "assistant: It is &lt;b&gt;18&lt;/b&gt; °C." in html


def test_the_markdown_report_shows_turns_tool_calls_results_and_the_final_answer_escaped(evalkit_cli, project, chat_server) -> None:
    from markdown_it import MarkdownIt

    chat_server.responder = Script(
        calls(("get_weather", {"city": "Paris"})), calls(("get_weather", {"city": "<b>|`Rome`"})),
        "It is 18 °C | `clear`\n<script>alert(1)</script>\x1b[31m",
    )  # fmt: skip
    write_project(project, chat_server, f"""\
identifier: chat.md
name: Markdown
prompts:
  - id: weather
    mode: fixed
    messages:
      - {{role: system, content: "Be | brief."}}
      - {{role: user, content: "Hi <i>there</i>"}}
      - {{role: assistant, content: "Hello."}}
      - {{role: user, content: "Weather in Paris and `Rome`?"}}
{WEATHER_TOOLS}    assertions: [{{tool_called: get_weather}}]
""")
    document = evalkit_cli("run", "chat.md", "--json").json()
    made = evalkit_cli("report", document["run_id"], "--format", "markdown")
    assert made.code == 0, made.stdout + made.stderr
    text = made.stdout
    assert "<summary>Conversations and tool calls (1)</summary>" in text
    assert "- **system**: Be \\| brief\\." in text
    assert "- **user**: Hi \\<i\\>there\\<\\/i\\>" in text and "- **assistant**: Hello\\." in text
    assert '- **assistant → get\\_weather**: \\{\\"city\\"\\:\\"Paris\\"\\}' in text
    assert "- **tool get\\_weather**: \\{\\\"temp\\_c\\\"\\:18" in text
    assert '\\{\\"city\\"\\:\\"\\<b\\>\\|\\`Rome\\`\\"\\}' in text  # a hostile call's arguments
    assert "- **tool get\\_weather**: \\{\\\"error\\\"\\:" in text  # no canned result: the error it got
    final = next(line for line in text.splitlines() if line.startswith("Final answer: "))
    assert final == "Final answer: It is 18 °C \\| \\`clear\\`\\\\x0a\\<script\\>alert\\(1\\)\\<\\/script\\>\\\\x1b\\[31m"
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<script>" not in rendered and "<b>" not in rendered and "<i>" not in rendered and "\x1b" not in text
    assert "<li><strong>assistant → get_weather</strong>" in rendered  # the turns are list items


def test_the_markdown_report_of_a_scripted_conversation_lists_each_user_turn_once(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = Script("Hello!", "Paris is in France.")
    write_project(project, chat_server, """\
identifier: chat.md2
name: Scripted markdown
prompts:
  - id: two-turns
    mode: scripted
    messages:
      - {role: system, content: You are a tutor.}
      - {role: user, content: Hi.}
      - {role: user, content: Where is Paris?}
    assertions: [{contains: France}]
""")
    document = evalkit_cli("run", "chat.md2", "--json").json()
    text = evalkit_cli("report", document["run_id"], "--format", "markdown").stdout
    section = text.split("<summary>Conversations and tool calls (1)</summary>")[1]
    assert [line for line in section.splitlines() if line.startswith("- ")] == [
        "- **system**: You are a tutor\\.", "- **user**: Hi\\.", "- **assistant**: Hello\\!",
        "- **user**: Where is Paris\\?", "- **assistant**: Paris is in France\\.",
    ]  # fmt: skip
    assert "Final answer: Paris is in France\\." in section


def test_tools_are_sent_with_tool_choice_auto_and_a_plain_prompt_without(evalkit_cli, project, chat_server) -> None:
    script = chat_server.responder = Script("It is sunny.", "Hello.")
    write_project(project, chat_server, f"""\
identifier: chat.choice
name: Choice
prompts:
  - id: weather
    prompt: Weather?
{WEATHER_TOOLS}    assertions: [{{max_tool_calls: 0}}]
  - id: plain
    messages: [{{role: user, content: Hi.}}]
    assertions: [{{contains: Hello}}]
""")
    run = evalkit_cli("run", "chat.choice", "--concurrency", "1")
    assert run.code == 0, run.stdout + run.stderr
    with_tools, plain = sorted(script.bodies, key=lambda body: "tools" not in body)
    assert with_tools["tool_choice"] == "auto"  # llama-cpp-python's function-calling formats need it said
    assert "tool_choice" not in plain and "tools" not in plain


def test_a_prompts_tool_choice_is_sent_on_every_step_a_tool_name_as_the_forcing_object(evalkit_cli, project, chat_server) -> None:
    script = chat_server.responder = Script(calls(("get_weather", {"city": "Paris"})), calls(("get_weather", {"city": "Paris"})), "18 °C.")
    write_project(project, chat_server, f"""\
identifier: chat.forced
name: Forced
prompts:
  - id: weather
    prompt: Weather in Paris?
    tool_choice: get_weather
    max_steps: 2
{WEATHER_TOOLS}    assertions: [{{tool_called: get_weather}}]
  - id: required
    prompt: Anything?
    tool_choice: required
{WEATHER_TOOLS}    assertions: [{{max_tool_calls: 5}}]
""")
    run = evalkit_cli("run", "chat.forced", "--concurrency", "1", "--json")
    assert run.code == 0, run.stdout + run.stderr  # a first run: the baseline, whatever failed
    weather = next(case for case in run.json()["cases"] if case["id"] == "weather")
    # the forced tool is called on every step: max_steps stops the loop, and its check fails
    assert checks_of(weather) == {"tool_called": True, "max_steps": False, "canned_results": True}
    first, second, third = script.bodies
    forced = {"type": "function", "function": {"name": "get_weather"}}
    assert first["tool_choice"] == forced and second["tool_choice"] == forced
    assert third["tool_choice"] == "required"


def test_a_tool_choice_naming_no_declared_tool_or_without_tools_is_refused_by_validate(evalkit_cli, project, chat_server) -> None:
    write_project(project, chat_server, f"""\
identifier: chat.badchoice
name: Bad choice
prompts:
  - id: unknown
    prompt: Weather?
    tool_choice: "get_<b>time\\x1b"
{WEATHER_TOOLS}    assertions: [{{tool_called: get_weather}}]
  - id: toolless
    prompt: Hi.
    tool_choice: auto
    assertions: [{{contains: Hello}}]
""")
    checked = evalkit_cli("validate")
    assert checked.code == 2, checked.stdout + checked.stderr
    output = checked.stdout + checked.stderr
    assert "prompt 'unknown': tool_choice: must be auto, required, none or a declared tool's name (get_forecast, get_weather)" in output
    assert "\x1b" not in output and "\\x1b" in output  # the hostile name shown escaped
    assert "prompt 'toolless': tool_choice: needs tools" in output and "2 problems" in output
    run = evalkit_cli("run", "chat.badchoice")
    assert run.code == 2 and not [r for r in chat_server.requests if r.method == "POST"]


def test_a_turn_with_more_tool_calls_than_evalkit_takes_is_an_errored_case_and_max_steps_names_five(evalkit_cli, project, chat_server) -> None:
    """A turn of 1,001 calls was answered 1,001 times and sent back with every later request (the
    replay below had 100,000: 200,000 lines in `show --show-all`); the max_steps check listed every
    name of the last turn."""
    calls_of = lambda count: [{"id": f"c{n}", "name": "get_forecast", "arguments": {"city": "Paris"}} for n in range(count)]  # noqa: E731
    replayed = [
        {"id": "flood", "turns": [{"tool_calls": calls_of(1_001)}, {"text": "done"}]},
        {"id": "busy", "turns": [{"tool_calls": calls_of(40)}]},
    ]
    (project / "answers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in replayed))
    write_project(project, chat_server, f"""\
identifier: chat.flood
name: Flood
prompts:
  - id: flood
    prompt: Forecast?
{WEATHER_TOOLS}    assertions: [{{tool_called: get_forecast}}]
  - id: busy
    prompt: Forecast?
    max_steps: 1
{WEATHER_TOOLS}    assertions: [{{tool_called: get_forecast}}]
""")
    (project / "evalkit.toml").write_text(
        'privacy = "full"\n[sets]\npaths = ["evals/*.yaml"]\n[providers.rec]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "rec-1"\n'
    )
    run = evalkit_cli("run", "chat.flood", "--json")
    assert run.code == 3, run.stdout + run.stderr
    cases = {case["id"]: case for case in run.json()["cases"]}
    assert cases["flood"]["errored"]
    assert "the model's turn calls 1,001 tools; evalkit takes at most 1,000 tool calls in one turn" in cases["flood"]["error"]
    failed = next(c for c in cases["busy"]["checks"] if c["name"] == "max_steps")
    assert failed["detail"] == (
        "no reply after 1 model turns (max_steps 1); the last turn called "
        "get_forecast, get_forecast, get_forecast, get_forecast, get_forecast and 35 more"
    )
