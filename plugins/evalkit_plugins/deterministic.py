"""The ``deterministic`` grader: evaluates a prompt's assertions with no model call and no tokens."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from evalkit import Answer, Check, GoldenPrompt, Grading
from evalkit.checks import BUILTIN_KINDS, AssertionKind, evaluate


@attrs.frozen
class DeterministicOptions:
    """The deterministic grader takes no options."""


class DeterministicGrader:
    """Score = fraction of assertions that hold; passed = all hold.

    A reference-only prompt fails with a check that points to a judge grader. Two assertions that
    yield the same check name are told apart by a ``#2``, ``#3`` suffix.
    """

    name = "deterministic"

    Options = DeterministicOptions

    def __init__(self, options: DeterministicOptions | None = None) -> None:
        self.assertion_kinds: Mapping[str, AssertionKind] = BUILTIN_KINDS

    def use_assertion_kinds(self, kinds: Mapping[str, AssertionKind]) -> None:
        """Evaluate with ``kinds`` (the built-ins plus those hook plugins add), as the kernel asks."""
        self.assertion_kinds = kinds

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Evaluate every assertion of ``prompt`` against ``answer``."""
        if not prompt.assertions:
            check = Check(
                "has_assertions",
                False,
                detail="no deterministic assertions declared; use a judge grader (--grader decision) "
                "for reference-only prompts",
            )
            return Grading(0.0, False, (check,), yardstick=self.name)
        checks: list[Check] = []
        seen: dict[str, int] = {}
        for assertion in prompt.assertions:
            check = evaluate(assertion, answer, self.assertion_kinds)
            count = seen[check.name] = seen.get(check.name, 0) + 1
            if count > 1:
                check = Check(f"{check.name}#{count}", check.passed, check.error, check.detail)
            checks.append(check)
        held = sum(1 for c in checks if c.passed)
        return Grading(held / len(checks), held == len(checks), tuple(checks), yardstick=self.name)
