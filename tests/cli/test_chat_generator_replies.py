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
