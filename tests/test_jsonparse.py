"""JSON from files and endpoints: text nested too deeply is a JSONDecodeError that says where."""

from __future__ import annotations

import json

import pytest
from evalkit.jsonparse import REPORTED_DEPTH, parse_json


def test_plain_json_parses_as_json_loads_does_with_its_options() -> None:
    assert parse_json('{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    with pytest.raises(ValueError, match="no constants"):
        parse_json("NaN", parse_constant=lambda name: (_ for _ in ()).throw(ValueError("no constants")))
    with pytest.raises(json.JSONDecodeError) as raised:
        parse_json('{"a": }')
    assert raised.value.msg == "Expecting value"


def test_nesting_past_the_stack_is_a_decode_error_at_the_bracket_too_deep() -> None:
    text = '{"brackets in a string [[[[": 1,\n "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(json.JSONDecodeError) as raised:
        parse_json(text)
    assert raised.value.msg == "nested too deeply"
    # the string's brackets are not counted: the 501st level is the 500th [ on line 2, after '{' and ' "deep": '
    assert (raised.value.lineno, raised.value.colno) == (2, 10 + REPORTED_DEPTH - 1)


def test_nesting_the_parser_can_follow_is_parsed() -> None:
    assert parse_json("[" * 200 + "]" * 200) is not None


def test_bytes_parse_as_json_loads_parses_them_and_too_deep_bytes_say_where() -> None:
    assert parse_json(b'{"a": 1}') == {"a": 1}
    with pytest.raises(json.JSONDecodeError) as raised:
        parse_json(b"[" * 100_000)
    assert (raised.value.msg, raised.value.colno) == ("nested too deeply", REPORTED_DEPTH + 1)


def test_a_number_past_pythons_digit_limit_is_not_json_at_its_position() -> None:
    import json

    import pytest
    from evalkit.jsonparse import parse_json

    text = '{"a": [1, ' + "7" * 5_000 + "]}"
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_json(text)
    assert caught.value.msg == "a number with more than 4,300 digits" and caught.value.pos == 10
    with pytest.raises(json.JSONDecodeError):
        parse_json(text.encode())
    assert parse_json('{"a": ' + "7" * 4_300 + "}")["a"] > 0
