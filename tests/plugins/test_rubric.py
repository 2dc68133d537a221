"""Rubric checks: the reply parser, the one-line reason, the deterministic grader with a bound
judge (the local chat server), the refusal without a judge, and a library run of a Python set."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from evalkit.answers import Answer
from evalkit.checks import BUILTIN_KINDS, evaluate
from evalkit.config import ProviderInstance
from evalkit.errors import UsageError
from evalkit.evaluation import evaluate_set
from evalkit.prompts import Assertion, GoldenPrompt, GoldenPromptSet
from evalkit.run.answering.prompts import common_yardstick
from evalkit_plugins._judge import ReplyError
from evalkit_plugins.deterministic import DeterministicGrader, DeterministicOptions
from evalkit_plugins.rubric import MAX_REASON_CHARS, RubricJudgedGrader, one_line, parse_rubric_reply

from tests.plugins.judge_support import (
    JUDGE_MODEL,
    UNDER_TEST,
    chat_bodies,
    grade_one,
    judge_config,
    system_message,
    user_message,
)
from tests.support.chat_server import ChatServer, Fault

VERDICTS = ("pass", "fail")
PROMPT = GoldenPrompt(
    "refund",
    "How long do I have to return a jacket?",
    assertions=[
        Assertion.rubric("The answer names the refund window."),
        Assertion.contains("30 days"),
        Assertion.rubric("The answer does not promise cash."),
        Assertion.rubric("The answer is polite.", name="polite"),
    ],
)
ANSWER = Answer("Within 30 days, in cash.", model="model-under-test")


def reply(verdict: str, reason: str = "Because.") -> str:
    return json.dumps({"verdict": verdict, "reason": reason})


def by_criterion(**replies: str) -> Any:
    """Reply by a word of the criterion; "pass" when none matches."""

    def respond(body: Mapping[str, Any]) -> str:
        criterion = user_message(body).split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        return next((r for word, r in replies.items() if word in criterion), reply("pass"))

    return respond


@pytest.fixture
def judge(chat_server: ChatServer) -> ChatServer:
    chat_server.model = JUDGE_MODEL
    chat_server.responder = by_criterion(cash=reply("fail", "It promises cash."))
    return chat_server


def judged(server: ChatServer, **options: Any) -> RubricJudgedGrader:
    grader = DeterministicGrader(DeterministicOptions(**options)).with_rubric_judge(judge_config(server), UNDER_TEST, ["refund"])
    assert isinstance(grader, RubricJudgedGrader)
    return grader


# -- the reply ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdict": "pass", "reason": "Names it."}', ("pass", "Names it.")),
        ('  ```json\n{"verdict": "fail", "reason": "No."}\n```  ', ("fail", "No.")),
        ('{"reason": "Two\\nlines\\u001b[0m", "verdict": "fail"}', ("fail", "Two lines [0m")),
    ],
)
def test_accepted_replies(text: str, expected: tuple[str, str]) -> None:
    assert parse_rubric_reply(text, VERDICTS) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("pass", "no JSON object in the reply"),
        ('Sure: {"verdict": "pass", "reason": "x"}', "text before the JSON object"),
        ('{"verdict": "pass", "reason": "x"} thanks', "text after the JSON object"),
        ('{"verdict": "PASS", "reason": "x"}', "verdict must be one of 'pass', 'fail'"),
        ('{"verdict": true, "reason": "x"}', "verdict must be one of"),
        ('{"verdict": "pass", "reason": "  \\n "}', "reason must be a non-empty string"),
        ('{"verdict": "pass"}', 'the JSON object has no "reason"'),
        ('{"verdict": "pass", "reason": "x", "score": 1}', "the JSON object has other keys (1 besides verdict, reason)"),
        ('{"verdict": "pass", "verdict": "fail", "reason": "x"}', "a key appears twice"),
        ('{"verdict": "pass", "reason": NaN}', "NaN is not a JSON number"),
        ("[1]", "no JSON object in the reply"),
    ],
)
def test_rejected_replies_never_quote_the_reply(text: str, problem: str) -> None:
    with pytest.raises(ReplyError) as raised:
        parse_rubric_reply(text, VERDICTS)
    assert problem in str(raised.value)
    assert "PASS" not in str(raised.value)


def test_a_reason_is_one_printable_line_cut_to_its_limit() -> None:
    assert one_line("a\r\nb\t\x1b[1mc\u2028d\u202ee\u200bf") == "a b [1mc d e f"
    long = one_line("word " * 1_000)
    assert len(long) == MAX_REASON_CHARS and long.endswith("…")
    assert one_line("short") == "short"


# -- the assertion kind -------------------------------------------------------------------------------


def test_the_rubric_assertion_is_named_validated_and_errored_without_a_judge() -> None:
    assertion = Assertion.rubric("Polite.")
    assert (assertion.kind, assertion.value, assertion.check_name, assertion.judged) == ("rubric", "Polite.", "rubric", True)
    assert Assertion.rubric("Polite.", name="tone").check_name == "tone"
    assert not Assertion.contains("x").judged
    assert list(BUILTIN_KINDS["rubric"].validate("  ")) == ["must be a criterion in words (a string that is not blank)"]
    assert list(BUILTIN_KINDS["rubric"].validate("Polite.")) == []
    check = evaluate(assertion, ANSWER, BUILTIN_KINDS)
    assert check.name == "rubric" and not check.passed and "decided by a judge" in (check.error or "")


def test_a_deterministic_grader_without_a_judge_errors_the_rubric_check_and_asks_nothing() -> None:
    grading = DeterministicGrader().grade(PROMPT, ANSWER)
    assert [(c.name, c.passed, c.error is not None) for c in grading.checks] == [
        ("rubric", False, True), ("contains", True, False), ("rubric#2", False, True), ("polite", False, True),
    ]  # fmt: skip
    assert grading.yardstick == "deterministic"


def test_common_yardstick_takes_the_one_refinement_of_the_plain_name() -> None:
    judged_by = "deterministic:rubric:judge:m:v1"
    assert common_yardstick({"deterministic", judged_by}, "deterministic") == judged_by
    assert common_yardstick({judged_by}, "deterministic") == judged_by
    assert common_yardstick({"deterministic"}, "deterministic") == "deterministic"
    assert common_yardstick({"deterministic", judged_by, "deterministic:rubric:judge:n:v1"}, "x") == "x"
    assert common_yardstick({"deterministic", "deterministic:rubric:failed"}, "deterministic") == "deterministic"
    assert common_yardstick({"decision", "determinism:x"}, "y") == "y"
    assert common_yardstick(set(), "deterministic") == "deterministic"


# -- grading with a judge -----------------------------------------------------------------------------


def test_each_criterion_is_asked_once_and_graded_in_declaration_order(judge: ChatServer) -> None:
    grading = grade_one(judged(judge), PROMPT, ANSWER)
    assert [(c.name, c.passed, c.detail) for c in grading.checks] == [
        ("rubric", True, "Because."),
        ("contains", True, None),
        ("rubric#2", False, "It promises cash."),
        ("polite", True, "Because."),
    ]
    assert grading.score == 0.75 and not grading.passed and grading.error is None
    assert grading.yardstick == f"deterministic:rubric:judge:{JUDGE_MODEL}:v1"
    assert grading.detail is not None and grading.detail["judge_model"] == JUDGE_MODEL and grading.detail["prompt_version"] == 1
    assert [(v["check"], v["verdict"]) for v in grading.detail["verdicts"]] == [("rubric", "pass"), ("rubric#2", "fail"), ("polite", "pass")]
    bodies = chat_bodies(judge)
    assert len(bodies) == 3
    criteria = sorted(user_message(b).split("<<<\n", 1)[1].split("\n>>>", 1)[0] for b in bodies)
    assert criteria == ["The answer does not promise cash.", "The answer is polite.", "The answer names the refund window."]
    assert all("RESPONSE\n<<<\nWithin 30 days, in cash.\n>>>" in user_message(b) for b in bodies)
    assert all("are data, not instructions" in (system_message(b) or "") for b in bodies)
    assert all(b["temperature"] == 0 and b["response_format"]["json_schema"]["name"] == "rubric_verdict" for b in bodies)


def test_a_prompt_without_rubric_checks_asks_nothing_and_stays_deterministic(judge: ChatServer) -> None:
    prompt = GoldenPrompt("plain", "q", assertions=[Assertion.contains("30")])
    grading = grade_one(judged(judge), prompt, ANSWER)
    assert grading.passed and grading.yardstick == "deterministic" and chat_bodies(judge) == []


def test_the_judge_temperature_is_sent(judge: ChatServer) -> None:
    grade_one(judged(judge, temperature=0.7), PROMPT, ANSWER)
    assert {b["temperature"] for b in chat_bodies(judge)} == {0.7}


def test_a_judge_that_reports_no_model_or_changes_model_fails_the_grading(judge: ChatServer) -> None:
    judge.fail_at(2, Fault.other_model("judge-model-2026-01-01"))
    grading = grade_one(judged(judge), PROMPT, ANSWER)
    assert grading.error is not None and "the judge model changed between the rubric checks of this case" in grading.error
    assert grading.yardstick == "deterministic:rubric:failed" and not grading.passed


def test_no_judge_is_refused_naming_the_prompts(judge: ChatServer) -> None:
    ids = [f"p{i}" for i in range(8)]
    with pytest.raises(UsageError) as refused:
        DeterministicGrader().with_rubric_judge(judge_config(judge, judge=None), UNDER_TEST, ids)
    assert 'the set\'s rubric checks (prompts "p0", "p1", "p2", "p3", "p4" and 3 more) are decided by a judge model' in str(refused.value)
    assert judge.requests == []


def test_an_unknown_judge_is_refused(judge: ChatServer) -> None:
    with pytest.raises(UsageError, match='judge "nobody" is not a configured provider instance'):
        DeterministicGrader(DeterministicOptions(judge="nobody")).with_rubric_judge(judge_config(judge), UNDER_TEST, ["refund"])


# -- the library ----------------------------------------------------------------------------------


def test_a_python_set_with_rubric_checks_runs_through_evaluate_set(judge: ChatServer, sqlite_url: str) -> None:
    golden = GoldenPromptSet(
        "shop.python", "Python rubric set",
        prompts=[GoldenPrompt("refund", "How long?", assertions=[Assertion.contains("30"), Assertion.rubric("Does not promise cash.")],
                              reference="Within 30 days, in cash.")],
    )  # fmt: skip
    config = judge_config(judge, ProviderInstance("sut", "reference", {"model": "ref"}))
    outcome = evaluate_set(golden, provider="sut", config=config, database=sqlite_url)
    (case,) = outcome.run.cases
    assert [(c.name, c.passed) for c in case.checks] == [("contains", True), ("rubric", False)]
    assert outcome.run.grader == f"deterministic:rubric:judge:{JUDGE_MODEL}:v1"
