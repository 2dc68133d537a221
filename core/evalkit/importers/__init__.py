"""Turning what an application recorded into golden sets to review: ``evalkit import otel``.

:func:`import_otel` reads OpenTelemetry GenAI spans from an OTLP/JSON file (:mod:`.otlp`), makes a
case of each model call (:mod:`.otel`) and writes a set file and a ``replay`` answers file beside
it (:mod:`.writing`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from ..errors import UsageError
from ..wording import counted, path_named
from .otel import TraceImport, cases_from_spans
from .otlp import read_spans
from .writing import ImportTarget, check_distinct, writable_cases, write_import

__all__ = ["ImportTarget", "OtelImport", "import_otel", "unread_lines"]


@attrs.frozen
class OtelImport:
    """What an import read and wrote."""

    target: ImportTarget
    found: TraceImport
    #: Lines of the trace file that held no OTLP export request.
    unreadable_lines: tuple[int, ...] = ()
    #: Why, for a line that is one but for a key written twice (:attr:`.otlp.SpanReading.reasons`).
    unreadable_reasons: Mapping[int, str] = attrs.Factory(dict)

    @property
    def conversations(self) -> int:
        """Cases kept as conversations (``messages``)."""
        return sum(1 for case in self.found.cases if not case.single_prompt)

    @property
    def skipped(self) -> int:
        """Cases kept but marked ``skip`` (conversations with tool calls)."""
        return sum(1 for case in self.found.cases if case.kept_skipped)

    @property
    def model(self) -> str | None:
        """The model that answered most of the cases, if the spans said."""
        models = [case.model for case in self.found.cases if case.model]
        return max(dict.fromkeys(models), key=models.count) if models else None

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` document."""
        return {
            "set_file": str(self.target.set_file),
            "answers_file": str(self.target.answers_file),
            "identifier": self.target.identifier,
            "model": self.model,
            "spans": self.found.spans,
            "cases": len(self.found.cases),
            "conversations": self.conversations,
            "skipped": self.skipped,
            "not_imported": dict(self.found.not_imported),
            "unreadable_lines": list(self.unreadable_lines),
            "unreadable_reasons": {str(number): why for number, why in sorted(self.unreadable_reasons.items())},
        }


#: How many lines :func:`unread_lines` names by number, and how many reasons it gives.
SHOWN_LINES = 5


def unread_lines(lines: tuple[int, ...], reasons: Mapping[int, str], *, numbered: bool = True) -> list[str]:
    """What is said of a trace file's lines not read, one phrase per kind: ``2 lines held no
    OTLP/JSON export request (line 3, 7)`` (without the numbers unless ``numbered``), and for a
    line that is a request but for a key written twice its reason, ``line 2: key "traceId" appears
    more than once, which OTLP/JSON refuses`` — not "held no request", which sent a user looking
    for a request that was there. At most :data:`SHOWN_LINES` numbers and reasons are given."""
    plain = [number for number in lines if number not in reasons]
    repeated = [number for number in lines if number in reasons]
    phrases = []
    if plain:
        shown = ", ".join(str(n) for n in plain[:SHOWN_LINES]) + (" …" if len(plain) > SHOWN_LINES else "")
        phrases.append(f"{counted(len(plain), 'line', grouped=True)} held no OTLP/JSON export request" + (f" (line {shown})" if numbered else ""))
    phrases += [f"line {number}: {reasons[number]}" for number in repeated[:SHOWN_LINES]]
    if len(repeated) > SHOWN_LINES:
        phrases.append(f"{counted(len(repeated) - SHOWN_LINES, 'more line', grouped=True)} with a key written twice")
    return phrases


def _reasons(counts: Mapping[str, int]) -> str:
    return "; ".join(f"{why}: {count:,}" for why, count in counts.items()) or "no span at all"


def import_otel(trace_file: Path, target: ImportTarget) -> OtelImport:
    """Read ``trace_file``, write the cases its GenAI spans record to ``target``; a
    :class:`~evalkit.errors.UsageError` (nothing written) when the file cannot be read, holds no
    case, or only cases that cannot run yet, when a target exists and ``target.force`` is unset, or
    when the set file, the answers file and the trace file are not three files. A case the set
    file could not hold is left out, counted (:func:`~.writing.writable_cases`)."""
    check_distinct(trace_file, target)
    reading = read_spans(trace_file)
    found, text = writable_cases(cases_from_spans(reading.spans), target)
    unread = unread_lines(reading.unreadable_lines, reading.reasons, numbered=False)
    unreadable = f" ({'; '.join(unread)})" if unread else ""
    if not found.cases:
        raise UsageError(f"trace file {path_named(trace_file)} holds no model call to import: {_reasons(found.not_imported)}{unreadable}")
    outcome = OtelImport(target, found, reading.unreadable_lines, reading.reasons)
    if outcome.skipped == len(found.cases):
        raise UsageError(
            f"every model call in {path_named(trace_file)} holds tool calls (kept but skipped until their tools are declared), so the set would have "
            "nothing to run; nothing was written"
        )
    write_import(found.cases, target, text)
    return outcome
