"""A golden prompt set sized by the environment, for bench/throughput.py.

``bench.capitals`` has ``EVALKIT_BENCH_PROMPTS`` prompts (default 20), each asking for the capital
of France with three checks (contains, regex, at most 20 words). A chat server answering
``ANSWER`` passes every case, and so does the set's own reference, so a self-check run passes too.
The benchmark installs this distribution like any plugin so ``evalkit run bench.capitals`` is
measured exactly as a user runs a set. The set ships its prompts as an :class:`evalkit.PromptStream`,
as a package with a 100,000-prompt set should: each prompt is built when evalkit reaches it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream

#: The answer every prompt expects; the benchmark's chat server answers with it.
ANSWER = "The capital of France is Paris."
SIZE_VARIABLE = "EVALKIT_BENCH_PROMPTS"


def capital_prompts(size: int) -> Iterator[GoldenPrompt]:
    """The ``size`` prompts, built one at a time, with three checks each that ``ANSWER`` satisfies."""
    for number in range(size):
        yield GoldenPrompt(
            id=f"p{number:06d}",
            prompt=f"Question number {number}: what is the capital of France?",
            assertions=[Assertion.contains("Paris"), Assertion.regex(r"/\bparis\b/i"), Assertion.max_words(20)],
            reference=ANSWER,
        )


def capitals_set(size: int) -> GoldenPromptSet:
    """``bench.capitals`` with ``size`` prompts, streamed: the set never holds them."""
    return GoldenPromptSet(
        identifier="bench.capitals", name="Benchmark capitals", description=f"{size} prompts for the throughput benchmark.",
        prompts=PromptStream(lambda: capital_prompts(size), count=size),
    )


class BenchSets:
    """Ships ``bench.capitals``, sized by ``EVALKIT_BENCH_PROMPTS``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The one benchmark set."""
        return [capitals_set(int(os.environ.get(SIZE_VARIABLE, "20")))]
