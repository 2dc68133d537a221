"""What a run of a set can detect, told before anything is spent: ``evalkit plan SET``.

:func:`plan_for` reads the set (its cases, no generator or judge is called), the gate
configuration and — when the store has one — the accepted baseline of the scope asked for, and
returns a :class:`PlanReport`: the requests the run makes, the minimum detectable drop of its
pass rate as configured (the exact McNemar test's for one answer per case, the normal formula's
for pass fractions under repeats), whether the tolerance is one the set can keep, and what a target
drop needs — cases at today's repeats, or repeats with today's cases.

The pass rate the figures assume is the baseline's (the scope's accepted run, else the set's
latest complete run of that provider, model alias and grader); without one, the one given (``rate``, default 0.8), said
in a note. ``PlanReport`` is an attrs value with room for more lines (``extra``): the spending
issue adds what a run costs beside what it detects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from .noise import askable, cases_for, cases_text, repeats_way, shown
from .stats import mcnemar_detectable_drop, minimum_detectable_drop, noise_from_rate, repeats_needed
from .wording import counted

__all__ = ["DEFAULT_RATE", "PlanLine", "PlanReport", "plan_for", "plan_row"]

#: The pass rate a plan assumes when no stored run of the scope gives one.
DEFAULT_RATE = 0.8
#: The power every minimum detectable drop promises.
POWER = 0.8


def plan_row(label: str, value: str) -> str:
    """One line of a plan for people: ``label:`` padded to the plan's value column, then ``value``."""
    return f"{label + ':':<18}{value}"


@attrs.frozen
class PlanLine:
    """One more line of a plan (``label``: ``value``), and the same as data (``key``, ``data``)."""

    key: str
    label: str
    value: str
    data: Any = None


@attrs.frozen
class PlanReport:
    """What a run of ``set_identifier`` makes and can detect.

    ``cases`` and ``repeats`` give ``answers`` (requests to the generator) and, with a judge asked
    ``judge_repeats`` times per answer, ``judge_calls``. ``rate`` is the pass rate assumed (from
    ``rate_source``). ``detectable`` is the minimum detectable drop of the pass rate at one-sided
    ``alpha`` and power 0.8 (``method``: ``exact_mcnemar`` or ``normal``); ``tolerance`` the gate's
    (``method`` of the gate in ``gate``). ``target_drop`` (default: the tolerance) needs
    ``cases_needed`` cases at these repeats (at most :data:`~evalkit.noise.MAX_CASES`; ``None``
    when no number of cases is the answer: a drop of 0, or one larger than the rate can make), or
    ``repeats_needed`` answers per case with these cases (``None`` when that is no way there:
    :func:`~evalkit.noise.repeats_way`). ``notes`` and ``warnings`` are sentences; ``extra`` holds
    the lines other concerns add.
    """

    set_identifier: str
    cases: int
    repeats: int
    answers: int
    judge_calls: int
    rate: float
    rate_source: str
    alpha: float
    gate: str
    tolerance: float
    detectable: float
    detectable_method: str
    target_drop: float
    cases_needed: int | None
    repeats_needed: int | None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    extra: tuple[PlanLine, ...] = ()

    def lines(self) -> list[str]:
        """The plan as the terminal prints it, one figure a line."""
        rows = [
            plan_row("Set", f"{self.set_identifier} ({counted(self.cases, 'case')})"),
            plan_row(
                "Requests",
                f"{counted(self.answers, 'answer', grouped=True)} ({self.repeats} per case)"
                + (f", {counted(self.judge_calls, 'judge call', grouped=True)}" if self.judge_calls else ""),
            ),
            plan_row("Gate", f"{self.gate}, one-sided alpha {self.alpha:g}, tolerance {shown(self.tolerance, True)}"),
            plan_row("Pass rate", f"{self.rate * 100:.1f}% ({self.rate_source})"),
            plan_row(
                "Detectable drop",
                f"{shown(self.detectable, True)} (detected 4 times in 5; "
                + ("exact McNemar test" if self.detectable_method == "exact_mcnemar" else "paired t on pass fractions")
                + ")",
            ),
        ]
        if self.target_drop <= 0:
            needs = f"{shown(self.target_drop, True)}: no set can detect a drop of 0"
        elif self.cases_needed is None:
            # "about 2 cases" (a noise of 0) or a count from the normal formula where no such drop can happen
            needs = f"{shown(self.target_drop, True)}: a pass rate of {self.rate * 100:.1f}% cannot drop that far"
        else:
            needs = f"{shown(self.target_drop, True)} needs {cases_text(self.cases_needed)} at {self.repeats} answer{'s' if self.repeats != 1 else ''} each"
        if self.repeats_needed is not None:
            needs += f", or --repeats {self.repeats_needed} with {'this' if self.cases == 1 else 'these'} {counted(self.cases, 'case')}"
        rows.append(plan_row("Target drop", needs))
        rows.extend(plan_row(line.label, line.value) for line in self.extra)
        return rows

    def as_dict(self) -> dict[str, Any]:
        """The plan as ``--json`` prints it."""
        document = attrs.asdict(self, recurse=False)
        document["extra"] = {line.key: line.data if line.data is not None else line.value for line in self.extra}
        document["notes"], document["warnings"] = list(self.notes), list(self.warnings)
        return document


