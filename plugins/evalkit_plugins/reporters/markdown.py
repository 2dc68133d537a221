"""The ``markdown`` reporter: a summary for ``$GITHUB_STEP_SUMMARY`` and merge-request comments.

The verdict is the first line; then a table of the headline numbers (pass rate and mean score,
or hit@1 / hit@3 / MRR@k / nDCG@k) against the baseline with deltas; then the regressed cases
with their failed checks; the rest (other comparison sections, every case, and each conversation's
turns and tool calls with its final answer) folded in ``<details>``. The document is written from templates (:class:`evalkit.reports.escape.Markdown`)
that escape every value put into them for CommonMark/GFM, and HTML-escape what goes inside
``<summary>`` (:class:`evalkit.reports.escape.Html`); the numbers and words evalkit writes itself
are marked as its own Markdown.

With ``--report markdown`` and no path, the report is appended to ``$GITHUB_STEP_SUMMARY`` when
that variable is set (standard output otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalkit.reports import Report
from evalkit.reports.escape import Html, Markdown
from evalkit.run_figures import answered_text
from evalkit.runs import CaseResult

__all__ = ["MarkdownReporter", "STEP_SUMMARY"]

#: The variable GitHub Actions points at a job's summary file.
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
_ICONS = {"PASSED": "✅", "BASELINE": "✅", "REGRESSED": "❌", "PENDING": "⏳", "INCONCLUSIVE": "❔"}


def _result(case: CaseResult, report: Report) -> str:
    if report.retrieval and not case.errored:
        return "top-1 hit" if case.passed else ("top-3 hit" if case.score >= 1.0 else "miss")
    marks = report.case_marks(case)
    result = "error" if case.errored else ("pass" if case.passed else "FAIL")
    return result + (Markdown.fill(" ({})", "; ".join(marks)) if marks else "")


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
        answered = Markdown(answered_text(run, "question" if report.retrieval else "case"))
        lines = [
            Markdown.fill(
                "**{icon} {word}** — {set}, run {run}: {sentence}",
                icon=Markdown(icon), word=word, set=run.set_identifier, run=run.id, sentence=report.verdict_sentence,
            ),
            "",
            Markdown.fill("{identity} · grader {grader} · {answered}", identity=report.identity, grader=run.grader, answered=answered)
            + (Markdown.fill(" · label {}", run.label) if run.label else "")
            + (Markdown.fill(" · cost {}", report.cost) if report.cost is not None else ""),
            "",
        ]
        lines.extend(self._figures(report))
        for note in report.notes:
            lines.extend([Markdown.fill("> {}", note), ""])
        lines.extend(self._regressed(report))
        lines.extend(self._folded(report))
        return "\n".join(lines).rstrip("\n") + "\n"

    @staticmethod
    def _figures(report: Report) -> list[str]:
        comparison = report.comparison
        base = Markdown.fill("Baseline (run {})", comparison.baseline_id) if comparison is not None else "Baseline"
        rows = [f"| Metric | {base} | This run | Delta |", "| --- | ---: | ---: | ---: |"]
        for figure in report.figures():
            rows.append(
                Markdown.fill(
                    "| {label} | {baseline} | {value} | {delta} |", label=figure.label,
                    baseline=Markdown(figure.show(figure.baseline) if comparison else "—"),
                    value=Markdown(figure.show(figure.value)), delta=Markdown(figure.show_delta() or "—"),
                )
            )
        if comparison is not None:
            flips = len(comparison.regressed_cases) + len(comparison.fixed_cases)
            rows += ["", f"{len(comparison.regressed_cases)} regressed, {len(comparison.fixed_cases)} fixed "
                         f"(exact McNemar p = {comparison.mcnemar_p:.3g}"
                         + ("; too few flips to call a trend)" if flips and comparison.mcnemar_p >= 0.05 else ")")]
            uncertainty = report.uncertainty_lines()
            if uncertainty:
                rows += ["", *(Markdown.fill("- {}", line) for line in uncertainty)]
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
            lines.append(Markdown.fill("- **{}**", case_id) + (Markdown.fill(" — {}", reasons) if reasons else ""))
        return [*lines, ""]

    @staticmethod
    def _details(summary: str, body: list[str]) -> list[str]:
        return ["<details>", Html.fill("<summary>{}</summary>", summary), "", *body, "", "</details>", ""]

    def _folded(self, report: Report) -> list[str]:
        lines: list[str] = []
        for heading, ids in report.sections()[1:]:
            if ids:
                lines.extend(self._details(f"{heading}: {len(ids)}", [Markdown.fill("- {}", i) for i in ids]))
        run = report.run
        table = ["| Case | Result | Score | Failed checks |", "| --- | --- | ---: | --- |"]
        for case in run.cases:
            # a passing case's advisory failures (a judge's verdict that does not gate) are shown too
            shown = not case.passed or any(c.advisory and not c.passed for c in case.checks)
            reasons = "; ".join(report.failed_checks(case)) if shown else ""
            table.append(
                Markdown.fill(
                    "| {case} | {result} | {score} | {reasons} |",
                    case=case.case_id, result=Markdown(_result(case, report)), score=Markdown(f"{case.score:.2f}"), reasons=reasons,
                )
            )
        noun = "questions" if report.retrieval else "cases"
        lines.extend(self._details(f"All {noun} ({len(run.cases)})", table))
        lines.extend(self._conversations(report))
        return lines

    def _conversations(self, report: Report) -> list[str]:
        """Each conversation or agent case: what it asked (when the installed set is the version
        answered), then every turn after that — the model's turns, each tool call with its
        arguments, the canned result or error it got — and the final answer, one list item a turn."""
        from evalkit.conversations import transcript_lines

        body: list[str] = []
        cases = [case for case in report.run.cases if case.transcript]
        for case in cases:
            body.extend([Markdown.fill("#### {} — {}", case.case_id, Markdown(_result(case, report))), ""])
            asked = report.texts.get(case.case_id)
            turns = list(asked.messages) if asked is not None else []
            turns.extend(transcript_lines(case.transcript))
            body.extend(Markdown.fill("- **{}**: {}", who, what) for who, what in turns)
            final = case.answer_text
            if final is None:
                shown = Markdown.fill("Final answer: not stored (privacy {})", report.run.privacy)
            else:
                shown = Markdown.fill("Final answer: {}", final) if final else Markdown("Final answer: none (no reply)")
            body.extend(["", shown, ""])
        if not cases:
            return []
        return self._details(f"Conversations and tool calls ({len(cases)})", body[:-1])
