"""Question-set rules: every problem is found and names the set, the question and the field."""

from __future__ import annotations

import attrs
import pytest
from evalkit.errors import SetValidationError
from evalkit.questions import GoldenQuestion, GoldenQuestionSet
from evalkit.retrieval.validation import check_question_set, question_set_problems

GOOD = GoldenQuestionSet(
    "demo.docs",
    "Demo docs",
    questions=[
        GoldenQuestion("parse-json", "How do I parse JSON?", "match", ["json.loads"], "near-duplicate"),
        GoldenQuestion("nothing", "How do I order a pizza?", "gap", []),
    ],
)


def with_question(**changes) -> GoldenQuestionSet:
    return attrs.evolve(GOOD, questions=[attrs.evolve(GOOD.questions[0], **changes), GOOD.questions[1]])


def test_a_good_set_has_no_problems():
    assert question_set_problems(GOOD) == []
    check_question_set(GOOD)


@pytest.mark.parametrize("identifier", ["", "Demo.docs", "demo..docs", "demo.", ".demo", "demo-docs", "demo docs"])
def test_identifier_must_be_dotted_lowercase_segments(identifier):
    problems = question_set_problems(attrs.evolve(GOOD, identifier=identifier))
    assert len(problems) == 1
    assert "field identifier" in problems[0] and f'question set "{identifier}"' in problems[0]


@pytest.mark.parametrize("identifier", ["demo", "demo.docs", "evalkit_stdlib.docs", "a1.b_2.c3"])
def test_accepted_identifiers(identifier):
    assert question_set_problems(attrs.evolve(GOOD, identifier=identifier)) == []


def test_name_must_not_be_empty():
    problems = question_set_problems(attrs.evolve(GOOD, name=" "))
    assert problems == ['question set "demo.docs": field name must not be empty']


def test_a_set_needs_a_question():
    problems = question_set_problems(attrs.evolve(GOOD, questions=[]))
    assert problems == ['question set "demo.docs": field questions must hold at least one question']


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"question": ""}, "field question"),
        ({"question": "  "}, "field question"),
        ({"expected_document_ids": ["json.loads", ""]}, "field expected_document_ids[2]"),
        ({"expected_document_ids": ["json.loads", "json.loads"]}, "field expected_document_ids[2]"),
        ({"expected_document_ids": ["json.loads", 7]}, "field expected_document_ids[2]"),
        ({"hard_class": ""}, "field hard_class"),
        ({"hard_class": "h" * 1_001}, "field hard_class is 1,001 characters long, more than the 1,000 allowed"),
    ],
)
def test_each_question_rule_names_set_question_and_field(changes, field):
    problems = question_set_problems(with_question(**changes))
    assert len(problems) == 1
    assert problems[0].startswith('question set "demo.docs", question "parse-json": ')
    assert field in problems[0]


@pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u200b", "\x1b", "\u2028"])
def test_a_question_without_a_visible_id_is_named_by_position(blank):
    # an id of only whitespace or invisible characters showed as a blank cell and named nothing
    problems = question_set_problems(with_question(id=blank))
    assert problems == [
        'question set "demo.docs", question "#1": field id must be a non-empty string (not only whitespace and control characters)'
    ]


def test_duplicate_question_ids_are_rejected():
    duplicate = attrs.evolve(GOOD.questions[1], id="parse-json")
    problems = question_set_problems(attrs.evolve(GOOD, questions=[GOOD.questions[0], duplicate]))
    assert problems == ['question set "demo.docs", question "parse-json": field id is used by more than one question']


def test_an_empty_expected_list_is_allowed():
    assert question_set_problems(with_question(expected_document_ids=[])) == []


def test_every_problem_is_reported_at_once():
    broken = attrs.evolve(
        GOOD,
        identifier="Bad",
        name="",
        questions=[GoldenQuestion("a", "", expected_document_ids=["", "x", "x"], hard_class=""), GoldenQuestion("a", "q")],
    )
    problems = question_set_problems(broken)
    assert len(problems) == 7
    with pytest.raises(SetValidationError) as caught:
        check_question_set(broken)
    assert caught.value.problems == tuple(problems)


@pytest.mark.parametrize("text", ["", "   ", "\x00\x00", "\x1b\r\n", "\u200b\u202e"])
def test_a_question_of_only_whitespace_or_control_characters_is_empty(text):
    (problem,) = question_set_problems(with_question(question=text))
    assert 'question "parse-json": field question must not be empty' in problem


def test_a_question_set_past_the_limit_is_a_problem_and_an_endless_iterator_is_not_read_for_ever(monkeypatch) -> None:
    import evalkit.questions
    from evalkit.errors import SetTooLarge
    from evalkit.retrieval.validation import question_set_problems

    from tests.support.members import numbered

    monkeypatch.setattr(evalkit.questions, "MAX_QUESTIONS", 3)
    made: list[int] = []

    def questions(count: int | None):
        return numbered(lambda n: GoldenQuestion(f"q{n}", "question", expected_document_ids=["d"]), count, made)

    assert question_set_problems(GoldenQuestionSet(identifier="a.b", name="n", questions=questions(3))) == []
    assert question_set_problems(GoldenQuestionSet(identifier="a.b", name="n", questions=list(questions(4)))) == [
        'question set "a.b": field questions: the set holds more than 3 questions, the most evalkit takes in one set'
    ]
    made.clear()
    with pytest.raises(SetTooLarge, match="hold more than 3 questions"):
        GoldenQuestionSet(identifier="a.b", name="n", questions=questions(None))
    assert made == [0, 1, 2, 3]


@pytest.mark.parametrize("form", ["whatever", 5, ""])
def test_a_question_of_no_form_is_evalkits_usage_error_naming_the_field_and_the_forms(form) -> None:
    """``GoldenQuestion(form="whatever")`` raised a bare ``ValueError`` ("'whatever' is not a valid
    QuestionForm"): a library caller got no evalkit error naming the field and what it takes."""
    from evalkit.errors import UsageError

    with pytest.raises(UsageError, match=r"^GoldenQuestion form must be one of match, gap, unspecified, got ") as raised:
        GoldenQuestion("q", "a question", form=form)
    assert isinstance(raised.value, ValueError), "still a ValueError, for callers that caught one"
    assert GoldenQuestion("q", "a question", form="GAP").form == "gap"
