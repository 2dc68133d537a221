"""The ``markdown`` reporter: a summary for ``$GITHUB_STEP_SUMMARY`` and merge-request comments.

The verdict is the first line; then a table of the headline numbers (pass rate and mean score,
or hit@1 / hit@3 / MRR@k / nDCG@k) against the baseline with deltas; then the regressed cases
with their failed checks; the rest (other comparison sections, every case) folded in
``<details>``. Every string from the run is escaped for CommonMark/GFM
(:func:`evalkit.reports.escape.markdown_inline`), and HTML-escaped inside ``<summary>``.

With ``--report markdown`` and no path, the report is appended to ``$GITHUB_STEP_SUMMARY`` when
that variable is set (standard output otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalkit.reports import Report
from evalkit.reports.escape import html_text, markdown_inline
from evalkit.runs import CaseResult
from evalkit.wording import counted

__all__ = ["MarkdownReporter", "STEP_SUMMARY"]

#: The variable GitHub Actions points at a job's summary file.
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
_ICONS = {"PASSED": "✅", "BASELINE": "✅", "REGRESSED": "❌", "PENDING": "⏳", "INCONCLUSIVE": "❔"}


def _result(case: CaseResult, report: Report) -> str:
    if report.retrieval and not case.errored:
        return "top-1 hit" if case.passed else ("top-3 hit" if case.score >= 1.0 else "miss")
    marks = report.case_marks(case)
    result = "error" if case.errored else ("pass" if case.passed else "FAIL")
    return result + (f" ({markdown_inline('; '.join(marks))})" if marks else "")


class MarkdownReporter:
    """Renders a :class:`~evalkit.reports.Report` as GitHub-flavoured Markdown."""

    def default_destination(self, environ: Mapping[str, str]) -> str | None:
        """``$GITHUB_STEP_SUMMARY`` when set (appended to), else standard output."""
        return environ.get(STEP_SUMMARY) or None

    def render(self, report: Report) -> str:
        """The Markdown document."""
        run = report.run
        word = report.verdict_word
        icon = _ICONS.get(word, "❌" if report.gate_failed else "⚠️")
        lines = [
            f"**{icon} {markdown_inline(word)}** — {markdown_inline(run.set_identifier)}, run {markdown_inline(run.id)}: "
            f"{markdown_inline(report.verdict_sentence)}",
            "",
            f"{markdown_inline(report.identity)} · grader {markdown_inline(run.grader)} · "
            f"{run.answered_count} of {counted(run.case_count, 'question' if report.retrieval else 'case')} answered"
            + (f" · label {markdown_inline(run.label)}" if run.label else ""),
            "",
        ]
        lines.extend(self._figures(report))
        for note in report.notes:
            lines.extend([f"> {markdown_inline(note)}", ""])
        lines.extend(self._regressed(report))
        lines.extend(self._folded(report))
        return "\n".join(lines).rstrip("\n") + "\n"

    @staticmethod
    def _figures(report: Report) -> list[str]:
        comparison = report.comparison
        base = f"Baseline (run {markdown_inline(comparison.baseline_id)})" if comparison is not None else "Baseline"
        rows = ["| Metric | " + base + " | This run | Delta |", "| --- | ---: | ---: | ---: |"]
        for figure in report.figures():
            rows.append(
                f"| {markdown_inline(figure.label)} | {figure.show(figure.baseline) if comparison else '—'} | "
                f"{figure.show(figure.value)} | {figure.show_delta() or '—'} |"
            )
        if comparison is not None:
            flips = len(comparison.regressed_cases) + len(comparison.fixed_cases)
            rows += ["", f"{len(comparison.regressed_cases)} regressed, {len(comparison.fixed_cases)} fixed "
                         f"(exact McNemar p = {comparison.mcnemar_p:.3g}"
                         + ("; too few flips to call a trend)" if flips and comparison.mcnemar_p >= 0.05 else ")")]
            uncertainty = report.uncertainty_lines()
            if uncertainty:
                rows += ["", *(f"- {markdown_inline(line)}" for line in uncertainty)]
        return [*rows, ""]

    @staticmethod
    def _regressed(report: Report) -> list[str]:
        regressed = report.regressed_cases
        if not regressed:
            return []
        what = "Lost top-1 hits" if report.retrieval else "Regressed cases"
        lines = [f"### {what} ({len(regressed)})", ""]
        cases = report.run.case_map()
        for case_id in regressed:
            case = cases.get(case_id)
            reasons = "; ".join(report.failed_checks(case)) if case is not None else ""
            lines.append(f"- **{markdown_inline(case_id)}**" + (f" — {markdown_inline(reasons)}" if reasons else ""))
        return [*lines, ""]

    @staticmethod
    def _details(summary: str, body: list[str]) -> list[str]:
        return ["<details>", f"<summary>{html_text(summary)}</summary>", "", *body, "", "</details>", ""]

    def _folded(self, report: Report) -> list[str]:
        lines: list[str] = []
        for heading, ids in report.sections()[1:]:
            if ids:
                lines.extend(self._details(f"{heading}: {len(ids)}", [f"- {markdown_inline(i)}" for i in ids]))
        run = report.run
        table = ["| Case | Result | Score | Failed checks |", "| --- | --- | ---: | --- |"]
        for case in run.cases:
            reasons = "; ".join(report.failed_checks(case)) if not case.passed else ""
            table.append(
                f"| {markdown_inline(case.case_id)} | {_result(case, report)} | {case.score:.2f} | {markdown_inline(reasons)} |"
            )
        noun = "questions" if report.retrieval else "cases"
        lines.extend(self._details(f"All {noun} ({len(run.cases)})", table))
        return lines
