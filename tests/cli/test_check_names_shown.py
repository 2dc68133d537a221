"""A check its author did not name is shown by its assertion's kind (``contains_any``) wherever
people read it — the run's table, the JUnit, Markdown and HTML reports, ``evalkit report``, the
viewer — never by the stored default name (``stated_the_fact``) in one place and the kind in
another; an author's own name is shown as written, and ``--json`` keeps the stored names."""

from __future__ import annotations

import json
from pathlib import Path

STORED_DEFAULTS = ("stated_the_fact", "avoided_known_error", "within_length")


def receipts_project(project: Path, answer: str) -> None:
    """A file set whose receipts prompt has three unnamed checks and one named one, answered by replay."""
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["faq.yaml"]\n\n[providers.app]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "app-v1"\n'
    )
    (project / "faq.yaml").write_text(
        "identifier: myapp.faq\nname: FAQ\nprompts:\n"
        "  - id: receipts\n    prompt: How long do I have to submit a receipt?\n    assertions:\n"
        "      - contains_any: ['30 days']\n      - contains_none: ['14 days']\n      - max_words: 3\n"
        "      - contains: Within\n        name: said_within\n"
    )
    (project / "answers.jsonl").write_text(json.dumps({"id": "receipts", "text": answer}) + "\n")


def test_reports_name_an_unnamed_check_by_its_kind_as_the_terminal_does(evalkit_cli, project: Path) -> None:
    receipts_project(project, "Within 30 days.")
    assert evalkit_cli("run", "myapp.faq", "--provider", "app").code == 0
    receipts_project(project, "You have 14 days, no more, no less.")
    run = evalkit_cli(
        "run", "myapp.faq", "--provider", "app", "--privacy", "full",
        "--report", "junit:out.xml", "--report", "markdown:out.md", "--report", "html:out.html",
    )
    assert run.code == 0, run.stdout + run.stderr
    assert "contains_any" in run.stdout
    run_id = json.loads(evalkit_cli("history", "myapp.faq", "--json").stdout)["runs"][0]["run_id"]
    assert evalkit_cli("report", run_id, "--format", "markdown", "-o", "later.md").code in (0, 1)
    for name in ("out.xml", "out.md", "out.html", "later.md"):
        text = (project / name).read_text(encoding="utf-8").replace("\\_", "_")
        assert not [stored for stored in STORED_DEFAULTS if stored in text], f"{name} shows a stored default name"
        for shown in ("contains_any", "contains_none", "max_words", "said_within"):
            assert shown in text, f"{name} does not show {shown}"
    stored = json.loads(evalkit_cli("show", run_id, "--json").stdout)
    assert {check["name"] for check in stored["cases"][0]["checks"]} == {*STORED_DEFAULTS, "said_within"}


def test_the_viewer_names_an_unnamed_check_by_its_kind_and_finds_it_by_either_name(evalkit_cli, project: Path) -> None:
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    receipts_project(project, "You have 14 days, no more, no less.")
    assert evalkit_cli("run", "myapp.faq", "--provider", "app").code == 0
    run_id = json.loads(evalkit_cli("history", "myapp.faq", "--json").stdout)["runs"][0]["run_id"]
    app = create_app(f"sqlite:///{project / '.evalkit' / 'results.db'}", port=8765, config=load_config(project / "evalkit.toml"))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = client.get("/case", params={"run": run_id, "id": "receipts"}).text
        assert "contains_any" in page and "said_within" in page
        assert not [stored for stored in STORED_DEFAULTS if stored in page]
        listed = client.get("/run", params={"id": run_id}).text
        assert "contains_any" in listed and not [stored for stored in STORED_DEFAULTS if stored in listed]
        for query in ("contains_any", "stated_the_fact"):
            found = client.get("/run", params={"id": run_id, "q": query}).text
            assert 'data-case="receipts"' in found, query
