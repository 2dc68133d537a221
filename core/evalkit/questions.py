"""Golden question sets: labelled questions that measure a retrieval step."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sized
from typing import Any

import attrs

from .errors import UsageError
from .shapes import members_up_to, plain_text, plain_texts, short_repr

__all__ = [
    "GoldenQuestion",
    "GoldenQuestionSet",
    "MAX_QUESTIONS",
    "QuestionForm",
    "RetrievalProvenance",
    "NOT_APPLICABLE",
]

#: Declared for a provenance field that does not apply (a lexical retriever has no model).
NOT_APPLICABLE = "not-applicable"


class QuestionForm(str, enum.Enum):
    """How a question relates to the wording of the documents that answer it."""

    #: The question's vocabulary overlaps the target document.
    MATCH = "match"
    #: An everyday rewording with little overlap — where retrieval problems live.
    GAP = "gap"
    #: Not labelled: standard collections (BEIR, TREC) say nothing about wording; the run's
    #: by-form table leaves these questions out rather than calling them ``match``.
    UNSPECIFIED = "unspecified"


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


#: The most questions one set may hold: a provider handing a generator that never ends to
#: ``GoldenQuestionSet`` had it made into a tuple, memory growing, until ``set_load_timeout``.
MAX_QUESTIONS = 1_000_000


def _questions(value: Iterable[Any] | None) -> tuple[Any, ...]:
    """A set's questions as kept: a tuple; an iterator is read up to :data:`MAX_QUESTIONS` and
    refused past it (:class:`~evalkit.errors.SetTooLarge`), a list kept whole (the check names
    its size)."""
    if value is None or isinstance(value, Sized):
        return _tuple(value)
    return members_up_to(value, MAX_QUESTIONS, "questions")


def _form(value: QuestionForm | str) -> QuestionForm:
    """``form`` as kept; a :class:`~evalkit.errors.UsageError` (evalkit's error for bad input, a
    ``ValueError``) naming the field and the forms there are, for one that is none of them."""
    if isinstance(value, QuestionForm):
        return value
    try:
        return QuestionForm(str(value).lower())
    except ValueError:
        forms = ", ".join(form.value for form in QuestionForm)
        raise UsageError(f"GoldenQuestion form must be one of {forms}, got {short_repr(value)}") from None


def _grades(value: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen
class GoldenQuestion:
    """A question with every document id that answers it.

    An empty ``expected_document_ids`` declares that nothing in the index answers the question:
    it scores as a hit only when the retriever returns nothing.

    ``grades`` (graded relevance, as a qrels file gives it) holds one integer per expected id,
    in the same order; ``None`` means every expected id is relevant with grade 1. nDCG uses the
    grade as the gain; the binary metrics count an id as relevant when its grade reaches the
    run's threshold (default 1); a grade of 0 or below is judged non-relevant. Build a graded
    question with :meth:`graded`.
    """

    id: str = attrs.field(converter=plain_text)
    question: str = attrs.field(converter=plain_text)
    form: QuestionForm = attrs.field(default=QuestionForm.MATCH, converter=_form)
    expected_document_ids: tuple[str, ...] = attrs.field(default=(), converter=attrs.converters.pipe(_tuple, plain_texts))
    hard_class: str | None = attrs.field(default=None, converter=plain_text)
    answer_gist: str | None = attrs.field(default=None, converter=plain_text)
    grades: tuple[int, ...] | None = attrs.field(default=None, converter=_grades)

    @classmethod
    def graded(
        cls, id: str, question: str, judgements: Mapping[str, int], **fields: Any
    ) -> GoldenQuestion:
        """A question whose expected ids carry grades: ``{document id: grade}`` in qrels order."""
        return cls(id, question, expected_document_ids=tuple(judgements), grades=tuple(judgements.values()), **fields)

    @property
    def expects_no_result(self) -> bool:
        """True when nothing in the index answers this question (no judged document at all)."""
        return not self.expected_document_ids

    def judgements(self) -> dict[str, int]:
        """``{expected id: grade}``; grade 1 for every id of an ungraded question."""
        if self.grades is None:
            return dict.fromkeys(self.expected_document_ids, 1)
        return dict(zip(self.expected_document_ids, self.grades, strict=False))


@attrs.frozen
class GoldenQuestionSet:
    """A named collection of labelled questions over one corpus."""

    identifier: str = attrs.field(converter=plain_text)
    name: str = attrs.field(converter=plain_text)
    description: str = attrs.field(default="", converter=plain_text)
    questions: tuple[GoldenQuestion, ...] = attrs.field(default=(), converter=_questions)


@attrs.frozen
class RetrievalProvenance:
    """What a retriever declares about the corpus and the pipeline it searches.

    ``corpus_revision`` and the labels of the question set make the benchmark; model, chunking
    and pipeline make the variant (a treatment); ``execution_revision`` is recorded only.
    """

    corpus_revision: str
    model_revision: str
    chunking_identity: str
    pipeline_identity: str
    execution_revision: str | None = None
