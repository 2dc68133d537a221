"""A provider and a generator that print on standard output, as careless libraries do: at import,
when asked for their sets, and for every answer, through ``print`` and straight to fd 1."""

from __future__ import annotations

import os

from evalkit import Assertion, GenerationRequest, GoldenPrompt, GoldenPromptSet
from evalkit.answers import Answer

print("noisy: imported")  # noqa: T201
os.write(1, b"noisy: fd 1 at import\n")


class NoisySets:
    """Ships ``noisy.set``, printing when asked."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """``noisy.set``: two prompts the noisy generator passes."""
        print("noisy: listing sets")  # noqa: T201
        return [
            GoldenPromptSet(
                identifier="noisy.set", name="A set from a noisy package",
                prompts=[GoldenPrompt(id=f"n{i}", prompt="Say Paris", assertions=[Assertion.contains("Paris")]) for i in (1, 2)],
            )
        ]


class NoisyGenerator:
    """Answers "Paris", printing about it on stdout each time."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """"Paris", with noise on stdout."""
        print(f"noisy: answering {request.case_id}")  # noqa: T201
        os.write(1, b"noisy: fd 1 while answering\n")
        return Answer(text="Paris", model="noisy-model")
