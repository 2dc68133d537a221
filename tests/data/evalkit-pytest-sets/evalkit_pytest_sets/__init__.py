"""Sets for the pytest plugin's tests: case ids shaped like the names the plugin gives its own tests.

``pytestkit.gate`` has a case whose id is ``regression-gate`` (the regression gate's test was
named so, and took the same node id) and one spelled as the gate's test is now named; the
reference adapter answers each case its ``reference``, so the case ``regression-gate`` fails and
the others pass. ``pytestkit.escapes`` has ids that differ only in a character the plugin escapes
and the same escape written out (``a:b`` and ``a\\x3ab``).
"""

from __future__ import annotations

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet


def _case(case_id: str, number: int, answer: str = "ok") -> GoldenPrompt:
    return GoldenPrompt(id=case_id, prompt=f"Say ok ({number})", assertions=[Assertion.contains("ok")], reference=answer)


class PytestSets:
    """Ships ``pytestkit.gate`` and ``pytestkit.escapes``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """Both sets."""
        return [
            GoldenPromptSet(
                identifier="pytestkit.gate",
                name="Case ids shaped like the gate's test",
                prompts=[_case("regression-gate", 1, answer="no"), _case("evalkit:regression-gate", 2), _case("fine", 3)],
            ),
            GoldenPromptSet(
                identifier="pytestkit.escapes",
                name="Case ids that differ only in an escape",
                prompts=[_case("a:b", 1, answer="no"), _case("a\\x3ab", 2), _case("back\\slash", 3)],
            ),
        ]
