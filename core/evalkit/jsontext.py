"""JSON text of plain scalars, exactly as the ``json`` module writes them, without its encoder.

The hot paths that write one small JSON text per case (a case's ``--json`` line, a prompt's
fingerprint, the set digest) spend more on setting up ``json``'s encoder than on encoding. They
write the structure themselves and ask :func:`scalar_text` for each value; anything that is not a
plain scalar (a list, a mapping, a subclass, NaN) gets ``None``, and the caller falls back to
``json`` for the whole value. Each caller's tests pin its text to what ``json.dumps`` writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from json.encoder import encode_basestring, encode_basestring_ascii

__all__ = ["scalar_text", "scalar_texts"]


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
    for value in values:
        text = scalar_text(value, ascii=ascii)
        if text is None:
            return None
        texts.append(text)
    return texts
