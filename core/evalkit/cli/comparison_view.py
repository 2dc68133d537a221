"""One rendering of a :class:`~evalkit.verdict.Comparison`, used by ``evalkit run``, ``evalkit
compare`` and ``evalkit retrieval`` alike: the same sections, the same order, the same words.

Regressed cases come first; then fixed, still failing, unstable; then the set's changes — added
(and how many of them fail), edited (old → new result) and removed — each a section of its own,
never a regression; then the flips' McNemar weight, the summary sentence and the gate lines.
"""

from __future__ import annotations

from ..wording import counted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .console import Output

__all__ = [
    "PROMPT_WORDS",
    "RETRIEVAL_WORDS",
    "ComparisonWords",
    "comparison_document",
    "metric_lines",
    "metrics_document",
    "render_comparison",
    "verdict_document",
]


class ComparisonWords:
    """What the two rates and a case are called: prompt runs and retrieval runs word them differently."""

    def __init__(
        self,
        *,
        pass_name: str,
        mean_name: str,
        mean_in_points: bool,
        cases: str,
        regressed: str,
        fixed: str,
        still_failing: str,
        flips: str,
        detected: str,
    ) -> None:
        self.pass_name = pass_name
        self.mean_name = mean_name
        self.mean_in_points = mean_in_points
        self.cases = cases
        self.regressed = regressed
        self.fixed = fixed
        self.still_failing = still_failing
        self.flips = flips
        self.detected = detected

    def summary(self, comparison: Any) -> str:
        """The comparison's one sentence in these words."""
        return comparison.summary(self.pass_name, self.mean_name, mean_in_points=self.mean_in_points, unit=self.cases)


PROMPT_WORDS = ComparisonWords(
    pass_name="pass rate",
    mean_name="mean score",
    mean_in_points=False,
    cases="case",
    regressed="Regressed (passed in the baseline, fail now)",
    fixed="Fixed (failed in the baseline, pass now)",
    still_failing="Still failing",
    flips="Flipped cases: {regressed} regressed, {fixed} fixed",
    detected="Quality regression detected against the baseline.",
)
RETRIEVAL_WORDS = ComparisonWords(
    pass_name="top-1 hit rate",
    mean_name="top-3 hit rate",
    mean_in_points=True,
    cases="question",
    regressed="Lost a top-1 hit (hit in the baseline, miss now)",
    fixed="Gained a top-1 hit (missed in the baseline, hit now)",
    still_failing="Still missing a top-1 hit",
    flips="Flipped questions: {regressed} lost, {fixed} gained a top-1 hit",
    detected="Retrieval regression detected against the baseline.",
)


def _result(passed: bool) -> str:
    return "pass" if passed else "FAIL"


def _outcome(passed: bool | None) -> str:
    return "absent" if passed is None else _result(passed)


def metric_lines(comparison: Any, words: ComparisonWords = PROMPT_WORDS) -> list[str]:
    """One line per measured metric with its uncertainty (see :func:`evalkit.verdict_text.metric_lines`)."""
    from ..verdict_text import metric_lines as lines

    return lines(comparison, words.cases)


def metrics_document(comparison: Any) -> dict[str, Any]:
    """Every measured metric as a verdict's ``--json`` writes it: ``{NAME: {baseline, value, delta,
    ci95, p_value, minimum_detectable_drop, tolerance}}`` (fractions; ``delta`` is the run minus
    the baseline; ``tolerance`` is ``null`` for a metric that is not gated), with ``n`` and, under
    the paired gate, the metric's ``state``."""
    states = {m.name: m.state.value for m in comparison.decision.metrics} if comparison.decision is not None else {}
    document: dict[str, Any] = {}
    for spec in comparison.metrics:
        m = comparison.statistic(spec.name)
        if m is None:
            continue
        entry = m.as_dict()
        entry["tolerance"] = float(spec.tolerance) if spec.gated else None
        entry["n"] = m.n
        entry["p_drop"] = m.p_drop
        if spec.name in states:
            entry["state"] = states[spec.name]
        document[spec.name] = entry
    return document


