"""The set-file schemas as they are checked: references inlined, the same rules."""

from __future__ import annotations

import json

import pytest
from evalkit.setfiles.schemas import SCHEMA_KINDS, _checked_schema, schema
from jsonschema import Draft202012Validator


def _plain_refs(node: object) -> list[str]:
    """Every ``{"$ref": ...}`` with nothing beside it, ``$defs`` included."""
    if isinstance(node, dict):
        own = [node["$ref"]] if len(node) == 1 and isinstance(node.get("$ref"), str) else []
        return own + [ref for value in node.values() for ref in _plain_refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _plain_refs(value)]
    return []


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_every_plain_reference_is_inlined_and_the_file_schema_is_untouched(kind: str) -> None:
    printed = json.loads(json.dumps(schema(kind)))
    assert _plain_refs(schema(kind))
    checked = _checked_schema(kind)
    assert _plain_refs(checked) == []
    assert checked["$defs"].keys() == schema(kind)["$defs"].keys()
    assert schema(kind) == printed  # `evalkit schema` still prints the file as it is


def _errors(validator: Draft202012Validator, document: object) -> list[tuple[tuple[object, ...], str, str]]:
    return sorted((tuple(e.absolute_path), e.validator, e.message) for e in validator.iter_errors(document))


DOCUMENTS = [
    {"identifier": "a.b", "name": "N", "prompts": [{"id": "p", "prompt": "q", "assertions": [{"contains": "x"}]}]},
    {"identifier": "A.B", "prompts": [{"id": "", "prompt": 3, "assertions": [{"contains": "x", "regex": "y"}, {"type": "contains"}, {}]}]},
    {"sets": [{"identifier": "a.b", "prompts": [{"id": "p", "prompt": "q", "tools": [{"name": 1}], "messages": [{"role": "x"}]}]}, 7]},
    {"identifier": "a.b", "prompts": [{"template": {"id": "t-{n}", "prompt": "{n}"}, "vars": [{"n": 1}, "row"], "assertions": [{"nope": 1}]}]},
    {"identifier": "a.q", "questions": [{"id": "q", "text": "t", "relevant": {"d": 9}}, {"id": 2}]},
    {"identifier": "a.c", "kind": "calibration", "labels": [0, 1], "items": [{"id": "", "label": 5, "query": 1}]},
    [],
    {"identifier": "a.b", "prompts": [{"id": "p", "prompt": "q", "reference": {"text": 1}, "tool_results": [{}]}], "stray": True},
]


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_checked_schema_finds_the_same_errors_as_the_file(kind: str, document: object) -> None:
    assert _errors(Draft202012Validator(_checked_schema(kind)), document) == _errors(Draft202012Validator(schema(kind)), document)


def test_a_reference_back_into_its_own_definition_is_left_to_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalkit.setfiles.schemas as schemas

    recursive = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": "#/$defs/node",
        "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}, "n": {"type": "integer"}}}},
    }
    monkeypatch.setattr(schemas, "schema", lambda kind: recursive)
    schemas._checked_schema.cache_clear()
    try:
        checked = schemas._checked_schema("golden-set")
        assert checked["$defs"]["node"]["properties"]["child"] == {"$ref": "#/$defs/node"}
        document = {"child": {"child": {"n": "x"}}}
        assert _errors(Draft202012Validator(checked), document) == _errors(Draft202012Validator(recursive), document)
        assert _errors(Draft202012Validator(checked), document) != []
    finally:
        schemas._checked_schema.cache_clear()


def _every_error(errors: object) -> list[tuple[object, ...]]:
    """Each error as it is reported, in the order met, with the errors of its context (``anyOf``)."""
    return [
        (tuple(e.absolute_path), tuple(e.absolute_schema_path), e.validator, e.message, _every_error(e.context))
        for e in errors  # type: ignore[attr-defined]
    ]


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_the_validator_reusing_its_evolved_validators_reports_what_jsonschema_does(kind: str) -> None:
    # jsonschema made a validator object per subschema per node (a third of checking a large set);
    # the one made first for a subschema is used again, which must change no error nor their order.
    from evalkit.setfiles.schemas import _validator

    plain = Draft202012Validator(_checked_schema(kind))
    for document in [*DOCUMENTS, *DOCUMENTS]:  # the second time round, every subschema's validator is reused
        assert _every_error(_validator(kind).iter_errors(document)) == _every_error(plain.iter_errors(document))
    assert any(_every_error(_validator(kind).iter_errors(document)) for document in DOCUMENTS)


def test_checking_a_large_set_makes_no_validator_per_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    import jsonschema.validators
    from evalkit.setfiles.schemas import _validator

    prompt = {"id": "p", "prompt": "q", "tags": ["t"], "reference": "r", "assertions": [{"exact": "r", "name": "same"}]}
    document = {"identifier": "a.b", "name": "N", "prompts": [dict(prompt, id=f"p{n}") for n in range(200)]}
    assert list(_validator("golden-set").iter_errors(document)) == []  # every subschema met once
    made = []
    real = jsonschema.validators.validator_for
    monkeypatch.setattr(jsonschema.validators, "validator_for", lambda *a, **k: made.append(1) or real(*a, **k))
    assert list(_validator("golden-set").iter_errors(document)) == []
    assert len(made) == 0  # each evolve made a validator: about 20 a prompt
