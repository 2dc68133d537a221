"""Tolerance parsing: finite numbers in 0..1, parsed exactly."""

from __future__ import annotations

from fractions import Fraction

import pytest
from evalkit.errors import ToleranceError
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
