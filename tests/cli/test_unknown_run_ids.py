"""A run id a user typed that the store does not hold: every command that takes one refuses it
alike (exit 2, "there is no run …") with a "did you mean" naming stored runs (``evalkit.run_lookup``).
``regrade``, ``baseline accept`` and the options of ``run`` once refused with no hint."""

from __future__ import annotations

import pytest
from evalkit.run_lookup import suggested_ids


@pytest.fixture
def two_smoke_runs(evalkit_cli) -> tuple[str, str]:
    """Two complete runs of evalkit.smoke, newest last."""
    first = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    second = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    return first, second


def _refused(result, typed: str, meant: str) -> None:  # noqa: ANN001 - a CliResult
    assert result.code == 2, (result.stdout, result.stderr)
    assert f'there is no run "{typed}"' in result.stderr
    assert f'Did you mean "{meant}"' in result.stderr, result.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("show", "{typo}"),
        ("report", "{typo}"),
        ("regrade", "{typo}"),
        ("compare", "{other}", "{typo}"),
        ("baseline", "accept", "{typo}", "--reason", "checked"),
        ("baseline", "export", "evalkit.smoke", "--run", "{typo}", "-o", "out.json"),
        ("run", "evalkit.smoke", "--baseline", "{typo}"),
        ("run", "evalkit.smoke", "--answers-from", "{typo}"),
        ("run", "evalkit.smoke", "--resume", "{typo}"),
    ],
    ids=lambda command: " ".join(word for word in command if not word.startswith("{")),
)
def test_a_mistyped_run_id_is_refused_with_the_run_meant(evalkit_cli, two_smoke_runs, command) -> None:
    first, second = two_smoke_runs
    typo = first + "x"
    result = evalkit_cli(*(word.format(typo=typo, other=second) for word in command))
    _refused(result, typo, first)


def test_the_first_part_of_an_id_suggests_the_runs_it_begins(evalkit_cli, two_smoke_runs) -> None:
    first, second = two_smoke_runs
    for command in (("regrade",), ("baseline", "accept")):
        result = evalkit_cli(*command, first[:6], "--reason", "x") if command[0] == "baseline" else evalkit_cli(
            *command, first[:6]
        )
        assert result.code == 2 and f'Did you mean "{second}" or "{first}"?' in result.stderr, result.stderr


def test_a_typed_id_with_control_characters_is_shown_escaped(evalkit_cli, two_smoke_runs) -> None:
    for command in (("show",), ("regrade",), ("baseline", "accept")):
        extra = ("--reason", "x") if command[0] == "baseline" else ()
        result = evalkit_cli(*command, "nope\x1b[31m", *extra)
        assert result.code == 2 and 'there is no run "nope\\x1b[31m"' in result.stderr and "\x1b" not in result.stderr


def test_suggested_ids_prefer_the_newest_ids_begun_then_close_ones() -> None:
    ids = ["20261206T150848-ed49b0", "20261206T150847-158d2a", "20261205T000000-aaaaaa", "20261204T000000-bbbbbb"]
    assert suggested_ids("2026120", ids) == ids[:3]
    assert suggested_ids("20261206T150848-ed49b0x", ids) == ["20261206T150848-ed49b0"]
    assert suggested_ids("  ", ids) == []
    assert suggested_ids("zzz", ids) == []
