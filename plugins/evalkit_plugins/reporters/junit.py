"""The ``junit`` reporter: JUnit XML for the test tab of Jenkins, GitLab, GitHub and friends.

One ``<testsuite>`` per run (name = set identifier; run id, identity, grader, verdict … as
properties), one ``<testcase>`` per case (classname = set, name = case id): a failed case is a
``<failure>`` whose message lists its failed named checks with their reasons, an errored case an
``<error>``. The regression verdict is one extra testcase, ``regression-gate`` of classname
``SET:evalkit``, that fails when the gate fails (and is skipped, with the reason, when the run could
not be compared and the gate was not strict). No case shares its classname and name: a case's
classname is the set's identifier, which never holds a ``:``.

The document validates against both JUnit schemas CI servers read: the Jenkins xUnit plugin's
``junit-10.xsd`` and the Apache Ant schema (which requires ``hostname``, a timezone-less
``timestamp``, ``properties`` and ``system-out``/``system-err`` on every suite).

The tree is built from the run's text as it is; ElementTree escapes markup, and the finished tree
is made safe once before it is written (:func:`_made_safe`: secrets scrubbed, control characters
and what XML 1.0 cannot carry written as escapes, attribute values on one line).
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

from evalkit.reports import Report
from evalkit.reports.escape import one_line, visible
from evalkit.runs import CaseResult

__all__ = ["GATE_CASE", "GATE_CLASS_SUFFIX", "JUnitReporter"]

#: The name of the extra testcase that carries the regression verdict.
GATE_CASE = "regression-gate"
#: What the gate's classname adds to the set's identifier: a case of id ``regression-gate`` is
#: another test (set identifiers hold no ``:``; a case id may be any text).
GATE_CLASS_SUFFIX = ":evalkit"


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def _made_safe(root: ET.Element) -> None:
    """Make every text and attribute value of the tree safe to write, in place: :func:`visible`
    for element text (its lines kept), :func:`one_line` for attribute values."""
    for element in root.iter():
        element.attrib.update((key, one_line(value)) for key, value in element.attrib.items())
        if element.text:
            element.text = visible(element.text)


class JUnitReporter:
    """Renders a :class:`~evalkit.reports.Report` as JUnit XML."""

    def render(self, report: Report) -> str:
        """The XML document, UTF-8, with an XML declaration."""
        run = report.run
        suite_name = run.set_identifier
        cases = run.cases
        failures = sum(1 for c in cases if not c.passed and not c.errored)
        errors = sum(1 for c in cases if c.errored)
        gate_fails = report.gate_failed
        tests = len(cases) + 1
        failures += 1 if gate_fails else 0
        skipped = 1 if self._gate_skipped(report) else 0
        total_time = sum(c.latency_s for c in cases)
        started = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(run.started_at or report.generated_at))

        root = ET.Element("testsuites")  # no attributes: the Ant schema allows none here
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": suite_name,
                "package": suite_name,
                "id": "0",
                "tests": str(tests),
                "failures": str(failures),
                "errors": str(errors),
                "skipped": str(skipped),
                "time": _seconds(total_time),
                "timestamp": started,
                "hostname": "evalkit",
            },
        )
        properties = ET.SubElement(suite, "properties")
        for name, value in self._properties(report):
            ET.SubElement(properties, "property", {"name": name, "value": value})
        for case in cases:
            element = ET.SubElement(
                suite, "testcase", {"classname": suite_name, "name": case.case_id, "time": _seconds(case.latency_s)}
            )
            if case.errored:
                error = ET.SubElement(element, "error", {"type": "error", "message": case.error or "error"})
                error.text = "\n".join(report.failed_checks(case))
            elif not case.passed:
                reasons = report.failed_checks(case)
                failure = ET.SubElement(
                    element, "failure", {"type": "failed_checks", "message": "; ".join(reasons) or "failed"}
                )
                failure.text = self._failure_text(report, case, reasons)
        self._gate(suite, report, suite_name)
        ET.SubElement(suite, "system-out").text = self._summary(report)
        ET.SubElement(suite, "system-err").text = ""
        _made_safe(root)
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

    @staticmethod
    def _properties(report: Report) -> list[tuple[str, str]]:
        run = report.run
        pairs = [
            ("run_id", run.id),
            ("kind", run.kind.value),
            ("identity", report.identity),
            ("grader", run.grader),
            ("status", run.status.value),
            ("privacy", run.privacy),
            ("verdict", report.verdict_word),
        ]
        if report.cost is not None:
            pairs.append(("cost", report.cost))
        if report.comparison is not None:
            pairs.append(("baseline_run_id", report.comparison.baseline_id))
        if run.label:
            pairs.append(("label", run.label))
        pairs.extend((figure.key, figure.show(figure.value)) for figure in report.figures())
        return pairs

    @staticmethod
    def _failure_text(report: Report, case: CaseResult, reasons: tuple[str, ...]) -> str:
        lines = [*reasons, *report.case_marks(case)]
        tag = report.changes().get(case.case_id)
        if tag == "regressed":
            lines.insert(0, "REGRESSED: passed in the baseline run, fails now")
        return "\n".join(lines)

    @staticmethod
    def _gate_skipped(report: Report) -> bool:
        return not report.gate_failed and report.verdict_word.startswith("NOT COMPARED")

    def _gate(self, suite: ET.Element, report: Report, suite_name: str) -> None:
        gate = ET.SubElement(suite, "testcase", {"classname": suite_name + GATE_CLASS_SUFFIX, "name": GATE_CASE, "time": "0.000"})
        sentence = report.verdict_sentence
        if report.gate_failed:
            failure = ET.SubElement(gate, "failure", {"type": "regression", "message": f"{report.verdict_word}: {sentence}"})
            regressed = report.regressed_cases
            body = [report.verdict_sentence]
            if regressed:
                body.append(f"Regressed cases ({len(regressed)}):")
                body.extend(f"  - {case_id}" for case_id in regressed)
            failure.text = "\n".join(body)
        elif self._gate_skipped(report):
            ET.SubElement(gate, "skipped", {"message": sentence})

    @staticmethod
    def _summary(report: Report) -> str:
        lines = [f"{report.verdict_word}: {report.verdict_sentence}"]
        for figure in report.figures():
            delta = figure.show_delta()
            lines.append(f"{figure.label}: {figure.show(figure.value)}" + (f" ({delta} vs baseline)" if delta else ""))
        if report.comparison is not None:
            lines.append(f"exact McNemar p = {report.comparison.mcnemar_p:.3g}")
        lines.extend(report.uncertainty_lines())
        lines.extend(report.notes)
        return "\n".join(lines)