def render_comparison(
    out: Output,
    comparison: Any,
    words: ComparisonWords = PROMPT_WORDS,
    *,
    fail_on_new_failures: bool = False,
    case_notes: Mapping[str, str] | None = None,
    fail_on_inconclusive: bool = False,
    flaky: Mapping[str, str] | None = None,
) -> None:
    """Print the comparison's sections (only those with cases), the McNemar line, one line per
    metric with its uncertainty, the warnings of tolerances the set cannot keep, the summary and
    the gate lines. ``case_notes`` adds a note after a regressed case's id (its failed checks),
    ``flaky`` marks the cases known to be flaky (with why)."""

    def section(title: str, ids: Any, style: str | None = None, notes: Mapping[str, str] | None = None) -> None:
        if not ids:
            return
        out.print(f"{title}: {len(ids)}", style=style)
        for case_id in ids:
            note = (notes or {}).get(case_id)
            mark = f" (flaky: {flaky[case_id]})" if flaky and case_id in flaky else ""
            out.print(f"  - {case_id}{mark}" + (f": {note}" if note else ""))

    plural = f"{words.cases}s"
    section(words.regressed, comparison.regressed_cases, "red", case_notes)
    section(words.fixed, comparison.fixed_cases)
    section(words.still_failing, comparison.still_failing)
    if comparison.unstable_cases:
        how = (
            "Compared with the share of the judge's verdicts that passed, the judge disagreed with itself"
            if comparison.method == "paired"
            else "Left out of the comparison, the judge disagreed with itself"
        )
        out.print(f"{how} ({len(comparison.unstable_cases)}): " + ", ".join(comparison.unstable_cases))
    if comparison.quarantined_cases:
        out.print(
            f"Quarantined ([gate] quarantine): {counted(len(comparison.quarantined_cases), words.cases)} left out of the gate, "
            "reported here:"
        )
        for case in comparison.quarantined_cases:
            out.print(f"  - {case.case_id}: {_outcome(case.baseline_passed)} → {_outcome(case.passed)}")
    if comparison.added_cases:
        failing = set(comparison.added_failing)
        out.print(f"Added {plural} (not in the baseline; {len(failing)} fail): {len(comparison.added_cases)}")
        for case_id in comparison.added_cases:
            out.print(f"  - {case_id}  {_result(case_id not in failing)}")
    if comparison.edited_cases:
        out.print(f"Edited {plural} (content changed; baseline → now): {len(comparison.edited_cases)}")
        for edited in comparison.edited_cases:
            out.print(f"  - {edited.case_id}: {_result(edited.baseline_passed)} → {_result(edited.passed)}")
    if comparison.removed_cases:
        out.print(f"Removed {plural} (not in this run): {len(comparison.removed_cases)}")
        for case_id in comparison.removed_cases:
            out.print(f"  - {case_id}")
    if not comparison.fingerprints_known:
        out.print(f"A run was stored before {words.cases} fingerprints were kept: every {words.cases} in both runs counts as unchanged.")
    flips = len(comparison.regressed_cases) + len(comparison.fixed_cases)
    if flips:
        weight = "" if comparison.mcnemar_p < 0.05 else "; too few flips to call a trend"
        out.print(
            words.flips.format(regressed=len(comparison.regressed_cases), fixed=len(comparison.fixed_cases))
            + f" (exact McNemar p = {comparison.mcnemar_p:.3g}{weight})"
        )
    for line in metric_lines(comparison, words):
        out.print(line)
    for warning in comparison.warnings(words.cases):
        out.print(warning, style="yellow")
    out.print(words.summary(comparison), style={"regressed": "red", "inconclusive": "yellow"}.get(comparison.state, "green"))
    if comparison.regressed:
        out.print(words.detected, style="red")
    if comparison.inconclusive:
        consequence = (
            "the gate fails (--fail-on-inconclusive)" if fail_on_inconclusive else "exit 0 (--fail-on-inconclusive makes it fail the gate)"
        )
        out.print(f"Inconclusive under the paired gate: {consequence}.", style="yellow")
        if comparison.decision is not None:
            for decided in comparison.decision.metrics:
                if decided.state.value != "no_regression":
                    out.print(f"  {decided.reason}")
    new_failures = comparison.new_failures
    if new_failures:
        line = f"New failures: {counted(len(new_failures), 'added or edited ' + words.cases)} fail: {', '.join(new_failures)}"
        if fail_on_new_failures:
            out.print(f"{line} — the gate fails (--fail-on-new-failures).", style="red")
        else:
            out.print(line)


