"""Values from plugins are checked for shapes no recursive reader survives, without recursing."""

from __future__ import annotations

import pytest
from evalkit.shapes import (
    MAX_VALUE_CONTAINERS,
    MAX_VALUE_NESTING,
    decimal_text,
    short_repr,
    value_shape_problem,
    whole_number,
)


def nested(depth: int) -> object:
    value: object = "leaf"
    for level in range(depth):
        value = [value] if level % 3 == 0 else ({"k": value} if level % 3 == 1 else (value,))
    return value


def test_scalars_and_plain_values_have_no_problem() -> None:
    for value in ("text", 3, None, 2.5, {"a": [1, {"b": (2, 3)}]}, []):
        assert value_shape_problem(value) is None


def test_nesting_up_to_the_limit_is_fine_and_one_level_more_is_not() -> None:
    assert value_shape_problem(nested(MAX_VALUE_NESTING + 1)) is None  # the outermost container is level 0
    assert value_shape_problem(nested(MAX_VALUE_NESTING + 2)) == f"is nested more than {MAX_VALUE_NESTING} lists and mappings deep"
    assert value_shape_problem(nested(100_000)) is not None  # far past the stack: still no recursion


def test_sharing_is_fine_containing_itself_is_not() -> None:
    shared = [1, 2]
    assert value_shape_problem({"a": shared, "b": [shared, shared]}) is None
    loop: dict[str, object] = {}
    loop["inner"] = [{"back": loop}]
    assert value_shape_problem(loop) == "contains itself, so it would never end"


def test_a_fan_out_by_reference_is_counted_as_walked() -> None:
    fanned: object = ["x"]
    for _ in range(8):
        fanned = [fanned] * 9
    assert value_shape_problem(fanned) == (
        f"holds more than {MAX_VALUE_CONTAINERS:,} lists and mappings, counting each as often as it is referenced"
    )


def test_short_repr_cuts_long_values_and_names_those_it_cannot_show() -> None:
    assert short_repr("short") == "'short'"
    assert short_repr("x" * 100) == "'" + "x" * 56 + "..."
    assert short_repr(10**5000) == "(not shown: repr() raised ValueError)"  # past Python's digit limit


def test_clipped_keeps_short_text_and_says_how_long_a_cut_one_was() -> None:
    from evalkit.shapes import clipped

    assert clipped("x" * 200) == "x" * 200
    assert clipped("x" * 201) == "x" * 200 + "… (201 characters)"


def test_clipped_lines_cuts_each_long_line_in_its_middle_keeping_its_end() -> None:
    from evalkit.shapes import clipped_lines

    text = "short\n" + "a" * 10 + "m" * 5_000 + "z: the reason"
    shown = clipped_lines(text, 100).split("\n")
    assert shown[0] == "short"
    assert shown[1].startswith("a" * 10) and shown[1].endswith("z: the reason")
    assert "… 4,923 characters cut …" in shown[1] and len(shown[1]) < 140


def test_an_int_past_what_a_float_holds_is_not_a_finite_number() -> None:
    from evalkit.shapes import finite_number

    assert finite_number(10**300) and not finite_number(10**400) and not finite_number(-(10**400))


def test_a_repr_that_exits_is_named_not_followed() -> None:
    from evalkit.shapes import short_repr

    class Exits:
        def __repr__(self) -> str:
            raise SystemExit(0)

    assert short_repr(Exits()) == "(not shown: repr() raised SystemExit)"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"a": {"b": [{1: "x"}]}}, "has a key that is not text (int 1); the keys of JSON objects are text"),
        ([{None: 1}], "has a key that is not text (NoneType None); the keys of JSON objects are text"),
        ({("a",) * 30: 1}, "has a key that is not text (tuple ('a', 'a', 'a', 'a', 'a', 'a', 'a', '...); the keys of JSON objects are text"),  # cut at 40
        ({"a": 1, "b": {"c": 2}}, None),
    ],
)
def test_a_mapping_key_that_is_not_text_is_named(value: object, problem: str | None) -> None:
    assert value_shape_problem(value) == problem


@pytest.mark.parametrize(
    ("text", "options", "number"),
    [
        ("0", {}, 0), ("42", {}, 42), ("007", {}, 7), ("9" * 9, {"max_digits": 9}, 999_999_999),
        ("9" * 10, {"max_digits": 9}, None), ("1" * 4301, {}, None),  # past int()'s own digit limit
        ("²", {}, None), ("٣", {}, None), ("1_000", {}, None), (" 3", {}, None), ("3\n", {}, None), ("", {}, None),
        ("-3", {}, None), ("-3", {"signed": True}, -3), ("+3", {"signed": True}, 3), ("+-3", {"signed": True}, None),
        ("--3", {"signed": True}, None), ("-", {"signed": True}, None), ("3.0", {}, None), ("0x10", {}, None),
    ],
)  # fmt: skip
def test_a_whole_number_is_ascii_digits_only(text, options, number) -> None:
    # str.isdigit() takes "²" (int() then raised: --shard auto/², a qrels grade, SUDO_UID) and "٣" (read as 3)
    assert whole_number(text, **options) == number


