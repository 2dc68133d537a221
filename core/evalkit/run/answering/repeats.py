"""A prompt answered several times (``--repeats N``): its answers, each graded, made one case.

Every answer is an independent request (a cache, when there is one, is neither read nor written
for a repeated run: a cached answer is not another sample). The case keeps:

* ``measures`` — ``pass_fraction`` (the share of its answers that passed; an answer a judge asked
  several times counts with the share of the judge's verdicts that passed it), ``answers`` and
  ``passes``, kept at every privacy level: comparisons pair the fractions, and a case whose
  answers disagree is flaky;
* ``passed`` — more than half of its answers passed; ``score`` — the mean of their scores;
* each check once, holding when it held for every answer (its detail says in how many it failed);
* the first answer's text and detail, with every answer's result in ``detail["answers"]``; the
  mean latency, the summed token counts (unknown when an answer reported none:
  :func:`~evalkit.answers.sum_usage`), the summed requests (``requests``: one a reply, an answer
  or a model turn of a conversation; ``requests_sent``: one a request sent, a failed one included)
  and every answer's judge calls (``judge_usage``, in order).

An answer that errs (the generator failed) makes the case errored — the run is then incomplete,
and ``--resume`` answers the whole case again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ...answers import USAGE_FIELDS, Usage, UsageSetAside, sum_usage
from ...grading import Check, judge_pass_share
from ...runs import CaseResult
from ...storage.values import ANSWERS, PASS_FRACTION, PASSES

__all__ = ["FLAKY_LISTED", "answer_pass_value", "answer_usage", "case_repeats", "merge_answers", "repeat_metrics", "single_answer_measures"]

#: The most flaky case ids a run's metrics list (all are counted).
FLAKY_LISTED = 100


def answer_pass_value(case: CaseResult) -> float:
    """One graded answer's pass value: the share of the judge's verdicts that passed it when a
    judge was asked several times, else 1.0 or 0.0."""
    share = judge_pass_share(case.checks)
    if share is not None and not case.errored:
        return share
    return 1.0 if case.passed else 0.0


def single_answer_measures(case: CaseResult) -> CaseResult:
    """A case answered once, with its pass fraction kept when a judge asked several times
    disagreed with itself (the paired gate compares it by that share)."""
    share = judge_pass_share(case.checks)
    if share is None or case.errored or share in (0.0, 1.0):
        return case
    return attrs.evolve(case, measures={**(case.measures or {}), PASS_FRACTION: share})


def _merged_checks(answers: Sequence[CaseResult]) -> tuple[Check, ...]:
    total = len(answers)
    order: dict[str, list[Check]] = {}
    for answer in answers:
        for check in answer.checks:
            order.setdefault(check.name, []).append(check)
    merged = []
    for name, seen in order.items():
        failed = [c for c in seen if not c.passed]
        if not failed:
            merged.append(seen[0])
            continue
        first = failed[0]
        why = first.error or first.detail
        detail = f"failed in {len(failed)} of {total} answers" + (f": {why}" if why else "")
        merged.append(Check(name, False, first.error, detail))
    return tuple(merged)


def merge_answers(answers: Sequence[CaseResult], usage_sums: UsageSetAside | None = None) -> CaseResult:
    """One case from the graded answers of one prompt (at least one; see the module docstring);
    ``usage_sums`` keeps the problem of a summed usage set aside (:func:`~evalkit.answers.sum_usage`)."""
    first = answers[0]
    if len(answers) == 1:
        return single_answer_measures(first)
    total = len(answers)
    errored = next((a for a in answers if a.errored), None)
    if errored is not None:
        place = answers.index(errored) + 1
        return attrs.evolve(
            errored,
            error=f"answer {place} of {total}: {errored.error}",
            # the tokens of every answer that got replies, as their requests are counted
            usage=sum_usage((a.usage for a in answers if a.requests != 0), usage_sums),
            requests=_requests(answers),
            requests_sent=_requests(answers, sent=True),
            judge_usage=_judge_calls(answers),
        )
    passes = sum(1 for a in answers if a.passed)
    fraction = sum(answer_pass_value(a) for a in answers) / total
    identities = {a.identity for a in answers}
    yardsticks = [a.yardstick for a in answers]
    # A grading that failed for one answer names its own yardstick: the run then has no single one.
    yardstick = next((y for y in yardsticks if y != yardsticks[0]), yardsticks[0])
    detail = dict(first.detail or {})
    detail["answers"] = [
        {"passed": a.passed, "score": a.score, "failed_checks": [c.name for c in a.failed_checks]} for a in answers
    ]
    return attrs.evolve(
        first,
        passed=passes * 2 > total,
        score=sum(a.score for a in answers) / total,
        checks=_merged_checks(answers),
        latency_s=sum(a.latency_s for a in answers) / total,
        # answers that disagree on who served are no evidence of one identity
        identity=first.identity if len(identities) == 1 else None,
        yardstick=yardstick,
        usage=sum_usage((a.usage for a in answers), usage_sums),
        requests=_requests(answers),
        requests_sent=_requests(answers, sent=True),
        # every answer's judge calls, in order: each was asked and paid for
        judge_usage=_judge_calls(answers),
        detail=detail,
        finished_at=max(a.finished_at for a in answers),
        measures={**(first.measures or {}), PASS_FRACTION: fraction, ANSWERS: total, PASSES: passes},
    )


def _requests(answers: Sequence[CaseResult], *, sent: bool = False) -> int | None:
    """The requests the answers got replies to together (``sent``: the requests they sent, a failed
    one included); ``None`` when one of them does not say."""
    counts = [a.requests_sent if sent else a.requests for a in answers]
    return None if any(c is None for c in counts) else sum(counts)  # type: ignore[misc]


def answer_usage(case: CaseResult) -> Usage | None:
    """The token counts of one answer of ``case``: its stored usage, which sums its answers under
    ``--repeats`` (``measures["answers"]``, kept since repeats were), divided by their number and
    rounded up — what ``evalkit plan`` and a budget measure one answer by. ``None`` for an errored
    case: its usage is what the replies before the failure reported, no whole answer's."""
    usage, answers = case.usage, case.answers
    if case.errored:
        return None
    if usage is None or answers < 2:
        return usage
    return Usage(*(None if (count := getattr(usage, field)) is None else math.ceil(count / answers) for field in USAGE_FIELDS))


