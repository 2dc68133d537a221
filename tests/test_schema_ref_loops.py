"""A JSON Schema whose ``$ref`` leads back to the same schema without going into the answer.

``{"$ref": "#"}``, or ``$defs`` that refer to each other through ``$ref``, ``allOf``, ``not`` and
the like, apply the schema to the same value again and again: jsonschema recurses until Python's
stack is spent. Such a schema passed `evalkit validate` (its references all resolve), and every
answer's check then failed with `json_schema check raised RecursionError` — a set that can never
pass, found only by running it. It is refused where the other unusable schemas are (exit 2,
nothing called or stored), naming the ``$ref``. A recursive schema that goes one level into the
answer on each turn (a tree's ``children``) is a schema like any other.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit import Answer, Assertion
from evalkit.checks import BUILTIN_KINDS, evaluate

TREE = {
    "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
    "$ref": "#/$defs/node",
}


def loop_problem(ref: str) -> str:
    return (
        f"holds a $ref that leads back to the schema it is in without going into the answer: {ref!r} "
        "(checking any answer would never end)"
    )


@pytest.mark.parametrize(
    ("schema", "ref"),
    [
        ({"$ref": "#"}, "#"),
        ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        ({"$defs": {"a": {"not": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/a"}]}}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        ({"$defs": {"a": {"$anchor": "here", "if": {"$ref": "#here"}}}, "properties": {"x": {"$ref": "#/$defs/a"}}}, "#here"),
        ({"properties": {"x": {"$ref": "#/properties/x"}}}, "#/properties/x"),
        ({"$dynamicAnchor": "meta", "oneOf": [{"$dynamicRef": "#meta"}]}, "#meta"),
        # every keyword that applies a schema in place: then, else, dependentSchemas
        ({"$defs": {"a": {"if": {"type": "object"}, "then": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        ({"$defs": {"a": {"if": {"type": "object"}, "else": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        ({"$defs": {"a": {"dependentSchemas": {"x": {"$ref": "#/$defs/a"}}}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        # one reference closing two cycles is named once
        ({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}, "#/$defs/a"),
        # the schema's own dialect: draft 7's dependencies and tuple items, 2019-09's $recursiveRef
        (
            {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"dependencies": {"x": {"$ref": "#/definitions/a"}}}},
             "allOf": [{"$ref": "#/definitions/a"}]},
            "#/definitions/a",
        ),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"allOf": [{"$ref": "#/items/0"}]}]}, "#/items/0"),
        ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": True, "anyOf": [{"$recursiveRef": "#"}]}, "#"),
    ],
)
def test_a_schema_that_refers_back_to_itself_in_place_is_refused(schema: dict, ref: str) -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(schema)) == [loop_problem(ref)]


@pytest.mark.parametrize(
    "schema",
    [
        TREE,
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}},
        {"items": {"$ref": "#"}},
        {"properties": {"next": {"$ref": "#"}}, "additionalProperties": {"allOf": [{"$ref": "#"}]}},
        {"$defs": {"s": {"type": "string"}}, "allOf": [{"$ref": "#/$defs/s"}, {"$ref": "#/$defs/s"}]},
    ],
)
def test_a_schema_that_recurses_into_the_answer_is_fine(schema: dict) -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(schema)) == []


def test_a_tree_schema_still_checks_answers() -> None:
    result = evaluate(Assertion.json_schema(TREE), Answer('{"children": [{"children": []}, {"children": [{}]}]}'), BUILTIN_KINDS)
    assert result.passed and result.error is None


def test_validate_and_run_refuse_a_looping_schema_before_anything_is_stored(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "loop.yaml").write_text(
        "identifier: demo.loop\nname: L\nprompts:\n  - id: self\n    prompt: p\n    reference: '{}'\n"
        "    assertions:\n      - json_schema: {$ref: '#'}\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert f"evals/loop.yaml:8:22: prompt 'self': assertions[0].json_schema: {loop_problem('#')}" in checked.stderr.splitlines()
    ran = evalkit_cli("run", "demo.loop")
    assert ran.code == 2 and "RecursionError" not in ran.stdout + ran.stderr
    assert evalkit_cli("history", "demo.loop").stdout.count("demo.loop") == 0
