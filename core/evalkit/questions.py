"""Golden question sets: labelled questions that measure a retrieval step."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

import attrs

__all__ = [
    "GoldenQuestion",
    "GoldenQuestionSet",
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


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _form(value: QuestionForm | str) -> QuestionForm:
    return value if isinstance(value, QuestionForm) else QuestionForm(str(value).lower())


@attrs.frozen
class GoldenQuestion:
    """A question with every document id that answers it.

    An empty ``expected_document_ids`` declares that nothing in the index answers the question:
    it scores as a hit only when the retriever returns nothing.
    """

    id: str
    question: str
    form: QuestionForm = attrs.field(default=QuestionForm.MATCH, converter=_form)
    expected_document_ids: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    hard_class: str | None = None
    answer_gist: str | None = None

    @property
    def expects_no_result(self) -> bool:
        """True when nothing in the index answers this question."""
        return not self.expected_document_ids


@attrs.frozen
class GoldenQuestionSet:
    """A named collection of labelled questions over one corpus."""

    identifier: str
    name: str
    description: str = ""
    questions: tuple[GoldenQuestion, ...] = attrs.field(default=(), converter=_tuple)


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
