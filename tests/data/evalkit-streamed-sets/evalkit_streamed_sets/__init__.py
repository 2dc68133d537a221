"""Sets that ship their prompts as an :class:`evalkit.PromptStream`, and a witness of how they are read.

* ``streamed.capitals``: ``EVALKIT_STREAMED_PROMPTS`` prompts (default 3,000), streamed, count declared;
* ``streamed.uncounted``: the same prompts, streamed, count not declared (evalkit counts them);
* ``tupled.capitals``: the same prompts in a tuple, to compare a streamed run with an ordinary one;
* ``streamed.broken`` (only with ``EVALKIT_STREAMED_BROKEN=1``): a stream that yields a string
  as its third prompt;
* ``streamed.unbounded`` (only with ``EVALKIT_STREAMED_UNBOUNDED=1``): a stream that never ends and
  declares no count; ``streamed.failing`` (``EVALKIT_STREAMED_FAILING=1``): one whose producer
  raises at the third prompt on every pass; ``streamed.blank`` (``EVALKIT_STREAMED_BLANK=1``): the
  prompts with their text blank, a problem each; ``streamed.badcount``
  (``EVALKIT_STREAMED_BADCOUNT=1``): a stream that declares ``count="many"``.

When ``EVALKIT_STREAMED_LOG`` names a file, every pass over a stream appends ``pass <set>`` to it,
and the process appends ``most alive <n>`` at exit: the most prompts of the streams that were
alive (not yet freed) at any one moment. A run that materialized a stream would hold them all.
"""

from __future__ import annotations

import atexit
import os
import time
import weakref
from collections.abc import Iterator

import attrs
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream

ANSWER = "The capital of France is Paris."
SIZE_VARIABLE = "EVALKIT_STREAMED_PROMPTS"
LOG_VARIABLE = "EVALKIT_STREAMED_LOG"


class _Witness:
    """Counts passes and the prompts alive, and writes them to ``EVALKIT_STREAMED_LOG``."""

    def __init__(self) -> None:
        self.alive = 0
        self.most = 0
        self.log = os.environ.get(LOG_VARIABLE)
        if self.log:
            atexit.register(self.write, "most alive", lambda: str(self.most))

    def write(self, what: str, value: object) -> None:
        if self.log:
            with open(self.log, "a", encoding="utf-8") as log:
                log.write(f"{what} {value() if callable(value) else value}\n")

    def born(self, prompt: GoldenPrompt) -> GoldenPrompt:
        self.alive += 1
        self.most = max(self.most, self.alive)
        weakref.finalize(prompt, self.died)
        return prompt

    def died(self) -> None:
        self.alive -= 1


WITNESS = _Witness()


def capital_prompts(size: int) -> Iterator[GoldenPrompt]:
    """``size`` prompts that the set's own references pass (so a self-check run passes)."""
    for number in range(size):
        yield GoldenPrompt(
            id=f"c{number:05d}",
            prompt=f"Question number {number}: what is the capital of France?",
            assertions=[Assertion.contains("Paris"), Assertion.max_words(20)],
            reference=ANSWER,
        )


def streamed(identifier: str, size: int, *, declare: bool) -> PromptStream:
    """A stream of the capital prompts that tells the witness about every pass and prompt."""

    def produce() -> Iterator[GoldenPrompt]:
        WITNESS.write("pass", identifier)
        return (WITNESS.born(p) for p in capital_prompts(size))

    return PromptStream(produce, count=size if declare else None)


def broken() -> Iterator[object]:
    """Two good prompts, a string where a prompt belongs, then one more good prompt."""
    good = list(capital_prompts(3))
    yield from (good[0], good[1], "What is the capital of Spain?", good[2])


def shifting(size: int, how: str) -> PromptStream:
    """A stream that breaks the contract: its second pass differs from its first, ``how``:
    ``first`` (the first prompt's id), ``last`` (the last prompt's id), ``longer`` (one more) or
    ``raises`` (its producer fails at the third prompt), ``stalls`` (its producer stops answering at
    the third prompt: blocks for ever) or ``stalls-first`` (so does its first pass)."""
    passes = 0

    def produce() -> Iterator[GoldenPrompt]:
        nonlocal passes
        passes += 1
        if how == "raises" and passes > 1:
            return _failing_at_third(size)
        if (how == "stalls" and passes > 1) or how == "stalls-first":
            return _stalling_at_third(size)
        prompts = list(capital_prompts(size + (how == "longer" and passes > 1)))
        if passes > 1 and how in ("first", "last"):
            at = 0 if how == "first" else size - 1
            prompts[at] = attrs.evolve(prompts[at], id=f"moved-{at}")
        return iter(prompts)

    return PromptStream(produce)


def _failing_at_third(size: int) -> Iterator[GoldenPrompt]:
    for number, prompt in enumerate(capital_prompts(size)):
        if number == 2:
            raise ConnectionError("the prompt database went away")
        yield prompt


def _stalling_at_third(size: int) -> Iterator[GoldenPrompt]:
    for number, prompt in enumerate(capital_prompts(size)):
        if number == 2:
            while True:  # a database that stopped answering; catching Exception does not save it
                try:
                    time.sleep(3600)
                except Exception:  # noqa: BLE001,S112
                    continue
        yield prompt


class StreamedSets:
    """Ships the sets above, sized by ``EVALKIT_STREAMED_PROMPTS``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The streamed sets, their tuple twin, and the broken stream when asked for."""
        size = int(os.environ.get(SIZE_VARIABLE, "3000"))

        def made(identifier: str, prompts: object) -> GoldenPromptSet:
            return GoldenPromptSet(identifier=identifier, name=f"Capitals ({identifier})", prompts=prompts)

        sets = [
            made("streamed.capitals", streamed("streamed.capitals", size, declare=True)),
            made("streamed.uncounted", streamed("streamed.uncounted", size, declare=False)),
            made("tupled.capitals", list(capital_prompts(size))),
        ]
        if os.environ.get("EVALKIT_STREAMED_BROKEN") == "1":
            sets.append(made("streamed.broken", PromptStream(broken, count=4)))
        if os.environ.get("EVALKIT_STREAMED_ENDLESS") == "1":  # declares 5, never ends
            sets.append(made("streamed.endless", PromptStream(lambda: capital_prompts(10**18), count=5)))
        if os.environ.get("EVALKIT_STREAMED_UNBOUNDED") == "1":  # no count, never ends
            sets.append(made("streamed.unbounded", PromptStream(lambda: capital_prompts(10**18))))
        if os.environ.get("EVALKIT_STREAMED_BADCOUNT") == "1":  # a count that is no number
            sets.append(made("streamed.badcount", PromptStream(lambda: capital_prompts(size), count="many")))  # type: ignore[arg-type]
        if os.environ.get("EVALKIT_STREAMED_FAILING") == "1":
            sets.append(made("streamed.failing", PromptStream(lambda: _failing_at_third(size))))
        if os.environ.get("EVALKIT_STREAMED_BLANK") == "1":
            blank = (attrs.evolve(prompt, prompt=" ") for prompt in capital_prompts(size))
            sets.append(made("streamed.blank", list(blank)))
        if os.environ.get("EVALKIT_STREAMED_SHIFTING"):
            sets.append(made("streamed.shifting", shifting(size, os.environ["EVALKIT_STREAMED_SHIFTING"])))
        return sets
