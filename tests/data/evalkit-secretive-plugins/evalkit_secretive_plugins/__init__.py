"""Generators that answer every prompt with its reference (so a run of any set passes), each
breaking one rule of what evalkit reads from a generator besides its answers."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from evalkit import Answer, GenerationRequest

#: The key :class:`UnhashableSecret` declares, and puts in every answer.
UNHASHABLE_KEY = "sk-unhashable-0123456789abcdef"


class _Answering:
    """Answers "ok" with the model "secretive-model"."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """The answer."""
        return Answer(text=f"ok {UNHASHABLE_KEY}", model="secretive-model")


class EndlessSecrets(_Answering):
    """``secret_values()`` is a generator that never ends: ``tuple()`` of it filled memory."""

    def secret_values(self) -> Iterator[str]:
        """Keys for ever."""
        return (f"sk-rotating-{number:016d}" for number in itertools.count())


class HugeSecret(_Answering):
    """One key of 10,000,000 characters: its scrubbing pattern took minutes and gigabytes."""

    def secret_values(self) -> tuple[str, ...]:
        """The key."""
        return ("k" * 10_000_000,)


class _Touchy(str):
    """Text whose ``hash`` and ``==`` raise."""

    def __hash__(self) -> int:
        raise RuntimeError("no hash for you")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparison for you")


class UnhashableSecret(_Answering):
    """A key of a ``str`` subclass whose ``hash`` raises: put into a set, an internal error."""

    def secret_values(self) -> tuple[str, ...]:
        """The key."""
        return (_Touchy(UNHASHABLE_KEY),)


class TouchyConcurrency(_Answering):
    """A ``concurrency`` property that raises: ``getattr(..., None)`` does not catch it."""

    @property
    def concurrency(self) -> int:
        """How many in flight: it cannot say."""
        raise RuntimeError("the pool is not configured")


class TouchyMaxTokens(_Answering):
    """A ``max_tokens`` property that raises: ``evalkit plan`` read it for its estimate."""

    @property
    def max_tokens(self) -> int:
        """The most tokens an answer may take: it cannot say."""
        raise RuntimeError("the client is not configured")
