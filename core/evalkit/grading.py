"""The result of grading one answer: named checks, a score and the yardstick that produced it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["Check", "Grading"]


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