@pytest.mark.parametrize(
    ("text", "decimal"),
    [
        ("0.5", True), (".5", True), ("5.", True), ("-2", True), ("+2e-3", True), (" 1.5 ", True), ("1E9", True),
        ("٠.٥", False), ("٣", False), ("１", False), ("1_0", False), ("nan", False), ("inf", False), ("Infinity", False),
        ("0x10", False), ("", False), (".", False), ("1e", False), ("--1", False),
    ],
)  # fmt: skip
def test_a_decimal_number_is_ascii_digits_only(text, decimal) -> None:
    # float("٠.٥") is 0.5, Decimal("٣") is 3, float("1_0") is 10
    assert decimal_text(text) is decimal


def test_the_text_of_a_plugins_exception_is_bounded_and_never_fails() -> None:
    """:func:`exception_text` is the one maker of a text from a plugin's exception (a provider's
    listing, a stream's producer, an import): the message is cut to MAX_REASON_CHARS with the
    message's own length, the class name to 200 characters, and an ``__str__`` that raises or
    exits is named instead of failing the problem that quotes it."""
    from evalkit.shapes import MAX_REASON_CHARS, exception_message, exception_name, exception_text

    assert exception_text(ValueError("short")) == "ValueError: short"
    assert exception_text(RuntimeError("L" * 5_000_000)) == "RuntimeError: " + "L" * MAX_REASON_CHARS + "… (5,000,000 characters)"
    # a message already cut once keeps its mark when it is quoted again
    cut = exception_message(RuntimeError("L" * 5_000_000))
    assert exception_message(RuntimeError(cut)) == cut

    sprawling = type("N" * 1_000_000, (RuntimeError,), {})
    assert exception_name(sprawling("m")) == "N" * 200 + "… (1,000,000 characters)"
    assert exception_text(sprawling("m")).endswith("characters): m")

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("no")

    class Exits(Exception):
        def __str__(self) -> str:
            raise SystemExit(0)

    assert exception_text(Unprintable()) == "Unprintable: (its message could not be read: str() raised ValueError)"
    assert exception_text(Exits()) == "Exits: (its message could not be read: str() raised SystemExit)"


def test_the_types_holding_problems_and_failures_bound_every_text_they_hold() -> None:
    """A text a plugin hands over without raising (a validator's issue, a provider's own
    SetValidationError or PluginError) is bounded by the type that holds it, to MAX_PROBLEM_CHARS:
    room for where it happened around a reason cut once, which so keeps its mark."""
    from evalkit.errors import PluginError, SetValidationError
    from evalkit.registry import PluginFailure, PluginRecord
    from evalkit.set_checks import SetProblem
    from evalkit.setfiles import FileProblem
    from evalkit.shapes import MAX_PROBLEM_CHARS, bounded_problem, exception_text

    giant = "G" * 5_000_000
    cut = "G" * MAX_PROBLEM_CHARS + "… (5,000,000 characters)"
    record = PluginRecord("evalkit.golden_sets", "p", "m:P", "d", "1")
    assert SetValidationError([giant, "short"]).problems == (cut, "short")
    assert str(PluginError(giant)) == cut
    assert PluginFailure(record, giant).error == cut
    assert SetProblem("s", giant).reason == cut
    assert FileProblem("f.yaml", giant).reason == cut
    # a problem quoting a reason cut where it was made, with its location, is not cut again
    quoted = f'set "{"s" * 1_000}": field prompts: producing prompt #2 raised {exception_text(RuntimeError(giant))}'
    assert bounded_problem(quoted) == quoted and quoted.endswith("… (5,000,000 characters)")
    assert bounded_problem(None) is None


def test_a_sets_label_shows_its_identifier_cut_and_a_stray_value_by_its_repr() -> None:
    from evalkit.shapes import SHOWN_IDENTIFIER_CHARS, set_label

    assert set_label("arith.basic") == 'set "arith.basic"'
    assert set_label("q.docs", "question set") == 'question set "q.docs"'
    assert set_label("x" * SHOWN_IDENTIFIER_CHARS) == f'set "{"x" * SHOWN_IDENTIFIER_CHARS}"'
    assert set_label("x" * 5_000_000) == f'set "{"x" * SHOWN_IDENTIFIER_CHARS}… (5,000,000 characters)"'
    assert set_label(42) == 'set "42"'


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("value", "path", "number"),
    [
        (NAN, (), "NaN"),
        (-INF, (), "-Infinity"),
        ({"temp_c": NAN}, ("temp_c",), "NaN"),
        ([1, 2.5, {"days": [0, INF]}], (2, "days", 1), "Infinity"),
        ((1, (2, -INF)), (1, 1), "-Infinity"),
        # the first in reading order, not the last the walk pushed
        ({"a": [NAN], "b": INF}, ("a", 0), "NaN"),
    ],
)
def test_a_nan_or_an_infinity_anywhere_in_a_value_is_a_fault_naming_where(value: object, path: tuple, number: str) -> None:
    from evalkit.shapes import value_fault

    fault = value_fault(value)
    assert fault is not None and (fault.path, fault.number) == (path, number)
    assert fault.sentence() == f"{number} is not a number JSON can carry"
    where = "is " + number if not path else f"holds {number} at "
    assert value_shape_problem(value).startswith(where) and value_shape_problem(value).endswith(", which is not a number JSON can carry")


