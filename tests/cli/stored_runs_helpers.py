"""Helpers the stored-run CLI tests share: a replay provider whose answers a test controls."""

from __future__ import annotations

import json
from pathlib import Path

ARITH_GOOD = {"add-2-2": "4", "add-7-5": "12", "add-12-30": "42", "add-99-1": "100", "times-table": "42", "json-sum": '{"sum": 7}'}
ARITH_IDS = list(ARITH_GOOD)


def answer_with(project: Path, answers: dict[str, str], model: str = "my-app-2025-01") -> None:
    """Configure the ``my-app`` replay instance to give ``answers`` (a missing id errors that case)."""
    lines = [json.dumps({"id": cid, "text": text, "model": model}) for cid, text in answers.items()]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\nmodel = "my-app"\npath = "answers.jsonl"\n')


def run_json(evalkit_cli, *args: str) -> dict:  # noqa: ANN001 - the evalkit_cli fixture
    """``evalkit run ARGS --json``, asserting it did not fail outright."""
    result = evalkit_cli("run", *args, "--json")
    assert result.code in (0, 1, 3), result.stderr
    return result.json()
