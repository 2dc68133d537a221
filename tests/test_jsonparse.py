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


@pytest.mark.parametrize(
    ("text", "reason", "line", "column"),
    [
        ('{"a": NaN}', "NaN is not JSON", 1, 7),
        ("[1,\n Infinity]", "Infinity is not JSON", 2, 2),
        ('{"x": [0.5,\n  -Infinity]}', "-Infinity is not JSON", 2, 3),
        # in a key or a string they are text, not a value: the one refused is the one outside
        ('{"NaN": "Infinity -Infinity", "b":\n\n    NaN}', "NaN is not JSON", 3, 5),
        # a number json.loads reads as an infinity
        ('{"n": 1e400}', "the number 1e400 is out of range", 1, 7),
        ('[2, "1e999",\n -1.5e999]', "the number -1.5e999 is out of range", 2, 2),
    ],
)
def test_nan_the_infinities_and_numbers_past_a_float_are_not_json_at_their_position(
    text: str, reason: str, line: int, column: int
) -> None:
    """RFC 8259 has no NaN or infinity; ``json.loads`` reads them (and ``1e400`` as ``inf``)."""
    for given in (text, text.encode()):
        with pytest.raises(json.JSONDecodeError) as raised:
            parse_json(given)
        assert (raised.value.msg, raised.value.lineno, raised.value.colno) == (reason, line, column)


def test_strings_that_spell_the_constants_and_large_finite_numbers_parse() -> None:
    assert parse_json('{"NaN": "Infinity", "big": 1e308, "tiny": 1e-400, "int": 1' + "0" * 400 + "}") == {
        "NaN": "Infinity", "big": 1e308, "tiny": 0.0, "int": 10**400,
    }


def test_a_caller_may_read_the_constants_its_own_way() -> None:
    assert parse_json("[NaN, -Infinity]", parse_constant=lambda name: name) == ["NaN", "-Infinity"]
    assert parse_json("[1e400, 0.5]", parse_float=str) == ["1e400", "0.5"]


def test_an_out_of_range_number_is_shown_clipped() -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        parse_json("[" + "9" * 500 + ".0e999]")
    assert raised.value.msg.startswith("the number 9999") and "(506 characters) is out of range" in raised.value.msg
    assert raised.value.colno == 2


@pytest.mark.parametrize(
    ("text", "key", "repeat"),
    [
        ('{"id": "a", "text": "x", "id": "b"}', "id", '"id": "b"'),
        # every case has an "id": the repeat is in the second case, not at the second case's first id
        ('{"cases": [\n {"id": 1},\n {"id": 2, "id": 3}\n]}', "id", '"id": 3'),
        ('{"a": {"b": 1, "b": 2}, "c": "\\"b\\": 0"}', "b", '"b": 2'),
        ('{"\\u0069d": 1, "id": 2}', "id", '"id": 2'),
    ],
    ids=["one-object", "a-later-object", "nested", "escaped-first"],
)
def test_a_key_written_twice_is_a_decode_error_at_its_repeat_in_the_same_object(text, key, repeat) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_json(text, unique_keys=True)
    assert caught.value.msg == f'key "{key}" appears more than once'
    assert text[caught.value.pos :].startswith(repeat), text[caught.value.pos :]
    assert isinstance(parse_json(text), dict), "without unique_keys the last value wins, as json.loads has it"
