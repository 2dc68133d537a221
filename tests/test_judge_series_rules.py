"""Series rules for graded runs: a grading that could not be made never yields a comparable yardstick,
and the yardstick reasons come before the identity reason (reference §3.6, §4.3 step 6)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from evalkit.answers import Answer, GenerationRequest, ServingIdentity
from evalkit.checks import BUILTIN_KINDS
from evalkit.components import BoundGenerator
from evalkit.evaluation import verdict_for
from evalkit.prompts import GoldenPrompt
from evalkit.runner import execute_prompts, run_yardstick
from evalkit.runs import CaseResult, Run, RunStatus
from evalkit.tolerance import Tolerances


class _Echo:
    def generate(self, request: GenerationRequest) -> Answer:
        return Answer(request.prompt, model="m")


class _Raising:
    name = "decision"

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> None:
        raise RuntimeError("judge exploded")


class _Store:
    def __init__(self) -> None:
        self.cases: list[CaseResult] = []

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        self.cases.extend(cases)


def test_a_grader_that_raises_yields_a_failed_yardstick_and_the_run_is_never_comparable() -> None:
    store = _Store()
    bound = BoundGenerator(_Echo(), "echo", "inst", "alias", True)
    prompts = [GoldenPrompt("a", "hi", reference="hi"), GoldenPrompt("b", "ho", reference="ho")]
    asyncio.run(
        execute_prompts(
            run=Run("r", "s", "decision"), prompts=prompts, bound=bound, grader=_Raising(), repository=store,
            kinds=BUILTIN_KINDS, concurrency=1, privacy="metadata",
        )
    )
    assert [c.yardstick for c in store.cases] == ["decision:failed", "decision:failed"]
    assert all(not c.errored and not c.passed for c in store.cases)
    assert store.cases[0].checks[-1].error == "RuntimeError: judge exploded"
    assert run_yardstick(store.cases, "decision") == "decision:failed"


def _run(grader: str, yardsticks: Sequence[str], identity: ServingIdentity | None) -> Run:
    cases = [CaseResult(f"c{i}", True, 1.0, yardstick=y) for i, y in enumerate(yardsticks)]
    return Run("r", "s", grader, status=RunStatus.COMPLETE, cases=cases, identity=identity, identity_note="ad-hoc run")


def test_the_yardstick_reasons_come_before_the_identity_reason() -> None:
    failed = verdict_for(_run("decision:failed", ["decision:failed"], None), object(), Tolerances())
    assert failed.state == "not_comparable"
    assert 'no grading of this run could be made (stored as "decision:failed")' in failed.reason
    mixed = verdict_for(_run("decision", ["decision:j:m:v1", "decision:failed"], None), object(), Tolerances())
    assert "do not share one yardstick" in mixed.reason
    unverified = verdict_for(_run("decision:j:m:v1", ["decision:j:m:v1"], None), object(), Tolerances())
    assert "no single verified serving identity" in unverified.reason
