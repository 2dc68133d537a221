"""JSON text of plain scalars, exactly as the ``json`` module writes them, without its encoder.

The hot paths that write one small JSON text per case (a case's ``--json`` line, a prompt's
fingerprint, the set digest) spend more on setting up ``json``'s encoder than on encoding. They
write the structure themselves and ask :func:`scalar_text` for each value; anything that is not a
plain scalar (a list, a mapping, a subclass, NaN) gets ``None``, and the caller falls back to
``json`` for the whole value. Each caller's tests pin its text to what ``json.dumps`` writes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

__all__ = ["NotJsonNumber", "compact_text", "document_text", "scalar_text", "scalar_texts", "sent_text"]


def scalar_text(value: object, *, ascii: bool = False) -> str | None:
    """``value`` as ``json.dumps(value, ensure_ascii=ascii)`` writes it, when it is exactly a
    ``str``, ``bool``, ``int``, finite ``float`` or ``None``; else ``None``."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value) if ascii else encode_basestring(value)  # type: ignore[arg-type]
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)  # type: ignore[arg-type]
    if kind is float and value - value == 0.0:  # type: ignore[operator]  # finite: json writes float.__repr__
        return float.__repr__(value)  # type: ignore[arg-type]
    return None


def scalar_texts(values: Iterable[object], *, ascii: bool = False) -> list[str] | None:
    """:func:`scalar_text` of each of ``values``; ``None`` when any of them is not a plain scalar."""
    texts = []
    encode = encode_basestring_ascii if ascii else encode_basestring
    for value in values:
        if type(value) is str:  # the commonest, as scalar_text writes it, without the call
            texts.append(encode(value))  # type: ignore[arg-type]
            continue
        text = scalar_text(value, ascii=ascii)
        if text is None:
            return None
        texts.append(text)
    return texts


def document_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as the JSON text evalkit writes for people and programs (``--json``, the json
    report): characters as they are, anything not JSON by ``str``, compact unless ``indent``, and
    ``null`` for a NaN or an infinity. ``json.dumps`` writes those as ``NaN`` and ``Infinity``,
    which no JSON parser reads; a store or a plugin written by something else can hold them."""
    separators = (",", ":") if indent is None else None
    try:
        if indent is None:  # what json.dumps builds on each call with these arguments, built once
            return _compact_document(value)
        return json.dumps(value, indent=indent, separators=separators, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError as exc:
        if "Out of range float values" not in str(exc):
            raise
    return json.dumps(_finite_only(value), indent=indent, separators=separators, ensure_ascii=False, default=str)


#: Compact JSON text, refusing NaN and the infinities (one encoder: building one per call costs
#: more than encoding a case's checks).
_compact_finite = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

#: :func:`document_text`'s compact text (``default=str``), refusing NaN and the infinities: the
#: encoder ``json.dumps`` would build anew for each case's ``--json`` usage and judge usage.
_compact_document = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False).encode


def _finite_text(value: Any) -> str | None:
    """``value`` as compact JSON text, or ``None`` when it holds a NaN or an infinity (any other
    value ``json`` cannot write raises as ``json`` does)."""
    try:
        return _compact_finite(value)
    except ValueError as exc:
        if "Out of range float values" not in str(exc):
            raise
    return None


def compact_text(value: Any) -> str:
    """``value`` as the compact JSON text evalkit stores (a run's metrics, a case's checks, detail
    and measures, a cached answer): characters as they are, and ``null`` for a NaN or an infinity,
    as :func:`document_text` writes them. Python's ``json`` writes ``NaN``, which no JSON parser
    (nor another program reading the store) reads; evalkit's own reader took it for ``null``."""
    text = _finite_text(value)
    return text if text is not None else _compact_finite(_finite_only(value))


class NotJsonNumber(ValueError):
    """A value to be sent holds a NaN or an infinity; the message says where, as words following
    "it" (``"holds NaN at temperature, which is not a number JSON can carry"``)."""


def sent_text(value: Any) -> str:
    """``value`` as the compact JSON text evalkit sends (a request body, a tool call's arguments or
    a canned tool result sent to a model): characters as they are, on :func:`compact_text`'s
    encoder. A NaN or an infinity raises :class:`NotJsonNumber` naming where it is: Python's
    ``json`` would write ``NaN``, which no endpoint's JSON parser reads, and ``null`` in its place
    would send something other than what was asked. (Other values ``json`` cannot write raise its
    own ``TypeError`` or ``ValueError``.)"""
    text = _finite_text(value)
    if text is not None:
        return text
    from .shapes import value_fault

    fault = value_fault(value)
    raise NotJsonNumber(
        fault.phrase() if fault is not None and fault.number else "holds NaN or an infinity, which is not a number JSON can carry"
    ) from None


def _finite_only(value: Any) -> Any:
    """``value`` with every NaN and infinity in it replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_only(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_only(item) for item in value]
    return value
