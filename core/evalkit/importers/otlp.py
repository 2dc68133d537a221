"""Reading OpenTelemetry spans from OTLP/JSON files, as hostile text.

Two layouts are read: one OTLP/JSON document (``{"resourceSpans": [...]}``, the body of an OTLP/HTTP
JSON export request, or what a collector's ``file`` exporter writes with rotation off), and JSON
Lines of such documents (what the OpenTelemetry SDK's OTLP JSON file exporter and the collector's
``file`` exporter write: one export request a line). Keys are lowerCamelCase as the OTLP/JSON
encoding specifies; the snake_case field names of the protobuf definitions are read too.

The file is read whole (at most :data:`MAX_TRACE_FILE_BYTES`) as UTF-8 by evalkit's JSON reader,
so text nested too deeply is a line that cannot be read, not a crash; attribute values nested past
:data:`MAX_VALUE_DEPTH` are dropped. A line that is not an export request is counted, never fatal.
A request with a key written twice in one object is such a line: OTLP/JSON is protobuf's JSON
mapping, whose parsers refuse a field given twice (Go's protojson: "duplicate field"), so no
exporter writes one, and keeping the last value would import what no receiver accepts. Its reason
is kept with its number (:attr:`SpanReading.reasons`), so the line is not reported as if it held
no request at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..errors import UsageError
from ..jsonparse import RepeatedKeyError, json_lines, parse_json
from ..textfiles import read_whole_file, utf8_text

__all__ = ["MAX_TRACE_FILE_BYTES", "MAX_VALUE_DEPTH", "Span", "SpanReading", "any_value", "read_spans", "valid_text"]

#: The largest trace file read, in bytes.
MAX_TRACE_FILE_BYTES = 256 * 1024 * 1024
#: How deep an attribute's value (arrays and key-value lists) is followed; deeper values are dropped.
MAX_VALUE_DEPTH = 32
#: The characters an id is shown with (hex from OTLP/JSON, base64 from protobuf's JSON mapping).
_ID_CHARACTERS = re.compile(r"[^0-9A-Za-z+/=_-]")


@attrs.frozen
class Span:
    """One span: its ids, name, start time and attributes (its resource's beneath its own)."""

    trace_id: str
    span_id: str
    name: str
    start: int
    attributes: Mapping[str, Any]
    #: The attributes of the span's resource (``service.name``, …), apart.
    resource: Mapping[str, Any] = attrs.Factory(dict)


@attrs.frozen
class SpanReading:
    """The spans of a trace file, and the lines that held no export request (1 for a whole-file
    document); ``reasons`` says why, for a line that is one but for a key written twice (line
    number → ``key "traceId" appears more than once, which OTLP/JSON refuses``)."""

    spans: tuple[Span, ...]
    unreadable_lines: tuple[int, ...] = ()
    reasons: Mapping[int, str] = attrs.Factory(dict)


#: Why a request with a key written twice is not read, after the key (:class:`RepeatedKeyError`).
REPEATED_KEY_REFUSED = "which OTLP/JSON refuses"


def _repeat_reason(exc: json.JSONDecodeError) -> str | None:
    """Why a line that failed to parse is not read, when it failed only for a key written twice."""
    return f"{exc.msg}, {REPEATED_KEY_REFUSED}" if isinstance(exc, RepeatedKeyError) else None


def read_spans(path: Path) -> SpanReading:
    """Every span in the OTLP/JSON file ``path``; :class:`~evalkit.errors.UsageError` when the file
    cannot be read at all (not UTF-8, too large, not a file)."""
    from ..wording import path_named

    try:
        text = utf8_text(read_whole_file(path, MAX_TRACE_FILE_BYTES))
    except UnicodeDecodeError as exc:
        raise UsageError(f"trace file {path_named(path)} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"trace file {path_named(path)} cannot be read: {exc.strerror}") from None
    spans: list[Span] = []
    unreadable: list[int] = []
    reasons: dict[int, str] = {}

    def not_read(number: int, exc: json.JSONDecodeError) -> None:
        unreadable.append(number)
        if (reason := _repeat_reason(exc)) is not None:
            reasons[number] = reason

    try:
        documents: list[tuple[int, Any]] = [(1, parse_json(text, unique_keys=True))]
    except json.JSONDecodeError as whole:
        documents = []
        if _one_document(text):  # one request with a key written twice: not read, as ProtoJSON refuses it
            not_read(1, whole)
        else:
            for number, line in enumerate(json_lines(text), start=1):
                if line.strip():
                    try:
                        documents.append((number, parse_json(line, unique_keys=True)))
                    except json.JSONDecodeError as exc:
                        not_read(number, exc)
    for number, document in documents:
        found = list(_spans_of(document))
        if found or _is_request(document):
            spans += found
        else:
            unreadable.append(number)
    return SpanReading(tuple(spans), tuple(sorted(unreadable)), reasons)


def _one_document(text: str) -> bool:
    """Whether ``text`` is one JSON document once keys written twice are let through (so it is not
    split into lines that are each no request)."""
    try:
        parse_json(text)
    except json.JSONDecodeError:
        return False
    return True


def _field(mapping: Any, camel: str) -> Any:
    """``mapping[camel]``, or its snake_case spelling (``resourceSpans`` / ``resource_spans``)."""
    if not isinstance(mapping, dict):
        return None
    if camel in mapping:
        return mapping[camel]
    return mapping.get(re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), camel))


