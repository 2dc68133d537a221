"""Ships ``arith.basic`` again, clashing with evalkit-set-arith."""

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet


class DuplicateProvider:
    """Provides a set whose identifier clashes."""

    def golden_prompt_sets(self):
        """One clashing set."""
        return [
            GoldenPromptSet(
                identifier="arith.basic",
                name="Clashing arithmetic",
                prompts=[GoldenPrompt(id="x", prompt="1+1?", assertions=[Assertion.contains("2")])],
            )
        ]
