"""The one cattrs converter: domain objects to and from JSON-ready data, used at the edges only."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, TypeVar

import cattrs
from cattrs.preconf.json import make_converter

__all__ = ["converter", "dumps", "structure", "unstructure"]

T = TypeVar("T")

converter: cattrs.Converter = make_converter(omit_if_default=False)
converter.register_unstructure_hook(Fraction, float)
converter.register_structure_hook(Fraction, lambda value, _: Fraction(value))


def unstructure(obj: Any) -> Any:
    """Plain JSON-ready data for ``obj``."""
    return converter.unstructure(obj)


def structure(data: Any, cls: type[T]) -> T:
    """Build a ``cls`` from plain data."""
    return converter.structure(data, cls)


def dumps(obj: Any, **kwargs: Any) -> str:
    """Compact JSON for ``obj`` (domain objects are unstructured first)."""
    return json.dumps(unstructure(obj), ensure_ascii=False, separators=(",", ":"), **kwargs)
