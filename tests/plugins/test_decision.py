"""The ``decision`` grader against scripted judge replies from the local chat-completions server."""

from __future__ import annotations

from fractions import Fraction

import pytest
from evalkit.answers import Answer
from evalkit.components import BoundGenerator, JudgeGrader, ReadinessCheck
from evalkit.errors import GraderUnavailableError, UsageError
from evalkit.prompts import Assertion, GoldenPrompt
from evalkit_plugins._judge import ReplyError
from evalkit_plugins.decision import DecisionGrader, DecisionOptions, parse_decision_reply, score_for_level
from evalkit_plugins.judge_prompts import load

from tests.plugins.judge_support import (
    JUDGE_ALIAS,
    JUDGE_MODEL,
    UNDER_TEST,
    chat_bodies,
    check_names,
    closed_port_url,
    decision_reply,
    grade,
    grade_one,
    judge_config,
    judge_instance,
    replies,
    system_message,
    user_message,
)
from tests.support.chat_server import ChatServer, Fault

PROMPT = GoldenPrompt("greet", "Greet the user", assertions=[Assertion.contains("Bonjour")])
ANSWER = Answer("Hello there!", model="model-under-test")


def bound(server: ChatServer, **options: object) -> DecisionGrader:
    """A decision grader whose judge is ``server``, bound as if ``reference`` were under test."""
    grader = DecisionGrader(DecisionOptions(**options))
    grader.bind_judge(judge_config(server), UNDER_TEST)
    return grader


@pytest.fixture
def judge(chat_server: ChatServer) -> ChatServer:
    """The chat server reporting a dated judge model, as real endpoints do."""
    chat_server.model = JUDGE_MODEL
    return chat_server


# -- scaling and the pass rule ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "score", "passed"),
    [(0, 0.0, False), (2.36, 0.59, False), (2.4, 0.6, True), (4, 1.0, True), (4.0, 1.0, True), (1, 0.25, False), (3, 0.75, True)],
)
def test_levels_scale_to_scores_and_pass_from_0_6(level: float, score: float, passed: bool) -> None:
    grader = DecisionGrader()
    scaled = score_for_level(level)
    assert float(scaled) == score
    assert grader.passes(scaled) is passed


def test_a_level_above_the_rubric_is_capped_at_one() -> None:
    assert score_for_level(5) == 1


@pytest.mark.parametrize(
    ("levels", "score", "passed"),
    [
        ([2, 2, 2, 3, 3], 0.6, True),  # mean level 2.4
        ([2] * 16 + [3] * 9, 0.59, False),  # mean level 2.36
    ],
)
def test_the_mean_level_of_repeats_is_scaled_and_thresholded_exactly(
    judge: ChatServer, levels: list[int], score: float, passed: bool
) -> None:
    judge.responder = replies(*(decision_reply(level) for level in levels))
    grading = grade_one(bound(judge, repeats=len(levels)), PROMPT, ANSWER)
    assert grading.error is None
    assert grading.score == score
    assert grading.passed is passed
    assert grading.checks[0].name == "fulfilment"
    assert grading.checks[0].detail.startswith(f"Fulfilment level {score * 4:.2f} of 4 (levels ")
    assert len(chat_bodies(judge)) == len(levels)


def test_a_custom_pass_threshold_is_inclusive() -> None:
    grader = DecisionGrader(DecisionOptions(pass_threshold=0.75))
    assert grader.passes(score_for_level(3)) is True
    assert grader.passes(score_for_level(2.9)) is False


@pytest.mark.parametrize("options", [{"pass_threshold": 0}, {"pass_threshold": 1.5}, {"repeats": 0}, {"structured_output": "xml"}, {"prompt_version": 99}])
def test_impossible_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        DecisionGrader(DecisionOptions(**options))


# -- the request --------------------------------------------------------------------------------


