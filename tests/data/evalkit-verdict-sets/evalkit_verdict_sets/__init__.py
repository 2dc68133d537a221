"""Golden prompt sets that exercise the verdict rules through the CLI (answered by a replay file)."""

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet

#: case id -> pattern (the test holds the answers and what each pattern must make of them)
REGEX_CASES = {
    "digit-class": "[0-9]",
    "alternation": "(a|b)c",
    "angle-brackets": "<b>",
    "braces": "{^a.b$}s",
    "word-boundary": r"/\b4\b/",
    "word-boundary-miss": r"/\b4\b/",
    "dollar-end-only": "/(done$|ok$)/D",
    "dollar-plain": "/(done$|ok$)/",
    "unclosed": "/abc",
    "case-insensitive": "#^yes$#im",
}


#: case ids of rules.cited: each answer must cite, and every citation must resolve
CITED_CASES = ("by-id", "by-quote", "unresolved", "no-citation", "no-passages", "quote-of-an-id-passage")


class VerdictRuleSets:
    """The sets of this distribution."""

    def golden_prompt_sets(self):
        """``rules.regex`` and ``rules.cited``."""
        return [
            GoldenPromptSet(
                identifier="rules.cited",
                name="Citations that resolve",
                prompts=[
                    GoldenPrompt(id=case_id, prompt="How long do I have to submit receipts?", assertions=[Assertion.citations_resolve()])
                    for case_id in CITED_CASES
                ],
            ),
            GoldenPromptSet(
                identifier="rules.regex",
                name="Regex patterns mean what they look like",
                prompts=[
                    GoldenPrompt(id=case_id, prompt=f"Answer for {case_id}.", assertions=[Assertion.regex(pattern)])
                    for case_id, pattern in REGEX_CASES.items()
                ],
            ),
        ]
