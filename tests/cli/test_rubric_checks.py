"""Rubric checks end to end through ``evalkit run``: a set file mixing ``rubric`` and deterministic
assertions, the set's own references as the answers under test, and the judge an ``openai``
instance pointed at the local chat-completions server (scripted, sometimes hostile, verdicts)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from evalkit.config import load_config
from evalkit.errors import UsageError
from evalkit.evaluation import evaluate_set

from tests.plugins.judge_support import JUDGE_MODEL, user_message
from tests.support.chat_server import ChatServer
from tests.support.providers import openai_provider_table

YARDSTICK = f"deterministic:rubric:judge:{JUDGE_MODEL}:v1"

SET_FILE = """\
identifier: shop.refunds
name: Refunds
prompts:
  - id: refund-window
    prompt: How long do I have to return a jacket?
    system_prompt: Answer in one sentence.
    reference: Within 30 days, refunded to the card.
    assertions:
      - contains: "30 days"
      - rubric: The answer names the refund window and does not promise cash.
        name: refund_policy
      - rubric: The answer is polite.
  - id: opening-hours
    prompt: When are you open?
    reference: Monday to Friday, 9am to 5pm.
    assertions:
      - contains: Monday
"""


def write_project(project: Path, judge_url: str, *, judge: bool = True) -> None:
    """The set file and evalkit.toml: the reference instance ``sut`` under test, the judge ``judge``."""
    (project / "evals.yaml").write_text(SET_FILE, encoding="utf-8")
    (project / "evalkit.toml").write_text(
        ('judge = "judge"\n' if judge else "")
        + f"""[sets]
paths = ["evals.yaml"]

[providers.sut]
adapter = "reference"
model = "ref"

