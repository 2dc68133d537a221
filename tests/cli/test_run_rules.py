"""Verdict rules through `evalkit run`: regex patterns, serving identity, citations, failing hooks."""

from __future__ import annotations

import json
from pathlib import Path

SETS = "evalkit-verdict-sets"

#: case id of rules.regex -> (the replayed answer, whether the case's pattern matches it)
REGEX_ANSWERS = {
    "digit-class": ("7", True),
    "alternation": ("bc", True),
    "angle-brackets": ("abc", False),
    "braces": ("a\nb", False),
    "word-boundary": ("Result: 4", True),
    "word-boundary-miss": ("Result: 42", False),
    "dollar-end-only": ("ok\n", False),
    "dollar-plain": ("ok\n", True),
    "unclosed": ("see /abc", True),
    "case-insensitive": ("well\nYES\n", True),
}


def write_replay(project: Path, lines: list[dict]) -> None:
    """An answers file and a configured replay provider instance ``app`` (alias ``app-v1``)."""
    (project / "answers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (project / "evalkit.toml").write_text('[providers.app]\nadapter = "replay"\nmodel = "app-v1"\npath = "answers.jsonl"\n')


def test_regex_patterns_mean_what_they_look_like(evalkit_cli, project, plugin_dists) -> None:
    write_replay(project, [{"id": cid, "text": text, "model": "app-2025"} for cid, (text, _) in REGEX_ANSWERS.items()])
    result = evalkit_cli("run", "rules.regex", "--json", env={"PYTHONPATH": plugin_dists(SETS)})
    assert result.code == 0, result.stderr
    outcome = {case["id"]: case["passed"] for case in result.json()["cases"]}
    assert outcome == {cid: held for cid, (_, held) in REGEX_ANSWERS.items()}
