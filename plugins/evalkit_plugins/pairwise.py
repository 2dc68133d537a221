"""The pairwise judge: which of two answers to one task is better (``evalkit compare --pairwise-judge``).

Not a grader of its own: the ``deterministic`` grader hands it out (``pairwise_judge``), bound to
the configured provider instance named by ``--pairwise-judge``, and :mod:`evalkit.pairwise` asks
it about every unchanged case of two stored runs, in both orders. It is the shared judge
machinery of :mod:`evalkit_plugins._judge` — binding, readiness, the instance's concurrency, one
retry of an unusable reply — asked with the prompt ``pairwise_v<N>.toml``, which wants exactly
one word: ``A``, ``B`` or ``TIE`` (surrounding whitespace aside; ``"a"``, ``"A."`` or a sentence
are unusable). Plain prompting: no ``response_format`` is sent, so every adapter can judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from evalkit.answers import Answer, GenerationRequest
from evalkit.errors import GenerationError

from evalkit_plugins._judge import JudgeFailure, JudgeGraderBase, JudgeOptions, JudgeVerdict, NotGradable, ReplyError
from evalkit_plugins.judge_prompts import render

__all__ = ["PairwiseJudge", "parse_pairwise_reply"]


def parse_pairwise_reply(text: str, verdicts: Sequence[str]) -> str:
    """The one verdict word of a reply, strictly: exactly one of ``verdicts`` (case and all),
    with nothing but whitespace around it; anything else is a :class:`ReplyError` (whose message
    never quotes the reply)."""
    word = text.strip()
    if word not in verdicts:
        raise ReplyError(f"the reply is not exactly one of {', '.join(verdicts)}")
    return word


class PairwiseJudge(JudgeGraderBase):
    """The judge of two answers to one task (see the module docstring)."""

    name = "pairwise"
    check_name = "pairwise"
    expected_reply = "exactly one word: A, B or TIE"

    def __init__(self, options: JudgeOptions | None = None) -> None:
        super().__init__(options)
        self.verdicts = self.prompt.strings("verdicts")
        self.system_text = self.prompt.text("system")

    def task(self, prompt: str, system_prompt: str | None) -> str:
        """The task as the judge sees it: the prompt, preceded by its system prompt when it has one."""
        if system_prompt is None or not system_prompt.strip():
            return prompt
        return render(self.prompt.text("task_with_instructions"), system_prompt=system_prompt, prompt=prompt)

    def pair_request(self, task: str, first: str, second: str) -> GenerationRequest:
        """The request that shows ``first`` as RESPONSE A and ``second`` as RESPONSE B."""
        user = render(self.prompt.text("user"), task=task, first=first, second=second)
        return GenerationRequest(
            prompt=user, system_prompt=self.system_text, model=self._bound.alias if self._bound else None,
            temperature=self.temperature,
        )  # fmt: skip

    async def aprefer(self, task: str, first: str, second: str) -> tuple[str | None, str | None]:
        """``(verdict, model)``: the verdict ``A`` (the first answer shown), ``B`` or ``TIE`` —
        ``None`` when the reply was unusable twice — and the model the endpoint reported.
        A failed call (unreachable endpoint, an HTTP error after the adapter's retries) raises
        :class:`~evalkit.errors.GenerationError`."""
        try:
            verdict = await self._ask_in_turn(self.pair_request(task, first, second))
        except JudgeFailure as exc:
            if exc.reply is None:
                raise GenerationError(str(exc)) from None
            return None, None
        return verdict.value, verdict.model

    def judge_scale(self) -> tuple[Any, ...]:
        """``("A", "B", "TIE")``."""
        return tuple(self.verdicts)

    def yardstick_for(self, model: str) -> str:
        """``pairwise:<judge>:<model>:v<N>``: who preferred, under which prompt."""
        assert self._bound is not None
        return f"pairwise:{self._bound.instance}:{model}:v{self.prompt.version}"

    def judge_request(self, prompt: Any, answer: Answer) -> GenerationRequest:
        """Not used: a pairwise judge is asked about two answers at once (:meth:`pair_request`)."""
        raise NotGradable("a pairwise judge is asked about two answers at once")

    def parse(self, reply: Answer) -> JudgeVerdict:
        """The verdict word of one reply (see :func:`parse_pairwise_reply`)."""
        word = parse_pairwise_reply(reply.text, self.verdicts)
        return JudgeVerdict(word, word, Fraction(0), "", reply.model)

    def passes(self, score: Fraction) -> bool:
        """Not used: a preference neither passes nor fails."""
        return False

    def summary(self, verdicts: Sequence[JudgeVerdict], score: Fraction) -> str:
        """The verdict words."""
        return ", ".join(v.label for v in verdicts)

    def verdict_record(self, verdict: JudgeVerdict) -> dict[str, Any]:
        """``{"verdict": "A"}``."""
        return {"verdict": verdict.value}
