"""Hostile text is shown, not acted on."""

from __future__ import annotations

import pytest
from evalkit.printable import visible


@pytest.mark.parametrize(
    ("text", "shown"),
    [("plain café [b]", "plain café [b]"), ("a\nb", "a\\x0ab"), ("\x1b[31mred", "\\x1b[31mred"), ("\x7f", "\\x7f"),
     ("\u202eevil", "\\u202eevil"), ("zero\u200bwidth", "zero\\u200bwidth"), ("\U000e0001tag", "\\U000e0001tag"), ("", "")],
)
def test_control_and_format_characters_become_escapes(text: str, shown: str) -> None:
    assert visible(text) == shown
