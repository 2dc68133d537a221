"""Rules a golden question set must follow, checked before any retriever is called."""

from __future__ import annotations

from evalkit import questions as questions_module
from evalkit.errors import SetValidationError
from evalkit.questions import GoldenQuestionSet, QuestionForm
from evalkit.shapes import MAX_NAME_CHARS, set_label, set_limit_passed, short_repr, too_long
from evalkit.validation import IDENTIFIER_PATTERN, has_visible_text, members_with_ids, set_problems

from ..wording import counted
from .ranking import MAX_DOCUMENT_ID_CHARS

__all__ = ["IDENTIFIER_PATTERN", "check_question_set", "question_set_problems", "validate_question_set"]


def question_set_problems(question_set: GoldenQuestionSet) -> list[str]:
    """Every problem with ``question_set``; each names the set, the question id and the field.

    Rules: identifier like ``package.set``; a non-empty name; at least one question; question
    ids non-empty and unique; question text non-empty; form a :class:`QuestionForm`; expected
    ids non-empty strings of at most 1,000 characters without repeats (an empty list is allowed:
    "nothing answers this");
    hard class ``None`` or a non-empty string of at most 1,000 characters; grades, when given, one integer per expected id.
    """
    where = set_label(question_set.identifier, "question set")
    problems = set_problems(where, question_set.identifier, question_set.name, question_set.questions, "question")
    if len(question_set.questions) > questions_module.MAX_QUESTIONS:  # a list that long (an iterator was refused)
        problems.append(f"{where}: field questions: {set_limit_passed('the set holds', questions_module.MAX_QUESTIONS, 'questions')}")
        return problems
    for at, question, id_problems in members_with_ids(where, question_set.questions, "question"):
        problems.extend(id_problems)
        if not isinstance(question.question, str) or not has_visible_text(question.question):
            problems.append(f"{at}: field question must not be empty (or hold only whitespace and control characters)")
        if not isinstance(question.form, QuestionForm):
            problems.append(f"{at}: field form must be one of {', '.join(f.value for f in QuestionForm)}")
        if question.hard_class is not None and (not isinstance(question.hard_class, str) or not question.hard_class):
            problems.append(f"{at}: field hard_class must be a non-empty string or absent")
        elif question.hard_class is not None and (long := too_long(question.hard_class, MAX_NAME_CHARS)):
            # a class names a row of the by-class table, kept in every run's metrics
            problems.append(f"{at}: field hard_class {long}")
        expected_seen: set[str] = set()
        for number, target in enumerate(question.expected_document_ids, start=1):
            field = f"expected_document_ids[{number}]"
            if not isinstance(target, str) or not target:
                problems.append(f"{at}: field {field} must be a non-empty document id")
            elif long := too_long(target, MAX_DOCUMENT_ID_CHARS):
                problems.append(f"{at}: field {field} {long}")
            elif target in expected_seen:
                problems.append(f"{at}: field {field} repeats document id {short_repr(target)}")
            else:
                expected_seen.add(target)
        grades = question.grades
        if grades is not None:
            if len(grades) != len(question.expected_document_ids):
                problems.append(
                    f"{at}: field grades has {counted(len(grades), 'grade')} for {counted(len(question.expected_document_ids), 'expected id')}"
                )
            for number, grade in enumerate(grades, start=1):
                if isinstance(grade, bool) or not isinstance(grade, int):
                    problems.append(f"{at}: field grades[{number}] must be an integer (got {short_repr(grade)})")
                elif not -(2**31) <= grade < 2**31:
                    problems.append(f"{at}: field grades[{number}] must be from -2,147,483,648 to 2,147,483,647 (got {short_repr(grade)})")
    return problems


def validate_question_set(question_set: GoldenQuestionSet) -> None:
    """Raise :class:`SetValidationError` listing every problem with ``question_set``.

    The counterpart of :func:`evalkit.validate_prompt_set`; :func:`question_set_problems` returns
    the list instead. Anything but a :class:`GoldenQuestionSet` (its identifier, a prompt set) is
    a :class:`~evalkit.errors.UsageError` naming the argument.
    """
    from evalkit.arguments import check_arguments, one_of

    check_arguments("validate_question_set", {"question_set": question_set}, {"question_set": one_of(GoldenQuestionSet)})
    problems = question_set_problems(question_set)
    if problems:
        raise SetValidationError(problems)


#: The earlier name of :func:`validate_question_set`.
check_question_set = validate_question_set
