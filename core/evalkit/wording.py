"""Counted nouns for messages: "1 case", "2 cases", never "case(s)"."""

from __future__ import annotations

__all__ = ["counted"]

#: Nouns whose plural is not the singular plus "s".
IRREGULAR = {"repository": "repositories", "was": "were"}


def counted(number: int, noun: str) -> str:
    """``counted(1, "case")`` → ``"1 case"``; ``counted(3, "run")`` → ``"3 runs"``."""
    if number == 1:
        return f"{number} {noun}"
    return f"{number} {IRREGULAR.get(noun, noun + 's')}"
