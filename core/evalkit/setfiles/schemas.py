"""The JSON Schemas (draft 2020-12) of golden-set and question-set files, and checking a document.

The schemas are files in the package (``evalkit/schemas/*.schema.json``) so editors can use them;
``evalkit schema golden-set`` prints one.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from .documents import SetDocument
from .problems import FileProblem, quoted, quoted_key

__all__ = ["SCHEMA_KINDS", "document_kind", "schema", "schema_problems", "schema_text"]

#: The schema names ``evalkit schema`` accepts.
SCHEMA_KINDS = ("golden-set", "question-set", "calibration-set")

_ONE_KIND = "needs exactly one assertion kind key ({kinds}), or kind: with value: for a kind a plugin adds"


def schema_text(kind: str) -> str:
    """The schema file's text."""
    if kind not in SCHEMA_KINDS:
        raise ValueError(f"unknown schema {kind!r}; choose one of {', '.join(SCHEMA_KINDS)}")
    return resources.files("evalkit.schemas").joinpath(f"{kind}.schema.json").read_text(encoding="utf-8")


@cache
def schema(kind: str) -> dict[str, Any]:
    """The schema as a dict."""
    return json.loads(schema_text(kind))


def document_kind(data: Any) -> str:
    """``calibration-set`` when a set of the document says ``kind: calibration``, ``question-set``
    when the document's sets hold ``questions``, else ``golden-set``."""
    candidates = data.get("sets") if isinstance(data, dict) and isinstance(data.get("sets"), list) else [data]
    if any(isinstance(item, dict) and item.get("kind") == "calibration" for item in candidates):
        return "calibration-set"
    if any(isinstance(item, dict) and "questions" in item and "prompts" not in item for item in candidates):
        return "question-set"
    return "golden-set"