def plan_for(
    set_identifier: str,
    cases: int,
    *,
    repeats: int = 1,
    judge_repeats: int = 0,
    rate: float | None = None,
    rate_source: str = "",
    alpha: float = 0.05,
    gate: str = "tolerance",
    tolerance: float = 0.1,
    target_drop: float | None = None,
    notes: Sequence[str] = (),
) -> PlanReport:
    """The plan of a run of ``cases`` cases answered ``repeats`` times (``judge_repeats``: judge
    calls per answer, 0 for no judge), assuming the pass rate ``rate`` (``None``: :data:`DEFAULT_RATE`)."""
    notes = list(notes)
    if rate is None:
        rate, rate_source = DEFAULT_RATE, "assumed: no stored run of this scope gives one; --rate sets it"
    # Every case passed (or none): no noise shows, and half a case of it is assumed (a continuity
    # correction). A rate closer to 0 or 1 than half of these cases is taken as that too: its
    # noise, near nothing, would make the normal formula promise a drop caught with the cases the
    # exact test says cannot catch it (99.9999999999% of 7 cases: "--repeats 1 with these 7 cases"
    # beside a detectable drop of 77 pp).
    adjusted = min(max(rate, 0.5 / max(1, cases)), 1 - 0.5 / max(1, cases))
    if adjusted != rate:
        shows = f"A pass rate of {rate * 100:.0f}% shows no noise" if not 0 < rate < 1 else (
            f"A pass rate of {rate * 100:.12g}% is within half a case of {'100' if rate > 0.5 else '0'}% for {counted(cases, 'case')}"
        )  # fmt: skip
        notes.append(
            f"{shows}; the figures assume {adjusted * 100:.1f}% "
            "(half a case from it), since a model that never failed may still fail by chance."
        )
        rate = adjusted
    if repeats == 1:
        detectable = mcnemar_detectable_drop(max(1, cases), rate, alpha=alpha, power=POWER)
    else:
        detectable = minimum_detectable_drop(noise_from_rate(rate, repeats), max(1, cases), alpha=alpha, power=POWER)
        notes.append(
            "With repeats the figures assume every case passes with the same chance (the noise in the answers): "
            "cases that always pass or always fail gain nothing from more answers."
        )
    target = tolerance if target_drop is None else target_drop
    warnings = []
    if tolerance < detectable.drop:
        warnings.append(
            f"the tolerance ({shown(tolerance, True)}) is below the smallest drop {counted(cases, 'case')} can detect "
            f"({shown(detectable.drop, True)}): the set cannot tell such a drop from noise"
        )
    needed_cases = cases_for(rate, target, alpha=alpha, power=POWER, repeats=repeats) if target > 0 else None
    noise = noise_from_rate(rate)
    # no drop to detect (0, or more than the rate can fall): no number of repeats either
    detectable_at_all = needed_cases is not None and noise.variance > 0
    needed_repeats = repeats_needed(noise, askable(target), max(1, cases), alpha=alpha, power=POWER) if detectable_at_all else None
    needed_repeats = repeats_way(needed_repeats, repeats, falls_short=needed_cases is None or needed_cases > cases)
    return PlanReport(
        set_identifier=set_identifier,
        cases=cases,
        repeats=repeats,
        answers=cases * repeats,
        judge_calls=cases * repeats * judge_repeats,
        rate=rate,
        rate_source=rate_source,
        alpha=alpha,
        gate=gate,
        tolerance=tolerance,
        detectable=detectable.drop,
        detectable_method=detectable.method,
        target_drop=target,
        cases_needed=needed_cases,
        repeats_needed=needed_repeats,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )
