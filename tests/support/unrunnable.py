"""What tests of "this configured thing names a plugin that cannot run here" share: the
evalkit-unfound-plugins distribution on ``PYTHONPATH`` with its import marker, and reading a
listing's stderr errors and the rows it marks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any


def unfound_plugins(plugin_dists: Callable[..., str], tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment that installs evalkit-unfound-plugins for a command (wide columns, so a
    table's rows are not folded), and the marker file its package leaves when it is imported."""
    marker = tmp_path / "imported"
    env = {"PYTHONPATH": plugin_dists("evalkit-unfound-plugins"), "EVALKIT_UNFOUND_MARKER": str(marker), "COLUMNS": "400"}
    return env, marker


def error_lines(stderr: str) -> list[str]:
    """The ``error:`` lines of a listing's stderr, in order."""
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def marked_rows(stdout: str, names: Iterable[str]) -> dict[str, bool]:
    """For each row of a listing's table that begins with one of ``names``: whether the line below
    it marks it ``(error: see below)``."""
    wanted = set(names)
    lines = [*stdout.splitlines(), ""]  # the last row has nothing below it
    return {
        line.split()[0]: lines[at + 1].startswith("(error: see below)")
        for at, line in enumerate(lines[:-1]) if line.split() and line.split()[0] in wanted
    }  # fmt: skip


def assert_listing_marks(evalkit_cli: Any, what: str, env: dict[str, str], cannot_run: Mapping[str, str], fine: str) -> None:
    """``evalkit list WHAT`` exits 2, says each reason of ``cannot_run`` (name → reason) on stderr,
    in the order of the names, and marks those rows ``(error: see below)``, and not ``fine``'s."""
    listed = evalkit_cli("list", what, env=env)
    assert listed.code == 2, listed.stderr
    assert error_lines(listed.stderr) == [f"error: {cannot_run[name]}" for name in sorted(cannot_run)]
    assert marked_rows(listed.stdout, (*cannot_run, fine)) == {fine: False, **dict.fromkeys(cannot_run, True)}, listed.stdout


def assert_validate_refuses(evalkit_cli: Any, env: dict[str, str], key: str, cannot_run: Mapping[str, str], ok: str) -> None:
    """``evalkit validate`` exits 2 and says each reason of ``cannot_run`` (name → reason) as a line
    of stderr, lists ``ok`` as checked, and ``--json`` holds ``{key: name, "reason": …}`` for each,
    in the order of the names."""
    checked = evalkit_cli("validate", env=env)
    assert checked.code == 2, checked.stdout + checked.stderr
    for reason in cannot_run.values():
        assert reason in checked.stderr.splitlines(), checked.stderr
    assert f"ok  {ok}" in checked.stdout.splitlines(), checked.stdout
    document = evalkit_cli("validate", "--json", env=env)
    assert document.code == 2
    found = [problem for problem in document.json()["problems"] if key in problem]
    assert found == [{key: name, "reason": cannot_run[name]} for name in sorted(cannot_run)]
