"""The ``decision`` grader: a judge model rates how well each answer fulfils its task, on five levels.

Opt-in (``--grader decision``), because it spends a judge's tokens. The judge sees the task — with
the system prompt the answer was produced under, so an answer that ignored "answer in French"
does not pass —, the answer, and the reference answer as evidence when the prompt declares one.
The prompt's assertions are ignored. The level (0–4, the mean when asked several times) is scaled
to 0..1 and passes from 0.6; the yardstick is ``decision:<judge instance>:<reported model>:v<N>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import attrs
from evalkit.answers import Answer, GenerationRequest
from evalkit.options import number, one_of, option
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

__all__ = ["DecisionGrader", "parse_decision_reply", "score_for_level"]

STRUCTURED_OUTPUT = STRUCTURED_MODES

def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:23] + "…"


def parse_decision_reply(text: str, max_level: int) -> tuple[int, str]:
    """``(level, reason)`` from a judge reply, strictly.

    Accepted: exactly one JSON object ``{"level": <integer 0..max_level>, "reason": "<text>"}``,
    optionally inside one Markdown code fence, with nothing but whitespace around it. Rejected
    (:class:`ReplyError`): text before or after the object, other keys, duplicate keys, a level
    that is not an integer in range (``3.0`` and ``"3"`` included), an empty reason.
    """
    value = json_reply(text, ("level", "reason"))
    level = value["level"]
    if type(level) is not int or not 0 <= level <= max_level:
        raise ReplyError(f"level must be an integer from 0 to {max_level}, got {_shown(level)}")
    reason = value["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise ReplyError("reason must be a non-empty string")
    return level, reason.strip()


def score_for_level(level: float | Fraction, max_level: int = 4) -> Fraction:
    """``level / max_level``, capped at 1 (a float level is read as the decimal it prints as)."""
    exact = level if isinstance(level, Fraction) else Fraction(str(level))
    return min(Fraction(1), exact / max_level)


@attrs.frozen
class DecisionOptions(JudgeOptions):
    """The judge options plus the decision grader's own."""

    pass_threshold: float = option("the lowest fulfilment (0..1, inclusive) that passes", default=0.6, validator=number(above=0, at_most=1))
    structured_output: str = option(
        "how the endpoint is asked for JSON: json_schema, json_object or none", default="json_schema", validator=one_of(*STRUCTURED_OUTPUT)
    )


class DecisionGrader(JudgeGraderBase):
    """Task fulfilment judged by a configured judge instance (see the module docstring).

    Built with its :class:`DecisionOptions`: the judge options plus ``pass_threshold`` and
    ``structured_output`` — ``json_schema`` asks the endpoint for the exact object,
    ``json_object`` suits endpoints without JSON-schema support, ``none`` asks for nothing. The
    reply is parsed strictly in every case.
    """

    Options = DecisionOptions
    name = "decision"
    check_name = "fulfilment"
    expected_reply = 'one JSON object {"level": <integer>, "reason": "<one sentence>"} and nothing else'

    def __init__(self, options: DecisionOptions | None = None) -> None:
        options = options if options is not None else DecisionOptions()
        super().__init__(options)
        self.pass_threshold = Fraction(str(options.pass_threshold))
        self.levels = self.prompt.strings("levels")
        self.max_level = len(self.levels) - 1
        listed = "\n".join(
            render(self.prompt.text("level_line"), index=str(i), text=text) for i, text in enumerate(self.levels)
        )
        self.system_text = render(self.prompt.text("system"), levels=listed)
        self.response_format = structured_response_format(
            options.structured_output,
            "fulfilment_verdict",
            {"level": {"type": "integer", "enum": list(range(self.max_level + 1))}, "reason": {"type": "string"}},
        )

    def task(self, prompt: GoldenPrompt) -> str:
        """The task as the judge sees it: the prompt, preceded by its system prompt when it has one."""
        system = prompt.system_prompt
        if system is None or not system.strip():
            return prompt.prompt
        return render(self.prompt.text("task_with_instructions"), system_prompt=system, prompt=prompt.prompt)

    def judge_request(self, prompt: GoldenPrompt, answer: Answer) -> GenerationRequest:
        """The system prompt with the rubric, and the task, response and evidence as the user message."""
        reference = prompt.reference_text
        evidence = ""
        if reference and reference.strip():
            item = render(self.prompt.text("reference_item"), reference=reference)
            evidence = render(self.prompt.text("evidence"), items=item)
        user = render(self.prompt.text("user"), task=self.task(prompt), candidate=answer.text, evidence=evidence)
        return GenerationRequest(
            prompt=user, system_prompt=self.system_text, temperature=0.0, response_format=self.response_format
        )

    def parse(self, reply: Answer) -> JudgeVerdict:
        """The level and reason of one reply (see :func:`parse_decision_reply`)."""
        level, reason = parse_decision_reply(reply.text, self.max_level)
        return JudgeVerdict(level, f"level {level}", score_for_level(level, self.max_level), reason, reply.model)

    def passes(self, score: Fraction) -> bool:
        """Passing from the threshold on (inclusive)."""
        return score >= self.pass_threshold

    def summary(self, verdicts: Sequence[JudgeVerdict], score: Fraction) -> str:
        """``Fulfilment level 2.33 of 4 (levels 2, 3, 2). <the reason of the lowest level>``."""
        level = float(score * self.max_level)
        levels = f" (levels {', '.join(str(v.value) for v in verdicts)})" if len(verdicts) > 1 else ""
        lowest = min(verdicts, key=lambda v: v.score)
        return f"Fulfilment level {level:.2f} of {self.max_level}{levels}. {lowest.text}"

    def judge_scale(self) -> tuple[Any, ...]:
        """The levels, lowest first: ``(0, 1, 2, 3, 4)``."""
        return tuple(range(self.max_level + 1))

    def verdict_record(self, verdict: JudgeVerdict) -> dict[str, Any]:
        """``{"level": 3, "reason": "..."}``."""
        return {"level": verdict.value, "reason": verdict.text}
