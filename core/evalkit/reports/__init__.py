"""Reports for CI: the input every reporter renders, the reporter contract and writing reports.

- :mod:`.model` — :class:`Report` (the stored run, its verdict and comparison, its scope's history)
- :mod:`.contract` — :class:`Reporter` and the optional :class:`DefaultDestination` capability
- :mod:`.assemble` — building a :class:`Report` from the results store
- :mod:`.targets` — ``--report FORMAT[:PATH]`` parsing and writing
- :mod:`.escape` — escaping every string for HTML, XML and Markdown
"""

from __future__ import annotations

from .assemble import assemble_report, history_of, question_infos
from .contract import DefaultDestination, Reporter
from .model import CHANGE_SECTIONS, Figure, HistoryPoint, QuestionInfo, Report
from .targets import ReportFailure, ReportTarget, ReportWritten, parse_targets, write_reports

__all__ = [
    "CHANGE_SECTIONS",
    "DefaultDestination",
    "Figure",
    "HistoryPoint",
    "QuestionInfo",
    "Report",
    "ReportFailure",
    "ReportTarget",
    "ReportWritten",
    "Reporter",
    "assemble_report",
    "history_of",
    "parse_targets",
    "question_infos",
    "write_reports",
]
