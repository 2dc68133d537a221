"""A set provider whose failures sprawl, switched by ``$EVALKIT_HOSTILE_SPRAWLING_FAILURE``.

Each value makes one way a plugin's failure reaches a set problem or a failed-provider report:

* ``import``: importing this module raises a ``RuntimeError`` of :data:`GIANT` characters;
* ``listing``: ``golden_prompt_sets()`` raises one;
* ``stream``: it ships ``hostile.sprawling_stream``, a :class:`~evalkit.PromptStream` whose
  producer raises one at its second prompt;
* ``name``: the listing raises an exception whose class name is :data:`GIANT` characters;
* ``unprintable``: the listing raises an exception whose ``__str__`` raises;
* ``unprintable_stream``: the stream's producer raises that exception;
* ``identifier``: it ships a set whose identifier is :data:`GIANT` characters (and a valid set);
* ``set_name``: it ships ``hostile.sprawling_name``, whose name is :data:`GIANT` characters and
  whose :data:`BLANK_PROMPTS` prompts are all blank (a problem each);
* ``many_problems``: the listing raises ``SetValidationError`` itself, with :data:`MANY_PROBLEMS`
  problems (``problem #1 of the provider's own`` …, each made when it is read);
* ``wide_problem``: the listing raises ``SetValidationError`` with one problem of :data:`WIDE`
  characters, short of the bound of a problem's text but five lines' worth of a terminal's;
* ``created``: creating the provider raises ``RuntimeError("cannot reach the set archive")``.

Unset (or anything else), the provider ships nothing, so the distribution's other tests never see it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import overload

from evalkit import GoldenPrompt, GoldenPromptSet, PromptStream
from evalkit.errors import SetValidationError

#: Read at import and at each call (the test runner forgets this module after each command).
VARIABLE = "EVALKIT_HOSTILE_SPRAWLING_FAILURE"
#: How long each sprawling text is, in characters.
GIANT = 5_000_000
#: How many blank prompts the ``set_name`` set holds (each a problem naming the set).
BLANK_PROMPTS = 1_000
#: How many problems the ``many_problems`` listing raises: 250 times the 1,000 kept (the defect was
#: met at 5,000,000; counting them all is linear, and that many cost the suite minutes under coverage).
MANY_PROBLEMS = 250_000
#: How long the ``wide_problem`` listing's one problem is: ``WIDE_START``, then ``W`` up to it.
WIDE = 11_000
WIDE_START = "the provider's own problem, wide: "


def _mode() -> str:
    return os.environ.get(VARIABLE, "")


if _mode() == "import":
    raise RuntimeError("I" * GIANT)

#: An exception class whose ``__name__`` is :data:`GIANT` characters.
SprawlingName = type("N" * GIANT, (RuntimeError,), {})


class Unprintable(RuntimeError):
    """An exception whose text cannot be had: its ``__str__`` raises."""

    def __str__(self) -> str:
        raise ValueError("no text for you")


def _failure() -> BaseException:
    if _mode() == "name":
        return SprawlingName("a short message")
    if _mode() in ("unprintable", "unprintable_stream"):
        return Unprintable()
    return RuntimeError("L" * GIANT)


def _produce() -> Iterator[GoldenPrompt]:
    yield GoldenPrompt(id="first", prompt="Say x", reference="x")
    raise Unprintable() if _mode() == "unprintable_stream" else RuntimeError("S" * GIANT)


class ManyProblems(Sequence[str]):
    """:data:`MANY_PROBLEMS` problems, each made when it is read (a list of them would take a
    gigabyte of the test's memory; to evalkit it is the same sequence of texts)."""

    def __len__(self) -> int:
        return MANY_PROBLEMS

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[number] for number in range(*index.indices(MANY_PROBLEMS))]
        if not -MANY_PROBLEMS <= index < MANY_PROBLEMS:
            raise IndexError(index)
        return f"problem #{index % MANY_PROBLEMS + 1:,} of the provider's own"


class SprawlingFailureSets:
    """Fails as ``$EVALKIT_HOSTILE_SPRAWLING_FAILURE`` says (see the module); ships nothing otherwise."""

    def __init__(self) -> None:
        if _mode() == "created":
            raise RuntimeError("cannot reach the set archive")

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The failure chosen, a set whose stream fails, or nothing."""
        if _mode() in ("listing", "name", "unprintable"):
            raise _failure()
        if _mode() == "many_problems":
            raise SetValidationError(ManyProblems())
        if _mode() == "wide_problem":
            raise SetValidationError([WIDE_START + "W" * (WIDE - len(WIDE_START))])
        if _mode() == "identifier":
            return [
                GoldenPromptSet(identifier="i" * GIANT, name="Sprawling", prompts=[GoldenPrompt(id="a", prompt="x", reference="x")]),
                GoldenPromptSet(identifier="hostile.beside_sprawl", name="Beside", prompts=[GoldenPrompt(id="a", prompt="Say x", reference="x")]),
            ]
        if _mode() == "set_name":
            blank = [GoldenPrompt(id=f"p{number}", prompt=" ", reference="x") for number in range(BLANK_PROMPTS)]
            return [GoldenPromptSet(identifier="hostile.sprawling_name", name="n" * GIANT, prompts=blank)]
        if _mode() in ("stream", "unprintable_stream"):
            return [GoldenPromptSet(identifier="hostile.sprawling_stream", name="A stream whose producer fails", prompts=PromptStream(_produce))]
        return []
