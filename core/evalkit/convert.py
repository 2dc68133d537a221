"""The one cattrs converter: domain objects to and from JSON-ready data, used at the edges only."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

import cattrs
from cattrs.gen import make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter

from .answers import Answer, ServingIdentity
from .grading import Check
from .prompts import Assertion, GoldenPrompt, PromptStream
from .runs import CaseResult

__all__ = ["compact_json", "converter", "options_converter", "dumps", "structure", "unstructure"]

T = TypeVar("T")

converter: cattrs.Converter = make_converter(omit_if_default=False)
converter.register_unstructure_hook(Fraction, float)
converter.register_structure_hook(Fraction, lambda value, _: Fraction(value))


def _check_data(check: Check) -> dict[str, Any]:
    """A check as JSON: ``judged`` and ``advisory`` only when set, so a document of checks no
    judge decided reads as it did before the flags existed."""
    data: dict[str, Any] = {"name": check.name, "passed": check.passed, "error": check.error, "detail": check.detail}
    if check.judged:
        data["judged"] = True
    if check.advisory:
        data["advisory"] = True
    return data


converter.register_unstructure_hook(Check, _check_data)
# A streamed set's prompts as the list a tuple of them gives: the same JSON either way.
converter.register_unstructure_hook(PromptStream, lambda stream: [converter.unstructure(p) for p in stream])


def _generated_when_used(cls: type, **overrides: Any) -> Callable[[Any], Any]:
    """The unstructure hook of ``cls``: cattrs' function generated for it with ``overrides``, made
    (and registered in its place) the first time an instance of ``cls`` is unstructured, not at
    import. Generating and compiling the five classes' functions (and those of the classes their
    fields hold) cost every process importing this module ~1 % of a run's start-up, and a prompt
    run calls none of them but :class:`~evalkit.answers.ServingIdentity`'s. Made after every hook
    of this module is registered, a function is the one generated here at import (each class's
    fields refer only to classes registered before it)."""
    made: list[Callable[[Any], Any]] = []

    def unstructure_first(obj: Any) -> Any:
        if not made:
            made.append(make_dict_unstructure_fn(cls, converter, **overrides))
            converter.register_unstructure_hook(cls, made[0])
        return made[0](obj)

    return unstructure_first


# The fields conversations and tools added are left out while they hold their defaults, so a prompt
# written before them has the JSON (its set digest, its fingerprint) it always had.
_omitted = override(omit_if_default=True)
converter.register_unstructure_hook(Assertion, _generated_when_used(Assertion, turn=_omitted))
converter.register_unstructure_hook(Answer, _generated_when_used(Answer, transcript=_omitted))
converter.register_unstructure_hook(ServingIdentity, _generated_when_used(ServingIdentity, base_prompt=_omitted))
# A case that is no conversation keeps the shape it had before conversations (the json report, spools).
converter.register_unstructure_hook(CaseResult, _generated_when_used(CaseResult, transcript=_omitted))
converter.register_unstructure_hook(
    GoldenPrompt,
    _generated_when_used(
        GoldenPrompt, messages=_omitted, mode=_omitted, tools=_omitted, tool_results=_omitted, max_steps=_omitted,
        tool_choice=_omitted,
    ),
)


def _strict(kind: type, accepted: tuple[type, ...], name: str) -> Any:
    def structure_strictly(value: Any, _: Any) -> Any:
        if isinstance(value, bool) and kind is not bool or not isinstance(value, accepted):
            raise TypeError(f"expected {name}, got {type(value).__name__}")
        return kind(value)

    return structure_strictly


#: The converter for configuration tables a person wrote: the same converter, but a value of the wrong
#: kind is refused instead of coerced (``"false"`` is not a bool, ``5`` is not a path) and unknown keys
#: in nested tables are refused.
options_converter: cattrs.Converter = converter.copy(forbid_extra_keys=True)
options_converter.register_structure_hook(str, _strict(str, (str,), "a string"))
options_converter.register_structure_hook(bool, _strict(bool, (bool,), "true or false"))
options_converter.register_structure_hook(int, _strict(int, (int,), "a whole number"))
options_converter.register_structure_hook(float, _strict(float, (int, float), "a number"))


def unstructure(obj: Any) -> Any:
    """Plain JSON-ready data for ``obj``."""
    return converter.unstructure(obj)


def structure(data: Any, cls: type[T]) -> T:
    """Build a ``cls`` from plain data."""
    return converter.structure(data, cls)


#: Compact JSON text of plain data (``json.dumps`` with keyword arguments builds a new encoder per
#: call, a third of the cost of encoding a prompt).
compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(obj: Any) -> str:
    """Compact JSON for ``obj`` (domain objects are unstructured first)."""
    return compact_json(unstructure(obj))
