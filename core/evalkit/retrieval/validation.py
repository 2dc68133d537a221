"""Rules a golden question set must follow, checked before any retriever is called."""

from __future__ import annotations

import re

from evalkit.errors import SetValidationError
from evalkit.questions import GoldenQuestionSet, QuestionForm

__all__ = ["IDENTIFIER_PATTERN", "check_question_set", "validate_question_set"]

#: Lowercase segments of ``[a-z0-9_]`` separated by single dots: ``package.set``.
IDENTIFIER_PATTERN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def validate_question_set(question_set: GoldenQuestionSet) -> list[str]:
    """Every problem with ``question_set``; each names the set, the question id and the field.

    Rules: identifier like ``package.set``; a non-empty name; at least one question; question
    ids non-empty and unique; question text non-empty; form a :class:`QuestionForm`; expected
    ids non-empty strings without repeats (an empty list is allowed: "nothing answers this");
    hard class ``None`` or a non-empty string.
    """
    where = f'question set "{question_set.identifier}"'
    problems: list[str] = []
    if not isinstance(question_set.identifier, str) or not IDENTIFIER_PATTERN.fullmatch(question_set.identifier):
        problems.append(
            f"{where}: field identifier must be lowercase segments of a-z, 0-9 and _ joined by dots "
            f"(like package.set), got {question_set.identifier!r}"
        )
    if not isinstance(question_set.name, str) or not question_set.name.strip():
        problems.append(f"{where}: field name must not be empty")
    if not question_set.questions:
        problems.append(f"{where}: field questions must hold at least one question")
    seen: set[str] = set()
    for index, question in enumerate(question_set.questions):
        qid = question.id if isinstance(question.id, str) and question.id else f"#{index + 1}"
        at = f'{where}, question "{qid}"'
        if not isinstance(question.id, str) or not question.id:
            problems.append(f"{at}: field id must be a non-empty string")
        elif question.id in seen:
            problems.append(f"{at}: field id is used by more than one question")
        else:
            seen.add(question.id)
        if not isinstance(question.question, str) or not question.question.strip():
            problems.append(f"{at}: field question must not be empty")
        if not isinstance(question.form, QuestionForm):
            problems.append(f"{at}: field form must be one of {', '.join(f.value for f in QuestionForm)}")
        if question.hard_class is not None and (not isinstance(question.hard_class, str) or not question.hard_class):
            problems.append(f"{at}: field hard_class must be a non-empty string or absent")
        expected_seen: set[str] = set()
        for number, target in enumerate(question.expected_document_ids, start=1):
            field = f"expected_document_ids[{number}]"
            if not isinstance(target, str) or not target:
                problems.append(f"{at}: field {field} must be a non-empty document id")
            elif target in expected_seen:
                problems.append(f"{at}: field {field} repeats document id {target!r}")
            else:
                expected_seen.add(target)
    return problems


def check_question_set(question_set: GoldenQuestionSet) -> None:
    """Raise :class:`SetValidationError` listing every problem with ``question_set``."""
    problems = validate_question_set(question_set)
    if problems:
        raise SetValidationError(problems)