def _judge_calls(answers: Sequence[CaseResult]) -> tuple[Any, ...]:
    """Every answer's judge calls, in order (each was asked and paid for)."""
    return tuple(call for a in answers for call in a.judge_usage)


def case_repeats(case: CaseResult) -> tuple[int, int, float] | None:
    """``(answers, passes, pass fraction)`` of a case answered several times (``None`` otherwise)."""
    measures = case.measures or {}
    answers, passes, fraction = measures.get(ANSWERS), measures.get(PASSES), measures.get(PASS_FRACTION)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (answers, passes, fraction)):
        return None
    return int(answers), int(passes), float(fraction)  # type: ignore[arg-type]


def repeat_metrics(cases: Iterable[CaseResult]) -> dict[str, Any] | None:
    """A repeated run's summary, stored with its metrics (``None`` for a run answered once):
    ``answers_per_case``, the mean ``pass_fraction``, the share of cases with at least one passing
    answer (``pass_at_n``) and with all of them passing (``pass_all_n``), and the cases whose
    answers disagreed (``flaky_count``, the first :data:`FLAKY_LISTED` in ``flaky_cases``)."""
    counted = 0
    most = 0
    fractions = at_least_one = every = 0.0
    flaky: list[str] = []
    flaky_count = 0
    for case in cases:
        if case.errored:
            continue
        repeated = case_repeats(case)
        if repeated is None:
            continue
        answers, passes, fraction = repeated
        counted += 1
        most = max(most, answers)
        fractions += fraction
        at_least_one += passes > 0
        every += passes == answers
        if 0 < passes < answers:
            flaky_count += 1
            if len(flaky) < FLAKY_LISTED:
                flaky.append(case.case_id)
    if not counted or most < 2:
        return None
    return {
        "answers_per_case": most,
        "cases": counted,
        "pass_fraction": fractions / counted,
        "pass_at_n": at_least_one / counted,
        "pass_all_n": every / counted,
        "flaky_count": flaky_count,
        "flaky_cases": flaky,
    }
