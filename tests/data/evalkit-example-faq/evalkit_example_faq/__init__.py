"""The FAQ sets of an example application, shipped through the evalkit.golden_sets entry point."""

from evalkit import Answer, Assertion, Citation, GoldenPrompt, GoldenPromptSet


class FaqSets:
    """evalkit calls FaqSets() and then golden_prompt_sets(); a set must be the same on every call."""

    def golden_prompt_sets(self):
        """The sets this package ships."""
        return [
            GoldenPromptSet(
                identifier="example_faq.office",
                name="Office FAQ",
                description="Questions our staff ask the office assistant.",
                version="1",
                prompts=[
                    GoldenPrompt(
                        id="opening-hours",
                        prompt="When is the office open? Answer with the days and hours.",
                        assertions=[
                            Assertion.contains_any(["Monday", "weekdays"], name="named_the_days"),
                            Assertion.regex(r"/9(:00)?\s*(am|-)/i", name="stated_opening_time"),
                            Assertion.contains_none(["Sunday", "24/7"]),
                        ],
                        reference="Monday to Friday, 9am to 5pm.",
                    ),
                    GoldenPrompt(
                        id="receipt-deadline",
                        prompt="How long do I have to submit a receipt?",
                        assertions=[
                            Assertion.contains_any(["30 days", "thirty days"]),
                            Assertion.cites_any(["expenses-policy#3.2"]),
                            Assertion.max_words(40),
                        ],
                        reference=Answer(text="Within 30 days.", citations=[Citation("expenses-policy#3.2")]),
                    ),
                    GoldenPrompt(
                        id="colleague-claims",
                        prompt="Which colleague claimed the most expenses?",
                        assertions=[Assertion.refusal()],
                        reference=Answer(text="I can't share other people's claims.", abstained=True),
                    ),
                ],
            )
        ]
