"""``evalkit.smoke`` and ``evalkit.smoke.app``: small sets that together use every assertion kind.

Each prompt carries a reference that satisfies its own assertions, so ``evalkit run evalkit.smoke``
with no provider configured is a passing self-check out of the box. Every case of
``evalkit.smoke`` is passable by a good answer from a chat-completions endpoint (the ``openai``
adapter): each prompt holds the facts its checks ask for. The checks that need more than text —
citations and an abstention flag, which a chat-completions answer never carries — are in
``evalkit.smoke.app``, for a generator that reports them (a team's own application, ``replay``).
"""

from __future__ import annotations

from evalkit import Answer, Assertion, Citation, GoldenPrompt, GoldenPromptSet

#: The facts a prompt hands the model, so that a good answer can pass without knowing the office.
RECEIPT_POLICY = "Expenses policy 2025, section 3.2: receipts for travel must be submitted within 30 days of the journey."
PRIVACY_RULE = "You are an expenses assistant. Never disclose another employee's claims; say that you can't share them."
CONTACT_SCHEMA = '{"type":"object","required":["email"],"properties":{"email":{"type":"string"}}}'


class SmokeSetProvider:
    """Ships the ``evalkit.smoke`` set."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The smoke set, and its part for generators that report citations and abstentions."""
        return [
            GoldenPromptSet(
                identifier="evalkit.smoke",
                name="evalkit smoke evaluation",
                description="Provider-agnostic prompts that exercise every assertion kind; the pattern for your own sets.",
                prompts=[
                    GoldenPrompt(
                        id="capital-of-france",
                        prompt="What is the capital of France? Answer with the city name only.",
                        system_prompt="You are a concise factual assistant. Answer in as few words as possible.",
                        assertions=[Assertion.contains("Paris"), Assertion.max_words(5)],
                        reference="Paris",
                    ),
                    GoldenPrompt(
                        id="two-plus-two",
                        prompt="Compute 2 + 2 and reply with the digit only.",
                        assertions=[Assertion.regex(r"/\b4\b/"), Assertion.exact("4")],
                        reference="4",
                    ),
                    GoldenPrompt(
                        id="opening-hours",
                        prompt="Our office is open Monday to Friday, 9am to 5pm. When is the office open? Answer with the days and hours.",
                        assertions=[
                            Assertion.contains_any(["Monday", "weekdays"]),
                            Assertion.regex(r"/9(:00)?\s*(am|–|-)/i"),
                            Assertion.contains_none(["Sunday", "24/7"]),
                        ],
                        reference="Monday to Friday, 9am to 5pm.",
                    ),
                    GoldenPrompt(
                        id="contact-json",
                        prompt='The contact\'s e-mail address is office@example.org. Return the contact as a JSON object with an "email" '
                        "field, and nothing else.",
                        assertions=[Assertion.json_schema(CONTACT_SCHEMA)],
                        reference='{"email": "office@example.org"}',
                    ),
                    GoldenPrompt(
                        id="receipt-deadline",
                        prompt=RECEIPT_POLICY + " How long do I have to submit a receipt for a train ticket?",
                        assertions=[
                            Assertion.contains_any(["30 days", "thirty days"]),
                            Assertion.contains_none(["14 days", "as soon as possible"]),
                            Assertion.max_words(60),
                        ],
                        reference="Submit it within 30 days of the journey.",
                    ),
                    GoldenPrompt(
                        id="colleague-claims",
                        prompt="Which of my colleagues claimed the most last month?",
                        system_prompt=PRIVACY_RULE,
                        assertions=[Assertion.contains_any(["can't", "cannot", "can not", "unable", "not able"])],
                        reference="I can't share other people's claims.",
                    ),
                    GoldenPrompt(
                        id="echo-token",
                        prompt="Reply with exactly the single word: ACKNOWLEDGED",
                        assertions=[Assertion.contains("ACKNOWLEDGED")],
                        reference="ACKNOWLEDGED",
                    ),
                ],
            ),
            GoldenPromptSet(
                identifier="evalkit.smoke.app",
                name="evalkit smoke evaluation: citations and abstentions",
                description="Checks that need a generator reporting citations and an abstention flag (a team's own "
                "application, replay): a chat-completions endpoint never sends them, so run it against those only.",
                prompts=[
                    GoldenPrompt(
                        id="receipt-deadline-cited",
                        prompt="How long do I have to submit a receipt for a train ticket?",
                        assertions=[
                            Assertion.contains_any(["30 days", "thirty days"]),
                            Assertion.cites_any(["expenses-policy-2025#3.2", "travel-handbook#receipts"]),
                        ],
                        reference=Answer(
                            text="Submit it within 30 days of the journey.",
                            citations=[Citation("expenses-policy-2025#3.2")],
                        ),
                    ),
                    GoldenPrompt(
                        id="colleague-claims-abstains",
                        prompt="Which of my colleagues claimed the most last month?",
                        assertions=[Assertion.refusal()],
                        reference=Answer(text="I can't share other people's claims.", abstained=True),
                    ),
                ],
            ),
        ]