@cache
def _checked_schema(kind: str) -> dict[str, Any]:
    """The schema of ``kind`` as it is checked: each ``{"$ref": "#/$defs/NAME"}`` replaced by NAME's
    schema itself, the same object wherever it stands (``$defs`` keeps them, so a reference left in
    place — one back into a definition it is inside — still resolves).

    Checks the same rules: the schemas' references point into their own ``$defs`` only. jsonschema
    looks a reference up in its registry each time it meets one, once per prompt and per
    assertion; that lookup was about a tenth of checking a large valid file."""
    original = schema(kind)
    defs = original.get("$defs", {})
    inlined: dict[str, Any] = {}

    def definition(name: str, inside: frozenset[str]) -> Any:
        if name not in inlined:
            inlined[name] = walk(defs[name], inside | {name})
        return inlined[name]

    def walk(node: Any, inside: frozenset[str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if len(node) == 1 and isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in defs and name not in inside:
                    return definition(name, inside)
            return {key: walk(value, inside) for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [walk(value, inside) for value in node]
        return node

    checked = walk(original, frozenset())
    checked["$defs"] = {name: definition(name, frozenset()) for name in defs}
    return checked


@cache
def _validator(kind: str) -> Any:
    """The validator of ``kind``, built once a process, whose ``evolve`` is cached per subschema.

    jsonschema makes a new validator object for each subschema it descends into, once per prompt,
    per assertion, per property: a third of checking a valid 20,000-prompt set. The one it makes
    for a subschema differs from the last only by its resolver, which here is always the same
    (the schemas have one ``$id``, at their root, and no ``$dynamicRef``: a subresource resolves
    what the root does), so the first one made for each subschema is used again: the same errors,
    in the same order. Its class is this function's own (``extend``), not jsonschema's."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    checking = extend(Draft202012Validator)
    made = checking.evolve
    evolved: dict[int, tuple[Any, Any]] = {}

    def evolve(self: Any, **changes: Any) -> Any:
        subschema = changes.get("schema", self.schema)
        if changes.keys() <= {"schema", "_resolver"} and isinstance(subschema, dict):
            known = evolved.get(id(subschema))
            if known is not None and known[0] is subschema:
                return known[1]
            known = evolved[id(subschema)] = (subschema, made(self, **changes))  # the subschema kept: its id stays its own
            return known[1]
        return made(self, **changes)

    checking.evolve = evolve
    return checking(_checked_schema(kind))


def schema_problems(document: SetDocument, kind: str) -> list[FileProblem]:
    """Every place ``document`` breaks the schema of ``kind``, in file order."""
    defs = _checked_schema(kind)["$defs"]
    problems = [_problem(document, error, defs) for error in _validator(kind).iter_errors(document.data)]
    # An assertion with two kind keys breaks the rule twice (each key allows no other): one problem.
    problems = list(dict.fromkeys(p for group in problems for p in group))
    # A misspelt kind key is one mistake: "unknown field" says it; drop "needs exactly one kind".
    misspelt = {p.path[:-1] for p in problems if p.reason.startswith("unknown field")}
    problems = [p for p in problems if not (p.path in misspelt and p.reason.startswith("needs exactly one"))]
    return sorted(problems, key=lambda p: (p.line or 0, p.column or 0, p.json_path))


def _problem(document: SetDocument, error: Any, defs: dict[str, Any]) -> list[FileProblem]:
    """The problems one schema error stands for, describing a wrong value by its type and place,
    never by quoting more than a short scalar of the file (:func:`~.problems.quoted`)."""
    path = tuple(error.absolute_path)
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = [k for k in instance if k not in allowed]
        known = ", ".join(sorted(allowed))
        return [
            document.problem(path + (k,), f"unknown field {quoted_key(k)};{_nearest(k, allowed)} allowed here: {known}", at_key=True)
            for k in extra
        ]
    if _breaks_one_kind(error, defs.get("assertion")):
        fields = defs["assertion"]["properties"]
        if path and isinstance(path[-1], str) and path[-1] in fields:
            path = path[:-1]  # the second key's place: the problem is the assertion's
        kinds = ", ".join(k for k in fields if k not in ("name", "kind", "value", "turn"))
        return [document.problem(path, _ONE_KIND.format(kinds=kinds))]
    if error.validator == "required":
        return [document.problem(path, error.message.replace("is a required property", "is required"))]
    if error.validator == "pattern" and error.schema.get("pattern") == "\\S":
        return [document.problem(path, "must not be empty")]
    if error.validator == "pattern" and "description" in error.schema:
        return [document.problem(path, f"{quoted(instance, as_json=True)} does not match: {error.schema['description']}")]
    if error.validator == "dependentRequired":
        return [document.problem(path, "value: belongs to a plugin assertion kind; add kind: NAME")]
    if error.validator == "if":
        return []
    return [document.problem(path, _without_the_value(error.message, instance))]


def _breaks_one_kind(error: Any, assertion: dict[str, Any] | None) -> bool:
    """Whether ``error`` is an assertion's "exactly one kind key" rule: no kind key (its ``not``),
    or a second one (a ``false`` schema under its ``dependentSchemas``, the only ones the schemas
    have). The schema says it so rather than with a ``oneOf`` of 17 ``required``, which jsonschema
    checks in full for every assertion: more than half of checking a large valid file."""
    if error.validator == "not":
        return assertion is not None and error.schema is assertion
    return error.schema is False and "dependentSchemas" in error.relative_schema_path


def _without_the_value(message: str, instance: Any) -> str:
    """jsonschema's ``message`` with the offending value (which it writes whole, as ``repr``)
    replaced by :func:`~.problems.quoted`: ``a string of 58 characters is not of type 'object'``."""
    full = repr(instance)
    if full in message:
        return message.replace(full, quoted(instance))
    return message if len(message) <= 200 else message[:197] + "..."


def _nearest(key: object, allowed: set[str]) -> str:
    """`` did you mean 'contains'?`` for a misspelt field, or nothing."""
    if not isinstance(key, str) or len(key) > 100:
        return ""
    return _nearest_field(key, frozenset(allowed))


@lru_cache(maxsize=1024)
def _nearest_field(key: str, allowed: frozenset[str]) -> str:
    # Remembered: a file that misspells a field on every line asked difflib the same question for
    # each (a quarter of checking a 200,000-prompt file broken so).
    from ..wording import close_matches

    found = close_matches(key, sorted(allowed))
    return f" did you mean {quoted_key(found[0])}?" if found else ""
