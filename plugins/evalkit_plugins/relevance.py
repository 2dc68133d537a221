"""The ``relevance`` grader: how relevant is a document to a search query, on the grades 0 to 3?

The judge of an LLM relevance assessor, as in UMBRELA (Upadhyay et al., 2024), which reproduces
the prompt of Thomas et al. (2024, SIGIR) on the TREC Deep Learning scale: 0 = nothing to do with
the query, 1 = related but does not answer it, 2 = some answer, unclear or hidden among other
things, 3 = dedicated to the query and holds the exact answer (the prompt is
``judge_prompts/relevance_v1.toml``). It replies with one JSON object ``{"reason": "…", "grade":
0..3}``, parsed strictly; structured output is negotiated as for every judge.

Three uses:

* ``evalkit judge calibrate --set SET`` on a calibration set of ``grader: relevance`` (its items
  a ``query`` and a ``document``; labels ``[0, 1, 2, 3]``, or ``[0, 1]`` for binary human labels:
  the judge's grade then counts as relevant from 2, the TREC Deep Learning convention);
* ``evalkit retrieval … --judge-unjudged NAME``: the documents a retriever returned that people
  have not judged are graded by it (see :mod:`evalkit.retrieval.holes`);
* ``--grader relevance`` on a golden prompt set: the prompt is the query and the answer the
  document; the mean grade passes from ``pass_grade`` (default 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import attrs
from evalkit.answers import Answer, GenerationRequest
from evalkit.options import one_of, option, whole
from evalkit.prompts import GoldenPrompt

from evalkit_plugins._judge import (
    STRUCTURED_MODES,
    JudgeGraderBase,
    JudgeOptions,
    JudgeVerdict,
    ReplyError,
    json_reply,
    structured_response_format,
)
from evalkit_plugins.judge_prompts import render

__all__ = ["BINARY_RELEVANT_FROM", "RelevanceGrader", "RelevanceOptions", "parse_relevance_reply"]

#: Against binary human labels, a judge grade counts as relevant from this grade on (TREC DL's
#: convention for binary measures on its 0-3 scale).
BINARY_RELEVANT_FROM = 2


def parse_relevance_reply(text: str, max_grade: int) -> tuple[int, str]:
    """``(grade, reason)`` from a judge reply, strictly.

    Accepted: exactly one JSON object ``{"reason": "<text>", "grade": <integer 0..max_grade>}``
    (keys in any order), optionally inside one Markdown code fence, with nothing but whitespace
    around it. Rejected (:class:`ReplyError`, whose message never quotes the reply): text around
    the object, other or duplicate keys, a grade that is not an integer in range (``2.0`` and
    ``"2"`` included), a blank reason.
    """
    value = json_reply(text, ("reason", "grade"))
    grade = value["grade"]
    if type(grade) is not int or not 0 <= grade <= max_grade:
        raise ReplyError(f"grade must be an integer from 0 to {max_grade}")
    reason = value["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise ReplyError("reason must be a non-empty string")
    return grade, " ".join(reason.split())


@attrs.frozen
class RelevanceOptions(JudgeOptions):
    """The judge options plus the relevance grader's own."""

    pass_grade: int = option("grading a prompt set: the lowest mean grade (0..3, inclusive) that passes", default=2, validator=whole(at_least=1, at_most=3))
    structured_output: str = option(
        "how the endpoint is asked for JSON: json_schema, json_object or none", default="json_schema", validator=one_of(*STRUCTURED_MODES)
    )


