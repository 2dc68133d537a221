"""How long a text from outside may be, and how a list of problems is cut.

A plugin's exception message, a provider's own list of problems, a set's identifier: every text
evalkit did not write itself may be millions of characters long, and every list of problems
millions of items. Each is kept to a bound where it is held (:func:`bounded_reason`,
:func:`bounded_problem`, :func:`bounded_problems`), keeping its start and saying how long it was
or how many more there were, so a message, a store and a terminal stay bounded. This module
imports nothing of evalkit's: the exception types (:mod:`evalkit.errors`) bound what they hold
with it, and :mod:`evalkit.shapes` builds on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized
from itertools import islice

__all__ = [
    "MAX_PROBLEMS_KEPT",
    "MAX_PROBLEM_CHARS",
    "MAX_REASON_CHARS",
    "ProblemsNotKept",
    "bounded_problem",
    "bounded_problems",
    "bounded_reason",
    "bounded_text",
    "clipped",
    "counted_problems",
    "not_kept",
    "problem_total",
    "too_long",
]


def too_long(text: str, limit: int) -> str | None:
    """``"is 1,001 characters long, more than the 1,000 allowed"`` when ``text`` is over ``limit``."""
    return f"is {len(text):,} characters long, more than the {limit:,} allowed" if len(text) > limit else None


def clipped(text: str, limit: int = 200) -> str:
    """``text`` as a message shows it: whole up to ``limit`` characters, else its first ``limit``
    and how long it is (``"xxx… (100,000 characters)"``), so a hostile value never floods a terminal."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


#: The longest text a reason keeps (why a case errored, why a check failed, a grader's or a
#: generator's exception message): past it the text keeps its start and its length (:func:`clipped`).
#: A reason explains a verdict; a plugin's 50-million-character message stored whole took a
#: minute and most of a gigabyte per case.
MAX_REASON_CHARS = 10_000


def bounded_reason(value: object) -> object:
    """``value`` as a reason keeps it: text cut to :data:`MAX_REASON_CHARS` by :func:`clipped`,
    anything else as it is (the rules that refuse a reason that is not text see it unchanged). The
    converter of every reason field: ``CaseResult.error``, ``Check.error`` and ``Check.detail``,
    ``Grading.error`` — a reason is bounded however it was made, by a plugin or read from a store.
    A text already cut keeps its mark (``… (50,000,000 characters)``) when it is made again: a
    text is cut only when it is longer than the limit and room for that mark. Text of a ``str``
    subclass is kept as a plain ``str`` (as :func:`evalkit.shapes.plain_text` does): a grader's
    reason whose ``str()``, ``==`` or ``hash`` raised was stored, then ended the command that
    printed it in an internal error."""
    if not isinstance(value, str):
        return value
    return bounded_text(value if type(value) is str else str.__str__(value))


