"""The result of grading one answer: named checks, a score and the yardstick that produced it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["AGREEMENT_CHECK", "Check", "Grading"]

#: The check a judge grader asked several times per case adds: it holds when every verdict agreed.
#: A case where it does not hold is *unstable* and is left out of regression comparisons.
AGREEMENT_CHECK = "judge_agreement"


@attrs.frozen
class Check:
    """One named property of an answer and whether it held.

    ``error`` is set when the check could not be evaluated (a regex that ran out of time, an
    answer without the citations the check needs); such a check never holds.
    """

    name: str
    passed: bool
    error: str | None = None
    detail: str | None = None


def _checks(value: Iterable[Check] | Mapping[str, bool] | None) -> tuple[Check, ...]:
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return tuple(Check(str(name), bool(ok)) for name, ok in value.items())
    return tuple(value)


@attrs.frozen
class Grading:
    """A grader's verdict on one answer.

    ``yardstick`` names the measuring instrument (``deterministic``,
    ``decision:<judge>:<model>:v<n>``…); runs are only compared within one yardstick.
    ``error`` marks a grading that could not be made; it never passes.
    """

    score: float
    passed: bool
    checks: tuple[Check, ...] = attrs.field(default=(), converter=_checks)
    yardstick: str = "deterministic"
    error: str | None = None
    detail: Mapping[str, Any] | None = None

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        """The checks that did not hold, in declaration order."""
        return tuple(c for c in self.checks if not c.passed)

    def check_map(self) -> dict[str, bool]:
        """``{check name: held}``."""
        return {c.name: c.passed for c in self.checks}

    @property
    def unstable(self) -> bool:
        """True when a judge asked several times disagreed with itself (see :data:`AGREEMENT_CHECK`)."""
        return any(c.name == AGREEMENT_CHECK and not c.passed for c in self.checks)
