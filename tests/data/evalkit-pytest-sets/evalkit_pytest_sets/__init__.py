"""Sets for the pytest plugin's tests: case ids shaped like the names the plugin gives its own tests.

``pytestkit.gate`` has a case whose id is ``regression-gate`` (the regression gate's test was
named so, and took the same node id) and one spelled as the gate's test is now named; the
reference adapter answers each case its ``reference``, so the case ``regression-gate`` fails and
the others pass. ``pytestkit.escapes`` has ids that differ only in a character the plugin escapes
and the same escape written out (``a:b`` and ``a\\x3ab``).

``pytestkit.keyed`` is a generator that declares :data:`SECRET` and answers "ok" to every
prompt; ``pytestkit.secret`` has a case whose id holds that secret, and ``pytestkit.collide``
also one whose id is the same with the secret hidden (``key-***``); ``pytestkit.twice`` has two
cases of one id (a set ``evalkit run`` refuses).
"""

from __future__ import annotations

from evalkit import Answer, Assertion, GenerationRequest, GoldenPrompt, GoldenPromptSet

#: The credential ``pytestkit.keyed`` declares.
#: It holds a backslash, which the plugin writes ``\\x5c`` in test names.
SECRET = "pytestkit-key\\5e1f0c9a"


def _case(case_id: str, number: int, answer: str = "ok") -> GoldenPrompt:
    return GoldenPrompt(id=case_id, prompt=f"Say ok ({number})", assertions=[Assertion.contains("ok")], reference=answer)


class PytestSets:
    """Ships ``pytestkit.gate``, ``pytestkit.escapes``, ``pytestkit.secret`` and ``pytestkit.collide``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The sets."""
        return [
            GoldenPromptSet(identifier="pytestkit.secret", name="A case id holding the key", prompts=[_case(f"key-{SECRET}", 1), _case("plain", 2)]),
            GoldenPromptSet(identifier="pytestkit.twice", name="One case id twice", prompts=[_case("same", 1), _case("fine", 2), _case("same", 3)]),
            GoldenPromptSet(identifier="pytestkit.collide", name="Case ids one with the key hidden", prompts=[_case(f"key-{SECRET}", 1), _case("key-***", 2)]),
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


class KeyedGenerator:
    """Declares :data:`SECRET` as the credential it sends and answers "ok"."""

    def __init__(self, model: str = "keyed-v1") -> None:
        self.model = model

    def secret_values(self) -> tuple[str, ...]:
        """The credential."""
        return (SECRET,)

    def generate(self, request: GenerationRequest) -> Answer:
        """Always "ok"."""
        return Answer(text="ok", model=self.model)
