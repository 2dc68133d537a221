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


@pytest.mark.parametrize(
    ("text", "shown"),
    [("::error title=x::y", "\\x3a:error title=x::y"), ("  ::add-mask::s", "  \\x3a:add-mask::s"),
     ("see ##vso[task.setvariable variable=a]b", "see \\x23#vso[task.setvariable variable=a]b"),
     ("##[error]x", "\\x23#[error]x"), ("##TeamCity[x]", "\\x23#TeamCity[x]"),
     ("a::b", "a::b"), ("std::vector", "std::vector"), ("c# ## #[x]", "c# ## #[x]")],
)  # fmt: skip
def test_a_ci_runners_commands_are_defused(text: str, shown: str) -> None:
    """GitHub Actions acts on a log line starting with "::" (add-mask, error, stop-commands,
    set-output); Azure Pipelines on "##vso[" anywhere; TeamCity on "##teamcity[". Hostile text
    printed by evalkit must not be one."""
    assert visible(text) == shown


def test_in_multi_line_text_each_line_is_defused() -> None:
    assert visible("answer\n  ::warning::x\nmore", keep="\n") == "answer\n  \\x3a:warning::x\nmore"


def test_json_text_keeps_its_data_with_runner_commands_escaped() -> None:
    import json

    from evalkit.printable import json_visible

    text = json.dumps({"id": "##vso[task.complete result=Succeeded]", "x": "::error::y"})
    shown = json_visible(text)
    assert "##" not in shown and json.loads(shown) == json.loads(text)