def bounded_text(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` cut to ``limit`` characters by :func:`clipped`, unless it is within ``limit`` and
    room for the mark (so a text already cut to ``limit`` is left as it is)."""
    return clipped(text, limit) if len(text) > limit + _CUT_MARK_ROOM else text


#: Room for :func:`clipped`'s mark after a text it cut (a count of up to 40 digits).
_CUT_MARK_ROOM = 64

#: The longest problem or failure a plugin's text ends up in (a set's problem, a provider or plugin
#: that failed to load, a refusal): the reason it quotes (cut at :data:`MAX_REASON_CHARS` where it
#: was made: :func:`exception_text`) plus room for where it happened (the set's identifier, up to
#: 1,000 characters, the prompt, the field), so a reason cut once is not cut again and keeps its mark.
MAX_PROBLEM_CHARS = MAX_REASON_CHARS + 2_000


def bounded_problem(value: object) -> object:
    """``value`` as a problem or failure keeps it: text cut to :data:`MAX_PROBLEM_CHARS`, anything
    else as it is. What every type holding such texts applies to each one
    (:class:`~evalkit.errors.SetValidationError`, :class:`~evalkit.errors.PluginError`,
    :class:`~evalkit.registry.PluginFailure`, ``evalkit validate``'s ``SetProblem``): a text a plugin
    handed over without raising (an assertion validator's issue, a provider's own
    ``SetValidationError``) is bounded there, however it was made."""
    return bounded_text(value, MAX_PROBLEM_CHARS) if isinstance(value, str) else value


#: How many problems a list of them keeps, as a compiler stops at its error limit: the check of a
#: set stops there (:func:`evalkit.validation.survey_prompt_set`), and a list a plugin hands over
#: is cut there (:func:`bounded_problems`). A million broken prompts printed a million lines (120 MB).
MAX_PROBLEMS_KEPT = 1_000


class ProblemsNotKept(str):
    """The last line of a list of problems that was cut, as text (``4,999,000 more problems were
    not kept, after the first 1,000: mend these first``), which also says how many problems it
    stands for: ``more`` were not kept, and ``exact`` is whether that is their number or only as
    many as are known (an iterator not read on, a check that stopped at its limit). Made by
    :func:`bounded_problems` and the check of a prompt set; :func:`problem_total` counts by it, so
    a header says "5,000,000 problems", not "1001". A ``str`` so that every consumer of a list of
    problems (a line each, ``"; ".join``, ``--json``) takes it as it is."""

    more: int
    exact: bool

    def __new__(cls, text: str, more: int = 0, exact: bool = False) -> ProblemsNotKept:
        note = super().__new__(cls, text)
        note.more, note.exact = more, exact
        return note

    def naming(self, text: str) -> ProblemsNotKept:
        """Another text standing for the same problems (the line as a holder shows it, its set or file before it)."""
        return ProblemsNotKept(text, self.more, self.exact)


def not_kept(problem: object) -> ProblemsNotKept | None:
    """The :class:`ProblemsNotKept` ``problem`` is or holds as its ``reason`` (a set file's
    ``FileProblem``, ``evalkit validate``'s ``SetProblem``), else ``None``."""
    found = problem if isinstance(problem, ProblemsNotKept) else getattr(problem, "reason", None)
    return found if isinstance(found, ProblemsNotKept) else None


def problem_total(problems: Iterable[object]) -> tuple[int, int, bool]:
    """How many of ``problems`` are problems shown, how many problems they stand for in all, and
    whether that is the exact number (``(1000, 5000000, True)``): each :class:`ProblemsNotKept`
    line counts as the problems it names, not as one."""
    shown = total = 0
    exact = True
    for problem in problems:
        note = not_kept(problem)
        if note is None:
            shown += 1
            total += 1
        else:
            total += note.more
            exact = exact and note.exact
    return shown, total, exact


def counted_problems(problems: Iterable[object]) -> str:
    """``"3 problems"``; for a list that was cut, ``"5,000,000 problems, 1,000 of them shown"`` or
    ``"at least 1,002 problems, 1,000 of them shown"`` (:func:`problem_total`): the count a header
    or a summary line gives, never one counting the line that says how many more there were."""
    shown, total, exact = problem_total(problems)
    if shown == total and exact:
        return f"{total:,} problem" + ("" if total == 1 else "s")
    return f"{'' if exact else 'at least '}{total:,} problems, {shown:,} of them shown"


def bounded_problems(problems: Iterable[object], limit: int = MAX_PROBLEMS_KEPT) -> tuple[object, ...]:
    """``problems`` as a list of them keeps it: each one cut by :func:`bounded_problem`, and at most
    ``limit + 1`` of them — past that, the first ``limit`` and a last line saying how many more there
    were (``4,999,000 more problems were not kept, after the first 1,000: mend these first``, a
    :class:`ProblemsNotKept`). What :class:`~evalkit.errors.SetValidationError` applies to the
    problems it is given, so a provider raising it with millions of problems is bounded for every
    consumer (``evalkit list sets``, ``validate``, ``run``'s error). One text is one problem (not a
    list of its characters); an iterator is read up to two past ``limit`` and never further (it may
    never end). A line of a list cut before counts as the problems it names."""
    if isinstance(problems, str):
        problems = (problems,)
    head = tuple(islice(problems, limit + 2))  # two past the limit tell "one line too many" from "more"
    if len(head) <= limit + 1:  # the line saying how many more would take the place of the one it names
        return tuple(bounded_problem(problem) for problem in head)
    if isinstance(problems, Sized):  # read whole already: counted, a line of a list cut before as its problems
        _, more, exact = problem_total(islice(problems, limit, None))
        rest = f"{'' if exact else 'at least '}{more:,} more problems were not kept"
    else:
        more, exact = 2, False
        rest = "more problems (handed over as an iterator) were not read"
    note = ProblemsNotKept(f"{rest}, after the first {limit:,}: mend these first", more, exact)
    return (*(bounded_problem(problem) for problem in head[:limit]), note)