class RelevanceGrader(JudgeGraderBase):
    """Document relevance judged by a configured judge instance (see the module docstring).

    Built with its :class:`RelevanceOptions`. Asked several times, a case scores the mean grade
    (scaled to 0..1) and passes when that mean reaches ``pass_grade``.
    """

    Options = RelevanceOptions
    name = "relevance"
    check_name = "relevance"
    expected_reply = 'one JSON object {"reason": "<one sentence>", "grade": <integer 0 to 3>} and nothing else'

    def __init__(self, options: RelevanceOptions | None = None) -> None:
        options = options if options is not None else RelevanceOptions()
        super().__init__(options)
        self.grades = self.prompt.strings("grades")
        self.max_grade = len(self.grades) - 1
        self.pass_grade = options.pass_grade
        listed = "\n".join(render(self.prompt.text("grade_line"), index=str(i), text=text) for i, text in enumerate(self.grades))
        self.system_text = render(self.prompt.text("system"), grades=listed)
        self.response_format = structured_response_format(
            options.structured_output,
            "relevance_grade",
            {"reason": {"type": "string"}, "grade": {"type": "integer", "enum": list(range(self.max_grade + 1))}},
        )
        #: Against binary labels (``[0, 1]``): the grade from which the judge's label is 1.
        self.binary_from: int | None = None

    def relevance_request(self, query: str, document: str) -> GenerationRequest:
        """The request that asks how relevant ``document`` is to ``query``."""
        user = render(self.prompt.text("user"), query=query, document=document)
        return GenerationRequest(prompt=user, system_prompt=self.system_text, temperature=0.0, response_format=self.response_format)

    def judge_request(self, prompt: GoldenPrompt, answer: Answer) -> GenerationRequest:
        """Grading a prompt set: the prompt is the query, the answer the document."""
        return self.relevance_request(prompt.prompt, answer.text)

    def item_request(self, item: Any) -> GenerationRequest:
        """The request about one calibration item: its query and document."""
        return self.relevance_request(item.query or "", item.document or "")

    async def agrade_document(self, query: str, document: str) -> tuple[int, str | None]:
        """The judge's grade (0..3) of one document for one query and the model that gave it;
        raises :class:`~evalkit_plugins._judge.JudgeFailure` when no usable reply could be had."""
        assert self._bound is not None
        request = attrs.evolve(self.relevance_request(query, document), model=self._bound.alias, temperature=self.temperature)
        verdict = await self._ask_in_turn(request)
        return verdict.value, verdict.model

    async def alabel(self, item: Any) -> tuple[Any, str | None]:
        """The judge's label of one calibration item: the grade, or — against binary labels — 1
        from :data:`BINARY_RELEVANT_FROM` on, else 0."""
        grade, model = await super().alabel(item)
        if self.binary_from is not None:
            return int(grade >= self.binary_from), model
        return grade, model

    def parse(self, reply: Answer) -> JudgeVerdict:
        """The grade and reason of one reply (see :func:`parse_relevance_reply`)."""
        grade, reason = parse_relevance_reply(reply.text, self.max_grade)
        return JudgeVerdict(grade, f"grade {grade}", Fraction(grade, self.max_grade), reason, reply.model)

    def passes(self, score: Fraction) -> bool:
        """Passing from the mean grade ``pass_grade`` on."""
        return score * self.max_grade >= self.pass_grade

    def summary(self, verdicts: Sequence[JudgeVerdict], score: Fraction) -> str:
        """``Relevance grade 2.00 of 3 (grades 2, 2). <the reason of the lowest grade>``."""
        grades = f" (grades {', '.join(str(v.value) for v in verdicts)})" if len(verdicts) > 1 else ""
        lowest = min(verdicts, key=lambda v: v.score)
        return f"Relevance grade {float(score * self.max_grade):.2f} of {self.max_grade}{grades}. {lowest.text}"

    def judge_scale(self) -> tuple[Any, ...]:
        """The grades, lowest first: ``(0, 1, 2, 3)`` — or ``(0, 1)`` once set to binary labels."""
        if self.binary_from is not None:
            return (0, 1)
        return tuple(range(self.max_grade + 1))

    def judge_on_scale(self, labels: Sequence[Any]) -> RelevanceGrader | None:
        """This judge answering on ``labels``: binary human labels ``[0, 1]`` are met by counting
        a grade from :data:`BINARY_RELEVANT_FROM` on as 1; ``None`` for any other scale."""
        if tuple(labels) == (0, 1) and all(type(v) is int for v in labels):
            self.binary_from = BINARY_RELEVANT_FROM
            return self
        return None

    def verdict_record(self, verdict: JudgeVerdict) -> dict[str, Any]:
        """``{"grade": 2, "reason": "..."}``."""
        return {"grade": verdict.value, "reason": verdict.text}
