"""A case answered several times: its pass fraction, pass@k and pass^k, and whether it is flaky.

* ``pass_fraction`` — passes / answers: the case's result under ``--repeats``, compared in pairs.
* ``pass_at_n`` — at least one of the ``n`` answers passed; ``pass_all_n`` — all of them did
  (pass^n: what users ask for reliability, Yao et al. 2024, "τ-bench", arXiv:2406.12045).
* :func:`pass_at_k` / :func:`pass_all_k` — the unbiased estimates for ``k <= n`` from ``c``
  passes in ``n`` answers: ``1 − C(n − c, k) / C(n, k)`` (Chen et al. 2021, "Evaluating Large
  Language Models Trained on Code", arXiv:2107.03374) and ``C(c, k) / C(n, k)``.
* A case is **flaky** when its outcome differs among its repeats, or flips between runs of the
  same serving identity while the case did not change (:func:`flip_history`).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import attrs

from . import _checks

__all__ = ["FlipHistory", "RepeatSummary", "flip_history", "is_flaky", "pass_all_k", "pass_at_k", "summarize_repeats"]


@attrs.frozen
class RepeatSummary:
    """One case's outcomes over its ``repeats`` answers in one run."""

    repeats: int
    passes: int
    pass_fraction: float
    pass_at_n: bool
    pass_all_n: bool
    flaky: bool


def summarize_repeats(outcomes: Sequence[object]) -> RepeatSummary:
    """The summary of one case's pass/fail outcomes over its repeats (at least one)."""
    checked = _checks.outcomes(outcomes, "outcomes")
    if not checked:
        raise _checks.StatisticsInputError("no outcome: a case answered 0 times has no pass fraction")
    passes = sum(checked)
    repeats = len(checked)
    return RepeatSummary(repeats, passes, passes / repeats, passes > 0, passes == repeats, 0 < passes < repeats)


def is_flaky(outcomes: Sequence[object]) -> bool:
    """Whether the outcomes differ among themselves (a case's repeats, or its runs)."""
    checked = _checks.outcomes(outcomes, "outcomes")
    return 0 < sum(checked) < len(checked)


def _k_of_n(repeats: int, passes: int, k: int) -> tuple[int, int, int]:
    repeats = _checks.count(repeats, "repeats", minimum=1)
    passes = _checks.count(passes, "passes")
    k = _checks.count(k, "k", minimum=1)
    if passes > repeats:
        raise _checks.StatisticsInputError(f"passes is {passes}, more than the {repeats} repeats")
    if k > repeats:
        raise _checks.StatisticsInputError(f"k is {k}, more than the {repeats} repeats it is estimated from")
    return repeats, passes, k


def pass_at_k(repeats: int, passes: int, k: int) -> float:
    """The unbiased estimate of pass@k (at least one of ``k`` answers passes) from ``passes``
    passes in ``repeats`` answers: ``1 − C(repeats − passes, k) / C(repeats, k)``."""
    repeats, passes, k = _k_of_n(repeats, passes, k)
    return 1.0 - comb(repeats - passes, k) / comb(repeats, k)


def pass_all_k(repeats: int, passes: int, k: int) -> float:
    """The unbiased estimate of pass^k (all ``k`` answers pass) from ``passes`` passes in
    ``repeats`` answers: ``C(passes, k) / C(repeats, k)``."""
    repeats, passes, k = _k_of_n(repeats, passes, k)
    return comb(passes, k) / comb(repeats, k)


@attrs.frozen
class FlipHistory:
    """A case's outcomes over successive runs of one serving identity (oldest first).

    ``flips`` counts changes between consecutive runs; ``last_outcomes`` are the most recent
    ones (oldest first); the case is ``flaky`` when it flipped at least once.
    """

    runs: int
    passes: int
    flips: int
    last_outcomes: tuple[bool, ...]

    @property
    def flaky(self) -> bool:
        """Whether the outcome ever changed between runs."""
        return self.flips > 0


def flip_history(outcomes: Sequence[object], last: int = 5) -> FlipHistory:
    """The flip history of a case's outcomes over runs of an unchanged case, oldest first."""
    checked = _checks.outcomes(outcomes, "outcomes")
    last = _checks.count(last, "last", minimum=1)
    flips = sum(1 for before, after in zip(checked, checked[1:], strict=False) if before != after)
    return FlipHistory(len(checked), sum(checked), flips, tuple(checked[-last:]))
