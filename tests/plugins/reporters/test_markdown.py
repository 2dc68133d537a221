"""The ``markdown`` reporter end to end, rendered with markdown-it-py (CommonMark + GFM tables)."""

from __future__ import annotations

import html as html_module
import re

import pytest
from markdown_it import MarkdownIt

from tests.support.reports import HOSTILE_IDS, REPORT_PLUGINS, answer_hostile

SET = "reportkit.hostile"


@pytest.fixture
def cli(evalkit_cli, plugin_dists):  # noqa: ANN001, ANN201
    """``evalkit`` with the report test distribution installed."""
    base = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS)}
    return lambda *args, env=None: evalkit_cli(*args, env={**base, **(env or {})})


def render(markdown: str) -> str:
    """HTML as GitHub would show it (tables on, raw HTML allowed: what the report escapes must not need a sanitizer)."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def cells(html: str) -> list[list[str]]:
    """Every table row's cells as text (tags stripped, entities decoded)."""
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", html, re.S):
        rows.append([html_module.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)])
    return rows


def test_summary_is_appended_to_the_step_summary_with_the_verdict_first(cli, project) -> None:
    summary = project / "summary.md"
    summary.write_text("# Earlier step\n\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    answer_hostile(project)
    # redacted: the failed checks' details are kept (scrubbed), so the report shows why each failed
    assert cli("run", SET, "--provider", "app", "--privacy", "redacted", "--report", "markdown", env=env).code == 0
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    second = cli("run", SET, "--provider", "app", "--privacy", "redacted", "--report", "markdown", "--json", env=env)
    assert second.code == 0, second.stderr
    assert f"Report markdown appended to {summary}" in second.stderr
    text = summary.read_text()
    assert text.startswith("# Earlier step\n\n**✅ BASELINE**")  # appended, never overwritten
    report = text[text.index("**❌ REGRESSED**"):]
    assert report.splitlines()[0].startswith("**❌ REGRESSED** — reportkit\\.hostile, run ")

    html = render(report)
    table = cells(html)
    run_id = second.json()["verdict"]["baseline_id"]
    assert table[0][1] == f"Baseline (run {run_id})"
    assert table[1] == ["Pass rate", "100.0%", "66.7%", "-33.3 pp"]
    assert table[2] == ["Mean score", "1.000", "0.667", "-0.333"]
    # regressed cases first, each with its failed check, ids shown literally (escaped, not markup)
    regressed = html[html.index("Regressed cases (2)"):html.index("<details>")]
    assert "&lt;script&gt;window.__evalkitInjected=1&lt;/script&gt;" in regressed
    assert "<script>" not in html
    assert "pipe|cell*star*_[link](http://example.invalid)" in regressed
    assert "<a " not in html and "<em>" not in html
    assert "contains (contains(yes) did not hold)" in regressed
    # every case in the folded table: one row each, the pipe stayed inside its cell
    case_rows = [row for row in table if len(row) == 4 and row[1] in ("pass", "FAIL")]
    assert [row[0] for row in case_rows] == list(HOSTILE_IDS)
    assert [row[1] for row in case_rows] == ["FAIL", "FAIL", "pass", "pass", "pass", "pass"]
    assert "<details>" in html and "<summary>All cases (6)</summary>" in html


def test_without_a_step_summary_a_pathless_markdown_prints_and_the_tables_move_to_stderr(cli, project) -> None:
    answer_hostile(project)
    result = cli("run", SET, "--provider", "app", "--report", "markdown", env={"GITHUB_STEP_SUMMARY": ""})
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("**✅ BASELINE** — reportkit\\.hostile")
    assert "Evaluation: reportkit.hostile" in result.stderr
    assert "Evaluation:" not in result.stdout


def test_markdown_to_a_file_and_json_on_stdout_together(cli, project) -> None:
    answer_hostile(project)
    result = cli("run", SET, "--provider", "app", "--report", "markdown:out/summary.md", "--json")
    assert result.code == 0, result.stderr
    assert result.json()["set"] == SET
    assert (project / "out" / "summary.md").read_text().startswith("**✅ BASELINE**")
    clash = cli("run", SET, "--provider", "app", "--report", "markdown:-", "--json")
    assert clash.code == 2
    assert "--json and --report FORMAT:- both write to standard output" in clash.stderr


def test_a_pathless_markdown_beside_json_is_refused_without_a_step_summary_and_appended_with_one(cli, project) -> None:
    """`evalkit run … --report markdown --json | jq` outside GitHub Actions (a GitLab job, a laptop):
    the Markdown was printed after the JSON document on standard output, so `jq` and `json.load`
    failed on it (exit 0, no error). A report given no path that would print is refused beside
    --json, as `markdown:-` is, before anything is called or stored; with $GITHUB_STEP_SUMMARY set it
    is appended there and the JSON document stands alone."""
    answer_hostile(project)
    args = ("run", SET, "--provider", "app", "--report", "markdown", "--json")
    clash = cli(*args, env={"GITHUB_STEP_SUMMARY": ""})
    assert clash.code == 2, clash.stdout
    assert "--json and --report markdown both write to standard output" in clash.stderr
    assert clash.json()["exit_code"] == 2 and clash.json()["runs_kept"] == []
    assert not (project / ".evalkit" / "results.db").exists()
    summary = project / "summary.md"
    alone = cli(*args, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert alone.code == 0, alone.stderr
    assert alone.json()["set"] == SET and summary.read_text().startswith("**✅ BASELINE**")


def test_a_report_beside_json_goes_where_the_check_before_the_run_saw_it_go(evalkit_cli, tmp_path) -> None:
    """Beside --json a report's destination was asked twice — at the check before the run and
    again as it rendered — with a refusal at each: a reporter answering a file at the check and
    nothing after the run (a destination read from state it changes) had its report refused after
    the run ("standard output holds the --json document"). It is decided once, at the check: the
    report goes where the check saw, and the JSON document stands alone."""
    from tests.support.distributions import write_distribution

    summary = tmp_path / "summary.md"
    module = (
        "class Fickle:\n    asked = []\n\n"
        "    def default_destination(self, environ):\n"
        "        Fickle.asked.append(1)\n"
        "        return environ['ACME_SUMMARY'] if len(Fickle.asked) == 1 else None\n\n"
        "    def render(self, report):\n        return 'fickle report'\n"
    )
    site = write_distribution(tmp_path / "site", "acme-fickle", "1.0", {"evalkit.reporters": {"fickle": "acme_fickle:Fickle"}},
                              {"acme_fickle.py": module})  # fmt: skip
    ran = evalkit_cli("run", "evalkit.smoke", "--report", "fickle", "--json",
                      env={"PYTHONPATH": str(site), "ACME_SUMMARY": str(summary)})  # fmt: skip
    assert ran.code == 0, ran.stderr[-2000:]
    assert ran.json()["set"] == "evalkit.smoke"
    assert "standard output holds" not in ran.stderr, ran.stderr
    assert summary.read_text() == "fickle report\n"