def test_one_request_at_temperature_0_with_structured_output_and_the_rubric(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(3, "Greets, but not in French."))
    grading = grade_one(bound(judge), PROMPT, ANSWER)

    (body,) = chat_bodies(judge)
    assert body["model"] == JUDGE_ALIAS
    assert body["temperature"] == 0
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["required"] == ["level", "reason"]
    assert schema["properties"]["level"]["enum"] == [0, 1, 2, 3, 4]
    system = system_message(body)
    for index, level in enumerate(load("decision").fields["levels"]):
        assert f"{index}: {level}" in system
    user = user_message(body)
    assert "TASK\n<<<\nGreet the user\n>>>" in user
    assert "RESPONSE\n<<<\nHello there!\n>>>" in user
    assert "EVIDENCE" not in user  # no reference declared: no evidence block

    assert grading.score == 0.75 and grading.passed
    assert grading.checks[0].detail == "Fulfilment level 3.00 of 4. Greets, but not in French."


def test_the_structured_output_mode_can_be_relaxed_for_endpoints_without_json_schema(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(4))
    grade(bound(judge, structured_output="json_object"), [(PROMPT, ANSWER)])
    grade(bound(judge, structured_output="none"), [(PROMPT, ANSWER)])
    first, second = chat_bodies(judge)
    assert first["response_format"] == {"type": "json_object"}
    assert "response_format" not in second


def test_the_system_prompt_the_answer_ran_under_is_part_of_the_task(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(1))
    french = GoldenPrompt("greet-fr", "Greet the user", system_prompt="Answer in French.", reference="Bonjour !")
    grade_one(bound(judge), french, ANSWER)
    user = user_message(chat_bodies(judge)[0])
    task = "Instructions the response had to follow:\nAnswer in French.\n\nTask:\nGreet the user"
    assert f"TASK\n<<<\n{task}\n>>>" in user
    assert user.endswith("EVIDENCE\n<<<\nReference answer: Bonjour !\n>>>")


def test_the_task_keeps_the_system_prompt_untrimmed_and_ignores_a_blank_one() -> None:
    grader = DecisionGrader()
    assert grader.task(GoldenPrompt("p", "Greet the user", system_prompt="  \n", reference="x")) == "Greet the user"
    assert grader.task(GoldenPrompt("p", "Greet the user", system_prompt=" Be brief. ", reference="x")) == (
        "Instructions the response had to follow:\n Be brief. \n\nTask:\nGreet the user"
    )


def test_a_blank_reference_sends_no_evidence_and_braces_in_answers_are_not_placeholders(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(2))
    prompt = GoldenPrompt("p", "Say {task}", reference="   ")
    grade_one(bound(judge), prompt, Answer("I say {candidate} and {evidence}"))
    user = user_message(chat_bodies(judge)[0])
    assert "TASK\n<<<\nSay {task}\n>>>" in user
    assert "RESPONSE\n<<<\nI say {candidate} and {evidence}\n>>>" in user
    assert "EVIDENCE" not in user


# -- yardstick ----------------------------------------------------------------------------------


def test_the_yardstick_names_the_judge_instance_the_reported_model_and_the_prompt_version(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(4))
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert grading.yardstick == f"decision:judge:{JUDGE_MODEL}:v1"
    assert grading.detail == {
        "judge": "judge",
        "judge_model": JUDGE_MODEL,
        "prompt_version": 1,
        "verdicts": [{"level": 4, "reason": "Because."}],
    }


def test_the_judge_model_changing_between_repeats_fails_the_grading(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(4))
    judge.fail_at(2, Fault.other_model("judge-model-2025-06-01"))
    grading = grade_one(bound(judge, repeats=2), PROMPT, ANSWER)
    assert grading.yardstick == "decision:failed"
    assert not grading.passed and grading.score == 0.0
    assert "judge model changed between the repeats" in grading.error
    assert "judge_agreement" not in check_names(grading)


