"""Golden prompt sets sized for evalkit's storage tests.

``storagekit.echo`` (40 prompts) and ``storagekit.wide`` (240 prompts) ask the generator to repeat
a token; each prompt passes when the answer contains its token, and each declares the token as its
reference, so both the reference generator and an echoing chat server pass every case. The token
is the prompt id, so a test server can count requests per case.
"""

from __future__ import annotations

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet


def _echo_set(identifier: str, name: str, size: int) -> GoldenPromptSet:
    prompts = [
        GoldenPrompt(
            id=f"token-{number:03d}",
            prompt=f"Repeat exactly: token-{number:03d}",
            assertions=[Assertion.contains(f"token-{number:03d}")],
            reference=f"token-{number:03d}",
        )
        for number in range(size)
    ]
    return GoldenPromptSet(identifier=identifier, name=name, description=f"{size} echo prompts for storage tests.", prompts=prompts)


class StorageSets:
    """Ships ``storagekit.echo`` and ``storagekit.wide``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The two echo sets."""
        return [
            _echo_set("storagekit.echo", "storage test echo set", 40),
            _echo_set("storagekit.wide", "storage test wide echo set", 240),
        ]
