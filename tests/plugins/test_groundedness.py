"""The ``groundedness`` grader against scripted judge replies from the local chat-completions server."""

from __future__ import annotations

import pytest
from evalkit.answers import Answer
from evalkit.prompts import GoldenPrompt
from evalkit.runs import CaseResult
from evalkit_plugins._judge import JudgeOptions, ReplyError
from evalkit_plugins.groundedness import GroundednessGrader, parse_groundedness_reply

from tests.plugins.judge_support import (
    JUDGE_MODEL,
    UNDER_TEST,
    chat_bodies,
    check_names,
    grade_one,
    judge_config,
    replies,
    system_message,
    user_message,
)
from tests.support.chat_server import ChatServer

PROMPT = GoldenPrompt("receipt", "How long do I have to submit a receipt?", reference="Within 30 days.")
ANSWER = Answer(
    "Submit it within 30 days, by e-mail to the finance team.",
    model="rag-app-1",
    passages=["3.2 Receipts must be submitted within 30 days of the journey.", "3.3 Keep the original."],
)
VERDICTS = ("SUPPORTED", "PARTIAL", "UNSUPPORTED")


def bound(server: ChatServer, **options: object) -> GroundednessGrader:
    """A groundedness grader whose judge is ``server``."""
    grader = GroundednessGrader(JudgeOptions(**options))
    grader.bind_judge(judge_config(server), UNDER_TEST)
    return grader


@pytest.fixture
def judge(chat_server: ChatServer) -> ChatServer:
    """The chat server reporting a dated judge model."""
    chat_server.model = JUDGE_MODEL
    return chat_server


@pytest.mark.parametrize(
    ("reply", "score", "passed", "detail"),
    [
        ("SUPPORTED\t", 1.0, True, "SUPPORTED"),
        ("SUPPORTED\tSubmit within 30 days.", 1.0, True, "SUPPORTED; least supported: Submit within 30 days."),
        ("PARTIAL\tby e-mail to the finance team", 0.5, False, "PARTIAL; least supported: by e-mail to the finance team"),
        ("UNSUPPORTED\tSubmit it within 30 days", 0.0, False, "UNSUPPORTED; least supported: Submit it within 30 days"),
    ],
)
def test_the_three_verdicts(judge: ChatServer, reply: str, score: float, passed: bool, detail: str) -> None:
    judge.responder = replies(reply)
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert grading.error is None
    assert (grading.score, grading.passed) == (score, passed)
    assert grading.yardstick == f"groundedness:judge:{JUDGE_MODEL}:v1"
    (check,) = grading.checks
    assert (check.name, check.passed, check.detail) == ("grounded", passed, detail)
    assert grading.detail["verdicts"] == [{"verdict": reply.split("\t")[0], "claim": reply.split("\t")[1]}]


def test_the_judge_sees_only_the_numbered_passages_and_the_answer(judge: ChatServer) -> None:
    judge.responder = replies("SUPPORTED\t")
    grade_one(bound(judge), PROMPT, ANSWER)
    (body,) = chat_bodies(judge)
    assert body["temperature"] == 0
    assert "response_format" not in body
    assert system_message(body) is None
    user = user_message(body)
    assert "Do not use anything\nyou know outside the PASSAGES" in user
    assert (
        "PASSAGES\n<<<\n[1] 3.2 Receipts must be submitted within 30 days of the journey.\n\n[2] 3.3 Keep the original.\n>>>"
    ) in user
    assert user.endswith("ANSWER\n<<<\nSubmit it within 30 days, by e-mail to the finance team.\n>>>")
    assert PROMPT.prompt not in user and "Within 30 days." not in user  # neither the question nor the reference


def test_an_answer_without_passages_is_an_errored_grading_and_the_judge_is_not_asked(judge: ChatServer) -> None:
    grading = grade_one(bound(judge), PROMPT, Answer("Within 30 days.", model="rag-app-1"))
    assert chat_bodies(judge) == []
    assert grading.yardstick == "groundedness:failed"
    assert "the answer carries no passages" in grading.error
    case = CaseResult.from_grading("receipt", grading)
    assert not case.passed and case.score == 0.0
    assert [(c.name, c.error) for c in case.checks] == [("grading", grading.error)]


@pytest.mark.parametrize(
    "reply",
    ["PARTIAL    by e-mail", "  PARTIAL\tby e-mail  \n"],
)
def test_accepted_replies(reply: str) -> None:
    assert parse_groundedness_reply(reply, VERDICTS) == ("PARTIAL", "by e-mail")


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("Verdict: PARTIAL\tby e-mail", "does not start with SUPPORTED, PARTIAL, UNSUPPORTED"),
        ("**PARTIAL**\tby e-mail", "does not start with"),
        ("partial\tby e-mail", "does not start with"),
        ("PARTIALLY\tby e-mail", "does not start with"),
        ("PARTIAL\tby e-mail\nThe rest is fine.", "2 lines instead of one"),
        ("PARTIAL", "PARTIAL without the claim"),
        ("UNSUPPORTED\t  ", "UNSUPPORTED without the claim"),
        ("   ", "an empty reply"),
    ],
)
def test_rejected_replies(reply: str, problem: str) -> None:
    with pytest.raises(ReplyError) as caught:
        parse_groundedness_reply(reply, VERDICTS)
    assert problem in str(caught.value)


def test_a_malformed_reply_is_asked_again_once_then_the_grading_fails(judge: ChatServer) -> None:
    judge.responder = replies("Verdict: SUPPORTED", "PARTIAL\tby e-mail")
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert grading.error is None and grading.score == 0.5
    judge.reset()
    judge.responder = replies("The answer is supported.")
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert len(chat_bodies(judge)) == 2
    assert grading.yardstick == "groundedness:failed"
    assert "unusable twice" in grading.error and "SUPPORTED, PARTIAL or UNSUPPORTED" in grading.error


def test_repeats_pass_only_when_every_verdict_is_supported(judge: ChatServer) -> None:
    judge.responder = replies("SUPPORTED\t", "PARTIAL\tby e-mail", "SUPPORTED\t")
    grading = grade_one(bound(judge, repeats=3), PROMPT, ANSWER)
    assert grading.score == pytest.approx(2.5 / 3)
    assert not grading.passed
    assert grading.unstable
    assert check_names(grading) == [
        "grounded",
        "verdict 1/3 = SUPPORTED",
        "verdict 2/3 = PARTIAL",
        "verdict 3/3 = SUPPORTED",
        "judge_agreement",
    ]
    assert grading.checks[0].detail == "verdicts SUPPORTED, PARTIAL, SUPPORTED; least supported: by e-mail"