# -- strict parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        '{"level": 3, "reason": "Mostly right."}',
        '  \n{"reason": "Mostly right.", "level": 3}\n',
        '```json\n{"level": 3, "reason": "Mostly right."}\n```',
        '```\n{"level": 3, "reason": "Mostly right."}\n```',
    ],
)
def test_accepted_replies(reply: str) -> None:
    assert parse_decision_reply(reply, 4) == (3, "Mostly right.")


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('Sure! {"level": 3, "reason": "ok"}', "text before the JSON object"),
        ('{"level": 3, "reason": "ok"} Hope this helps.', "text after the JSON object"),
        ('{"level": 3, "reason": "ok"}\n{"level": 2, "reason": "no"}', "text after the JSON object"),
        ('Here you go:\n```json\n{"level": 3, "reason": "ok"}\n```', "text before the JSON object"),
        ("Level 3: mostly right.", "no JSON object"),
        ('{"level": 3, "reason": "ok",}', "not valid JSON"),
        ('[{"level": 3, "reason": "ok"}]', "text before the JSON object"),
        ('{"level": 3}', 'no "reason"'),
        ('{"reason": "ok"}', 'no "level"'),
        ('{"level": 3, "reason": "ok", "confidence": 0.9}', "other keys"),
        ('{"level": 3, "level": 4, "reason": "ok"}', "appears twice"),
        ('{"level": 5, "reason": "ok"}', "integer from 0 to 4, got 5"),
        ('{"level": -1, "reason": "ok"}', "got -1"),
        ('{"level": 3.0, "reason": "ok"}', "got 3.0"),
        ('{"level": "3", "reason": "ok"}', "got '3'"),
        ('{"level": true, "reason": "ok"}', "got True"),
        ('{"level": NaN, "reason": "ok"}', "NaN is not a JSON number"),
        ('{"level": 3, "reason": "  "}', "reason must be a non-empty string"),
        ("", "no JSON object"),
        ('{"level": ' + "[" * 100_000 + "]" * 100_000 + "}", "not valid JSON (nested too deeply at character 509)"),
    ],
)
def test_rejected_replies(reply: str, problem: str) -> None:
    with pytest.raises(ReplyError) as caught:
        parse_decision_reply(reply, 4)
    assert problem in str(caught.value)


def test_an_unparsable_reply_is_asked_again_once(judge: ChatServer) -> None:
    judge.responder = replies('Sure! {"level": 4, "reason": "Perfect."}', decision_reply(4, "Perfect."))
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert grading.error is None and grading.passed
    assert len(chat_bodies(judge)) == 2


def test_two_unparsable_replies_fail_the_grading_without_storing_the_reply_in_the_error(judge: ChatServer) -> None:
    junk = 'I would rate this {"level": 4, "reason": "secret answer text"}'
    judge.responder = replies(junk)
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert len(chat_bodies(judge)) == 2
    assert grading.passed is False and grading.score == 0.0
    assert grading.yardstick == "decision:failed"
    assert grading.error.startswith("Judge failed: the judge's reply was unusable twice (last: text before the JSON object)")
    assert "secret answer text" not in grading.error  # errors are stored at every privacy level
    assert grading.detail["unusable_reply"] == junk  # details only at redacted/full


def test_a_judge_endpoint_failure_fails_the_grading(judge: ChatServer) -> None:
    judge.fail_next(Fault.http_error(400))
    grading = grade_one(bound(judge), PROMPT, ANSWER)
    assert grading.yardstick == "decision:failed"
    assert grading.error.startswith('Judge failed: the judge "judge" failed: openai generator: POST')
    assert len(chat_bodies(judge)) == 1  # a failed call is not a reply to re-ask


# -- repeats ------------------------------------------------------------------------------------


def test_every_verdict_is_kept_as_a_check_and_disagreement_marks_the_case_unstable(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(4, "All there."), decision_reply(2, "Half missing."), decision_reply(4, "Fine."))
    grading = grade_one(bound(judge, repeats=3), PROMPT, ANSWER)
    assert check_names(grading) == [
        "fulfilment",
        "verdict 1/3 = level 4",
        "verdict 2/3 = level 2",
        "verdict 3/3 = level 4",
        "judge_agreement",
    ]
    assert [c.passed for c in grading.checks] == [True, True, False, True, False]
    assert grading.unstable
    assert grading.score == pytest.approx(10 / 12)
    assert grading.checks[2].detail == "Half missing."
    assert grading.checks[0].detail == "Fulfilment level 3.33 of 4 (levels 4, 2, 4). Half missing."
    assert [v["level"] for v in grading.detail["verdicts"]] == [4, 2, 4]