def comparison_document(comparison: Any, words: ComparisonWords = PROMPT_WORDS) -> dict[str, Any]:
    """The comparison as JSON-ready data, the same in every command's ``--json``."""
    return {
        "baseline_id": comparison.baseline_id,
        "summary": words.summary(comparison),
        "regressed": comparison.regressed,
        "pass_rate_regressed": comparison.pass_rate_regressed,
        "mean_score_regressed": comparison.mean_score_regressed,
        "pass_rate_delta": float(comparison.pass_rate_delta),
        "mean_score_delta": float(comparison.mean_score_delta),
        "baseline_pass_rate": float(comparison.baseline_pass_rate),
        "pass_rate": float(comparison.pass_rate),
        "baseline_mean_score": float(comparison.baseline_mean_score),
        "mean_score": float(comparison.mean_score),
        "compared_cases": len(comparison.compared_cases),
        "regressed_cases": list(comparison.regressed_cases),
        "fixed_cases": list(comparison.fixed_cases),
        "still_failing": list(comparison.still_failing),
        "unstable_cases": list(comparison.unstable_cases),
        "added_cases": list(comparison.added_cases),
        "added_failing": list(comparison.added_failing),
        "edited_cases": [
            {
                "id": e.case_id, "baseline_passed": e.baseline_passed, "passed": e.passed,
                "baseline_score": e.baseline_score, "score": e.score,
            }  # fmt: skip
            for e in comparison.edited_cases
        ],
        "removed_cases": list(comparison.removed_cases),
        "new_failures": list(comparison.new_failures),
        "set_changed": comparison.set_changed,
        "fingerprints_known": comparison.fingerprints_known,
        "mcnemar_p": comparison.mcnemar_p,
        "quarantined_cases": [
            {"id": q.case_id, "baseline_passed": q.baseline_passed, "passed": q.passed} for q in comparison.quarantined_cases
        ],
        "method": comparison.method,
        "alpha": comparison.alpha,
        "repeats": comparison.repeats,
        "max_regressed_cases": comparison.max_regressed_cases,
        "warnings": list(comparison.warnings(words.cases)),
    }


def verdict_document(verdict: Any, words: ComparisonWords = PROMPT_WORDS) -> dict[str, Any]:
    """A run's verdict as JSON-ready data, the same object for prompt and retrieval runs:
    ``state`` (``baseline``, ``no_regression``, ``regressed``, ``inconclusive``,
    ``not_comparable`` or ``pending``), ``baseline_id`` (the run it was, or would have been,
    compared with), ``reason`` (why it was not compared, or the comparison's sentence),
    ``metrics`` (:func:`metrics_document`; empty when not compared), ``regressed``,
    ``acceptance_note`` (why a compared run was not accepted as the baseline), and — when
    compared — every key of :func:`comparison_document` beside them."""
    comparison = verdict.comparison
    document: dict[str, Any] = {
        "state": verdict.state,
        "regressed": verdict.regressed,
        "reason": verdict.reason if comparison is None else words.summary(comparison),
        "baseline_id": verdict.baseline_id,
        "metrics": metrics_document(comparison) if comparison is not None else {},
        "acceptance_note": getattr(verdict, "acceptance_note", None),
    }
    if verdict.notes:
        document["notes"] = list(verdict.notes)
    if comparison is not None:
        document.update(comparison_document(comparison, words))
        document["regressed"] = verdict.regressed
    return document
