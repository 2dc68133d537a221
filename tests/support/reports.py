"""Helpers the report tests share: the hostile set's answers, and where test artifacts go.

``reportkit.hostile`` (tests/data/evalkit-report-plugins) has case ids that are markup in every
report format; a replay provider ``app`` answers it, and each test chooses which cases fail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

#: The test distribution with the hostile set and the third-party reporters.
REPORT_PLUGINS = "evalkit-report-plugins"
#: The hostile set's case ids, in set order (evalkit_report_plugins.HOSTILE_IDS).
HOSTILE_IDS = (
    "<script>window.__evalkitInjected=1</script>",
    "pipe|cell*star*_[link](http://example.invalid)",
    'quote"amp&lt;',
    "plain-1",
    "plain-2",
    "plain-3",
)
#: What a failing case answers: script, an event handler and a terminal escape, all to be shown as text.
HOSTILE_ANSWER = 'no <script>window.__evalkitAnswer=1</script><img src=x onerror="window.__evalkitImg=1"> \x1b[31mred'
ROOT = Path(__file__).resolve().parents[2]


def answer_hostile(project: Path, failing: Iterable[str] = (), model: str = "report-app-1") -> None:
    """Configure the replay provider ``app``: every case answers "yes" except ``failing`` ones."""
    failing = set(failing)
    lines = [
        json.dumps({"id": case_id, "text": HOSTILE_ANSWER if case_id in failing else "yes", "model": model})
        for case_id in HOSTILE_IDS
    ]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text('[providers.app]\nadapter = "replay"\nmodel = "app"\npath = "answers.jsonl"\n')


def artifact_dir(name: str) -> Path:
    """A folder for files a test leaves for people to look at (screenshots, reports).

    ``$EVALKIT_TEST_ARTIFACTS`` when set, else ``test-artifacts/`` at the repository root
    (git-ignored); CI keeps that folder.
    """
    base = Path(os.environ.get("EVALKIT_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    folder = base / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder
