"""The JSON evalkit writes is JSON: NaN and the infinities, which Python's json writes as ``NaN``
and ``Infinity``, are ``null`` in the store as in every ``--json`` document."""

from __future__ import annotations

import json
import math

import pytest
from evalkit.jsontext import compact_text, document_text
from evalkit.storage.sql.rows import dump_json, load_json


def strict(text: str) -> object:
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written"))


@pytest.mark.parametrize("writer", [compact_text, dump_json, document_text], ids=["compact_text", "dump_json", "document_text"])
def test_nan_and_the_infinities_are_written_as_null_everywhere_in_a_value(writer) -> None:
    value = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": ("x", math.nan), "é": "ü"}
    text = writer(value)
    assert strict(text) == {"a": None, "b": [1.5, None, {"c": None}], "d": ["x", None], "é": "ü"}
    assert "\\u" not in text  # characters as they are


def test_the_compact_text_of_finite_values_is_what_json_dumps_writes() -> None:
    value = {"checks": [["contains", True, None], ["n", False, 0.1 + 0.2]], "big": 10**30, "tiny": 5e-324}
    assert compact_text(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert dump_json(None) is None and load_json(dump_json({"x": math.nan})) == {"x": None}


def test_what_is_no_json_at_all_is_still_refused() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        compact_text(loop)
    with pytest.raises(TypeError):
        compact_text({"set": {1, 2}})


def test_the_text_evalkit_sends_refuses_nan_naming_where_it_is_and_is_compact_otherwise() -> None:
    """A request body is not the store: ``null`` in place of a NaN would send another value than the
    one asked for, so sent_text raises, saying where (the caller names the request)."""
    from evalkit.jsontext import NotJsonNumber, sent_text

    value = {"model": "m", "messages": [{"role": "user", "content": "é"}], "temperature": 0.5}
    assert sent_text(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(NotJsonNumber) as refused:
        sent_text({"messages": [], "options": {"top_p": [1, -math.inf]}})
    assert str(refused.value) == "holds -Infinity at options.top_p[1], which is not a number JSON can carry"
    assert isinstance(refused.value, ValueError)
    with pytest.raises(NotJsonNumber, match="^is NaN, which"):
        sent_text(math.nan)


def test_the_compact_document_text_builds_no_encoder_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: ``--json`` writes each case's usage and judge usage through :func:`document_text`;
    ``json.dumps`` built a new encoder for each (its arguments are not the defaults). The compact
    text comes from one encoder, and is what ``json.dumps`` writes with those arguments."""

    class Odd:
        def __str__(self) -> str:
            return "odd ✓"

    values = [{"input_tokens": 3, "output_tokens": None}, [], {"é": [1.5, "\u2028", Odd()]}, "x"]
    expected = [json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str) for v in values]
    built: list[object] = []
    real_init = json.JSONEncoder.__init__

    def counted_init(self: json.JSONEncoder, *args: object, **kwargs: object) -> None:
        built.append(self)
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json.JSONEncoder, "__init__", counted_init)
    assert [document_text(v) for v in values] == expected
    assert built == []
    assert document_text({"a": math.nan}) == '{"a":null}'  # the finite-only fallback, as before
    assert document_text({"a": 1}, indent=2) == '{\n  "a": 1\n}'