def test_agreeing_repeats_are_stable(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(1))
    grading = grade_one(bound(judge, repeats=2), PROMPT, ANSWER)
    assert not grading.unstable
    assert grading.checks[-1].name == "judge_agreement" and grading.checks[-1].passed
    assert grading.score == 0.25 and not grading.passed


def test_a_single_verdict_adds_no_verdict_checks(judge: ChatServer) -> None:
    judge.responder = replies(decision_reply(1))
    assert check_names(grade_one(bound(judge), PROMPT, ANSWER)) == ["fulfilment"]


# -- binding the judge and readiness ------------------------------------------------------------


def test_the_grader_is_a_judge_grader_with_a_readiness_check() -> None:
    grader = DecisionGrader()
    assert isinstance(grader, JudgeGrader) and isinstance(grader, ReadinessCheck)


def test_no_judge_named_is_refused(chat_server: ChatServer) -> None:
    with pytest.raises(UsageError, match=r'grader_options=\{"judge": NAME\}, or set judge = "NAME"'):
        DecisionGrader().bind_judge(judge_config(chat_server, judge=None), UNDER_TEST)


def test_an_unconfigured_judge_is_refused(chat_server: ChatServer) -> None:
    with pytest.raises(UsageError, match=r'judge "gpt-judge" is not a configured provider instance \(configured: judge\)'):
        DecisionGrader(DecisionOptions(judge="gpt-judge")).bind_judge(judge_config(chat_server), UNDER_TEST)


def test_the_instance_under_test_cannot_judge_itself_by_accident(chat_server: ChatServer) -> None:
    config = judge_config(chat_server)
    under_test = BoundGenerator(object(), "openai", "judge", JUDGE_ALIAS, True)
    with pytest.raises(UsageError, match="is the provider instance under test"):
        DecisionGrader().bind_judge(config, under_test)
    DecisionGrader(DecisionOptions(allow_self_judge=True)).bind_judge(config, under_test)


def test_another_instance_serving_the_same_model_at_the_same_endpoint_is_refused_too(chat_server: ChatServer) -> None:
    twin = judge_instance(chat_server.base_url, name="prod")
    config = judge_config(chat_server, twin)
    under_test = BoundGenerator(object(), "openai", "prod", JUDGE_ALIAS, True)
    with pytest.raises(UsageError, match="serves the model under test"):
        DecisionGrader().bind_judge(config, under_test)
    other_model = BoundGenerator(object(), "openai", "prod", "another-model", True)
    DecisionGrader().bind_judge(config, other_model)


def test_a_reachable_judge_is_ready(chat_server: ChatServer) -> None:
    grader = bound(chat_server)
    grader.check_ready()
    (probe,) = chat_server.requests
    assert (probe.method, probe.path) == ("GET", "/v1/models")  # free: no completion is paid for


def test_an_unreachable_judge_is_not_ready() -> None:
    grader = DecisionGrader()
    grader.bind_judge(judge_config(closed_port_url()), UNDER_TEST)
    with pytest.raises(GraderUnavailableError, match=r'The "decision" grader cannot run: its judge "judge" is not reachable: .*connection failed'):
        grader.check_ready()


def test_an_unbound_grader_is_not_ready_and_fails_gradings_instead_of_raising() -> None:
    grader = DecisionGrader()
    with pytest.raises(GraderUnavailableError):
        grader.check_ready()
    grading = grade_one(grader, PROMPT, ANSWER)
    assert grading.yardstick == "decision:failed" and "no judge is bound" in grading.error


def test_a_fractional_level_is_scaled_exactly() -> None:
    assert score_for_level(Fraction(59, 25)) == Fraction(59, 100)
