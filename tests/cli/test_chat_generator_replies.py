"""What a chat generator plugin's ``chat()`` may return, through ``evalkit run``: a plain ``str`` is
the turn's text (as ``generate()`` takes one as the answer's text), held to a turn's rules."""

from __future__ import annotations

from pathlib import Path

from tests.support.distributions import write_distribution

PLUGIN = '''\
from evalkit.answers import Answer, Turn

REPLIES = {"words": "You can return it within 30 days.", "empty": "", "number": 4, "turn": Turn(text="Within 30 days.", model="m")}


class Chatty:
    """Answers a conversation with what ``REPLIES`` holds for its case."""

    def __init__(self, model=None):
        self.model = model

    def generate(self, request):
        """A plain prompt's answer."""
        return Answer(text="x", model="m")

    def chat(self, request):
        """The model's next turn, as the case's entry says."""
        return REPLIES[request.case_id]
'''

SET = """\
identifier: chat.replies
name: Replies
prompts:
"""

PROMPT = """\
  - id: {id}
    mode: fixed
    messages:
      - {{role: user, content: Can I return a lamp?}}
    assertions: [{{contains: "30 days"}}]
"""


def test_a_plain_str_from_chat_is_the_turns_text_and_an_empty_one_says_the_turn_is_empty(evalkit_cli, project: Path, tmp_path: Path) -> None:
    # chat() returning "" said "the generator's chat() returned str, not an evalkit Turn", though a
    # non-empty str was taken as the turn's text (as generate() takes a str as the answer's).
    site = write_distribution(tmp_path / "site", "acme-chatty", "1.0", {"evalkit.generators": {"acme.chatty": "acme_chatty:Chatty"}},
                              {"acme_chatty.py": PLUGIN})  # fmt: skip
    (project / "evals").mkdir()
    (project / "evals" / "chat.yaml").write_text(SET + "".join(PROMPT.format(id=i) for i in ("words", "empty", "number", "turn")))
    (project / "evalkit.toml").write_text('privacy = "full"\n[sets]\npaths = ["evals/*.yaml"]\n[providers.bot]\nadapter = "acme.chatty"\nmodel = "m"\n')
    run = evalkit_cli("run", "chat.replies", "--json", env={"PYTHONPATH": str(site)})
    assert run.code == 3, run.stdout + run.stderr
    cases = {case["id"]: case for case in run.json()["cases"]}
    assert cases["words"]["passed"] and cases["words"]["answer"] == "You can return it within 30 days."
    assert cases["turn"]["passed"]
    assert cases["empty"]["errored"] and cases["empty"]["error"] == (
        "the model's turn is empty: chat() returned an empty str (a turn needs text or a tool call)"
    ), cases["empty"]
    assert cases["number"]["errored"] and cases["number"]["error"] == (
        "the generator's chat() returned int 4, not an evalkit Turn (return a Turn, or a str as the turn's text)"
    ), cases["number"]


MUTATING = '''\
from evalkit import Check, Grading
from evalkit.answers import Turn


class Meddler:
    """Changes the tools' parameters and the history's tool-call arguments it is handed."""

    def __init__(self, model=None):
        self.model = model

    def generate(self, request):
        raise AssertionError("a conversation is answered by chat()")

    def chat(self, request):
        for tool in request.tools:
            tool.parameters["properties"]["acme-was-here"] = {"type": "string"}
        for message in request.messages:
            for call in message.tool_calls:
                call.arguments["acme-was-here"] = 1
        return Turn(text="It is sunny in Oslo.", model="m")


class Grader:
    """Fails a prompt whose tools or history another plugin changed."""

    yardstick = "acme:v1"

    def grade(self, prompt, answer):
        touched = any("acme-was-here" in tool.parameters["properties"] for tool in prompt.tools) or any(
            "acme-was-here" in call.arguments for message in prompt.messages for call in message.tool_calls
        )
        return Grading(0.0 if touched else 1.0, not touched, checks=[Check("untouched", not touched)], yardstick="acme:v1")
'''

TOOLS_SET = """\
identifier: chat.tools
name: Tools
prompts:
  - id: weather
    mode: fixed
    messages:
      - {role: user, content: Weather in Oslo?}
      - role: assistant
        tool_calls: [{id: c1, name: get_weather, arguments: {city: Oslo}}]
      - {role: tool, tool_call_id: c1, name: get_weather, content: sunny}
      - {role: user, content: So?}
    tools:
      - type: function
        function:
          name: get_weather
          parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    tool_results:
      - {name: get_weather, result: sunny}
    assertions: [{contains: sunny}]
"""


def test_a_chat_generator_that_changes_the_tools_it_is_handed_changes_no_grading_or_stored_fingerprint(
    evalkit_cli, project: Path, tmp_path: Path
) -> None:
    """A chat generator got the prompt's own ``Tool.parameters`` and tool-call ``arguments`` dicts:
    one that changed them changed what the grader saw (the case failed) and the case's stored
    fingerprint. Each conversation is now built from its own copy, as each grading is."""
    from evalkit.set_versions import case_fingerprint
    from evalkit.setfiles import load_set_files
    from evalkit.storage import close_repository, open_repository

    site = write_distribution(tmp_path / "site", "acme-meddler", "1.0",
                              {"evalkit.generators": {"acme.meddler": "acme_meddler:Meddler"},
                               "evalkit.graders": {"acme.untouched": "acme_meddler:Grader"}},
                              {"acme_meddler.py": MUTATING})  # fmt: skip
    (project / "chat.yaml").write_text(TOOLS_SET)
    (project / "evalkit.toml").write_text('[sets]\npaths = ["chat.yaml"]\n[providers.bot]\nadapter = "acme.meddler"\nmodel = "m"\n')
    run = evalkit_cli("run", "chat.tools", "--grader", "acme.untouched", "--repeats", "2", "--json", env={"PYTHONPATH": str(site)})
    assert run.code == 0, (run.code, run.stdout[-2000:], run.stderr[-2000:])
    (case,) = run.json()["cases"]
    assert case["passed"] and case["score"] == 1.0, case
    ((prompt,),) = (s.prompts for s in load_set_files([project / "chat.yaml"]).prompt_sets)
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        (stored,) = repository.get_run(run.json()["run_id"]).cases
    finally:
        close_repository(repository)
    assert stored.fingerprint == case_fingerprint(prompt)
