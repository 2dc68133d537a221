"""The ``groundedness`` grader: is a RAG answer supported by the passages it was given?

One property per judge. The judge sees only the passages the answer carries (``Answer.passages``)
and the answer — not the question, not a reference — is told to ignore outside knowledge, and
replies with one line: ``SUPPORTED``, ``PARTIAL`` or ``UNSUPPORTED``, a tab, then the claim it could
least support. SUPPORTED passes (score 1), PARTIAL scores 0.5 and fails, UNSUPPORTED scores 0.
The claim is kept in the verdict check's detail (``redacted``/``full`` privacy) and printed for
failed cases. An answer without passages is not sent to the judge: its grading fails with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from evalkit.answers import Answer, GenerationRequest
from evalkit.errors import PluginError
from evalkit.prompts import GoldenPrompt

from evalkit_plugins._judge import JudgeGraderBase, JudgeOptions, JudgeVerdict, NotGradable, ReplyError
from evalkit_plugins.judge_prompts import render

__all__ = ["GroundednessGrader", "parse_groundedness_reply"]

NO_PASSAGES = (
    "the answer carries no passages, so its groundedness cannot be judged; the groundedness grader "
    "needs a generator that reports the passages it was given (Answer.passages)"
)


def parse_groundedness_reply(text: str, verdicts: Sequence[str]) -> tuple[str, str]:
    """``(verdict, claim)`` from a judge reply, strictly.

    Accepted: one line — surrounding whitespace aside — made of a verdict word in capitals, a tab
    (or spaces), then the claim the judge could least support; the claim may be empty only for the
    passing verdict. Rejected (:class:`ReplyError`): more than one line, anything before the
    verdict (``Verdict: PARTIAL``, ``**PARTIAL**``), another word, a failing verdict without a claim.
    """
    lines = text.strip().splitlines()
    if not lines:
        raise ReplyError("an empty reply")
    if len(lines) > 1:
        raise ReplyError(f"{len(lines)} lines instead of one")
    words = "|".join(re.escape(v) for v in sorted(verdicts, key=len, reverse=True))
    match = re.fullmatch(rf"({words})(?:[\t ]+(.*))?", lines[0])
    if match is None:
        raise ReplyError(f"the line does not start with {', '.join(verdicts)} followed by a tab")
    verdict, claim = match.group(1), (match.group(2) or "").strip()
    if verdict != verdicts[0] and not claim:
        raise ReplyError(f"{verdict} without the claim the judge could least support")
    return verdict, claim


class GroundednessGrader(JudgeGraderBase):
    """Groundedness judged by a configured judge instance (see the module docstring).

    Built with the :class:`~evalkit_plugins._judge.JudgeOptions`. Asked several
    times, the case scores the mean and passes only when every verdict is SUPPORTED.
    """

    name = "groundedness"
    check_name = "grounded"
    expected_reply = "one line: SUPPORTED, PARTIAL or UNSUPPORTED, a tab, then the least-supported claim"

    def __init__(self, options: JudgeOptions | None = None) -> None:
        super().__init__(options)
        self.verdicts = self.prompt.strings("verdicts")
        scores = self.prompt.fields.get("scores")
        if not isinstance(scores, list) or len(scores) != len(self.verdicts):
            raise PluginError(f"judge prompt {self.prompt.file_name} needs one score per verdict")
        self.scores = {v: Fraction(str(s)) for v, s in zip(self.verdicts, scores, strict=True)}

    def judge_request(self, prompt: GoldenPrompt, answer: Answer) -> GenerationRequest:
        """The course prompt with the numbered passages and the answer; no system prompt."""
        if not answer.passages:
            raise NotGradable(NO_PASSAGES)
        passages = self.prompt.text("passage_separator").join(
            render(self.prompt.text("passage"), number=str(i), text=passage.text)
            for i, passage in enumerate(answer.passages, 1)
        )
        user = render(self.prompt.text("user"), passages=passages, answer=answer.text)
        return GenerationRequest(prompt=user, temperature=0.0)

    def parse(self, reply: Answer) -> JudgeVerdict:
        """The verdict and claim of one reply (see :func:`parse_groundedness_reply`)."""
        verdict, claim = parse_groundedness_reply(reply.text, self.verdicts)
        return JudgeVerdict(verdict, verdict, self.scores[verdict], claim, reply.model)

    def passes(self, score: Fraction) -> bool:
        """Only full support passes."""
        return score >= self.scores[self.verdicts[0]]

    def summary(self, verdicts: Sequence[JudgeVerdict], score: Fraction) -> str:
        """``PARTIAL; least supported: <claim>`` (with every verdict when asked several times)."""
        weakest = min(verdicts, key=lambda v: v.score)
        head = weakest.label if len(verdicts) == 1 else f"verdicts {', '.join(v.label for v in verdicts)}"
        return f"{head}; least supported: {weakest.text}" if weakest.text else head

    def verdict_record(self, verdict: JudgeVerdict) -> dict[str, Any]:
        """``{"verdict": "PARTIAL", "claim": "..."}``."""
        return {"verdict": verdict.value, "claim": verdict.text}
