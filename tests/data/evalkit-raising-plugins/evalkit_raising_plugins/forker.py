"""Generators that fork on every request and return in both processes: a plugin bug (a child that
neither execs nor ends itself) that had the child go on running evalkit's whole command."""

import os

from evalkit.answers import Answer


class Generator:
    """Answers ``x`` after ``os.fork()``, in the parent and in the child alike."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: object) -> Answer:
        """``x``, from both sides of a fork."""
        os.fork()
        return Answer(text="x", model="forker")


class AsyncGenerator:
    """:class:`Generator` as a coroutine: the fork happens inside the run's event loop."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    async def agenerate(self, request: object) -> Answer:
        """``x``, from both sides of a fork."""
        os.fork()
        return Answer(text="x", model="forker")
