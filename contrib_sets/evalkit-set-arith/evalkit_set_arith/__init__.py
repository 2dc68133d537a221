"""Example golden prompt sets shipped by a separate distribution, the way a team ships its own."""

from __future__ import annotations

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet


class ArithmeticSets:
    """Ships ``arith.basic`` (arithmetic) and ``arith.units`` (unit conversions)."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """Both sets."""
        return [
            GoldenPromptSet(
                identifier="arith.basic",
                name="Basic arithmetic",
                description="Small sums and products; each answer is a bare number.",
                prompts=[
                    GoldenPrompt(
                        id=f"add-{a}-{b}",
                        prompt=f"What is {a} + {b}? Reply with the number only.",
                        assertions=[Assertion.regex(rf"/^\s*{a + b}\s*$/"), Assertion.max_words(1)],
                        reference=str(a + b),
                    )
                    for a, b in ((2, 2), (7, 5), (12, 30), (99, 1))
                ]
                + [
                    GoldenPrompt(
                        id="times-table",
                        prompt="What is 6 times 7? Reply with the number only.",
                        assertions=[Assertion.exact("42")],
                        reference="42",
                    ),
                    GoldenPrompt(
                        id="json-sum",
                        prompt='Return {"sum": <3 + 4>} as JSON.',
                        assertions=[
                            Assertion.json_schema(
                                {"type": "object", "required": ["sum"], "properties": {"sum": {"const": 7}}}
                            )
                        ],
                        reference='{"sum": 7}',
                    ),
                ],
            ),
            GoldenPromptSet(
                identifier="arith.units",
                name="Unit conversions",
                description="Conversions whose known wrong answers are listed.",
                prompts=[
                    GoldenPrompt(
                        id="km-to-m",
                        prompt="How many metres are in 3 kilometres?",
                        assertions=[Assertion.contains_any(["3000", "3,000"]), Assertion.contains_none(["300 ", "30000"])],
                        reference="3000 metres",
                    ),
                    GoldenPrompt(
                        id="hours-in-week",
                        prompt="How many hours are in a week?",
                        assertions=[Assertion.contains("168")],
                        reference="168 hours",
                    ),
                ],
            ),
        ]
