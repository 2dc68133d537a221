"""The ``json`` reporter: the whole report as one JSON document, for tools of your own.

The document is the :class:`~evalkit.reports.Report` itself (run with cases, stored verdict,
comparison, baseline without cases, history, questions) through evalkit's one converter, plus
what reporters derive from it: ``verdict_word``, ``gate_failed`` and the headline ``figures``.
The encoder is its boundary (:func:`evalkit.reports.escape.json_document`): secrets scrubbed, the
characters a terminal acts on written as JSON escapes, the data unchanged.
"""

from __future__ import annotations

import attrs
from evalkit.convert import unstructure
from evalkit.reports import Report
from evalkit.reports.escape import json_document

__all__ = ["FORMAT_VERSION", "JsonReporter"]

#: Bumped when a field changes meaning or goes away.
FORMAT_VERSION = 1


class JsonReporter:
    """Renders a :class:`~evalkit.reports.Report` as JSON."""

    def render(self, report: Report) -> str:
        """Indented JSON; non-ASCII text kept as is (see :func:`~evalkit.reports.escape.json_document`)."""
        baseline = report.baseline.with_cases(()) if report.baseline is not None else None
        document = unstructure(attrs.evolve(report, baseline=baseline))
        document.update(
            format_version=FORMAT_VERSION,
            verdict_word=report.verdict_word,
            verdict_sentence=report.verdict_sentence,
            gate_failed=report.gate_failed,
            identity_label=report.identity,
            cost_label=report.cost,
            figures=[
                {"key": f.key, "label": f.label, "value": f.value, "baseline": f.baseline, "delta": f.delta}
                for f in report.figures()
            ],
            uncertainty=list(report.uncertainty_lines()),
        )
        return json_document(document)