def _is_request(document: Any) -> bool:
    return isinstance(_field(document, "resourceSpans"), list)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _spans_of(document: Any) -> Iterator[Span]:
    for resource_spans in _list(_field(document, "resourceSpans")):
        resource = attributes(_field(_field(resource_spans, "resource"), "attributes"))
        scopes = _list(_field(resource_spans, "scopeSpans")) or _list(_field(resource_spans, "instrumentationLibrarySpans"))
        for scope_spans in scopes:
            for span in _list(_field(scope_spans, "spans")):
                if isinstance(span, dict):
                    yield _span(span, resource)


def _span(raw: dict[str, Any], resource: Mapping[str, Any]) -> Span:
    start = _field(raw, "startTimeUnixNano")
    name = _field(raw, "name")
    return Span(
        trace_id=_identifier(_field(raw, "traceId")),
        span_id=_identifier(_field(raw, "spanId")),
        name=name if isinstance(name, str) else "",
        start=_integer(start) or 0,
        attributes=attributes(_field(raw, "attributes")),
        resource=resource,
    )


def _identifier(value: Any) -> str:
    return _ID_CHARACTERS.sub("", value)[:64] if isinstance(value, str) else ""


def _integer(value: Any) -> int | None:
    """An OTLP integer: a JSON number or a decimal string (int64 is written as a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and 0 < len(value) <= 20 and re.fullmatch(r"-?\d+", value):
        return int(value)
    return None


def attributes(raw: Any, depth: int = 0) -> dict[str, Any]:
    """A list of OTLP ``KeyValue`` objects as a dict (later keys win, as the SDK's do); keys that
    are not text and values that cannot be read are left out."""
    found: dict[str, Any] = {}
    for item in _list(raw):
        key = _field(item, "key")
        if not isinstance(key, str):
            continue
        value = any_value(_field(item, "value"), depth)
        if value is not None:
            found[key] = value
    return found


def valid_text(value: str) -> str:
    """``value`` with each lone surrogate (a JSON ``"\\ud800"`` escape, a byte of a file name that
    is not UTF-8) replaced by ``?``: no file and no terminal takes one, and a provider name holding
    one ended the import in an internal error when its tag was written."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


def any_value(raw: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as Python: text (valid Unicode: a lone surrogate is ``?``, as in the
    messages read from it), a boolean, a number, a list or a dict (``bytesValue`` stays its base64
    text); ``None`` for what cannot be read or nests past :data:`MAX_VALUE_DEPTH`."""
    if not isinstance(raw, dict) or depth > MAX_VALUE_DEPTH:
        return None
    for key in ("stringValue", "bytesValue"):
        value = _field(raw, key)
        if isinstance(value, str):
            return valid_text(value)
    value = _field(raw, "boolValue")
    if isinstance(value, bool):
        return value
    value = _field(raw, "intValue")
    if value is not None:
        return _integer(value)
    value = _field(raw, "doubleValue")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    array = _field(raw, "arrayValue")
    if isinstance(array, dict):
        items = [any_value(item, depth + 1) for item in _list(_field(array, "values"))]
        return [item for item in items if item is not None]
    kvlist = _field(raw, "kvlistValue")
    if isinstance(kvlist, dict):
        return attributes(_field(kvlist, "values"), depth + 1)
    return None
