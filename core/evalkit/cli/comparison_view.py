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


def render_comparison(
    out: Output,
    comparison: Any,
    words: ComparisonWords = PROMPT_WORDS,
    *,
    fail_on_new_failures: bool = False,
    case_notes: Mapping[str, str] | None = None,
) -> None:
    """Print the comparison's sections (only those with cases), the McNemar line, the summary and
    the gate lines. ``case_notes`` adds a note after a regressed case's id (its failed checks)."""

    def section(title: str, ids: Any, style: str | None = None, notes: Mapping[str, str] | None = None) -> None:
        if not ids:
            return
        out.print(f"{title}: {len(ids)}", style=style)
        for case_id in ids:
            note = (notes or {}).get(case_id)
            out.print(f"  - {case_id}" + (f": {note}" if note else ""))

    plural = f"{words.cases}s"
    section(words.regressed, comparison.regressed_cases, "red", case_notes)
    section(words.fixed, comparison.fixed_cases)
    section(words.still_failing, comparison.still_failing)
    if comparison.unstable_cases:
        out.print(
            f"Left out of the comparison, the judge disagreed with itself ({len(comparison.unstable_cases)}): "
            + ", ".join(comparison.unstable_cases)
        )
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
    out.print(words.summary(comparison), style="red" if comparison.regressed else "green")
    if comparison.regressed:
        out.print(words.detected, style="red")
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
    }


def verdict_document(verdict: Any, words: ComparisonWords = PROMPT_WORDS) -> dict[str, Any]:
    """A run's verdict as JSON-ready data, the same object for prompt and retrieval runs:
    ``state`` (``baseline``, ``no_regression``, ``regressed``, ``not_comparable`` or ``pending``),
    ``baseline_id`` (the run it was, or would have been, compared with), ``reason`` (why it was not
    compared, or the comparison's sentence), ``regressed``, and — when compared — every key of
    :func:`comparison_document` beside them."""
    comparison = verdict.comparison
    document: dict[str, Any] = {
        "state": verdict.state,
        "regressed": verdict.regressed,
        "reason": verdict.reason if comparison is None else words.summary(comparison),
        "baseline_id": verdict.baseline_id,
    }
    if comparison is not None:
        document.update(comparison_document(comparison, words))
        document["regressed"] = verdict.regressed
    return document
