"""Verdict rules through `evalkit run`: regex patterns, serving identity, citations, failing hooks."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

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


def test_observer_hooks_that_raise_are_reported_once_and_the_run_goes_on(evalkit_cli, project, plugin_dists) -> None:
    log = project / "hooks.log"
    env = {"PYTHONPATH": plugin_dists("evalkit-failing-hook", "evalkit-hook-plugin"), "HOOK_LOG": str(log)}
    first = evalkit_cli("run", "evalkit.smoke", "--fail-on-regression", env=env)
    assert first.code == 0, first.stdout + first.stderr
    warnings = [line for line in first.stdout.splitlines() if line.startswith("warning: ")]
    plugin = "evalkit-failing-hook:explode"
    assert warnings == [
        f'warning: hook plugin "{plugin}" raised in evalkit_run_started: RuntimeError: [bold]start of 7[/bold] '
        "broke\\x1b[31m; the run went on without it",
        f'warning: hook plugin "{plugin}" raised in evalkit_case_graded (7 times; the first shown): RuntimeError: '
        "[bold]case[/bold] broke\\x1b[31m; the run went on without it",
        f'warning: hook plugin "{plugin}" raised in evalkit_run_finished: RuntimeError: [bold]finish[/bold] '
        "broke\\x1b[31m; the run went on without it",
    ]
    assert "Pass rate:  100.0% (7/7)" in first.stdout and "recorded as the baseline" in first.stdout
    # The other hook plugin still saw the whole lifecycle.
    events = log.read_text().splitlines()
    assert events[0] == "started evalkit.smoke 7" and events[-1].endswith(" complete") and len(events) == 9
    # The run is complete, not orphaned as running: the next run compares with it.
    second = evalkit_cli("run", "evalkit.smoke", "--fail-on-regression", "--json", env=env)
    assert second.code == 0, second.stderr
    document = second.json()
    assert document["status"] == "complete"
    assert document["warnings"] == [w.removeprefix("warning: ") for w in warnings]


def test_a_raising_hook_does_not_stop_a_retrieval_run(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-failing-hook"), "FAILING_HOOKS": "evalkit_case_graded"}
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", env=env)
    assert result.code == 0, result.stdout + result.stderr
    warnings = [line for line in result.stdout.splitlines() if line.startswith("warning: hook plugin")]
    assert len(warnings) == 1
    assert warnings[0].startswith('warning: hook plugin "evalkit-failing-hook:explode" raised in evalkit_case_graded (')
    assert "complete" in evalkit_cli("history", "evalkit_stdlib.docs").stdout
    # --json carries the same warning (it printed none)
    document = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", "--json", env=env).json()
    assert document["warnings"] == [warnings[0].removeprefix("warning: ")]


def stored_run_rows(project: Path) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        return conn.execute("select status, verified, reported_model from evalkit_run order by started_at").fetchall()


def test_a_malformed_reported_model_is_no_evidence_the_run_is_stored_not_compared(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists(SETS)}
    evil = "http://evil host\nx"
    write_replay(project, [{"id": cid, "text": text, "model": evil} for cid, (text, _) in REGEX_ANSWERS.items()])
    first = evalkit_cli("run", "rules.regex", env=env)
    assert first.code == 0, first.stderr
    reason = (
        "not compared: no single verified serving identity — 10 cases carry a serving identity that is not well "
        'formed, so it is no evidence of who answered: reported model "http://evil host\\x0ax" contains control or '
        "invisible characters (the first: U+000A, character 17)"
    )
    assert reason in first.stdout
    assert "Model:      (unknown)" in first.stdout
    assert "evil host\nx" not in first.stdout  # never printed raw
    # Stored, and under the gate a run that cannot be compared fails it.
    gated = evalkit_cli("run", "rules.regex", "--fail-on-regression", "--json", env=env)
    assert gated.code == 1, gated.stderr
    document = gated.json()
    assert document["verified"] is False and document["identity"] is None
    assert document["verdict"]["state"] == "not_comparable" and document["verdict"]["reason"] == reason
    assert [row[:2] for row in stored_run_rows(project)] == [("complete", 0), ("complete", 0)]
    # A well-formed model afterwards is a first verified run: the malformed ones are never its baseline.
    write_replay(project, [{"id": cid, "text": text, "model": "app-2025-01"} for cid, (text, _) in REGEX_ANSWERS.items()])
    clean = evalkit_cli("run", "rules.regex", "--fail-on-regression", env=env)
    assert clean.code == 0, clean.stdout
    assert "recorded as the baseline" in clean.stdout


def test_an_alias_that_is_a_url_with_credentials_is_no_evidence(evalkit_cli, project, plugin_dists) -> None:
    write_replay(project, [{"id": cid, "text": text, "model": "app-2025"} for cid, (text, _) in REGEX_ANSWERS.items()])
    result = evalkit_cli(
        "run", "rules.regex", "--model", "https://user:hunter2@example.com/v1", "--json", env={"PYTHONPATH": plugin_dists(SETS)}
    )
    assert result.code == 0, result.stderr
    assert result.json()["verdict"]["reason"].endswith('model alias "https://user:***/v1" is a URL')


POLICY = {"source_id": "policy#3.2", "text": "3.2 Receipts must be submitted within 30 days of the journey."}
HANDBOOK = "Travel handbook: keep   the original\nreceipt until the claim is paid."

#: case id of rules.cited -> (the replayed answer line, passed?, the detail or error of the check)
CITED = {
    "by-id": ({"citations": ["policy#3.2"], "passages": [POLICY, HANDBOOK]}, True, None),
    "by-quote": ({"citations": [{"passage": "keep the original receipt"}], "passages": [POLICY, HANDBOOK]}, True, None),
    "unresolved": (
        {"citations": ["policy#3.2", "policy#9.9", {"passage": "within 60 days"}], "passages": [POLICY, HANDBOOK]},
        False,
        'unresolved citations: policy#9.9, "within 60 days" (passages sent: policy#3.2, "Travel handbook: keep the original re...")',
    ),
    "no-citation": ({"citations": [], "passages": [POLICY]}, False, "the answer cites no source"),
    "no-passages": ({"citations": ["policy#3.2"]}, False, "answer carries no passages, so its citations cannot be resolved"),
    # A quote resolves only within a passage that names no source: an id-bearing passage is cited by id.
    "quote-of-an-id-passage": (
        {"citations": [{"passage": "within 30 days"}], "passages": [POLICY]},
        False,
        'unresolved citation: "within 30 days" (passages sent: policy#3.2)',
    ),
}


def test_citations_resolve_pass_and_fail_paths(evalkit_cli, project, plugin_dists) -> None:
    write_replay(project, [{"id": cid, "text": "Within 30 days.", "model": "rag-2025", **line} for cid, (line, _, _) in CITED.items()])
    result = evalkit_cli("run", "rules.cited", "--json", "--privacy", "full", env={"PYTHONPATH": plugin_dists(SETS)})
    assert result.code == 0, result.stderr
    cases = {case["id"]: case for case in result.json()["cases"]}
    for case_id, (_, passed, why) in CITED.items():
        (check,) = cases[case_id]["checks"]
        assert check["name"] == "citations_resolve"
        assert (check["passed"], check["detail"] or check["error"]) == (passed, why), case_id
    table = evalkit_cli("run", "rules.cited", env={"PYTHONPATH": plugin_dists(SETS)})
    assert "Pass rate:  33.3% (2/6)" in table.stdout
    assert "citations_resolve (unresolved citations: policy#9.9" in table.stdout


@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")])
def test_an_observer_hook_that_never_returns_is_interrupted_once_and_not_called_again(evalkit_cli, project, plugin_dists, command) -> None:
    (project / "evalkit.toml").write_text("hook_timeout = 1\n")
    env = {"PYTHONPATH": plugin_dists("evalkit-failing-hook"), "FAILING_HOOKS": "", "STALLING_HOOKS": "evalkit_case_graded"}
    started = time.monotonic()
    result = evalkit_cli(*command, "--json", env=env, timeout=60)
    assert result.code == 0, result.stderr
    assert time.monotonic() - started < 30  # one interrupted call, not one per case
    document = result.json()
    assert document["status"] == "complete"
    assert document["warnings"] == [
        'hook plugin "evalkit-failing-hook:explode" did not return from evalkit_case_graded within 1 s (hook_timeout): '
        "it was interrupted and not called again; the run went on without it"
    ]


def test_an_instance_that_names_no_model_is_told_so_not_that_the_endpoint_reported_none(evalkit_cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.good]\nadapter = "reference"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "good", "--fail-on-regression")
    assert result.code == 1, result.stdout + result.stderr
    assert (
        'not compared: no single verified serving identity — the provider instance "good" names no model, so its '
        'answers carry no serving identity; add model = "…" (the alias its runs are compared under) to [providers.good]'
    ) in result.stdout
    assert "reported no model" not in result.stdout
    (project / "evalkit.toml").write_text('[providers.good]\nadapter = "reference"\nmodel = "ref-v1"\n')
    named = evalkit_cli("run", "evalkit.smoke", "--provider", "good", "--fail-on-regression")
    assert named.code == 0 and "recorded as the baseline" in named.stdout, named.stdout
