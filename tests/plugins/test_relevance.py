"""The ``relevance`` grader: UMBRELA's 0-3 scale, a strict JSON reply, binary labels met from grade 2."""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction

import pytest
from evalkit.answers import Answer
from evalkit.calibration import CalibrationItem
from evalkit.prompts import GoldenPrompt
from evalkit_plugins._judge import ReplyError
from evalkit_plugins.relevance import RelevanceGrader, RelevanceOptions, parse_relevance_reply

from tests.plugins.judge_support import JUDGE_MODEL, UNDER_TEST, judge_config, user_message
from tests.support.chat_server import ChatServer


def test_a_reply_is_one_object_with_an_integer_grade_and_a_reason() -> None:
    assert parse_relevance_reply('{"reason": "It answers it.", "grade": 3}', 3) == (3, "It answers it.")
    assert parse_relevance_reply('```json\n{"grade": 0, "reason": "Off topic."}\n```', 3) == (0, "Off topic.")


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"reason": "x", "grade": 4}', "grade must be an integer from 0 to 3"),
        ('{"reason": "x", "grade": 2.0}', "grade must be an integer"),
        ('{"reason": "x", "grade": "2"}', "grade must be an integer"),
        ('{"reason": " ", "grade": 2}', "reason must be a non-empty string"),
        ('Grade: {"reason": "x", "grade": 2}', "text before the JSON object"),
        ('{"reason": "x", "grade": 2, "M": 1}', "other keys"),
        ("##final score: 2", "no JSON object"),
    ],
)
def test_anything_else_is_refused(reply: str, problem: str) -> None:
    with pytest.raises(ReplyError, match=problem):
        parse_relevance_reply(reply, 3)


def test_the_prompt_follows_umbrela_and_asks_for_the_grade_of_one_document() -> None:
    grader = RelevanceGrader()
    assert grader.prompt.version == 1 and grader.judge_scale() == (0, 1, 2, 3)
    assert "0 = the document has nothing to do with the query" in grader.system_text
    assert "3 = the document is dedicated to the query and contains the exact answer" in grader.system_text
    assert "(M)" in grader.system_text and "(T)" in grader.system_text and "(O)" in grader.system_text
    request = grader.item_request(CalibrationItem("q/d", 2, query="wing flutter", document="Flutter of {query} wings."))
    assert request.prompt == "QUERY\n<<<\nwing flutter\n>>>\n\nDOCUMENT\n<<<\nFlutter of {query} wings.\n>>>"
    assert request.response_format["json_schema"]["schema"]["properties"]["grade"]["enum"] == [0, 1, 2, 3]


def test_binary_labels_are_met_from_grade_two() -> None:
    grader = RelevanceGrader()
    assert grader.judge_on_scale(("fail", "pass")) is None
    assert grader.judge_on_scale((0, 1)) is grader and grader.judge_scale() == (0, 1)


@pytest.mark.parametrize(("grade", "label"), [(0, 0), (1, 0), (2, 1), (3, 1)])
def test_a_binary_label_is_the_grade_from_two(chat_server: ChatServer, grade: int, label: int) -> None:
    chat_server.model = JUDGE_MODEL
    chat_server.responder = lambda body: json.dumps({"reason": "Scripted.", "grade": grade})
    grader = RelevanceGrader()
    grader.bind_judge(judge_config(chat_server), UNDER_TEST)
    grader.judge_on_scale((0, 1))
    item = CalibrationItem("q/d", label, query="q", document="d")
    assert asyncio.run(grader.alabel(item)) == (label, JUDGE_MODEL)


def test_grading_a_prompt_set_reads_the_prompt_as_query_and_the_answer_as_document(chat_server: ChatServer) -> None:
    chat_server.model = JUDGE_MODEL
    chat_server.responder = lambda body: json.dumps({"reason": "Partly.", "grade": 2})
    grader = RelevanceGrader(RelevanceOptions(pass_grade=2))
    grader.bind_judge(judge_config(chat_server), UNDER_TEST)
    grading = asyncio.run(grader.agrade(GoldenPrompt("p1", "what is flutter"), Answer("Flutter is an oscillation.")))
    assert grading.passed and grading.score == float(Fraction(2, 3))
    assert grading.yardstick == f"relevance:judge:{JUDGE_MODEL}:v1"
    assert grading.checks[0].detail == "Relevance grade 2.00 of 3. Partly."
    assert "QUERY\n<<<\nwhat is flutter\n>>>" in user_message(chat_server.requests[-1].body)
