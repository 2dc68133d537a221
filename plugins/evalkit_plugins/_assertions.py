"""The evaluation of a prompt's assertions that the ``deterministic`` grader and the rubric-judged
grader share (:class:`AssertionGrader`), and the options both take. Its own module so that the
two graders can each build on it without importing one another."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from evalkit import Answer, Check, GoldenPrompt, Grading
from evalkit.checks import BUILTIN_KINDS, AssertionKind, evaluate
from evalkit.options import number, option, text, whole

from evalkit_plugins.judge_options import JudgeOptions

__all__ = ["AssertionGrader", "DeterministicOptions"]


@attrs.frozen
class DeterministicOptions:
    """The options of the judge of rubric checks, used only when the set declares some (``--judge``,
    ``--judge-temperature``, ``--allow-self-judge``); the judge is asked once per criterion."""

    judge: str | None = option(
        "the configured provider instance that decides rubric checks (default: the config's judge)", default=None,
        validator=attrs.validators.optional(text()),
    )
    allow_self_judge: bool = option("let the instance under test decide its own rubric checks", default=False)
    prompt_version: int | None = option(
        "pin an older released rubric judge prompt (default: the newest)", default=None,
        validator=attrs.validators.optional(whole(at_least=1)),
    )
    temperature: float = option("the judge's sampling temperature, 0 to 2", default=0.0, validator=number(at_least=0, at_most=2))

    def judge_options(self) -> JudgeOptions:
        """These options as the judge machinery takes them (asked once per criterion)."""
        return JudgeOptions(
            judge=self.judge, allow_self_judge=self.allow_self_judge, prompt_version=self.prompt_version, temperature=self.temperature
        )


class AssertionGrader:
    """Score = fraction of assertions that hold; passed = all hold: the evaluation the
    ``deterministic`` grader and the rubric-judged grader share.

    A reference-only prompt fails with a check that points to a judge grader. Two assertions that
    yield the same check name are told apart by a ``#2``, ``#3`` suffix.
    """

    name = "deterministic"

    Options = DeterministicOptions

    def __init__(self, options: DeterministicOptions | None = None) -> None:
        self.options = options if options is not None else DeterministicOptions()
        self.assertion_kinds: Mapping[str, AssertionKind] = BUILTIN_KINDS

    def use_assertion_kinds(self, kinds: Mapping[str, AssertionKind]) -> None:
        """Evaluate with ``kinds`` (the built-ins plus those hook plugins add), as the kernel asks."""
        self.assertion_kinds = kinds

    def checks(self, prompt: GoldenPrompt, answer: Answer, decided: Mapping[int, Check] | None = None) -> tuple[Check, ...]:
        """The checks of ``prompt``'s assertions in declaration order; ``decided`` holds those
        already decided elsewhere (a judge's), by assertion index."""
        checks: list[Check] = []
        seen: dict[str, int] = {}
        for index, assertion in enumerate(prompt.assertions):
            check = (decided or {}).get(index) or evaluate(assertion, answer, self.assertion_kinds)
            count = seen[check.name] = seen.get(check.name, 0) + 1
            if count > 1:
                check = attrs.evolve(check, name=f"{check.name}#{count}")  # keeps every other field (judged)
            checks.append(check)
        return tuple(checks)

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Evaluate every assertion of ``prompt`` against ``answer``."""
        if not prompt.assertions:
            check = Check(
                "has_assertions",
                False,
                # stored with the case and shown to a Python caller and the command line alike: no flag
                detail='no deterministic assertions declared; use a judge grader (such as "decision") '
                "for reference-only prompts",
            )
            return Grading(0.0, False, (check,), yardstick=self.name)
        checks = self.checks(prompt, answer)
        held = sum(1 for c in checks if c.passed)
        return Grading(held / len(checks), held == len(checks), checks, yardstick=self.name)