{openai_provider_table('judge', judge_url, 'judge-alias')}""",
        encoding="utf-8",
    )


def rubric_reply(verdict: str, reason: str = "Because.") -> str:
    """A well-formed rubric reply."""
    return json.dumps({"verdict": verdict, "reason": reason})


def by_criterion(default: str, **replies: str) -> Callable[[Mapping[str, Any]], str]:
    """Reply ``replies[word]`` to a request whose criterion contains ``word``, else ``default``."""

    def respond(body: Mapping[str, Any]) -> str:
        criterion = user_message(body).split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        return next((reply for word, reply in replies.items() if word in criterion), default)

    return respond


def completions(server: ChatServer) -> list[dict[str, Any]]:
    """The chat-completion request bodies the judge received."""
    return [r.body for r in server.requests if r.method == "POST"]


@pytest.fixture
def judge(chat_server: ChatServer, project: Path) -> ChatServer:
    """The judge server, reporting a dated model, configured in the project."""
    chat_server.model = JUDGE_MODEL
    chat_server.responder = by_criterion(rubric_reply("pass", "Names 30 days, no cash."))
    write_project(project, chat_server.base_url)
    return chat_server


def run(evalkit_cli: Callable[..., Any], *args: str) -> tuple[int, dict[str, Any]]:
    """``evalkit run shop.refunds --provider sut --json ARGS``: the exit code and the document."""
    result = evalkit_cli("run", "shop.refunds", "--provider", "sut", "--json", *args)
    assert result.code in (0, 1), result.stderr
    return result.code, result.json()


def case(document: Mapping[str, Any], case_id: str) -> dict[str, Any]:
    """One case of a run document."""
    return next(c for c in document["cases"] if c["id"] == case_id)


def test_rubric_checks_are_graded_with_the_deterministic_ones_and_named(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = by_criterion(rubric_reply("pass", "Names 30 days, no cash."), polite=rubric_reply("fail", "Curt."))
    code, document = run(evalkit_cli, "--privacy", "full")
    assert code == 0 and document["status"] == "complete"
    assert document["grader"] == YARDSTICK  # the judge's identity and prompt version are the run's yardstick
    refund = case(document, "refund-window")
    assert refund["yardstick"] == YARDSTICK and not refund["passed"]
    assert [(c["name"], c["passed"], c.get("detail")) for c in refund["checks"]] == [
        ("contains", True, None),
        ("refund_policy", True, "Names 30 days, no cash."),
        ("rubric", False, "Curt."),
    ]
    hours = case(document, "opening-hours")
    assert hours["yardstick"] == "deterministic" and hours["passed"]  # no rubric check: no judge asked
    assert document["metrics"]["judge"]["grader"] == "rubric"
    assert document["metrics"]["judge"]["structured_output"] == "json_schema"

    assert [r.path for r in judge.requests if r.method == "GET"] == ["/v1/models"]  # one readiness probe first
    bodies = completions(judge)
    assert len(bodies) == 2 and all(b["temperature"] == 0 and b["model"] == "judge-alias" for b in bodies)
    assert all(b["response_format"]["type"] == "json_schema" for b in bodies)
    asked = sorted(user_message(b) for b in bodies)
    assert "CRITERION\n<<<\nThe answer names the refund window and does not promise cash.\n>>>" in asked[1]
    assert "Instructions the response had to follow:\nAnswer in one sentence.\n\nTask:\nHow long" in asked[1]
    assert "RESPONSE\n<<<\nWithin 30 days, refunded to the card.\n>>>" in asked[1]

    shown = evalkit_cli("show", document["run_id"], "--json")
    assert shown.code == 0, shown.stderr
    stored = case(shown.json(), "refund-window")
    assert [(c["name"], c["passed"]) for c in stored["checks"]] == [("contains", True), ("refund_policy", True), ("rubric", False)]


def test_the_table_shows_the_judges_reason_beside_the_failed_rubric_check(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = by_criterion(rubric_reply("pass"), refund=rubric_reply("fail", "Promises a cash refund."))
    result = evalkit_cli("run", "shop.refunds", "--provider", "sut")
    assert result.code == 0, result.stderr
    assert "refund_policy (Promises a cash refund.)" in result.stdout
    assert f"Grader:     {YARDSTICK}" in result.stdout


HOSTILE_REASON = (
    "Line one\n::error title=pwned::injected\r\x1b[31mred\x1b[0m [bold]markup[/bold] ##vso[task.complete result=Succeeded]"
    "\u202eevil\u2028" + "x" * 5_000
)


def test_a_hostile_reason_is_one_line_cut_and_escaped_everywhere(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = by_criterion(rubric_reply("pass"), polite=rubric_reply("fail", HOSTILE_REASON))
    code, document = run(evalkit_cli, "--privacy", "full")
    assert code == 0
    detail = next(c["detail"] for c in case(document, "refund-window")["checks"] if c["name"] == "rubric")
    assert detail.startswith("Line one ::error title=pwned::injected [31mred [0m [bold]markup[/bold]")
    assert len(detail) == 300 and detail.endswith("…")
    assert not any(ch in detail for ch in "\n\r\x1b\u202e\u2028")
    table = evalkit_cli("run", "shop.refunds", "--provider", "sut", "--privacy", "full")
    assert table.code == 0, table.stderr
    output = table.stdout + table.stderr
    assert "\x1b" not in output and "\u202e" not in output
    assert [line for line in output.splitlines() if line.lstrip().startswith("::") or "##vso[" in line.lower()] == []
    assert "[bold]markup[/bold]" in table.stdout  # printed as text, never as console markup
    for command in (("show", document["run_id"]), ("report", document["run_id"], "--format", "markdown")):
        shown = evalkit_cli(*command)
        assert shown.code == 0, (command, shown.stderr[-500:])
        assert "\x1b" not in shown.stdout and "##vso[" not in shown.stdout.lower(), command


def test_a_run_with_rubric_checks_and_no_judge_is_refused_naming_the_prompts(
    chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_project(project, chat_server.base_url, judge=False)
    result = evalkit_cli("run", "shop.refunds", "--provider", "sut")
    assert result.code == 2
    assert 'the set\'s rubric checks (prompt "refund-window") are decided by a judge model, and none is configured' in result.stderr
    assert 'with --judge NAME, or set judge = "NAME" in evalkit.toml' in result.stderr
    assert chat_server.requests == [] and not (project / ".evalkit").exists()
    with pytest.raises(UsageError) as called:  # a Python caller gives the judge as a grader option, not a flag
        evaluate_set("shop.refunds", provider="sut", config=load_config(project / "evalkit.toml"), cwd=project)
    assert 'with grader_options={"judge": NAME}, or set judge = "NAME" in evalkit.toml' in str(called.value)
    assert chat_server.requests == [] and not (project / ".evalkit").exists()

    chat_server.model = JUDGE_MODEL
    chat_server.responder = by_criterion(rubric_reply("pass"))
    named = evalkit_cli("run", "shop.refunds", "--provider", "sut", "--judge", "judge", "--json")
    assert named.code == 0, named.stderr
    assert named.json()["grader"] == YARDSTICK


def test_repeats_and_self_judging_are_refused_before_anything_is_called(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    repeats = evalkit_cli("run", "shop.refunds", "--provider", "sut", "--judge-repeats", "3")
    assert repeats.code == 2 and "--judge-repeats applies to judge graders (decision, groundedness)" in repeats.stderr
    itself = evalkit_cli("run", "shop.refunds", "--provider", "judge")
    assert itself.code == 2 and 'the judge "judge" is the provider instance under test' in itself.stderr
    assert judge.requests == [] and not (project / ".evalkit").exists()


def test_a_set_without_rubric_checks_asks_no_judge(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    (project / "evals.yaml").write_text(SET_FILE.replace("      - rubric:", "      - contains_any: [x]\n        # rubric:"), encoding="utf-8")
    code, document = run(evalkit_cli, "--judge", "judge")
    assert code == 0 and document["grader"] == "deterministic"
    assert judge.requests == []


def test_runs_judged_by_another_model_are_not_compared(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    code, first = run(evalkit_cli, "--fail-on-regression")
    assert code == 0, first["verdict"]
    assert first["verdict"]["state"] == "baseline"
    code, again = run(evalkit_cli, "--fail-on-regression")
    assert code == 0 and again["verdict"]["baseline_id"] == first["run_id"]

    judge.model = "judge-model-2026-01-01"
    judge.responder = by_criterion(rubric_reply("fail", "Too vague."))
    code, other = run(evalkit_cli, "--fail-on-regression")
    assert code == 0  # a run of another judge is the first of its own scope, never a regression of the first
    assert other["grader"] == "deterministic:rubric:judge:judge-model-2026-01-01:v1"
    assert other["verdict"]["state"] == "baseline" and other["verdict"].get("baseline_id") in (None, other["run_id"])


def test_an_unusable_judge_fails_the_cases_grading_not_the_answer(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = by_criterion(rubric_reply("pass"), polite="PASS, it is polite.")
    code, document = run(evalkit_cli)
    assert code == 0 and document["status"] == "complete"
    refund = case(document, "refund-window")
    assert refund["yardstick"] == "deterministic:rubric:failed" and not refund["passed"]
    rubric = next(c for c in refund["checks"] if c["name"] == "rubric")
    assert rubric["error"].startswith("Judge failed: the judge's reply was unusable twice (last: no JSON object in the reply)")
    assert "PASS, it is polite" not in json.dumps(document)  # the unusable reply is never quoted in a message
    assert refund["checks"][-1]["name"] == "grading" and refund["checks"][-1]["error"].startswith("Judge failed")
    assert case(document, "opening-hours")["passed"]
    assert document["grader"] == "deterministic" and document["verdict"]["state"] == "not_comparable"
    assert "do not share one yardstick" in document["verdict"]["reason"]


def test_structured_output_is_negotiated_as_for_the_judge_graders(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.response_formats = frozenset({"json_object", "text"})
    judge.refuse_status = 400
    code, document = run(evalkit_cli, "--concurrency", "1")
    assert code == 0 and document["grader"] == YARDSTICK
    assert document["metrics"]["judge"]["structured_output"] == "json_object"
    asked = [(b.get("response_format") or {}).get("type") for b in completions(judge)]
    # The two criteria of a case are asked at once: both try json_schema, the mode is given up once.
    # In the order the server received them: the first criterion's retry may arrive before the
    # second's first request (a kept-alive connection against a new one), so the order is not fixed.
    assert sorted(asked) == ["json_object", "json_object", "json_schema", "json_schema"], asked
    assert asked[0] == "json_schema" and asked[-1] == "json_object", asked
    assert len(document["metrics"]["judge"]["structured_output_refused"]) == 1


def test_schema_and_validate_know_rubric_checks(evalkit_cli: Callable[..., Any], project: Path) -> None:
    schema = evalkit_cli("schema", "golden-set")
    assert schema.code == 0
    assertion = json.loads(schema.stdout)["$defs"]["assertion"]
    assert "rubric" in assertion["properties"] and "rubric" in assertion["dependentSchemas"]
    (project / "evals.yaml").write_text(SET_FILE, encoding="utf-8")
    assert evalkit_cli("validate", "evals.yaml").code == 0
    (project / "blank.yaml").write_text(SET_FILE.replace("The answer is polite.", '"   "'), encoding="utf-8")
    blank = evalkit_cli("validate", "blank.yaml")
    assert blank.code == 2 and "blank.yaml:" in blank.stderr and "rubric" in blank.stderr
