"""Plugins that break in every way a plugin can; evalkit must report them and carry on."""


class RaisingProvider:
    """A provider whose golden_prompt_sets() raises."""

    def golden_prompt_sets(self):
        """Always fails."""
        raise RuntimeError("the provider's data file is missing")


class InvalidSetProvider:
    """Ships ``broken.invalid``, a set that breaks several rules at once."""

    def golden_prompt_sets(self):
        """One invalid set."""
        from evalkit import Assertion, GoldenPrompt, GoldenPromptSet

        return [
            GoldenPromptSet(
                identifier="broken.invalid",
                name="Invalid on purpose",
                prompts=[
                    GoldenPrompt(id="bad-regex", prompt="Anything", assertions=[Assertion.regex("/(unclosed/")]),
                    GoldenPrompt(id="bad-schema", prompt="Anything", assertions=[Assertion.json_schema('{"type": 12}')]),
                    GoldenPrompt(id="nothing", prompt="Anything"),
                    GoldenPrompt(id="nothing", prompt="Again", reference="x"),
                ],
            )
        ]
