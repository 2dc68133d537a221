"""Tolerance parsing: finite numbers in 0..1, parsed exactly."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import attrs
import pytest
from evalkit.errors import ToleranceError, UsageError
from evalkit.tolerance import Tolerances, parse_tolerance


@pytest.mark.parametrize(
    ("raw", "value"),
    [("0", Fraction(0)), ("-0.0", Fraction(0)), ("1", Fraction(1)), ("0.1", Fraction(1, 10)), ("1e-1", Fraction(1, 10)),
     (".5", Fraction(1, 2)), (" 0.25 ", Fraction(1, 4)), ("5E-1", Fraction(1, 2)), ("1.0", Fraction(1))],
)
def test_accepted(raw: str, value: Fraction) -> None:
    assert parse_tolerance(raw, "max-pass-rate-drop") == value


@pytest.mark.parametrize(
    "raw", ["", " ", "nan", "NAN", "inf", "-inf", "INF", "1.01", "-0.1", "abc", "1e309", "-0.0001", "1.0001", "0x1", "1_0", "0.1.2"]
)
def test_refused(raw: str) -> None:
    with pytest.raises(ToleranceError) as caught:
        parse_tolerance(raw, "max-mean-score-drop")
    assert '"--max-mean-score-drop"' in str(caught.value)
    assert "0..1" in str(caught.value)


def test_pass_rate_is_checked_first() -> None:
    with pytest.raises(ToleranceError) as caught:
        Tolerances.parse("nan", "also-bad")
    assert caught.value.option == "max-pass-rate-drop"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [(float("nan"), "nan"), (5, "5"), (True, "True"), (False, "False"), ("0.1", "'0.1'"), (float("inf"), "inf"),
     (-0.1, "-0.1"), (1.0001, "1.0001"), (None, "None"), ([0.1], "[0.1]"), (Fraction(11, 10), "Fraction(11, 10)"),
     (Decimal("NaN"), "Decimal('NaN')"), (Decimal("Infinity"), "Decimal('Infinity')")],
)
def test_the_library_constructor_refuses_what_the_cli_refuses(raw: object, shown: str) -> None:
    with pytest.raises(ToleranceError) as caught:
        Tolerances(max_pass_rate_drop=raw)
    assert isinstance(caught.value, UsageError)
    assert str(caught.value).startswith(f'Option "--max-pass-rate-drop" must be a finite number in 0..1 (got {shown})')
    with pytest.raises(ToleranceError) as caught:
        Tolerances(Fraction(1, 10), raw)
    assert caught.value.option == "max-mean-score-drop"


def test_text_is_for_parse_and_the_library_error_says_so() -> None:
    with pytest.raises(ToleranceError) as caught:
        Tolerances("0.1")
    assert str(caught.value) == (
        'Option "--max-pass-rate-drop" must be a finite number in 0..1 (got \'0.1\'); '
        "Tolerances takes numbers, Tolerances.parse reads text."
    )
    assert Tolerances.parse("0.1", "0.2") == Tolerances(Fraction(1, 10), Fraction(1, 5))


@pytest.mark.parametrize(
    ("raw", "value"),
    [(0, Fraction(0)), (1, Fraction(1)), (-0.0, Fraction(0)), (0.5, Fraction(1, 2)), (Fraction(1, 3), Fraction(1, 3)),
     (Decimal("0.1"), Fraction(1, 10))],
)
def test_the_library_constructor_keeps_numbers_exact(raw: object, value: Fraction) -> None:
    tolerances = Tolerances(raw, raw)
    assert tolerances.max_pass_rate_drop == value and tolerances.max_mean_score_drop == value
    assert attrs.evolve(tolerances, max_mean_score_drop=1).max_mean_score_drop == 1


def test_evolve_validates_too() -> None:
    with pytest.raises(ToleranceError):
        attrs.evolve(Tolerances(), max_mean_score_drop=float("nan"))


@pytest.mark.parametrize("bad", [0.1, "0.1", {"max_pass_rate_drop": 0.1}])
def test_a_run_refuses_anything_but_tolerances_before_anything_is_stored(bad: object, tmp_path) -> None:
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    with pytest.raises(UsageError, match="tolerances must be an evalkit.Tolerances"):
        evaluate_set("evalkit.smoke", tolerances=bad, database=url, cwd=tmp_path)
    assert not (tmp_path / "results.db").exists()


def test_retrieval_refuses_anything_but_tolerances_too(tmp_path) -> None:
    from evalkit import evaluate_retrieval

    with pytest.raises(UsageError, match="tolerances must be an evalkit.Tolerances"):
        evaluate_retrieval("anything", "evalkit.lexical", tolerances=0.5, database=f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert not (tmp_path / "r.db").exists()


def test_the_default_tolerance_is_one_tenth() -> None:
    from evalkit.tolerance import DEFAULT_TOLERANCE

    assert DEFAULT_TOLERANCE == Fraction(1, 10)
    assert Tolerances() == Tolerances(Fraction(1, 10), Fraction(1, 10)) == Tolerances.parse()


def test_parse_names_the_mean_score_option_second() -> None:
    with pytest.raises(ToleranceError) as caught:
        Tolerances.parse("0.1", "nan")
    assert caught.value.option == "max-mean-score-drop"


def test_resolve_tolerances_message_names_what_it_got() -> None:
    from evalkit.tolerance import resolve_tolerances

    assert resolve_tolerances(None) == Tolerances()
    chosen = Tolerances(0, 1)
    assert resolve_tolerances(chosen) is chosen
    with pytest.raises(UsageError) as caught:
        resolve_tolerances(0.5)
    assert str(caught.value) == "tolerances must be an evalkit.Tolerances, got float 0.5"


# --- the limits on size, at their edges (every refusal is instant; none refuses a usable value) ---


def test_an_exponent_of_400_is_parsed_exactly_and_401_is_refused() -> None:
    from evalkit.tolerance import tolerance_value

    assert parse_tolerance("1e-400", "max-pass-rate-drop") == Fraction(1, 10**400)
    assert tolerance_value(Decimal("1E-400"), "max-pass-rate-drop") == Fraction(1, 10**400)
    for raw, shown in (("1e-401", "'1e-401'"), (Decimal("1E-401"), "Decimal('1E-401')"), (Decimal("5E+401"), "Decimal('5E+401')")):
        with pytest.raises(ToleranceError) as caught:
            parse_tolerance(raw, "max-pass-rate-drop")
        assert str(caught.value) == (
            f'Option "--max-pass-rate-drop" must be a finite number in 0..1 (got {shown}); its exponent is beyond ±400.'
        )


def test_zero_is_zero_whatever_its_exponent() -> None:
    from evalkit.tolerance import tolerance_value

    assert parse_tolerance("0.000e99999", "max-pass-rate-drop") == 0
    assert parse_tolerance("-.0E-99999", "max-pass-rate-drop") == 0
    assert tolerance_value(Decimal("0E+99999"), "max-pass-rate-drop") == 0
    assert tolerance_value(Decimal("-0E-99999"), "max-pass-rate-drop") == 0


def test_text_of_64_characters_is_parsed_and_65_refused_showing_the_first_64() -> None:
    longest = "0." + "0" * 61 + "1"
    assert len(longest) == 64 and parse_tolerance(longest, "max-pass-rate-drop") == Fraction(1, 10**62)
    with pytest.raises(ToleranceError) as caught:
        parse_tolerance(longest + "0", "max-mean-score-drop")
    assert str(caught.value) == (
        f'Option "--max-mean-score-drop" must be a finite number in 0..1 (got \'{longest}…\'); longer than 64 characters.'
    )


@pytest.mark.parametrize(("field", "option"), [("max_mrr_drop", "max-mrr-drop"), ("max_recall_drop", "max-recall-drop"), ("max_ndcg_drop", "max-ndcg-drop")])
def test_the_retrieval_tolerances_are_checked_and_refusals_name_their_option(field: str, option: str) -> None:
    assert getattr(Tolerances(), field) is None, "unset: reported, not gated"
    assert getattr(Tolerances(**{field: 0.25}), field) == Fraction(1, 4)
    with pytest.raises(ToleranceError) as caught:
        Tolerances(**{field: 1.5})
    assert caught.value.option == option
    assert str(caught.value).startswith(f'Option "--{option}" must be a finite number in 0..1 (got 1.5)')
