"""Rubric checks: a judge model decides one criterion of a set, beside the deterministic checks.

A prompt declares ``Assertion.rubric("The answer names the refund window and does not promise
cash.")`` (``rubric: "…"`` in a set file) among its other assertions. The ``deterministic`` grader
evaluates the others as always and asks the run's judge (``--judge NAME`` or the configuration's
``judge``) about each criterion: one named check (default ``rubric``) that passes or fails, with the
judge's reason, reduced to one line, as its detail. Several criteria of one prompt are asked in
parallel, within the judge instance's ``concurrency``.

The judge sees the criterion, the task (with the system prompt the answer was produced under) and
the answer, and replies with one JSON object ``{"verdict": "pass"|"fail", "reason": "…"}``, parsed
strictly; structured output is negotiated as for every judge (:mod:`evalkit_plugins._judge`). A
reply that is unusable twice, an unreachable judge or a judge that reports no model fails the
case's grading (an errored case, left out of comparisons), never the check alone: a judge's
failure is not the answer's.

A case whose prompt has rubric checks is graded under the yardstick
``deterministic:rubric:<judge instance>:<reported model>:v<prompt version>``; one without, under
``deterministic``, and the run under the former (see
:func:`evalkit.run.answering.prompts.common_yardstick`), so runs judged by another model or
prompt are never compared.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from evalkit.answers import Answer, GenerationRequest
from evalkit.components import BoundGenerator
from evalkit.config import Config
from evalkit.errors import UsageError
from evalkit.grading import Check, Grading
from evalkit.prompts import GoldenPrompt
from evalkit.wording import quoted

from evalkit_plugins._assertions import AssertionGrader, DeterministicOptions
from evalkit_plugins._judge import (
    JudgeFailure,
    JudgeGraderBase,
    JudgeOptions,
    JudgeVerdict,
    NotGradable,
    ReplyError,
    json_reply,
    judge_named,
    structured_response_format,
)
from evalkit_plugins.judge_prompts import render

__all__ = ["MAX_REASON_CHARS", "RubricJudge", "RubricJudgedGrader", "one_line", "parse_rubric_reply"]

#: The longest reason kept in a check's detail, in characters (a longer one is cut with "…").
MAX_REASON_CHARS = 300

#: Characters that must not reach a one-line reason: controls (ANSI escapes, carriage returns),
#: line and paragraph separators, bidi overrides and zero-width marks.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def one_line(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` as one line of printable text: control and invisible characters become spaces,
    runs of whitespace one space, and past ``limit`` characters it is cut with "…"."""
    flat = " ".join(_UNPRINTABLE.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def parse_rubric_reply(text: str, verdicts: Sequence[str]) -> tuple[str, str]:
    """``(verdict, reason)`` from a judge reply, strictly; the reason reduced by :func:`one_line`.

    Accepted: exactly one JSON object ``{"verdict": <one of verdicts>, "reason": "<text>"}``,
    optionally inside one Markdown code fence, with nothing but whitespace around it. Rejected
    (:class:`ReplyError`, whose message never quotes the reply): text around the object, other or
    duplicate keys, another verdict (``"PASS"`` included), a blank reason.
    """
    value = json_reply(text, ("verdict", "reason"))
    verdict = value["verdict"]
    if not isinstance(verdict, str) or verdict not in verdicts:
        raise ReplyError(f"verdict must be one of {', '.join(repr(v) for v in verdicts)}")
    reason = value["reason"]
    if not isinstance(reason, str) or not one_line(reason):
        raise ReplyError("reason must be a non-empty string")
    return verdict, one_line(reason)


class RubricJudge(JudgeGraderBase):
    """The judge of rubric checks: the shared judge machinery (binding, readiness, negotiation of
    structured output, one retry of an unusable reply) asked one criterion at a time.

    Not a grader of its own: the ``deterministic`` grader uses it (see :class:`RubricJudgedGrader`).
    """

    name = "rubric"
    check_name = "rubric"
    expected_reply = 'one JSON object {"verdict": "pass" or "fail", "reason": "<one sentence>"} and nothing else'

    def __init__(self, options: JudgeOptions | None = None) -> None:
        super().__init__(options)
        self.verdicts = self.prompt.strings("verdicts")
        self.system_text = self.prompt.text("system")
        self.response_format = structured_response_format(
            "json_schema", "rubric_verdict", {"verdict": {"type": "string", "enum": list(self.verdicts)}, "reason": {"type": "string"}}
        )

    @property
    def bound(self) -> BoundGenerator | None:
        """The bound judge instance (``None`` before :meth:`bind_judge`)."""
        return self._bound

    def task(self, prompt: GoldenPrompt) -> str:
        """The task as the judge sees it: the prompt, preceded by its system prompt when it has one."""
        system = prompt.system_prompt
        if system is None or not system.strip():
            return prompt.prompt
        return render(self.prompt.text("task_with_instructions"), system_prompt=system, prompt=prompt.prompt)

    def criterion_request(self, prompt: GoldenPrompt, answer: Answer, criterion: str) -> GenerationRequest:
        """The request that asks whether ``answer`` to ``prompt`` meets ``criterion``."""
        user = render(self.prompt.text("user"), criterion=criterion, task=self.task(prompt), candidate=answer.text)
        return GenerationRequest(
            prompt=user, system_prompt=self.system_text, model=self._bound.alias if self._bound else None,
            temperature=self.temperature, response_format=self.response_format,
        )  # fmt: skip

    async def decide(self, prompt: GoldenPrompt, answer: Answer, criterion: str) -> JudgeVerdict:
        """The judge's verdict on one criterion; raises :class:`JudgeFailure` when none could be had."""
        return await self._ask_in_turn(self.criterion_request(prompt, answer, criterion))

    def judge_scale(self) -> tuple[Any, ...]:
        """``("fail", "pass")``."""
        return tuple(reversed(self.verdicts))

    def item_request(self, item: Any) -> GenerationRequest:
        """The request about one calibration item: its prompt, answer and criterion."""
        return self.criterion_request(GoldenPrompt(item.id, item.prompt or ""), Answer(item.answer or ""), item.criterion or "")

    def yardstick_for(self, model: str) -> str:
        """``deterministic:rubric:<judge>:<model>:v<N>``, the yardstick of the cases it judges."""
        assert self._bound is not None
        return f"deterministic:rubric:{self._bound.instance}:{model}:v{self.prompt.version}"

    def judge_request(self, prompt: GoldenPrompt, answer: Answer) -> GenerationRequest:
        """Not used: a rubric judge is asked one criterion at a time (:meth:`criterion_request`)."""
        raise NotGradable("a rubric judge is asked one criterion at a time")

    def parse(self, reply: Answer) -> JudgeVerdict:
        """The verdict and reason of one reply (see :func:`parse_rubric_reply`)."""
        verdict, reason = parse_rubric_reply(reply.text, self.verdicts)
        score = Fraction(1) if verdict == self.verdicts[0] else Fraction(0)
        return JudgeVerdict(verdict, verdict, score, reason, reply.model)

    def passes(self, score: Fraction) -> bool:
        """Only the passing verdict passes."""
        return score >= 1

    def summary(self, verdicts: Sequence[JudgeVerdict], score: Fraction) -> str:
        """The reason of the verdict (the first failing one when there are several)."""
        failing = [v for v in verdicts if v.score < 1]
        return (failing or list(verdicts))[0].text

    def verdict_record(self, verdict: JudgeVerdict) -> dict[str, Any]:
        """``{"verdict": "fail", "reason": "..."}``."""
        return {"verdict": verdict.value, "reason": verdict.text}


def _named_prompts(ids: Sequence[str], shown: int = 5) -> str:
    listed = ", ".join(json.dumps(i, ensure_ascii=False) for i in ids[:shown])
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{'prompt' if len(ids) == 1 else 'prompts'} {listed}{more}"


def rubric_judge(options: JudgeOptions, config: Config, under_test: BoundGenerator, rubric_prompts: Sequence[str]) -> RubricJudge:
    """The bound judge of a run whose ``rubric_prompts`` declare rubric checks; a
    :class:`UsageError` naming them when no judge is configured."""
    if not (options.judge or config.judge):
        raise UsageError(
            f"the set's rubric checks ({_named_prompts(rubric_prompts)}) are decided by a judge model, and none is "
            f'configured: name a configured provider instance with {judge_named()}, or set judge = "NAME" in evalkit.toml'
        )
    judge = RubricJudge(options)
    judge.bind_judge(config, under_test)
    return judge


class RubricJudgedGrader(AssertionGrader):
    """The ``deterministic`` grader with a bound judge deciding the prompts' rubric checks.

    Grades asynchronously: the deterministic checks are evaluated as always (on the run's event
    loop; ``regex`` and ``json_schema`` bound their own time), the rubric checks are asked in
    parallel, and the case's grading keeps the declaration order of its checks.
    """

    def __init__(self, options: DeterministicOptions, judge: RubricJudge) -> None:
        super().__init__(options)
        self.judge = judge

    @property
    def judge_instance(self) -> str | None:
        """The judge instance's name."""
        return self.judge.judge_instance

    def check_ready(self) -> None:
        """Ask the judge's adapter, once and for free, whether its endpoint answers."""
        self.judge.check_ready()

    def secret_values(self) -> tuple[str, ...]:
        """The judge's credentials."""
        return self.judge.secret_values()

    async def aclose(self) -> None:
        """Close the judge's connections."""
        await self.judge.aclose()

    @property
    def judge_temperature(self) -> float:
        """The judge's sampling temperature (part of its identity in calibration records)."""
        return self.judge.temperature

    def run_metrics(self, cases: Sequence[Any]) -> Mapping[str, Any]:
        """The judge's identity (instance, prompt version, structured output accepted)."""
        return self.judge.run_metrics(cases)

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Not used by a run (it prefers :meth:`agrade`); rubric checks need the event loop."""
        return asyncio.run(self.agrade(prompt, answer))

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Every assertion of ``prompt``, the rubric ones decided by the judge."""
        criteria = [(i, a) for i, a in enumerate(prompt.assertions) if a.judged]
        if not criteria:
            return super().grade(prompt, answer)
        bound = self.judge.bound
        assert bound is not None
        asked = await asyncio.gather(
            *(self.judge.decide(prompt, answer, str(a.value)) for _, a in criteria), return_exceptions=True
        )
        decided: dict[int, Check] = {}
        records: dict[int, dict[str, Any]] = {}
        failure: JudgeFailure | None = None
        models: set[str | None] = set()
        for (index, assertion), outcome in zip(criteria, asked, strict=True):
            if isinstance(outcome, JudgeFailure):
                failure = failure or outcome
                decided[index] = Check(assertion.check_name, False, error=f"Judge failed: {outcome}", judged=True)
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            decided[index] = Check(assertion.check_name, self.judge.passes(outcome.score), detail=outcome.text, judged=True)
            records[index] = self.judge.verdict_record(outcome)
            models.add(outcome.model)
        checks = self.checks(prompt, answer, decided)
        # Named as the checks finally are (a second "rubric" is "rubric#2").
        verdicts = [{"check": checks[index].name, **record} for index, record in records.items()]
        held = sum(1 for c in checks if c.passed)
        detail: dict[str, Any] = {
            "judge": bound.instance, "judge_model": None, "prompt_version": self.judge.prompt.version, "verdicts": verdicts,
        }  # fmt: skip
        problem = None
        if failure is not None:
            problem = str(failure)
            if failure.reply is not None:
                detail["unusable_reply"] = failure.reply
        elif None in models:
            problem = f'the judge {quoted(bound.instance)} reported no model, so its verdict cannot be attributed'
        elif len(models) > 1:
            problem = f"the judge model changed between the rubric checks of this case ({', '.join(sorted(m for m in models if m))})"
        if problem is not None:
            return Grading(
                held / len(checks), False, checks, yardstick="deterministic:rubric:failed", error=f"Judge failed: {problem}", detail=detail
            )
        (model,) = models
        detail["judge_model"] = model
        yardstick = f"deterministic:rubric:{bound.instance}:{model}:v{self.judge.prompt.version}"
        return Grading(held / len(checks), held == len(checks), checks, yardstick=yardstick, detail=detail)


def with_rubric_judge(
    grader: AssertionGrader, config: Config, under_test: BoundGenerator, rubric_prompts: Sequence[str]
) -> RubricJudgedGrader:
    """``grader`` with a bound judge for ``rubric_prompts`` (see :func:`rubric_judge`), keeping its options and assertion kinds."""
    judge = rubric_judge(grader.options.judge_options(), config, under_test, rubric_prompts)
    judged = RubricJudgedGrader(grader.options, judge)
    judged.use_assertion_kinds(grader.assertion_kinds)
    return judged