def test_the_place_of_a_nan_is_shown_as_a_path_and_a_hostile_key_short() -> None:
    from evalkit.shapes import value_path_text

    assert value_shape_problem({"days": [{"temp_c": NAN}]}) == "holds NaN at days[0].temp_c, which is not a number JSON can carry"
    assert value_path_text(("a b", 0, "x" * 1_000)) == "['a b'][0]['" + "x" * 36 + "...]"
    assert value_path_text((0, "ok")) == "[0].ok"


def test_finite_floats_and_a_whole_value_fault_are_as_before() -> None:
    from evalkit.shapes import value_fault

    assert value_fault({"t": 1e308, "u": -0.0, "v": [2.5]}) is None
    loop: list[object] = []
    loop.append(loop)
    fault = value_fault(loop)
    assert fault is not None and (fault.path, fault.number) == ((), None)
    assert fault.sentence() == "its value contains itself, so it would never end"


def test_clipped_line_cuts_the_whole_text_as_one_line_in_its_middle() -> None:
    from evalkit.shapes import MAX_MESSAGE_LINE, clipped_line

    assert clipped_line("x" * MAX_MESSAGE_LINE) == "x" * MAX_MESSAGE_LINE
    text = "start " + "\n".join(["m" * 99] * 100) + " the end"
    shown = clipped_line(text, 100)
    assert shown.startswith("start ") and shown.endswith(" the end") and f"… {len(text) - 100:,} characters cut …" in shown
    assert len(shown) < 140  # its line breaks do not make it several lines of 100


def test_a_list_of_problems_keeps_the_first_1000_and_says_how_many_more_there_were() -> None:
    """A provider raising SetValidationError with millions of problems had each of them printed;
    the list keeps MAX_PROBLEMS_KEPT and a last line, each problem cut as ever."""
    from evalkit.errors import SetValidationError
    from evalkit.shapes import MAX_PROBLEM_CHARS, MAX_PROBLEMS_KEPT, bounded_problems

    assert MAX_PROBLEMS_KEPT == 1_000
    many = [f"p{number}" for number in range(100_000)]
    kept = SetValidationError(many).problems
    assert kept == (*many[:1_000], "99,000 more problems were not kept, after the first 1,000: mend these first")
    # one more than the limit is kept whole: the line saying so would take the place of the one it names
    assert bounded_problems(many[:1_001]) == tuple(many[:1_001])
    assert bounded_problems(many[:1_002]) == (*many[:1_000], "2 more problems were not kept, after the first 1,000: mend these first")
    assert bounded_problems(["G" * 5_000_000, "short"]) == ("G" * MAX_PROBLEM_CHARS + "… (5,000,000 characters)", "short")
    assert bounded_problems(("a", "b", "c"), limit=1) == ("a", "2 more problems were not kept, after the first 1: mend these first")


def test_the_line_of_problems_not_kept_counts_as_them_and_a_list_cut_again_keeps_their_number() -> None:
    """A header counted the line saying how many more problems there were as one ("1001 problems"):
    the line is a ProblemsNotKept that says how many it stands for, and the count is theirs."""
    from evalkit.shapes import ProblemsNotKept, bounded_problems, counted_problems, problem_total

    many = [f"p{number}" for number in range(5_000)]
    kept = bounded_problems(many)
    assert isinstance(kept[-1], ProblemsNotKept) and (kept[-1].more, kept[-1].exact) == (4_000, True)
    assert problem_total(kept) == (1_000, 5_000, True) and counted_problems(kept) == "5,000 problems, 1,000 of them shown"
    assert counted_problems(["a"]) == "1 problem" and counted_problems(many[:1_001]) == "1,001 problems"
    # a list cut before, then cut again among others (validate's report): each line counts as its problems
    again = bounded_problems([*many[:500], *kept])
    assert again[-1] == "4,500 more problems were not kept, after the first 1,000: mend these first"
    assert problem_total(again) == (1_000, 5_500, True)
    unknown = bounded_problems(iter(many))
    assert counted_problems(unknown) == "at least 1,002 problems, 1,000 of them shown"
    import pickle

    assert pickle.loads(pickle.dumps(kept[-1])).more == 4_000  # it crosses a process as what it is


def test_an_iterator_of_problems_that_never_ends_is_read_to_the_limit_and_a_text_is_one_problem() -> None:
    from itertools import count

    from evalkit.errors import SetValidationError
    from evalkit.shapes import bounded_problems

    endless = (f"p{number}" for number in count())
    kept = bounded_problems(endless)
    assert len(kept) == 1_001 and kept[-1] == "more problems (handed over as an iterator) were not read, after the first 1,000: mend these first"
    assert next(endless) == "p1002"  # read two past the limit, and no further
    assert SetValidationError("one problem, not 11").problems == ("one problem, not 11",)  # type: ignore[arg-type]
