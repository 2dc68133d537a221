"""Collecting contract problems and raising them as one assertion error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..awaitables import unawaited_fault
from ..shapes import exception_text
from ..wording import counted

__all__ = ["ContractReport"]


class ContractReport:
    """The problems one contract check found; :meth:`raise_if_any` raises one ``AssertionError``."""

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self.problems: list[str] = []

    def add(self, problem: str) -> None:
        """Record a problem (a sentence naming what is wrong)."""
        self.problems.append(problem)

    def extend(self, problems: list[str] | tuple[str, ...]) -> None:
        """Record several problems."""
        self.problems.extend(problems)

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Run a step of the check; an exception in it is a problem, and the check goes on."""
        try:
            yield
        except AssertionError as exc:
            self.add(f"{what}: {exc}")
        except Exception as exc:
            self.add(f"{what} raised {exception_text(exc)}")

    def call(self, what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        """Call ``function``; returns ``(True, result)``, or ``(False, None)`` with the exception
        recorded, or the awaitable it returned refused as the run refuses it
        (:func:`evalkit.awaitables.unawaited_fault`: an ``async def`` under a synchronous name)."""
        try:
            returned = function(*args, **kwargs)
        except Exception as exc:
            self.add(f"{what} raised {exception_text(exc)}")
            return False, None
        name = getattr(function, "__name__", None)
        fault = unawaited_fault(returned, name if isinstance(name, str) and name.isidentifier() else None)
        if fault is not None:
            self.add(f"{what}: {fault}")
            return False, None
        return True, returned

    def raise_if_any(self) -> None:
        """Raise ``AssertionError`` listing every problem, if there is one."""
        if self.problems:
            lines = "\n".join(f"  - {p}" for p in self.problems)
            raise AssertionError(f"{self.subject} breaks the evalkit contract ({counted(len(self.problems), 'problem')}):\n{lines}")
