"""Hostile input, as an attacker or an unlucky operator sends it: a catalogue, one test per class of issue 11.

Every test drives the real CLI in a subprocess against a real SQLite file. The classes of the
hostile-storage work (4–8, 10) live in their own module; the numbers below are the issue's.
See docs/failure-modes.md for what evalkit does in each case.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.support.chat_server import Fault

pytestmark = pytest.mark.usefixtures("hostile_env")

KEY = "sk-hostile-KEY-0123456789abcdef"
QUERY_SECRET = "qs-code-55aa77bb99cc"
USERINFO_SECRET = "pw-userinfo-31337x"
LEAKY_SECRET = "leaky-secret-7f3a9c2e"  # evalkit_hostile_sets.LEAKY_SECRET

#: What a terminal acts on: ESC (CSI, OSC), BEL, CR, NUL, the one-byte C1 CSI, a bidi override.
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x00", "\x9b", "\u202e")


@pytest.fixture
def hostile_env(plugin_dists) -> dict[str, str]:
    """PYTHONPATH with the hostile test distribution installed."""
    return {"PYTHONPATH": plugin_dists("evalkit-hostile-sets")}


@pytest.fixture
def cli(evalkit_cli, hostile_env):
    """``evalkit`` with the hostile distribution installed; extra environment merges in."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120, cwd: Path | None = None):
        return evalkit_cli(*args, env={**hostile_env, **(env or {})}, timeout=timeout, cwd=cwd)

    return run


def database(project: Path) -> Path:
    return project / ".evalkit" / "results.db"


def stored_runs(project: Path) -> int:
    """How many runs the project's SQLite store holds (0 when there is no store)."""
    if not database(project).exists():
        return 0
    with sqlite3.connect(database(project)) as conn:
        return conn.execute("select count(*) from evalkit_run").fetchone()[0]


def assert_shown_literally(*texts: str) -> None:
    """Nothing a terminal would act on, and no traceback, in what a command printed."""
    for text in texts:
        for control in RAW_CONTROLS:
            assert control not in text, f"raw {control!r} printed"
        assert "Traceback" not in text and "internal error" not in text


def assert_nowhere(secret: str, project: Path, *texts: str) -> None:
    """``secret`` is in no printed text and in no byte of the SQLite store (WAL included)."""
    for text in texts:
        assert secret not in text
    for path in database(project).parent.glob("results.db*"):
        assert secret.encode() not in path.read_bytes(), path.name


def configure_openai(project: Path, server, *, base_url: str, privacy: str = "metadata", model: str | None = "gpt-test") -> dict[str, str]:
    lines = [
        f'privacy = "{privacy}"',
        "[providers.prod]",
        'adapter = "openai"',
        f'base_url = "{base_url}"',
        'api_key_env = "EVALKIT_TEST_KEY"',
        "max_attempts = 2",
        "backoff_base = 0.01",
        "backoff_max = 0.02",
        "timeout = 5",
    ]
    if model is not None:
        lines.append(f'model = "{model}"')
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n")
    return {"EVALKIT_TEST_KEY": KEY}


# --- 1, 2: credentials in base_url ---------------------------------------------------------------


@pytest.mark.parametrize("privacy", ["metadata", "redacted", "full"])
def test_class01_query_credentials_in_base_url_are_never_stored_or_printed(cli, project, chat_server, privacy) -> None:
    # The endpoint echoes the credential back: in an answer, and in an error body.
    chat_server.responder = lambda body: f"4 (you sent code={QUERY_SECRET})"
    chat_server.fail_at(2, Fault.http_error(400, body=f"bad request /v1/chat/completions?code={QUERY_SECRET}"))
    base_url = f"{chat_server.base_url}?code={QUERY_SECRET}&api-version=2024-02-01"
    env = configure_openai(project, chat_server, base_url=base_url, privacy=privacy)
    table = cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", env=env)
    as_json = cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--json", env=env)
    assert table.code == 3 and as_json.code == 0, table.stdout + table.stderr
    assert "***" in table.stdout  # the echoed error was shown, scrubbed
    history = cli("history", "arith.basic", "--json")
    run_id = history.json()["runs"][0]["run_id"]
    shown = cli("show", run_id)
    assert_nowhere(QUERY_SECRET, project, table.stdout, table.stderr, as_json.stdout, history.stdout, shown.stdout)


def test_class02_a_base_url_query_goes_after_the_path_as_azure_needs(cli, project, chat_server) -> None:
    chat_server.responder = lambda body: "4"
    env = configure_openai(project, chat_server, base_url=f"{chat_server.base_url}/?api-version=2024-02-01")
    cli("run", "arith.basic", "--provider", "prod", env=env)
    probe, request = chat_server.requests[0], chat_server.requests[1]
    assert (probe.method, probe.path, probe.query) == ("GET", "/v1/models", "api-version=2024-02-01")
    assert (request.path, request.query) == ("/v1/chat/completions", "api-version=2024-02-01")
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_class02_user_info_in_base_url_is_refused_naming_the_instance(cli, project, chat_server) -> None:
    base_url = chat_server.base_url.replace("http://", f"http://operator:{USERINFO_SECRET}@")
    env = configure_openai(project, chat_server, base_url=base_url)
    result = cli("run", "arith.basic", "--provider", "prod", env=env)
    assert result.code == 2
    assert 'provider instance "prod"' in result.stderr and "user info" in result.stderr
    assert USERINFO_SECRET not in result.stdout + result.stderr
    assert chat_server.request_count == 0 and stored_runs(project) == 0


# --- 3: secrets a plugin declares ----------------------------------------------------------------


def test_class03_declared_secrets_are_scrubbed_from_everything_printed(cli, project) -> None:
    # hostile.leaky puts its secret in every answer, and in the error it raises for the failing case.
    table = cli("run", "hostile.markup", "--provider", "hostile.leaky", "--privacy", "full")
    as_json = cli("run", "hostile.markup", "--provider", "hostile.leaky", "--privacy", "full", "--json")
    assert table.code == 3 and as_json.code == 3, table.stdout + table.stderr
    assert "upstream rejected key ***" in table.stdout
    cases = as_json.json()["cases"]
    assert {c["answer"] for c in cases if not c["errored"]} == {"ok, my key is ***"}
    run_id = as_json.json()["run_id"]
    shown = cli("show", run_id)
    assert_nowhere(LEAKY_SECRET, project, table.stdout, table.stderr, as_json.stdout, shown.stdout)


def test_class03_a_retrievers_declared_secret_is_neither_stored_nor_printed(cli, project) -> None:
    table = cli("retrieval", "hostile.questions", "hostile.retriever", "--privacy", "full")
    as_json = cli("retrieval", "hostile.questions", "hostile.retriever", "--privacy", "full", "--json")
    assert table.code == 3 and as_json.code == 3, table.stdout + table.stderr
    assert "to key ***" in table.stdout
    assert_nowhere("retriever-secret-0042xy", project, table.stdout, table.stderr, as_json.stdout)


def test_class03_a_key_shorter_than_8_characters_is_not_scrubbed_but_warned_about(cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.local]\nadapter = "hostile.leaky"\nsecret = "x"\n')
    result = cli("run", "hostile.markup", "--privacy", "full", "--json")
    document = result.json()
    assert any("shorter than 8 characters" in note and "not a real secret" in note for note in document["notes"])
    assert {c["answer"] for c in document["cases"] if not c["errored"]} == {"ok, my key is x"}  # not "ok, my key is ***"
    assert "te***t" not in result.stdout


# --- 9: a json_schema pattern that backtracks for ever --------------------------------------------


def test_class09_json_schema_patterns_are_time_bounded(cli, project) -> None:
    result = cli("run", "hostile.catastrophic_pattern", "--json", timeout=60)
    assert result.code == 0, result.stderr
    cases = {c["id"]: c for c in result.json()["cases"]}
    for case_id in ("pattern", "pattern_properties"):
        (check,) = cases[case_id]["checks"]
        assert not check["passed"] and "pattern timed out" in check["error"]
    assert cases["quick"]["passed"]


# --- 11: numeric options are refused at once ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (("run", "evalkit.smoke", "--max-pass-rate-drop", "1e99999999"), "--max-pass-rate-drop"),
        (("run", "evalkit.smoke", "--max-mean-score-drop", "1e-99999999"), "--max-mean-score-drop"),
        (("run", "evalkit.smoke", "--max-pass-rate-drop", "0." + "0" * 5000 + "1"), "--max-pass-rate-drop"),
        (("run", "evalkit.smoke", "--concurrency", "9" * 5000), "--concurrency"),
        (("run", "evalkit.smoke", "--judge-repeats", "1e3"), "--judge-repeats"),
        (("compare", "a", "b", "--max-mean-score-drop", "9e99999999"), "--max-mean-score-drop"),
        (("retrieval", "hostile.questions", "hostile.retriever", "--max-top1-drop", "1e99999999"), "--max-top1-drop"),
        (("retrieval", "hostile.questions", "hostile.retriever", "--k", "10" * 40), "--k"),
        (("history", "evalkit.smoke", "--limit", "1e9"), "--limit"),
        (("models", "rank", "--min-quality", "1e99999999"), "--min-quality"),
        (("run", "evalkit.smoke", "--label", "L" * 100_000), "--label is 100,000 characters long, more than the 1,000 allowed"),
        (("retrieval", "hostile.questions", "hostile.retriever", "--label", "L" * 1_001), "--label is 1,001 characters long"),
        (("run", "evalkit.smoke", "--run-id", "r" * 100_000), f'run id "{"r" * 77}..." must be 1 to 64 letters'),
    ],
)
def test_class11_absurd_numbers_are_refused_instantly(cli, project, args, culprit) -> None:
    result = cli(*args, timeout=30)  # minutes of parsing would time out here
    assert result.code == 2, result.stdout + result.stderr
    assert culprit in result.stderr
    assert_shown_literally(result.stderr)
    assert stored_runs(project) == 0


# --- 12: output that must not be interpreted ------------------------------------------------------


def write_replay(project: Path) -> None:
    """Replay answers with ANSI, OSC, CR and NUL in the text and rich markup in the reported model."""
    import evalkit_hostile_sets as hostile

    lines = [
        json.dumps({"id": case_id, "text": "ok \x1b[31m[/]\x1b]0;title\x07 \r\x00", "model": "[/]\x1b[31mmodel\x9b"})
        for case_id in (*hostile.CASE_IDS, hostile.FAILING_CASE)
    ]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text(
        'privacy = "full"\n[providers.hostile]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "alias-[/]"\n'
    )


def test_class12_every_command_shows_hostile_strings_literally(cli, project, hostile_env, monkeypatch) -> None:
    monkeypatch.syspath_prepend(hostile_env["PYTHONPATH"])
    write_replay(project)
    outputs = []

    def ok(*args: str, code: int = 0):
        result = cli(*args)
        assert result.code == code, f"{args}: {result.stdout}{result.stderr}"
        assert_shown_literally(result.stdout, result.stderr)
        outputs.append(result)
        return result

    listed = ok("list", "sets")
    assert "[/] \\x1b[31mred\\x1b[0m [bold red]not bold[/]" in listed.stdout  # the name, exactly, and the other sets too
    assert "evalkit.smoke" in listed.stdout
    ok("list", "sets", "--json")
    ok("list", "questions")
    plugins = ok("list")
    assert "\n  hostilekit " in plugins.stdout and "\\x0a" not in plugins.stdout  # one line per plugin
    first = ok("run", "hostile.markup", "--show-all")  # every case, passing ones too
    # Such a model is no evidence of who answered (not compared), and the reason shows it as it is.
    assert 'reported model "[/]\\x1b[31mmodel\\x9b"' in first.stdout and 'alias "alias-[/]"' in first.stdout
    assert "fails-\\x1b]0;pwned\\x07" in first.stdout and "[red]check[/red]\\x1b[2J" in first.stdout
    assert "bidi\\u202edi" in first.stdout and ":warning:" in first.stdout and "cr\\x0dover" in first.stdout
    second = ok("run", "hostile.markup", "--json")
    document = second.json()  # and the JSON still carries the exact strings
    assert document["cases"][0]["identity"]["reported_model"] == "[/]\x1b[31mmodel\x9b"
    ok("history", "hostile.markup")
    ok("history", "hostile.markup", "--json")
    shown = ok("show", document["run_id"])
    assert "ok \\x1b[31m[/]\\x1b]0;title\\x07 \\x0d\\x00" in shown.stdout
    ok("show", document["run_id"], "--json")
    ok("compare", first.stdout.split("(run ", 1)[1].split(")", 1)[0], document["run_id"])
    ranked = ok("models", "rank")
    assert "model alias-[/]  adapter replay" in ranked.stdout and "\nSelected: hostile\n" in ranked.stdout
    retrieval = ok("retrieval", "hostile.questions", "hostile.retriever", code=3)
    assert "backend said [/]\\x1b[31mred\\x1b[0m\\x1b]0;pwned\\x07" in retrieval.stdout
    ok("retrieval", "hostile.questions", "hostile.retriever", "--json", code=3)
    assert len(outputs) == 14  # every command above ran and was checked


# --- 13: bad values are refused before anything is called or stored --------------------------------


@pytest.mark.parametrize(
    ("set_identifier", "culprit"),
    [
        ("hostile.plain_string_assertion", 'prompt "p1": field assertions[1] must be an evalkit.Assertion'),
        ("hostile.nul_prompt", 'prompt "p1": field prompt must not be empty'),
        ("hostile.dangling_ref", "$ref that cannot be resolved: '#/$defs/missing'"),
        ("hostile.deep_value", 'prompt "p1": field assertions[1] (json_schema): its value is nested more than 64 lists and mappings deep'),
        ("hostile.looped_value", 'prompt "p1": field assertions[1] (json_schema): its value contains itself'),
        ("hostile.fanned_value", 'prompt "p1": field assertions[1] (json_schema): its value holds more than 100,000 lists and mappings'),
        ("hostile.mixed_keys", 'prompt "p1": field assertions[1] (json_schema): its value has a key that is not text (int 1); the keys of JSON objects are text'),
        ("hostile.tag_not_string", 'prompt "p1": field tags must hold strings, got list [[]]'),
        # a line break or a bidi override in a tag made it print as other tags (spaces are fine: "North America")
        ("hostile.tag_line_break", 'prompt "p1": field tags[2] "provider:a b\\x0ac:d" contains control or invisible characters (the first: U+000A, character 13)'),
        ("hostile.tag_bidi", 'prompt "p1": field tags[2] "North \\u202eaciremA" contains control or invisible characters (the first: U+202E RIGHT-TO-LEFT OVERRIDE, character 7)'),
        ("hostile.bytes_name", "field name must be text, got bytes b'bytes\\x1bname'"),  # it said "must not be empty"
        ("hostile.huge_id", f'prompt "{"i" * 57}...": field id is 10,000,000 characters long, more than the 1,000 allowed'),
    ],
)
def test_class13_invalid_sets_are_refused_naming_the_culprit(cli, project, set_identifier, culprit) -> None:
    result = cli("run", set_identifier)
    assert result.code == 2, result.stdout + result.stderr
    assert f'set "{set_identifier}"' in result.stderr and culprit in result.stderr
    assert_shown_literally(result.stderr)
    assert stored_runs(project) == 0


def test_class13_a_grading_that_breaks_the_rules_fails_its_case_and_never_counts(cli, project) -> None:
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    args = ("run", "hostile.graded", "--grader", "hostile.broken_grading", "--concurrency", "1")
    table = cli(*args)
    assert table.code == 0, table.stderr
    assert_shown_literally(table.stdout, table.stderr)
    assert "Pass rate:  9.1% (1/11)" in table.stdout and "Mean score: 0.091" in table.stdout
    assert "not compared: the gradings of this run do not share one yardstick" in table.stdout
    document = cli(*args, "--json", "--fail-on-regression")
    assert document.code == 1, document.stderr  # not comparable under --fail-on-regression
    cases = {case["id"]: case for case in document.json()["cases"]}
    prefix = "the grader returned a grading evalkit cannot use: "
    expected = {
        "g1": "score must be a finite number in 0..1, got nan",
        "g2": "passed must be True or False, got 'no'",  # a truthy string is no pass
        "g3": "score must be a finite number in 0..1, got 7.5",
        "g4": "detail cannot be written as JSON: Object of type object is not JSON serializable",
        "g5": "detail contains itself, so it would never end",
        "g6": "yardstick must be a non-empty string of at most 1,000 characters, got 6,000,000 characters",
        "g7": "NoneType None is not an evalkit.Grading",
        "g8": "score must be a finite number in 0..1, got " + repr(10**400)[:57] + "...",  # crashed the run
        # a yardstick keys which runs are compared: one that prints as another was accepted
        "g9": 'yardstick "judge:\\u202elanimret" contains control or invisible characters (the first: U+202E RIGHT-TO-LEFT OVERRIDE, character 7)',
        "g10": "yardstick 'cafe\\u0301' is not in Unicode normal form NFC (it prints like other text it never matches); "
        "write it as \"caf\u00e9\" ('caf\\xe9')",
    }
    for case_id, reason in expected.items():
        case = cases[case_id]
        assert (case["passed"], case["score"], case["yardstick"]) == (False, 0.0, "hostile.broken_grading:failed")
        assert case["checks"] == [{"name": "grading", "passed": False, "error": prefix + reason, "detail": None}]
    assert (cases["g11"]["passed"], cases["g11"]["yardstick"]) == (True, "hostile.broken_grading")
    assert stored_runs(project) == 2


def test_class13_a_failed_grading_of_a_grader_that_declares_no_name_is_stored_under_the_name_it_was_chosen_by(cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    table = cli("run", "hostile.graded", "--grader", "hostile.nameless_grader")
    assert table.code == 0, table.stderr
    assert 'not compared: no grading of this run could be made (stored as "hostile.nameless_grader:failed")' in table.stdout
    assert "grader:failed" not in table.stdout.replace("hostile.nameless_grader:failed", "")
    document = cli("run", "hostile.graded", "--grader", "hostile.nameless_grader", "--json").json()
    assert {case["yardstick"] for case in document["cases"]} == {"hostile.nameless_grader:failed"}
    assert document["grader"] == "hostile.nameless_grader:failed"


def test_class14_a_grading_that_sprawls_is_refused_or_cut_never_stored_whole(cli, project) -> None:
    """A grader returning 100,000 checks a case, a check name of ten million characters or a
    50-million-character error filled the store (half a gigabyte for seven cases) and took minutes
    and gigabytes to lay out in the run's table. Counts and names past their bounds make the grading
    unusable; texts are cut to 10,000 characters; the table shows 300 of them."""
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    args = ("run", "hostile.graded", "--grader", "hostile.sprawling_grader")
    document = cli(*args, "--json")
    assert document.code == 0, document.stderr
    cases = {case["id"]: case for case in document.json()["cases"]}
    unusable = "the grader returned a grading evalkit cannot use: "
    refused = {
        "g1": "checks: 1,001 of them, more than the 1,000 allowed",
        "g2": "check '" + "n" * 56 + "...: its name is 1,001 characters "
        "long, more than the 1,000 allowed",
        "g6": "detail is 2,000,012 characters of JSON, more than the 1,048,576 allowed",
        "g7": "; ".join([f"check 'c{n}': passed must be True or False, got 'yes'" for n in range(10)]) + "; and 990 more",
    }
    for case_id, reason in refused.items():
        assert cases[case_id]["yardstick"] == "hostile.sprawling_grader:failed"
        assert cases[case_id]["checks"] == [{"name": "grading", "passed": False, "error": unusable + reason, "detail": None}]
    cut = "… (50,000,000 characters)"
    assert cases["g3"]["checks"] == [{"name": "grading", "passed": False, "error": "E" * 10_000 + cut, "detail": None}]
    assert cases["g4"]["checks"] == [{"name": "wrong", "passed": False, "error": "R" * 10_000 + cut, "detail": None}]
    assert cases["g5"]["checks"] == [{"name": "right", "passed": True, "error": None, "detail": "D" * 10_000 + cut}]
    assert cases["g8"]["checks"][0]["error"] == "RuntimeError: " + "X" * 10_000 + "… (50,000,000 characters)"  # the message cut, its class named whole
    assert (cases["g9"]["passed"], cases["g9"]["yardstick"]) == (True, "hostile.sprawling_grader")
    assert database(project).stat().st_size < 2_000_000
    table = cli(*args)
    assert table.code == 0, table.stderr
    assert "R" * 300 + "…(10,025characters)" in table.stdout.replace("│", "").replace(" ", "").replace("\n", "")
    assert len(table.stdout) < 60_000


def test_class14_an_answer_or_a_failure_that_sprawls_is_refused_or_cut(cli, project) -> None:
    """A generator raising with a 50-million-character message, or reporting a model name or a
    finish reason that long, took 24 to 74 s and most of a gigabyte per run, and a gigabyte of store
    for seven cases. A model name or finish reason over 1,000 characters makes the answer unusable
    (the model is part of the serving identity); a failure's message is cut to 10,000 characters."""
    (project / "evalkit.toml").write_text('[providers.wide]\nadapter = "hostile.sprawling"\nmodel = "w"\n')
    result = cli("run", "hostile.graded", "--provider", "wide", "--json")
    assert result.code == 3, result.stderr  # errored cases: the run is incomplete
    errors = {case["id"]: case["error"] for case in result.json()["cases"]}
    unusable = "the generator returned an Answer evalkit cannot use: "
    assert errors["g1"] == "RuntimeError: " + "X" * 10_000 + "… (50,000,000 characters)"  # the message cut, its class named whole
    assert errors["g2"] == unusable + "model is 1,001 characters long, more than the 1,000 allowed"
    assert errors["g3"] == unusable + "finish_reason is 50,000,000 characters long, more than the 1,000 allowed"
    assert {errors[f"g{n}"] for n in range(4, 10)} == {None}
    assert database(project).stat().st_size < 2_000_000


def test_class14_a_ranking_that_sprawls_is_refused_or_cut(cli, project) -> None:
    """A retriever returning document ids of 50 million characters made a 6 GB store and took 3 GB
    and two minutes for 61 questions. An id over 1,000 characters errors the question; a failure's
    message keeps 10,000 characters, and the table shows 300 of them."""
    args = ("retrieval", "hostile.questions", "hostile.sprawling_retriever", "--privacy", "full")
    result = cli(*args, "--json")
    assert result.code == 3, result.stderr  # errored questions: the run is incomplete
    errors = {q["id"]: q["error"] for q in result.json()["questions"]}
    first, second = list(errors)[:2]
    assert errors[first] == (
        f'retriever "hostile.sprawling_retriever" on question "{first}": result 1: the document id '
        f"'{'d' * 56}... is 1,001 characters long, more than the 1,000 allowed"
    )
    # the question id "q-\x1b]0;pwned\x07" is named with its ESC and BEL escaped (wording.quoted): 6 more characters
    assert errors[second].endswith("Y" * 100 + "… (50,000,094 characters)")
    assert len(errors[second]) < 10_100
    assert database(project).stat().st_size < 2_000_000
    table = cli(*args)
    assert table.code == 3
    assert "Y" * 200 in table.stdout and "Y" * 10_000 not in table.stdout.replace("\n", "")


def test_class13_an_answer_whose_text_is_not_text_is_an_errored_case(cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.bytes]\nadapter = "hostile.bytes"\nmodel = "b"\n')
    result = cli("run", "evalkit.smoke", "--json")
    assert result.code == 3, result.stderr  # every case errored: the run is incomplete
    assert result.json()["status"] == "incomplete"
    errors = {case["error"] for case in result.json()["cases"]}
    assert errors == {"the generator returned an Answer evalkit cannot use: text is bytes, not str"}


@pytest.mark.parametrize("args", [("run", "noisy.set", "--json"), ("run", "noisy.set", "--report", "junit:-"), ("list", "sets", "--json")])
def test_class12_what_a_plugin_prints_goes_to_stderr_never_into_evalkits_output(cli, project, args) -> None:
    (project / "evalkit.toml").write_text('[providers.noisy]\nadapter = "hostile.noisy"\nmodel = "m"\n')
    result = cli(*args)
    assert result.code == 0, result.stderr
    assert "noisy:" not in result.stdout
    assert "noisy: imported" in result.stderr and "noisy: fd 1 at import" in result.stderr
    if args[-1] == "--json":
        json.loads(result.stdout)  # one clean document
    else:
        assert result.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    if args[0] == "run":
        assert "noisy: answering n1" in result.stderr and "noisy: fd 1 while answering" in result.stderr


def test_class13_an_openai_instance_without_model_is_refused(cli, project, chat_server) -> None:
    env = configure_openai(project, chat_server, base_url=chat_server.base_url, model=None)
    result = cli("run", "arith.basic", "--provider", "prod", env=env)
    assert result.code == 2 and 'provider instance "prod"' in result.stderr and '"model"' in result.stderr
    assert chat_server.request_count == 0 and stored_runs(project) == 0


@pytest.mark.parametrize("cost", ["nan", "inf", "-1.0", "1" + "0" * 400])  # 10**400: past a float (crashed `models rank`)
def test_class13_a_cost_that_is_not_a_finite_non_negative_number_is_refused(cli, project, cost) -> None:
    (project / "evalkit.toml").write_text(f'[providers.p]\nadapter = "reference"\ncost_per_1k_tokens = {cost}\n')
    for args in (("run", "evalkit.smoke"), ("models", "rank")):
        result = cli(*args)
        assert result.code == 2 and "[providers.p] cost_per_1k_tokens" in result.stderr, result.stderr
    assert stored_runs(project) == 0


@pytest.mark.parametrize("value", ["-5", "0", "abc", "1e3", "9" * 5000])
def test_class13_a_bad_evalkit_concurrency_is_refused_before_the_run_exists(cli, project, value) -> None:
    result = cli("run", "evalkit.smoke", env={"EVALKIT_CONCURRENCY": value})
    assert result.code == 2 and "EVALKIT_CONCURRENCY" in result.stderr, result.stderr
    assert stored_runs(project) == 0


@pytest.mark.parametrize(
    ("args", "env", "culprit"),
    [
        (("run", "evalkit.smoke", "--max-pass-rate-drop", "٠.٥"), {}, "--max-pass-rate-drop"),
        (("retrieval", "hostile.questions", "hostile.retriever", "--max-top1-drop", "٠.٥"), {}, "--max-top1-drop"),
        (("plan", "evalkit.smoke", "--alpha", "٠.٠٥"), {}, "--alpha"),
        (("plan", "evalkit.smoke", "--rate", "٠.٥"), {}, "--rate"),
        (("models", "rank", "--min-quality", "٠.٥"), {}, "--min-quality"),
        (("run", "evalkit.smoke", "--budget", "١"), {}, "'١' is not an amount"),
        (("run", "evalkit.smoke", "--grader", "decision", "--judge-temperature", "١"), {}, "--judge-temperature"),
        (("report", "some-run", "--wait", "--timeout", "٣s"), {}, "٣s"),
        (("report", "some-run", "--wait", "--timeout", "1_0"), {}, "1_0"),
        (("db", "prune", "--older-than", "٣d"), {}, "--older-than"),
        (("cache", "clear", "--older-than", "٣d"), {}, "--older-than"),
        (("run", "evalkit.smoke"), {"EVALKIT_BUSY_TIMEOUT": "٣"}, "EVALKIT_BUSY_TIMEOUT"),
    ],
)
def test_class13_a_decimal_number_in_digits_of_another_script_is_refused(cli, project, args, env, culprit) -> None:
    # float(), Decimal(), Fraction() and a regex's \d read "٠.٥" as 0.5 and "٣" as 3: a tolerance of
    # 50 pp, a prune of three days, as counts already were not
    if args[0] == "report":  # it looks for its store first
        assert cli("run", "evalkit.smoke").code == 0
    before = stored_runs(project)
    result = cli(*args, env=env)
    assert result.code == 2, result.stdout + result.stderr
    assert culprit in result.stderr
    assert stored_runs(project) == before


# --- 14: size ------------------------------------------------------------------------------------


def stored_answer(project: Path) -> str:
    with sqlite3.connect(database(project)) as conn:
        return conn.execute("select answer_text from evalkit_case order by finished_at desc limit 1").fetchone()[0]


def replay_one_answer(project: Path, text: str, extra: str = "") -> None:
    (project / "answers.jsonl").write_text(json.dumps({"id": "big", "text": text, "model": "m"}) + "\n")
    (project / "evalkit.toml").write_text(f'{extra}\n[providers.r]\nadapter = "replay"\npath = "answers.jsonl"\n')


def test_class14_a_long_answer_is_graded_whole_and_stored_cut(cli, project) -> None:
    answer = "x" * 1_500_000 + "THE-END"  # passes only when graded whole: the marker is past the cap
    replay_one_answer(project, answer)
    result = cli("run", "hostile.sized", "--privacy", "full", "--json")
    assert result.code == 0 and result.json()["passed"] == 1, result.stderr
    stored = stored_answer(project)
    assert stored.startswith("x" * 1024 * 1024) and "THE-END" not in stored
    assert stored.endswith("[truncated by evalkit: the answer was 1500007 bytes; the first 1048576 are stored]")

    replay_one_answer(project, answer, extra="max_answer_bytes = 4096")  # configurable
    assert cli("run", "hostile.sized", "--privacy", "full").code == 0
    assert stored_answer(project).startswith("x" * 4096 + "\n… [truncated by evalkit")

    assert cli("run", "hostile.sized", "--privacy", "redacted").code == 0  # the original's 2,000 characters
    assert stored_answer(project) == "x" * 2000 + "… [truncated]"


def run_measured(evalkit_process, env: dict[str, str], *args: str) -> tuple[int, str, int]:  # noqa: ANN001
    """Run the CLI as a child and return its exit code, stderr and peak resident memory in bytes
    (a process of its own: its peak memory is what is measured)."""
    import os
    import subprocess

    child = evalkit_process.start(*args, env=env, stdout=subprocess.DEVNULL)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, stderr, usage.ru_maxrss * 1024  # Linux reports KiB


@pytest.mark.parametrize(
    ("framing", "via_proxy"),
    [("close", False), ("chunked", False), ("length", False), ("chunked", True), ("close", True)],
)
def test_class14_a_300_mb_reply_stops_at_the_cap_and_errors_the_case(project, chat_server, evalkit_process, hostile_env, framing, via_proxy) -> None:
    env = {**configure_openai(project, chat_server, base_url=chat_server.base_url, privacy="full"), **hostile_env}
    if via_proxy:  # through a proxy (aiohttp sends it the absolute URL): the test server plays the proxy
        env.update(HTTP_PROXY=f"http://127.0.0.1:{chat_server.port}", NO_PROXY="", no_proxy="")
    chat_server.responder = lambda body: "THE-END"
    code, stderr, normal_rss = run_measured(evalkit_process, env, "run", "hostile.sized", "--provider", "prod")
    assert code == 0, stderr

    chat_server.fail_next(Fault.huge(300_000_000, framing=framing))
    code, stderr, huge_rss = run_measured(evalkit_process, env, "run", "hostile.sized", "--provider", "prod", "--json")
    assert code == 3, stderr
    with sqlite3.connect(database(project)) as conn:
        (error,) = conn.execute("select error from evalkit_case where errored order by finished_at desc limit 1").fetchone()
    assert "larger than max_response_bytes (16 MiB)" in error and "stopped reading" in error
    # Reading stopped at the 16 MiB cap: the peak grows by a few times the cap, never by the reply.
    print(f"peak RSS {normal_rss >> 20} MiB normal, {huge_rss >> 20} MiB with a 300 MB reply")
    assert huge_rss - normal_rss < 96 * 1024 * 1024, (normal_rss, huge_rss)


# --- Files that never end, or never open: devices, named pipes, files past their reader's limit ---
# Each reader of a path a user names (configuration, set files, recorded answers, a corpus, a
# collection's files) once read /dev/zero until the system killed evalkit, or waited for ever on
# a named pipe nobody wrote. Each now names the file and why within seconds (exit 2).

needs_devices = pytest.mark.skipif(not Path("/dev/zero").is_char_device(), reason="needs /dev/zero")


@needs_devices
@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("list", "sets")], ids=lambda c: c[0])
def test_a_device_named_as_the_configuration_is_refused_naming_it(cli, command) -> None:
    result = cli("--config", "/dev/zero", *command, timeout=30)
    assert result.code == 2, result.stderr
    assert "cannot read configuration /dev/zero: not a regular file but a character device" in result.stderr


@pytest.mark.parametrize("form", ["loop", "fifo", "dangling link"])
def test_a_configuration_that_is_a_link_loop_or_a_pipe_nobody_writes_is_named_as_what_it_is(
    cli, project, monkeypatch, form
) -> None:
    """``EVALKIT_CONFIG`` naming a loop of symbolic links said the file "does not exist", and a
    named pipe nothing writes into "holds no settings (it is empty, or only comments)": each is
    named as what it is, by the opener every file read whole goes through (textfiles)."""
    from evalkit import textfiles

    monkeypatch.setattr(textfiles, "PIPE_WRITER_WAIT_S", 0.2)
    config = project / "evalkit.toml"
    if form == "loop":
        config.symlink_to("evalkit.toml")
        said = "a loop of symbolic links (Too many levels of symbolic links)"
    elif form == "fifo":
        os.mkfifo(config)
        said = "not a regular file but a pipe nothing writes into (waited 0.2 s for a writer)"
    else:
        config.symlink_to("moved.toml")
        said = "a symbolic link to moved.toml, which does not exist"
    result = cli("history", "evalkit.smoke", env={"EVALKIT_CONFIG": str(config)}, timeout=30)
    assert result.code == 2, result.stderr
    assert f"cannot read configuration {config} (named by EVALKIT_CONFIG): {said}" in result.stderr
    assert "does not exist" not in result.stderr.replace("moved.toml, which does not exist", "")
    assert "holds no settings" not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"
    if form == "fifo":  # a writer that opens it only once evalkit reads (`cat conf > fifo &`) is waited for
        import threading

        writer = threading.Thread(target=lambda: config.write_text("[gate]\nmax_pass_rate_drop = 0.2\n"), daemon=True)
        writer.start()
        piped = cli("history", "evalkit.smoke", env={"EVALKIT_CONFIG": str(config)}, timeout=30)
        writer.join(timeout=10)
        assert "cannot read" not in piped.stderr and "holds no settings" not in piped.stderr, piped.stderr


def test_a_configuration_past_16_mib_is_refused_naming_the_limit(cli, project) -> None:
    (project / "evalkit.toml").write_bytes(b"#" * (16 * 1024 * 1024 + 1))
    result = cli("run", "evalkit.smoke", timeout=30)
    assert result.code == 2, result.stderr
    assert "larger than the 16,777,216 bytes it may hold" in result.stderr


@needs_devices
def test_set_files_that_are_a_device_or_a_pipe_nobody_writes_are_problems_not_a_hang(cli, project) -> None:
    sets = project / "sets"
    sets.mkdir()
    (sets / "endless.yaml").symlink_to("/dev/urandom")
    os.mkfifo(sets / "waiting.yaml")
    result = cli("validate", "sets/endless.yaml", "sets/waiting.yaml", timeout=30)
    assert result.code == 2, result.stdout + result.stderr
    assert "sets/endless.yaml: cannot be read: not a regular file but a character device" in result.stdout + result.stderr
    assert "sets/waiting.yaml" in result.stdout + result.stderr  # read as empty: nothing to run


@needs_devices
def test_a_replay_file_that_is_a_device_is_refused_before_the_run(cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.r]\nadapter = "replay"\npath = "/dev/zero"\n')
    outside = cli("run", "evalkit.smoke", "--provider", "r", timeout=30)
    assert outside.code == 2 and 'option "path" of [providers.r]' in outside.stderr and "/dev/zero lies outside the project" in outside.stderr
    # Even where the configuration allows /dev, a device is no replay file.
    (project / "evalkit.toml").write_text('[sets]\nallow_outside = ["/dev"]\n[providers.r]\nadapter = "replay"\npath = "/dev/zero"\n')
    result = cli("run", "evalkit.smoke", "--provider", "r", timeout=30)
    assert result.code == 2, result.stderr
    assert "replay file /dev/zero: not a regular file but a character device" in result.stderr
    assert not (project / ".evalkit" / "results.db").exists()


@needs_devices
def test_a_lexical_corpus_that_is_a_device_is_refused(cli, project) -> None:
    (project / "evalkit.toml").write_text('[deployments.d.retrievers."evalkit.lexical"]\ncorpus = "/dev/zero"\n')
    outside = cli("retrieval", "hostile.questions", "evalkit.lexical", "--deployment", "d", timeout=30)
    assert outside.code == 2 and 'option "corpus" of [deployments.d.retrievers."evalkit.lexical"]' in outside.stderr
    # Even where the configuration allows /dev, a device is no corpus.
    (project / "evalkit.toml").write_text('[sets]\nallow_outside = ["/dev"]\n[deployments.d.retrievers."evalkit.lexical"]\ncorpus = "/dev/zero"\n')
    result = cli("retrieval", "hostile.questions", "evalkit.lexical", "--deployment", "d", timeout=30)
    assert result.code == 2, result.stderr
    assert "corpus /dev/zero is neither a file nor a folder" in result.stderr


def test_a_collection_whose_qrels_are_a_pipe_nobody_writes_is_refused_not_waited_on(cli, project) -> None:
    root = project / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text('{"_id": "d1", "text": "w1"}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "w1"}\n')
    os.mkfifo(root / "qrels" / "test.tsv")
    (project / "evalkit.toml").write_text('[question_sets."beir.pipe"]\npath = "beir"\n')
    result = cli("retrieval", "beir.pipe", "evalkit.lexical", timeout=30)
    assert result.code == 2, result.stderr
    assert "qrels/test.tsv does not exist" in result.stderr  # not a file it can read: named, not waited on


# --- Names a hundred thousand characters long, on the command line -------------------------------

HUGE = "r" * 100_000


@pytest.mark.parametrize(
    "args",
    [("show", HUGE), ("compare", HUGE, HUGE), ("report", HUGE), ("run", HUGE), ("retrieval", HUGE, "evalkit.lexical"),
     ("run", "evalkit.smoke", "--provider", HUGE), ("run", "evalkit.smoke", "--grader", HUGE), ("list", HUGE), ("validate", HUGE)],
    ids=["show", "compare", "report", "run", "retrieval", "provider", "grader", "list", "validate"],
)  # fmt: skip
def test_a_huge_name_is_echoed_cut_in_its_middle_not_whole(cli, args) -> None:
    """Every message quoted the value whole (`--provider` three times: 300 KB of stderr); `validate`
    of a name too long for the system crashed with OSError."""
    assert cli("run", "evalkit.smoke").code == 0  # a store to look in
    result = cli(*args)
    assert result.code == 2, result.stderr[-500:]
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "characters cut …" in result.stderr
    assert len(result.stderr) < 12_000, len(result.stderr)
    assert max(len(line) for line in result.stderr.splitlines()) <= 2_100


def test_validate_names_a_file_whose_name_is_too_long_for_the_system(cli) -> None:
    result = cli("validate", "r" * 1_000)
    assert result.code == 2 and "cannot be read: File name too long" in result.stderr, result.stderr[-500:]


# --- A generator that never returns ----------------------------------------------------------------


@pytest.mark.parametrize(
    "adapter", ["hostile.stuck", "hostile.stuck_async", "hostile.blocking_async"], ids=["sync", "async", "async-blocking"]
)
@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_generator_that_never_answers_one_case_costs_that_case_not_the_run(cli, project, adapter, concurrency) -> None:
    """Each answer has a time limit (the instance's answer_timeout, default 600 s): the stuck case
    is errored, the others are answered and stored, and the abandoned call does not keep the
    process from exiting (a concurrent.futures thread would have been joined at exit, for ever).
    An async generator that blocks the event loop (``time.sleep`` in ``agenerate``) was never
    cancelled, the loop being stuck in it: the run hung. It is interrupted where it blocks."""
    (project / "evalkit.toml").write_text(f'[providers.slow]\nadapter = "{adapter}"\nmodel = "m"\nanswer_timeout = 1\n')
    result = cli("run", "evalkit.smoke", "--provider", "slow", "--concurrency", concurrency, "--json",
                 env={"EVALKIT_HOSTILE_STUCK": "two-plus-two"}, timeout=60)  # fmt: skip
    assert result.code == 3, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "incomplete" and document["answered"] == 7 and document["errored"] == 1
    (stuck,) = [case for case in document["cases"] if case["error"]]
    assert stuck["id"] == "two-plus-two"
    how = "the generator was interrupted" if adapter == "hostile.blocking_async" else "the call was abandoned"
    assert stuck["error"] == f"no answer within 1 s (the provider instance's answer_timeout); {how}"


@pytest.mark.parametrize("value", ["0", "-1", "86401", "nan", "inf", '"60"', "true", "1" + "0" * 20, "1e-320", "0.0009"])
def test_an_answer_timeout_that_is_not_a_number_of_seconds_from_1_ms_to_a_day_is_refused(cli, project, value) -> None:
    (project / "evalkit.toml").write_text(f'[providers.slow]\nadapter = "hostile.stuck"\nanswer_timeout = {value}\n')
    result = cli("run", "evalkit.smoke", "--provider", "slow")
    assert result.code == 2, result.stderr
    assert "[providers.slow] answer_timeout must be a duration from 1 ms to 1 day" in result.stderr
    assert len(result.stderr) < 1_000 and not (project / ".evalkit" / "results.db").exists()


# --- Text a CI runner would act on ---------------------------------------------------------------
# A case id or an answer line starting with "::" is a GitHub Actions workflow command when it starts
# a line of the job's log (::add-mask:: hides the log, ::error:: fakes an annotation,
# ::stop-commands:: silences the real ones); "##vso[" anywhere is an Azure Pipelines one
# (##vso[task.complete result=Succeeded] ends the step as passed).

RUNNER_SET = {
    "identifier": "ci.commands",
    "name": "##vso[task.setvariable variable=gate]open",
    "prompts": [
        {"id": "::error title=pwned::injected", "prompt": "q", "reference": "no",
         "assertions": [{"kind": "contains", "value": "##vso[task.complete result=Succeeded]"}]},
        {"id": "two", "prompt": "q", "reference": "an answer\n::add-mask::FAIL\n  ##[error]fake",
         "assertions": [{"kind": "contains", "value": "yes"}]},
    ],
}  # fmt: skip


def _acted_on_by_a_runner(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.lstrip().startswith("::") or "##vso[" in line.lower() or "##[" in line]


def test_no_line_evalkit_prints_is_a_ci_runners_command(cli, project) -> None:
    (project / "evals.json").write_text(json.dumps(RUNNER_SET))
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals.json"]\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    run = cli("run", "ci.commands", "--privacy", "full", "--show-all")
    assert run.code == 0 and "\\x3a:error title=pwned::injected" in run.stdout, run.stderr[-1000:]
    assert _acted_on_by_a_runner(run.stdout + run.stderr) == []
    document = cli("run", "ci.commands", "--privacy", "full", "--json")
    assert _acted_on_by_a_runner(document.stdout) == []
    data = json.loads(document.stdout)  # the data is unchanged: only its JSON text is escaped
    assert data["cases"][0]["id"] == "::error title=pwned::injected"
    for command in (("show", data["run_id"]), ("show", data["run_id"], "--json"), ("history", "ci.commands"),
                    ("report", data["run_id"], "--format", "markdown"), ("report", data["run_id"], "--format", "junit")):  # fmt: skip
        shown = cli(*command)
        assert shown.code == 0, (command, shown.stderr[-500:])
        assert _acted_on_by_a_runner(shown.stdout + shown.stderr) == [], command


# --- A grader that never returns ------------------------------------------------------------------


@pytest.mark.parametrize(
    "grader", ["hostile.stuck_grader", "hostile.stuck_async_grader", "hostile.blocking_async_grader"], ids=["sync", "async", "async-blocking"]
)
@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_grader_that_never_returns_fails_that_grading_not_the_run(cli, project, grader, concurrency) -> None:
    """Grading one answer has a time limit (grade_timeout, default 600 s): a synchronous grader is
    interrupted (even one that swallows every Exception), an async one cancelled; the case's grading
    fails, the other cases are graded, and the run is kept out of comparisons by its failed yardstick.
    An async grader that blocks the event loop (``time.sleep`` in ``agrade``) was never cancelled,
    the loop being stuck in it: the run hung for ever. It is interrupted, as a synchronous one is."""
    (project / "evalkit.toml").write_text('grade_timeout = 1\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    result = cli("run", "evalkit.smoke", "--grader", grader, "--concurrency", concurrency, "--json",
                 env={"EVALKIT_HOSTILE_STUCK": "two-plus-two"}, timeout=60)  # fmt: skip
    assert "internal error" not in result.stderr and result.code in (0, 1), result.stderr[-1000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["passed"] == 6, result.stderr[-1000:]
    (stuck,) = [case for case in document["cases"] if not case["passed"]]
    assert stuck["id"] == "two-plus-two" and stuck["yardstick"] == f"{grader}:failed"
    how = "cancelled" if grader == "hostile.stuck_async_grader" else "interrupted"
    assert stuck["checks"][0]["error"] == f"no grading within 1 s (grade_timeout); the grader was {how}"


def test_a_set_provider_that_never_returns_is_a_failed_provider_not_a_hung_command(cli, project) -> None:
    """A provider whose listing stalls (a download) hung every command that lists sets: `list
    sets`, `validate` and the `run` of any set. Its call has a time limit (set_load_timeout,
    default 300 s): it is reported by name, the other providers' sets are listed and run."""
    (project / "evalkit.toml").write_text("set_load_timeout = 1\n")
    hang = {"EVALKIT_HOSTILE_HANG_SETS": "1"}
    listed = cli("list", "sets", env=hang, timeout=60)
    assert listed.code == 2 and "evalkit.smoke" in listed.stdout, listed.stderr[-500:]
    assert "provider \"hanging\" (evalkit-hostile-sets 0.1.0): golden_prompt_sets() did not return within 1 s (set_load_timeout)" in listed.stderr
    ran = cli("run", "evalkit.smoke", "--json", env=hang, timeout=60)
    assert ran.code == 0 and json.loads(ran.stdout)["status"] == "complete", ran.stderr[-500:]


def test_a_set_provider_whose_factory_never_returns_is_a_failed_provider_not_a_hung_command(cli, project) -> None:
    """Every command that lists sets builds every provider first; a factory that never returned (a
    connection to a server that never answers) hung `list sets`, `validate` and `run` for ever. It is
    bounded as a retriever's factory is, by the provider's own limit (set_load_timeout), abandoned,
    and reported by name; the other providers' sets are listed, validated and run."""
    (project / "evalkit.toml").write_text("set_load_timeout = 1\n")
    hang = {"EVALKIT_HOSTILE_HANG_SETS_FACTORY": "1"}
    said = (
        'golden prompt set provider "hanging" (evalkit-hostile-sets 0.1.0): its factory did not return within 1 s '
        "(set_load_timeout); the call was abandoned"
    )
    listed = cli("list", "sets", env=hang, timeout=60)
    assert listed.code == 2 and "evalkit.smoke" in listed.stdout, listed.stderr[-500:]
    assert said in " ".join(listed.stderr.split())
    assert cli("validate", "evalkit.smoke", env=hang, timeout=60).code == 0
    ran = cli("run", "evalkit.smoke", "--json", env=hang, timeout=60)
    assert ran.code == 0 and json.loads(ran.stdout)["status"] == "complete", ran.stderr[-500:]


@pytest.mark.parametrize("hook", ["bind_config", "refused_sets"])
def test_a_set_provider_whose_config_hook_never_returns_is_a_failed_provider_not_a_hung_command(cli, project, hook) -> None:
    """A provider's ConfigAware ``bind_config`` and RefusesSets ``refused_sets`` were called with no
    time limit, unlike its factory and listing: one that never returned hung `list sets`,
    `validate` and `run` for ever. Each is bounded as the factory is (set_load_timeout), abandoned,
    and reported by name; the other providers' sets are listed, validated and run."""
    (project / "evalkit.toml").write_text("set_load_timeout = 1\n")
    hang = {f"EVALKIT_HOSTILE_HANG_{hook.upper()}": "1"}
    said = (
        f'golden prompt set provider "hanging" (evalkit-hostile-sets 0.1.0): {hook}() did not return within 1 s '
        "(set_load_timeout); the call was abandoned"
    )
    listed = cli("list", "sets", env=hang, timeout=60)
    assert listed.code == 2 and "evalkit.smoke" in listed.stdout, listed.stderr[-500:]
    assert said in " ".join(listed.stderr.split()), listed.stderr[-500:]
    assert cli("validate", "evalkit.smoke", env=hang, timeout=60).code == 0
    ran = cli("run", "evalkit.smoke", "--json", env=hang, timeout=60)
    assert ran.code == 0 and json.loads(ran.stdout)["status"] == "complete", ran.stderr[-500:]


def test_a_set_provider_whose_listing_never_ends_is_read_up_to_10000_sets(cli, project) -> None:
    """A provider returning a generator of sets that never ends was read until set_load_timeout
    (330 MB in 5 s; the default is 300 s). Its listing is read up to 10,000 sets, then it is a failed
    provider, named, and the other providers' sets are listed and run."""
    endless = {"EVALKIT_HOSTILE_ENDLESS_SETS": "1"}
    listed = cli("list", "sets", env=endless, timeout=60)
    assert listed.code == 2 and "evalkit.smoke" in listed.stdout, listed.stderr[-500:]
    assert "hostile.endless" not in listed.stdout
    assert (
        "provider \"hanging\" (evalkit-hostile-sets 0.1.0): golden_prompt_sets() returned more than 10,000 sets, the most "
        "evalkit reads from one provider; it was not read further"
    ) in " ".join(listed.stderr.split())
    ran = cli("run", "evalkit.smoke", "--json", env=endless, timeout=60)
    assert ran.code == 0 and json.loads(ran.stdout)["status"] == "complete", ran.stderr[-500:]
    # validating one of its sets names the provider that failed, as `run` does; a set found does not
    validated = cli("validate", "hostile.endless5", env=endless, timeout=60)
    assert validated.code == 2
    assert "hostile.endless5: is neither a file nor an installed set" in validated.stderr
    assert "provider \"hanging\" (evalkit-hostile-sets 0.1.0): golden_prompt_sets() returned more than 10,000" in validated.stderr
    assert cli("validate", "evalkit.smoke", env=endless, timeout=60).code == 0


def test_a_question_set_built_from_an_endless_generator_is_read_up_to_its_limit(cli, project, monkeypatch) -> None:
    import evalkit.questions

    monkeypatch.setattr(evalkit.questions, "MAX_QUESTIONS", 50)
    listed = cli("list", "questions", env={"EVALKIT_HOSTILE_ENDLESS_QUESTIONS": "1"}, timeout=60)
    assert listed.code == 2, listed.stderr[-500:]
    assert (
        "provider \"hostilekit\" (evalkit-hostile-sets 0.1.0): SetTooLarge in golden_question_sets(): the questions given (an "
        "iterator) hold more than 50 questions, the most evalkit takes in one set"
    ) in " ".join(listed.stderr.split())


def test_a_set_built_from_an_endless_generator_is_read_up_to_the_prompt_limit(cli, project, monkeypatch) -> None:
    """`GoldenPromptSet(prompts=<a generator that never ends>)` made a tuple of it until
    set_load_timeout interrupted the provider, memory growing all the while. An iterator is read up
    to evalkit.prompts.MAX_PROMPTS (lowered here to 50) and the provider fails, named."""
    import evalkit.prompts

    monkeypatch.setattr(evalkit.prompts, "MAX_PROMPTS", 50)
    listed = cli("list", "sets", env={"EVALKIT_HOSTILE_ENDLESS_PROMPTS": "1"}, timeout=60)
    assert listed.code == 2 and "evalkit.smoke" in listed.stdout, listed.stderr[-500:]
    assert (
        "provider \"hanging\" (evalkit-hostile-sets 0.1.0): SetTooLarge in golden_prompt_sets(): the prompts given (an "
        "iterator) hold more than 50 prompts, the most evalkit takes in one set; stream them in a PromptStream"
    ) in " ".join(listed.stderr.split())


# --- A plugin's failure whose text sprawls (evalkit_hostile_sets.sprawling_failures) ---------------

SPRAWLING = "EVALKIT_HOSTILE_SPRAWLING_FAILURE"
PROVIDER = "golden prompt set provider \"sprawling_failures\" (evalkit-hostile-sets 0.1.0)"
#: What ends a 5,000,000-character message cut where it was quoted (MAX_REASON_CHARS kept).
CUT = "… (5,000,000 characters)"
#: What each way of failing is reported as: the set or provider, then the start of the reason,
#: which continues with 10,000 of the message's characters and :data:`CUT`.
SPRAWLING_FAILURES = {
    "import": (PROVIDER, "failed to load: RuntimeError: " + "I" * 10_000),
    "listing": (PROVIDER, "RuntimeError in golden_prompt_sets(): " + "L" * 10_000),
    "stream": ("hostile.sprawling_stream", 'set "hostile.sprawling_stream": field prompts: producing prompt #2 raised RuntimeError: ' + "S" * 10_000),
}  # fmt: skip


@pytest.mark.parametrize("mode", list(SPRAWLING_FAILURES))
def test_a_plugin_failure_with_a_5_million_character_message_is_cut_in_every_listing(cli, project, mode) -> None:
    """A set provider that fails to import, a listing that raises, a PromptStream whose producer
    raises, each with a 5,000,000-character message: `validate --json` and `list sets --json` printed
    the message whole (and `list sets` on the terminal, wrapped in lines of 200). It is cut where
    it is quoted (evalkit.shapes.exception_text) to 10,000 characters and its length; the command
    exits 2 as for any broken provider or set, and the other sets are still checked and listed."""
    env = {SPRAWLING: mode}
    target, reason = SPRAWLING_FAILURES[mode]
    validated = cli("validate", "--json", env=env)
    assert validated.code == 2, validated.stderr[-500:]
    document = validated.json()
    assert {"set": target, "reason": reason + CUT} in document["problems"]
    assert any(line.startswith("set evalkit.smoke ") for line in document["checked"])
    assert len(validated.stdout) < 100_000
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 2, listed.stderr[-500:]
    document = listed.json()
    where = {"stream": "", "import": f"{PROVIDER} "}.get(mode, f"{PROVIDER}: ")  # the provider named once
    assert f"{where}{reason}{CUT}" in document["problems"]
    assert "evalkit.smoke" in {row["identifier"] for row in document["sets"]}
    assert len(listed.stdout) < 100_000
    # the terminal: the same text, cut (validate's lines are cut in their middle, keeping their end)
    for args in (("validate",), ("list", "sets")):
        shown = cli(*args, env=env)
        assert shown.code == 2 and "internal error" not in shown.stderr
        assert CUT in " ".join(shown.stderr.split()) and len(shown.stderr) < 100_000, args
    assert "evalkit.smoke" in shown.stdout


def test_a_plugin_that_fails_to_import_with_a_5_million_character_message_is_cut_in_list_options(cli, project) -> None:
    """`evalkit list --options --json` loads every plugin and prints why one could not be loaded:
    the whole message, before it was cut where it is quoted. The other plugins' options are listed."""
    listed = cli("list", "--options", "--json", env={SPRAWLING: "import"})
    assert listed.code == 2, listed.stderr[-500:]
    rows = {row["name"]: row for row in listed.json()}
    assert rows["sprawling_failures"]["options_error"] == f"{PROVIDER} {SPRAWLING_FAILURES['import'][1]}{CUT}"
    assert rows["hostilekit"]["options_error"] is None and len(listed.stdout) < 100_000
    shown = cli("list", "--options", env={SPRAWLING: "import"})
    assert shown.code == 2 and "(could not load: " in shown.stdout and CUT in " ".join(shown.stdout.split())
    assert len(shown.stdout) < 100_000


@pytest.mark.parametrize(
    ("mode", "target", "reason"),
    [
        ("name", PROVIDER, "N" * 200 + "… (5,000,000 characters) in golden_prompt_sets(): a short message"),
        ("unprintable", PROVIDER, "Unprintable in golden_prompt_sets(): (its message could not be read: str() raised ValueError)"),
        ("unprintable_stream", "hostile.sprawling_stream", 'set "hostile.sprawling_stream": field prompts: producing prompt #2 raised '
         "Unprintable: (its message could not be read: str() raised ValueError)"),
    ],
    ids=["class-name", "str-raises", "str-raises-in-stream"],
)  # fmt: skip
def test_an_exception_with_a_sprawling_class_name_or_a_str_that_raises_is_named(cli, project, mode, target, reason) -> None:
    """An exception class whose __name__ is 5,000,000 characters was quoted whole; one whose
    __str__ raises ended `validate` and `list sets` in an internal error. The name is cut to 200
    characters and the message that cannot be had is named; the provider or set is reported as
    any other that fails, and the other sets are listed."""
    env = {SPRAWLING: mode}
    validated = cli("validate", "--json", env=env)
    assert validated.code == 2 and "internal error" not in validated.stderr, validated.stderr[-500:]
    assert {"set": target, "reason": reason} in validated.json()["problems"]
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 2 and "internal error" not in listed.stderr, listed.stderr[-500:]
    where = "" if mode == "unprintable_stream" else f"{PROVIDER}: "
    assert f"{where}{reason}" in listed.json()["problems"]
    assert "evalkit.smoke" in {row["identifier"] for row in listed.json()["sets"]}


def test_a_set_whose_identifier_is_5_million_characters_is_refused_by_the_catalog_once(cli, project) -> None:
    """A provider shipping a set whose identifier is 5,000,000 characters: the identifier labels
    every line about the set, so `validate` made a 5 GB list of its problems, and `list sets`
    printed it in its row. The catalog refuses it (the provider's failure names its length and its
    start), and the provider's other set is listed and checked."""
    env = {SPRAWLING: "identifier"}
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 2, listed.stderr[-500:]
    document = listed.json()
    refused = (
        f"{PROVIDER}: golden_prompt_sets() returned a set whose identifier is 5,000,000 characters long, "
        f"more than the 1,000 allowed: '{'i' * 60}… (5,000,000 characters)'"
    )
    assert document["problems"] == [refused]
    assert {"evalkit.smoke", "hostile.beside_sprawl"} <= {row["identifier"] for row in document["sets"]}
    assert len(listed.stdout) < 100_000
    validated = cli("validate", "--json", env=env)
    assert validated.code == 2 and len(validated.stdout) < 100_000, validated.stderr[-500:]
    assert any(line.startswith("set hostile.beside_sprawl ") for line in validated.json()["checked"])
    ran = cli("run", "hostile.beside_sprawl", env=env)
    assert ran.code == 0, ran.stderr[-500:]


def test_a_set_whose_name_is_5_million_characters_is_listed_cut_and_named_once_per_problem(cli, project) -> None:
    """A set whose name is 5,000,000 characters and whose 1,000 prompts are blank: `list sets`
    printed the name whole in its row (as JSON and in the table). The row shows it cut to the
    1,000 characters a name may have, with its length; `validate` names the name's length once
    and each blank prompt by its id, never the name."""
    env = {SPRAWLING: "set_name"}
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 0, listed.stderr[-500:]
    row = next(row for row in listed.json()["sets"] if row["identifier"] == "hostile.sprawling_name")
    assert row["name"] == "n" * 1_000 + "… (5,000,000 characters)" and row["count"] == 1_000
    shown = cli("list", "sets", env=env)
    assert shown.code == 0 and "characters)" in shown.stdout and len(shown.stdout) < 200_000
    validated = cli("validate", "hostile.sprawling_name", "--json", env=env)
    assert validated.code == 2
    reasons = [problem["reason"] for problem in validated.json()["problems"]]
    assert 'set "hostile.sprawling_name": field name is 5,000,000 characters long, more than the 1,000 allowed' in reasons
    assert sum(len(reason) for reason in reasons) < 200_000 and len(reasons) == 1_001


#: What a provider raising SetValidationError with 250,000 problems has kept: the first 1,000,
#: then one line saying how many more there were (evalkit.shapes.bounded_problems).
OWN_PROBLEMS = [f"problem #{number:,} of the provider's own" for number in range(1, 1_001)]
NOT_KEPT = "249,000 more problems were not kept, after the first 1,000: mend these first"


def test_a_provider_raising_250_000_problems_of_its_own_has_the_first_1000_kept_everywhere(cli, project) -> None:
    """A provider raising SetValidationError itself with 250,000 problems (met with 5,000,000): `list sets` printed a
    line for each (and `--json` listed them all), `validate` joined them all into one text before
    cutting it, a run of a missing set printed them all. The error keeps the first 1,000 and a line
    saying how many more there were, so every consumer is bounded; the exit code is 2 as for any
    broken provider, and the other sets are listed, checked and run."""
    env = {SPRAWLING: "many_problems"}
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 2, listed.stderr[-500:]
    document = listed.json()
    assert document["problems"] == [f"{PROVIDER}: {problem}" for problem in (*OWN_PROBLEMS, NOT_KEPT)]
    assert "evalkit.smoke" in {row["identifier"] for row in document["sets"]} and len(listed.stdout) < 200_000
    shown = cli("list", "sets", env=env)
    assert shown.code == 2 and "evalkit.smoke" in shown.stdout
    lines = [line for line in shown.stderr.splitlines() if line.startswith("error: ")]  # the noisy provider prints too
    assert len(lines) == 1_001 and lines[-1] == f"error: {PROVIDER}: {NOT_KEPT}", lines[-3:]
    validated = cli("validate", "--json", env=env)
    assert validated.code == 2 and len(validated.stdout) < 200_000, validated.stderr[-500:]
    failed = [problem for problem in validated.json()["problems"] if problem["set"] == PROVIDER]
    assert [problem["reason"] for problem in failed] == [*OWN_PROBLEMS, NOT_KEPT]  # each, as list sets shows them
    assert any(line.startswith("set evalkit.smoke ") for line in validated.json()["checked"])
    missing = cli("run", "hostile.not_there", env=env)  # the refusal may be why it is missing: it is shown
    assert missing.code == 2, missing.stderr[-500:]
    assert f"  - {OWN_PROBLEMS[-1]}\n  - {NOT_KEPT}" in missing.stderr and len(missing.stderr) < 100_000
    assert cli("run", "evalkit.smoke", env=env).code == 0


def test_the_count_of_problems_cut_to_1000_is_their_number_not_the_lines_shown(cli, project) -> None:
    """A run's error header said "(1001 problems)" of a provider's 250,000: it counted the line
    saying how many more there were as one problem; `validate` showed the provider's list as one
    problem, its summary "1 problem". Both give the true count and how many are shown; of a set
    whose check stopped at its limit, at least how many there are."""
    env = {SPRAWLING: "many_problems"}
    missing = cli("run", "hostile.not_there", env=env)
    assert missing.code == 2, missing.stderr[-500:]
    assert "evalkit: error: the set is invalid (250,000 problems, 1,000 of them shown):\n" in missing.stderr, missing.stderr[:500]
    validated = cli("validate", env=env)
    assert validated.code == 2
    summary = re.fullmatch(r"evalkit: ([\d,]+) problems, ([\d,]+) of them shown; nothing was run", validated.stderr.splitlines()[-1])
    assert summary is not None, validated.stderr.splitlines()[-1]
    total, shown = (int(number.replace(",", "")) for number in summary.groups())
    others = shown - 1_000  # the other hostile providers' problems, each counted once
    assert total == 250_000 + others and 0 <= others < 100, summary.group(0)
    stopped = cli("validate", "hostile.sprawling_name", env={SPRAWLING: "set_name"})
    assert stopped.code == 2 and stopped.stderr.splitlines()[-1] == "evalkit: at least 1,000 problems, 1,000 of them shown; nothing was run"
    run = cli("run", "hostile.sprawling_name", env={SPRAWLING: "set_name"})
    assert run.code == 2 and "(at least 1,000 problems, 1,000 of them shown):" in run.stderr, run.stderr[:500]


def _prompts_without_a_prompt(path: Path, identifier: str, count: int) -> None:
    """A JSONL set file of ``count`` prompts, each missing its ``prompt`` (a problem each)."""
    lines = [json.dumps({"identifier": identifier, "name": identifier})]
    lines += [json.dumps({"id": f"p{number}", "assertions": [{"contains": "x"}]}) for number in range(count)]
    path.write_text("\n".join(lines) + "\n")


def test_a_set_file_with_thousands_of_problems_has_the_first_1000_kept_and_all_counted(cli, project) -> None:
    """A JSONL file of 3,000 prompts without a `prompt`: `validate` printed 3,000 problems (one of
    200,000 never finished: each prompt's check scanned every path the schema had flagged), and
    so did a run of one of its sets. The holder of set-file problems keeps the first 1,000 and one
    naming the file and how many more; the count is theirs."""
    _prompts_without_a_prompt(project / "big.jsonl", "big.set", 3_000)
    _prompts_without_a_prompt(project / "small.jsonl", "small.set", 5)
    note = "2,000 more problems were not kept, after the first 1,000: mend these first"
    shown = cli("validate", "big.jsonl")
    assert shown.code == 2 and len(shown.stderr) < 100_000, shown.stderr[-500:]
    lines = shown.stderr.splitlines()
    assert lines[0] == "big.jsonl:2:1: prompt 'p0': 'prompt' is required", lines[0]
    assert lines[-3:] == [
        "big.jsonl:1001:1: prompt 'p999': 'prompt' is required", f"big.jsonl: {note}",
        "evalkit: 3,000 problems, 1,000 of them shown; nothing was run",
    ] and len(lines) == 1_002  # fmt: skip
    document = cli("validate", "big.jsonl", "--json")
    assert document.code == 2 and len(document.stdout) < 250_000
    problems = document.json()["problems"]
    assert len(problems) == 1_001 and problems[-1] == {"file": "big.jsonl", "line": None, "column": None, "path": "", "member": None, "reason": note}
    both = cli("validate", "big.jsonl", "small.jsonl")
    assert both.code == 2 and both.stderr.splitlines()[-2:] == [
        "big.jsonl: 2,005 more problems were not kept, after the first 1,000: mend these first (they are in this file and 1 more)",
        "evalkit: 3,005 problems, 1,000 of them shown; nothing was run",
    ]  # fmt: skip
    (project / "evalkit.toml").write_text('[sets]\npaths = ["*.jsonl"]\n')
    run = cli("run", "big.set")
    assert run.code == 2 and len(run.stderr) < 100_000, run.stderr[-500:]
    assert "evalkit: error: the set files are invalid (3,005 problems, 1,000 of them shown):\n" in run.stderr, run.stderr[:300]
    assert run.stderr.endswith("  - big.jsonl: 2,005 more problems were not kept, after the first 1,000: mend these first (they are in this file and 1 more)\n")


def test_a_wide_problem_is_cut_where_it_enters_the_terminal_whichever_command_prints_it(cli, evalkit_cli, hostile_env, project) -> None:
    """A provider's problem of 11,000 characters (short of the 12,000 a problem keeps): `list sets`
    printed it through the console's template (`err.line`), which cut no value, so it came out
    whole — one line of 11,000 in a log, 56 rows of a terminal. Every value entering the terminal
    is cut in its middle to 2,000 characters (evalkit.cli.console), so `list sets`, `validate` and
    a run's error show its start, how much was cut and its end, in a log and on a terminal alike."""
    env = {SPRAWLING: "wide_problem"}
    start = "the provider's own problem, wide: "
    for args in (("list", "sets"), ("validate",), ("run", "hostile.not_there")):
        shown = cli(*args, env=env)
        assert shown.code == 2, (args, shown.stderr[-500:])
        line = next(line for line in shown.stderr.splitlines() if start in line)
        assert len(line) < 2_100 and " characters cut … " in line and line.endswith("W" * 900), (args, line[:300])
    assert cli("list", "sets", "--json", env=env).json()["problems"] == [f"{PROVIDER}: {start}" + "W" * (11_000 - len(start))]
    wrapped = evalkit_cli("list", "sets", env={**hostile_env, **env}, terminal=True)
    assert wrapped.code == 2 and "evalkit.smoke" in wrapped.stdout
    assert start in wrapped.stderr and "characters cut" in " ".join(wrapped.stderr.split())
    assert len("".join(wrapped.stderr.split())) < 2_100, len(wrapped.stderr)


#: A distribution name and a version of 1,000,000 characters (a METADATA written by hand), and
#: what every line naming one of its plugins shows of them: 200 characters and the length.
GIANT_NAME = "evalkit-giant-" + "n" * (1_000_000 - len("evalkit-giant-"))
GIANT_VERSION = "1." + "9" * (1_000_000 - 2)
SHOWN_NAME = GIANT_NAME[:200] + "… (1,000,000 characters)"
SHOWN_VERSION = GIANT_VERSION[:200] + "… (1,000,000 characters)"
GIANT_MODULE = (
    "from evalkit import GoldenPrompt, GoldenPromptSet\n"
    "class Shipping:\n"
    "    def golden_prompt_sets(self):\n"
    "        return [GoldenPromptSet(identifier='giant.one', name='One', prompts=[GoldenPrompt(id='a', prompt='Say x', reference='x')])]\n"
    "class Failing:\n"
    "    def golden_prompt_sets(self):\n"
    "        raise RuntimeError('the listing failed')\n"
)


def test_a_distribution_whose_name_and_version_are_a_million_characters_is_named_by_200_of_each(cli, project, tmp_path) -> None:
    """A hand-written METADATA whose Name and Version are 1,000,000 characters each: every line
    naming one of its plugins (`list`, `list sets`, each failure, their `--json`) printed both
    whole. The registry's one metadata scan keeps 200 characters of each and their length; the
    plugins are listed and loaded as before, and the other sets are listed and run."""
    from tests.support.distributions import write_distribution

    site = write_distribution(
        tmp_path / "giant", GIANT_NAME, GIANT_VERSION,
        {"evalkit.golden_sets": {"giant_ok": "evalkit_giant_meta:Shipping", "giant_failing": "evalkit_giant_meta:Failing"}},
        {"evalkit_giant_meta.py": GIANT_MODULE}, info="evalkit_giant-1.0",
    )  # fmt: skip
    env = {"PYTHONPATH": str(site)}
    plugins = cli("list", "--json", env=env)
    assert plugins.code == 0 and len(plugins.stdout) < 100_000, plugins.stderr[-500:]
    rows = {row["name"]: row for row in plugins.json() if row["name"].startswith("giant_")}
    assert {(row["distribution"], row["version"]) for row in rows.values()} == {(SHOWN_NAME, SHOWN_VERSION)} and len(rows) == 2
    shown = cli("list", env=env)
    assert shown.code == 0 and len(shown.stdout) < 100_000
    line = next(line for line in shown.stdout.splitlines() if "giant_ok" in line)
    assert line.split(" ", 3)[2] == "giant_ok" and line.endswith(f"  {SHOWN_NAME} {SHOWN_VERSION}"), line[:300]
    failing = f"golden prompt set provider \"giant_failing\" ({SHOWN_NAME} {SHOWN_VERSION})"
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 2 and len(listed.stdout) < 100_000, listed.stderr[-500:]
    assert listed.json()["problems"] == [f"{failing}: RuntimeError in golden_prompt_sets(): the listing failed"]
    row = next(row for row in listed.json()["sets"] if row["identifier"] == "giant.one")
    assert (row["distribution"], row["version"]) == (SHOWN_NAME, SHOWN_VERSION)
    table = cli("list", "sets", env=env)
    assert table.code == 2 and "giant.one" in table.stdout and "evalkit.smoke" in table.stdout
    assert f"{failing}: RuntimeError" in table.stderr and len(table.stdout + table.stderr) < 100_000
    validated = cli("validate", "--json", env=env)
    assert validated.code == 2 and len(validated.stdout) < 100_000
    assert {"set": failing, "reason": "RuntimeError in golden_prompt_sets(): the listing failed"} in validated.json()["problems"]
    assert cli("run", "giant.one", env=env).code == 0


def test_an_entry_point_whose_name_is_a_million_characters_is_refused_and_named_by_its_distribution(cli, project, tmp_path) -> None:
    """An entry_points.txt is anyone's to write: a provider's name of 1,000,000 characters (and a
    grader's value of as many) was printed whole by `list --json` and in each failure naming the
    plugin. A name cannot be cut (lookup is by name): the registry's scan refuses the entry point,
    as a failure naming the distribution and 60 characters of the name, and the others are listed
    and run; each command that lists plugins or sets exits 2."""
    from tests.support.distributions import write_distribution

    long_name = "p" * 1_000_000
    site = write_distribution(
        tmp_path / "sprawl", "evalkit-sprawl", "1.0",
        {"evalkit.golden_sets": {long_name: "evalkit_giant_meta:Shipping", "fits": "evalkit_giant_meta:Shipping"},
         "evalkit.graders": {"far": "json:" + "d" * 999_995}},
        {"evalkit_giant_meta.py": GIANT_MODULE},
    )  # fmt: skip
    env = {"PYTHONPATH": str(site)}
    refused = (
        "golden prompt set provider \"" + "p" * 60 + "… (1,000,000 characters)\" (evalkit-sprawl 1.0): the entry point is refused: "
        "its name is 1,000,000 characters long, more than the 200 allowed; it is neither listed nor loaded"
    )
    plugins = cli("list", "--json", env=env)
    assert plugins.code == 2 and len(plugins.stdout) < 100_000, plugins.stderr[-500:]
    rows = [row for row in plugins.json() if row["distribution"] == "evalkit-sprawl"]
    assert [(row["name"], row["refused"]) for row in rows][0] == ("fits", None)
    assert [row["name"][:3] for row in rows[1:]] == ["ppp", "far"] and all(row["refused"] for row in rows[1:])
    assert rows[1]["refused"] == refused.split(": ", 1)[1] and len(rows[2]["value"]) < 100
    shown = cli("list", env=env)
    assert shown.code == 2 and "fits" in shown.stdout and len(shown.stdout + shown.stderr) < 100_000
    assert f"error: {refused}" in shown.stderr.splitlines()
    listed = cli("list", "sets", "--json", env=env)
    assert listed.code == 2 and listed.json()["problems"] == [refused], listed.json()["problems"]
    assert "giant.one" in {row["identifier"] for row in listed.json()["sets"]}
    validated = cli("validate", "--json", env=env)
    assert validated.code == 2 and len(validated.stdout) < 100_000
    assert {"set": refused.split(": ", 1)[0], "reason": refused.split(": ", 1)[1]} in validated.json()["problems"]
    assert cli("run", "giant.one", env=env).code == 0


@pytest.mark.parametrize("value", ["0", "-1", "86401", "nan", "-inf", '"60"', "true", "1" + "0" * 20, "1e-320", "0.0009"])
def test_a_grade_set_load_or_hook_timeout_that_is_not_a_number_of_seconds_from_1_ms_to_a_day_is_refused(cli, project, value) -> None:
    for key in ("grade_timeout", "set_load_timeout", "hook_timeout"):
        (project / "evalkit.toml").write_text(f"{key} = {value}\n")
        result = cli("run", "evalkit.smoke")
        assert result.code == 2, result.stderr
        assert f"{key} must be a duration from 1 ms to 1 day" in result.stderr
        assert len(result.stderr) < 1_000 and not (project / ".evalkit" / "results.db").exists()


def test_a_time_limit_or_interval_under_1_ms_is_refused_wherever_it_is_read(cli, project) -> None:
    """``answer_timeout = 1e-320`` errored every case with "no answer within 9.99989e-321 s", and
    ``--poll 1e-300`` asked the store without a pause for the whole ``--timeout``: every duration
    evalkit reads has one rule (:func:`evalkit.shapes.seconds_between`), from 1 ms up."""
    floor = "from 1 ms to 1 day"
    (project / "evalkit.toml").write_text('[deployments.demo.retrievers."evalkit.lexical"]\ntimeout = 1e-320\n')
    retriever = cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert retriever.code == 2 and f'"evalkit.lexical": timeout must be a duration {floor}' in retriever.stderr
    (project / "evalkit.toml").unlink()
    busy = cli("run", "evalkit.smoke", env={"EVALKIT_BUSY_TIMEOUT": "1e-300"})
    assert busy.code == 2 and f"EVALKIT_BUSY_TIMEOUT must be a duration {floor}" in busy.stderr
    ready = cli("run", "evalkit.smoke", "--wait-ready", "0.0000001s")
    assert ready.code == 2 and '--wait-ready must be a duration from 1 ms to 7 days' in ready.stderr and 'got "0.0000001s"' in ready.stderr
    assert not (project / ".evalkit").exists()
    assert cli("run", "evalkit.smoke").code == 0  # report reads a store
    polled = cli("report", "pipeline-1", "--wait", "--timeout", "1s", "--poll", "1e-300")
    assert polled.code == 2 and '--poll must be a duration from 1 ms to 7 days' in polled.stderr and 'got "1e-300"' in polled.stderr
    # 1 ms itself is a limit
    (project / "evalkit.toml").write_text("grade_timeout = 0.001\n[providers.ref]\nadapter = \"reference\"\nanswer_timeout = 1e-3\n")
    assert cli("validate", "evalkit.smoke").code == 0


@pytest.mark.parametrize(
    "command",
    [
        ("run", "evalkit.smoke", "--wait-for-shards", "--run-id", "ci-1", "--database", "sqlite:///shared.db"),
        ("retrieval", "evalkit_stdlib.docs", "--wait-for-shards", "--run-id", "ci-1", "--database", "sqlite:///shared.db"),
        ("run", "evalkit.smoke"),  # without the flag that waits: was ignored, and the run went ahead
        ("report", "ci-1", "--wait", "--database", "sqlite:///shared.db"),
    ],
    ids=["run-waiting", "retrieval-waiting", "run", "report"],
)
@pytest.mark.parametrize(("option", "value"), [("--timeout", "nan"), ("--poll", "0"), ("--timeout", "x" * 10_000)])
def test_a_bad_duration_is_refused_as_the_command_line_is_read_naming_its_option(
    cli, project, command: tuple[str, ...], option: str, value: str
) -> None:
    """``--timeout`` and ``--poll`` were read where the wait began, after the store was opened:
    ``run … --wait-for-shards --timeout nan --database sqlite:///shared.db`` made shared.db, then
    said 'a duration must look like 90s, 30m or 2h' naming no option; without the flag that waits
    the value was never read. ``--wait-ready`` is read the same way."""
    result = cli(*command, option, value)
    assert result.code == 2, result.stdout + result.stderr
    assert f"{option} must be a duration from 1 ms to 7 days" in result.stderr, result.stderr
    assert len(result.stderr) < 1_000 and "Traceback" not in result.stderr
    assert not (project / "shared.db").exists() and not (project / ".evalkit").exists(), "nothing was made"
    ready = cli("run", "evalkit.smoke", "--wait-ready", "")  # read as "not given": asked once, no wait
    assert ready.code == 2 and "--wait-ready must be a duration from 1 ms to 7 days" in ready.stderr, ready.stderr


# --- Numbers longer than Python converts ---------------------------------------------------------

LONG_NUMBER = "9" * 5_000  # past sys.get_int_max_str_digits() (4,300): int() raises ValueError


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("long.json", '{"id": "s.long", "name": "x", "prompts": [{"id": "p", "prompt": "q", "assertions": '
                      f'[{{"kind": "contains", "value": {LONG_NUMBER}}}]}}]}}', "long.json:1:"),
        ("long.yaml", f"id: s.long\nname: x\nprompts:\n  - id: p\n    prompt: q\n    assertions:\n"
                      f"      - kind: contains\n        value: {LONG_NUMBER}\n", "long.yaml:8:16"),
        ("long.toml", f'id = "s.long"\nname = "x"\n[[prompts]]\nid = "p"\nprompt = "q"\nn = {LONG_NUMBER}\n', "long.toml:6:5"),
    ],
    ids=["json", "yaml", "toml"],
)  # fmt: skip
def test_a_set_file_with_a_number_past_pythons_digit_limit_is_a_syntax_problem(cli, project, name, text, where) -> None:
    (project / name).write_text(text)
    result = cli("validate", name)
    assert result.code == 2, result.stderr[-500:]
    assert "internal error" not in result.stderr
    assert f"{where}" in result.stderr and "syntax: a number with more than 4,300 digits" in result.stderr


def test_a_configuration_with_a_number_past_pythons_digit_limit_is_refused(cli, project) -> None:
    (project / "evalkit.toml").write_text(f"max_answer_bytes = {LONG_NUMBER}\n")
    result = cli("run", "evalkit.smoke")
    assert result.code == 2 and "is not valid TOML: a number with more than 4,300 digits" in result.stderr, result.stderr[-500:]


# --- A plugin that calls sys.exit() ----------------------------------------------------------------
# A library that "exits" on an error ended `evalkit run` with its code: sys.exit(0) in a generator
# or a grader passed a CI gate with the run left half done and "running".


@pytest.mark.parametrize("adapter", ["hostile.exiting", "hostile.exiting_async"], ids=["sync", "async"])
def test_a_generator_calling_sys_exit_errs_its_case_and_the_gate_fails(cli, project, adapter) -> None:
    (project / "evalkit.toml").write_text(f'[providers.x]\nadapter = "{adapter}"\nmodel = "m"\n')
    result = cli("run", "evalkit.smoke", "--provider", "x", "--json", env={"EVALKIT_HOSTILE_STUCK": "two-plus-two"})
    assert result.code == 3, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "incomplete" and document["answered"] == 7
    assert [(case["id"], case["error"]) for case in document["cases"] if case["error"]] == [("two-plus-two", "SystemExit: 0")]


def test_a_grader_calling_sys_exit_fails_its_case_and_the_run_completes(cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    result = cli("run", "evalkit.smoke", "--grader", "hostile.exiting_grader", "--json", env={"EVALKIT_HOSTILE_STUCK": "two-plus-two"})
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["passed"] == 6, result.stderr
    (failed,) = [case for case in document["cases"] if not case["passed"]]
    assert failed["id"] == "two-plus-two" and failed["yardstick"] == "hostile.exiting_grader:failed"
    assert failed["checks"][0]["error"] == "SystemExit: 0"


# --- A plugin that raises what `except Exception` does not catch (evalkit_raising_plugins) -----------
# StopIteration from a synchronous generator cannot cross into asyncio: the future never resolved,
# and each such case waited its whole answer_timeout, then read "no answer within 600 s".
# GeneratorExit, a framework's own BaseException (pytest.skip()) or asyncio.CancelledError raised by
# a plugin ended a run as an internal error (exit 2, "nothing stored") or silently (exit 3, not a
# word), the run left "running"; a set provider's, a stream's or an import's ended `list sets`,
# `validate` and `run` silently (exit 3) with no provider named. Each plugin call now carries them
# as the plugin's failure (evalkit.errors.carried).

RAISED = ["StopIteration", "GeneratorExit", "CancelledError", "Skipped", "Unprintable"]


@pytest.fixture
def raising(cli, plugin_dists):
    """``evalkit`` with evalkit-raising-plugins installed, raising ``raised`` (where ``place`` says,
    or for the case ``case``)."""
    path = plugin_dists("evalkit-raising-plugins")

    def run(*args: str, raised: str, case: str = "", place: str = ""):
        env = {"PYTHONPATH": path, "EVALKIT_RAISE": raised, "EVALKIT_RAISE_FOR": case, "EVALKIT_RAISE_IN": place}
        return cli(*args, env=env)

    return run


def said_of(raised: str, in_a_coroutine: bool) -> str:
    """How a case's error starts: Python itself turns a StopIteration leaving a coroutine into a RuntimeError."""
    return "RuntimeError: coroutine raised StopIteration" if in_a_coroutine and raised == "StopIteration" else f"{raised}: "


@pytest.mark.parametrize("raised", RAISED)
@pytest.mark.parametrize("adapter", ["raising.generator", "raising.async_generator"], ids=["sync", "async"])
def test_a_generator_raising_what_except_exception_misses_errs_its_case_at_once(raising, project, adapter, raised) -> None:
    (project / "evalkit.toml").write_text(f'[providers.x]\nadapter = "{adapter}"\nmodel = "m"\nanswer_timeout = 20\n')
    started = time.monotonic()
    result = raising("run", "evalkit.smoke", "--provider", "x", "--json", raised=raised, case="two-plus-two")
    assert time.monotonic() - started < 15, "the case waited for its answer_timeout"
    assert result.code == 3, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "incomplete" and document["answered"] == 7
    ((case_id, error),) = [(case["id"], case["error"]) for case in document["cases"] if case["error"]]
    assert case_id == "two-plus-two" and error.startswith(said_of(raised, adapter == "raising.async_generator")), error
    assert "no answer within" not in error and "Traceback" not in result.stderr


@pytest.mark.parametrize("raised", RAISED)
@pytest.mark.parametrize("grader", ["raising.grader", "raising.async_grader"], ids=["sync", "async"])
def test_a_grader_raising_what_except_exception_misses_fails_its_grading_and_the_run_completes(raising, project, grader, raised) -> None:
    (project / "evalkit.toml").write_text('[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    result = raising("run", "evalkit.smoke", "--grader", grader, "--json", raised=raised, case="two-plus-two")
    assert result.code == 0, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["passed"] == 6
    (failed,) = [case for case in document["cases"] if not case["passed"]]
    assert failed["id"] == "two-plus-two" and failed["yardstick"] == f"{grader}:failed"
    assert failed["checks"][0]["error"].startswith(said_of(raised, grader == "raising.async_grader")), failed["checks"][0]


@pytest.mark.parametrize("raised", RAISED)
def test_a_retriever_raising_what_except_exception_misses_errs_its_question(raising, raised) -> None:
    result = raising("retrieval", "raising.questions", "raising.retriever", "--json", raised=raised, case="question 2")
    assert result.code == 3, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "incomplete"
    errors = [question["error"] for question in document["questions"] if question["error"]]
    assert len(errors) == 1 and f'retriever "raising.retriever" raised {raised} on question' in errors[0], errors
    if raised == "Unprintable":
        assert "its message could not be read: str() raised ValueError" in errors[0]


@pytest.mark.parametrize("raised", ["GeneratorExit", "Skipped"])
def test_a_set_provider_or_a_stream_raising_what_except_exception_misses_is_named(raising, raised) -> None:
    listing = raising("list", "sets", raised=raised, place="listing")
    assert listing.code == 2, listing.stderr[-2000:]
    assert f"\"raising\" (evalkit-raising-plugins 0.1.0): {raised} in golden_prompt_sets(): " in listing.stderr
    assert "evalkit.smoke" in listing.stdout  # the other providers' sets are listed
    for command in (("validate", "raising.stream"), ("run", "raising.stream")):
        checked = raising(*command, raised=raised, place="stream")
        assert checked.code == 2, checked.stderr[-2000:]
        assert f"producing prompt #2 raised {raised}: " in checked.stderr + checked.stdout


@pytest.mark.parametrize("raised", ["GeneratorExit", "Skipped"])
def test_a_plugin_raising_what_except_exception_misses_at_import_failed_to_load(raising, project, raised) -> None:
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.at_import"\n')
    result = raising("run", "evalkit.smoke", "--provider", "x", raised=raised, place="import")
    assert result.code == 2, result.stderr[-2000:]
    assert f"generator \"raising.at_import\" (evalkit-raising-plugins 0.1.0) failed to load: {raised}: " in result.stderr
    assert stored_runs(project) == 0


def test_a_keyboard_interrupt_raised_at_a_plugins_import_names_the_plugin(raising, project) -> None:
    """A plugin module raising KeyboardInterrupt at import read as the user's Ctrl-C ("evalkit:
    interrupted"), no plugin named. evalkit cannot tell it from a Ctrl-C during a slow import, so
    it is still an interrupt (exit 3, nothing stored), naming the plugin being loaded."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.at_import"\n')
    result = raising("run", "evalkit.smoke", "--provider", "x", "--json", raised="KeyboardInterrupt", place="import")
    assert result.code == 3, result.stderr[-2000:]
    said = (
        "interrupted while loading generator \"raising.at_import\" (evalkit-raising-plugins 0.1.0) "
        "(Ctrl-C, or a KeyboardInterrupt its module raised at import)"
    )
    assert result.stderr.splitlines() == [f"evalkit: {said}"]
    assert json.loads(result.stdout) == {"error": said, "exit_code": 3, "runs_kept": []}
    assert stored_runs(project) == 0


@pytest.mark.parametrize("raised", ["GeneratorExit", "Skipped"])
def test_a_hook_reporter_or_closing_retriever_raising_what_except_exception_misses_leaves_the_run_as_it_is(raising, project, raised) -> None:
    hooked = raising("run", "evalkit.smoke", "--json", raised=raised, case="two-plus-two", place="hook")
    assert hooked.code == 0, hooked.stderr[-2000:]
    (warning,) = json.loads(hooked.stdout)["warnings"]
    assert "raised in evalkit_case_graded" in warning and f"{raised}: " in warning
    reported = raising("run", "evalkit.smoke", "--report", "raising:-", raised=raised, place="report")
    assert reported.code == 0 and f"{raised}: " in reported.stderr, reported.stderr[-2000:]
    closed = raising("retrieval", "raising.questions", "raising.retriever", "--json", raised=raised, place="close")
    assert closed.code == 0, closed.stderr[-2000:]
    document = json.loads(closed.stdout)
    assert document["status"] == "complete"
    # one wording with a generator's or grader's close failure, naming its distribution
    (warning,) = document["warnings"]
    assert warning.startswith(f"retriever \"raising.retriever\" (evalkit-raising-plugins 0.1.0) raised {raised} in close(): "), warning
    assert warning.endswith("; the run is kept as it is"), warning


def test_a_retriever_whose_close_fails_after_the_run_is_stored_keeps_its_outcome(raising, project) -> None:
    """close() raising RuntimeError after the run was stored and accepted as the baseline ended
    `evalkit retrieval` in an internal error (exit 2, "nothing stored"), its outcome never shown."""
    result = raising("retrieval", "raising.questions", "raising.retriever", raised="Unprintable", place="close")
    assert result.code == 0 and "internal error" not in result.stderr, result.stderr[-2000:]
    assert "The measurement was recorded" in result.stdout  # the outcome is shown
    said = "retriever \"raising.retriever\" (evalkit-raising-plugins 0.1.0) raised Unprintable in close(): (its message could not be read"
    assert said in result.stdout + result.stderr


@pytest.mark.parametrize("raised", ["RuntimeError", "Skipped"])
@pytest.mark.parametrize(
    ("place", "grader", "named"),
    [
        ("generator_close", None, "generator \"raising.generator\" (evalkit-raising-plugins 0.1.0) raised {} in close()"),
        ("grader_close", "raising.grader", "grader \"raising.grader\" (evalkit-raising-plugins 0.1.0) raised {} in aclose()"),
    ],
    ids=["generator", "grader"],
)
def test_a_generator_or_grader_whose_close_fails_after_the_cases_are_stored_keeps_the_outcome(raising, project, place, grader, named, raised) -> None:
    """A generator's close() or a grader's aclose() raising once every case was answered and
    stored stopped the run with an error (exit 3, the run marked interrupted, no verdict), where a
    retriever's close failure only warns. It warns now too, naming the plugin and its distribution;
    the run is complete, its verdict given and the exit code is the verdict's."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.generator"\nmodel = "m"\n')
    given = ("--grader", grader) if grader else ()
    result = raising("run", "evalkit.smoke", "--provider", "x", *given, "--json", raised=raised, place=place)
    assert result.code == 0 and "error" not in result.stderr, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["answered"] == 7 and document["verdict"]["state"] == "baseline"
    (warning,) = document["warnings"]
    assert warning.startswith(named.format(raised) + ": ") and warning.endswith("; the run is kept as it is"), warning
    shown = raising("run", "evalkit.smoke", "--provider", "x", *given, raised=raised, place=place)
    assert shown.code == 0, shown.stderr[-2000:]
    assert f"warning: {named.format(raised)}: " in shown.stdout and "Regression check" in shown.stdout
    history = raising("history", "evalkit.smoke", "--json", raised=raised)
    assert [run["status"] for run in history.json()["runs"]] == ["complete", "complete"], history.stdout[-2000:]


def test_a_plugin_raising_what_except_exception_misses_where_no_call_carries_it_is_said_exit_3(raising, project) -> None:
    """Where no call carries it, a BaseException from a plugin stops the command: said (not a silent
    exit 3 as before, or an exception out of main()), exit 3; a run it stops is marked interrupted,
    never left "running"."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.generator"\nmodel = "m"\n')
    before = raising("run", "evalkit.smoke", "--provider", "x", raised="Skipped", place="concurrency")
    assert before.code == 3 and stored_runs(project) == 0, before.stderr[-2000:]
    assert "evalkit: error: a plugin raised Skipped: skipped by the plugin, which is no Exception" in before.stderr
    during = raising("run", "evalkit.smoke", "--grader", "raising.grader", raised="Skipped", place="kinds")
    assert during.code == 3, during.stderr[-2000:]
    # use_assertion_kinds() is a call that carries it now (test_a_plugin_call_outside_the_cases_…)
    assert "grader \"raising.grader\" (evalkit-raising-plugins 0.1.0) raised Skipped in use_assertion_kinds(): " in during.stderr
    history = raising("history", "evalkit.smoke", "--json", raised="Skipped")
    assert [run["status"] for run in history.json()["runs"]] == ["interrupted"], history.stdout[-2000:]


@pytest.mark.parametrize(
    ("place", "grader", "named"),
    [
        ("use_concurrency", None, "generator \"raising.generator\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in use_concurrency()"),
        ("kinds", "raising.grader", "grader \"raising.grader\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in use_assertion_kinds()"),
    ],
)
def test_a_plugin_call_outside_the_cases_that_raises_names_the_plugin_not_an_evalkit_bug(raising, project, place, grader, named) -> None:
    """A generator's use_concurrency() (or a grader's use_assertion_kinds()) raising a plain
    exception ended the run as "internal error (an evalkit bug)" with a traceback: it is the
    plugin's failure, named with its distribution; the run is marked interrupted and resumable."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.generator"\nmodel = "m"\n')
    given = ("--grader", grader) if grader else ()
    failed = raising("run", "evalkit.smoke", "--provider", "x", *given, "--run-id", "own-1", raised="RuntimeError", place=place)
    assert failed.code == 3, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        f"evalkit: error: {named}: the plugin's own failure",
        "evalkit: run own-1 was stored before this error: 0 cases committed before it are kept, the run is marked "
        f"interrupted; continue it with `evalkit run evalkit.smoke --provider x {' '.join(given)}{' ' if given else ''}--resume own-1`",
    ]
    history = raising("history", "evalkit.smoke", "--json", raised="RuntimeError")
    assert [run["status"] for run in history.json()["runs"]] == ["interrupted"], history.stdout[-2000:]


@pytest.mark.parametrize("place", ["judge_temperature", "judge_instance"])
def test_a_judges_property_that_raises_is_an_attribute_it_did_not_declare(raising, project, place) -> None:
    """A grader whose judge_temperature (read for the judge gate once the run was stored) or
    judge_instance (read for the run's prices and credential warnings) property raised ended the
    run as "internal error (an evalkit bug)" with a traceback: it is read as every optional
    attribute of a plugin is (components.declared), so the run completes; a judge whose temperature
    cannot be read matches no calibration record."""
    result = raising("run", "evalkit.smoke", "--grader", "raising.judge", "--json", raised="RuntimeError", place=place)
    assert result.code == 0 and "internal error" not in result.stderr, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["passed"] == 7
    planned = raising("plan", "evalkit.smoke", "--grader", "raising.judge", raised="RuntimeError", place=place)
    assert planned.code == 0 and "internal error" not in planned.stderr, planned.stderr[-2000:]


@pytest.mark.parametrize("method", ["bind_judge", "check_ready", "with_rubric_judge"])
def test_a_judges_call_before_the_run_that_raises_names_the_plugin_not_an_evalkit_bug(raising, project, method) -> None:
    """A grader's bind_judge(), check_ready() or with_rubric_judge() (a judge's calls before the
    run) raising a plain exception ended `evalkit run` as "internal error (an evalkit bug)" with a
    traceback: it names the grader and its distribution, exit 2, nothing stored; an error of
    evalkit's own kind it raises is said as it is."""
    place = {"bind_judge": "bind_judge", "check_ready": "judge_ready", "with_rubric_judge": "rubric_judge"}[method]
    (project / "rubric.yaml").write_text(
        "identifier: raising.rubric\nname: Rubric\nprompts:\n  - id: polite\n    prompt: Say x\n    reference: x\n"
        "    assertions:\n      - rubric: The answer is polite.\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["rubric.yaml"]\n')
    failed = raising("run", "raising.rubric", "--grader", "raising.judge", raised="RuntimeError", place=place)
    assert failed.code == 2, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        f"evalkit: error: grader \"raising.judge\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in {method}(): the plugin's own failure"
    ]
    assert stored_runs(project) == 0
    refused = raising("run", "raising.rubric", "--grader", "raising.judge", raised="ConfigError", place=place)
    assert refused.code == 2 and refused.stderr.splitlines() == ["evalkit: error: the plugin refuses its configuration: no credentials for it"]
    assert raising("run", "raising.rubric", "--grader", "raising.judge", raised="RuntimeError").code == 0


@pytest.mark.parametrize("method", ["bind_judge", "check_ready"])
def test_a_judges_method_that_raises_as_it_is_read_stops_the_run_naming_the_plugin(raising, project, method) -> None:
    """`evalkit run --grader NAME` asked whether the judge has bind_judge() and check_ready()
    with components.offers, which takes a method whose property or __getattr__ raises as it is
    read for one it does not offer: the judge was never bound nor asked whether it is ready, and
    the run went on (exit 0). The read is the plugin's failure in the call (components.plugin_method):
    the grader and its distribution are named, exit 2, nothing stored, no traceback."""
    failed = raising("run", "evalkit.smoke", "--grader", "raising.judge", raised="RuntimeError", place=f"{method} read")
    assert failed.code == 2, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        f"evalkit: error: grader \"raising.judge\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in {method}(): the plugin's own failure"
    ]
    assert stored_runs(project) == 0


def test_a_judges_aclose_that_raises_as_it_is_read_is_a_warning_once_the_run_is_stored(raising, project) -> None:
    """A judge's aclose raising as it is read (a property, a __getattr__), once `evalkit run`'s
    cases are stored: it is said in the one close wording (components.plugin_close_failed), the
    run kept as it is (complete, exit 0), never silently skipped nor an internal error."""
    result = raising("run", "evalkit.smoke", "--grader", "raising.judge", "--json", raised="RuntimeError", place="aclose read")
    assert result.code == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["passed"] == 7
    assert document["warnings"] == [
        "grader \"raising.judge\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in aclose(): the plugin's own failure; the run is kept as it is"
    ], document["warnings"]


def test_a_generators_check_ready_that_raises_as_it_is_read_is_its_failure_not_not_ready(raising, project) -> None:
    """check_generator_ready asked for the generator's check_ready with components.offers (a
    property or __getattr__ raising as it is read: no probe, the run went on, exit 0), then read it
    again inside the try that turns what the probe raises into "not ready" (one raising only then
    was said as the instance "is not ready", the plugin unnamed). It is read once, under the one rule for a
    plugin's call (components.plugin_method): the generator and its distribution named with the
    method, exit 2, nothing stored."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.generator"\nmodel = "m"\n')
    failed = raising("run", "evalkit.smoke", "--provider", "x", raised="RuntimeError", place="check_ready read")
    assert failed.code == 2, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        "evalkit: error: generator \"raising.generator\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in check_ready(): the plugin's own failure"
    ]
    assert stored_runs(project) == 0
    assert raising("run", "evalkit.smoke", "--provider", "x", raised="RuntimeError").code == 0


def test_an_async_generators_agenerate_is_read_once_to_know_it_is_async(raising, project) -> None:
    """BoundGenerator.is_async read agenerate twice (components.offers, then inspect): a property
    raising the second time it was read ended the run as "internal error (an evalkit bug)". It is
    read once (components.declared); a read that raises as a case is answered errs that case only."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.async_generator"\nmodel = "m"\n')
    result = raising("run", "evalkit.smoke", "--provider", "x", "--json", raised="RuntimeError", place="agenerate reread")
    assert result.code == 3 and "internal error" not in result.stderr, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["answered"] == 7, document
    assert [case["error"] for case in document["cases"] if case["error"]] == ["RuntimeError: the plugin's own failure"]


def test_a_retriever_that_fails_as_it_is_created_is_named_as_its_options_are(raising, project) -> None:
    """A retriever whose factory raised, or gave what has no retrieve(), was named unquoted
    (`retriever raising.retriever (…) raised RuntimeError when created`) where a wrong option names
    it quoted (`retriever "raising.retriever" (…) has a wrong value`): building a plugin from its
    table has one wording for it (PluginRecord.label), exit 2, nothing stored."""
    words = ("retrieval", "raising.questions", "raising.retriever")
    failed = raising(*words, raised="RuntimeError", place="retriever_created")
    assert failed.code == 2, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        'evalkit: error: retriever "raising.retriever" (evalkit-raising-plugins 0.1.0) raised RuntimeError when created: the plugin\'s own failure'
    ]
    unusable = raising(*words, raised="RuntimeError", place="retriever_unusable")
    assert unusable.code == 2 and unusable.stderr.splitlines() == [
        'evalkit: error: retriever "raising.retriever" (evalkit-raising-plugins 0.1.0): its factory returned \'NoRetrieve\', '
        "which has no retrieve(question, limit) method"
    ], unusable.stderr[-2000:]
    assert stored_runs(project) == 0


#: A third-party distribution shipping the graders whose judges evalkit's judge commands use
#: (``deterministic``: calibration of rubric items and pairwise judging; ``relevance``: hole
#: judging), installed in place of evalkit's own; each judge's call raises where
#: ``$EVALKIT_RAISE_IN`` names it.
JUDGING_PLUGINS = """
import os


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no text for you")


def raise_in(place):
    if os.environ.get("EVALKIT_RAISE_IN") == place:
        raise Unprintable() if os.environ.get("EVALKIT_RAISE") == "Unprintable" else RuntimeError("the plugin's own failure")


class Unequal:
    def __eq__(self, other):
        raise RuntimeError("no equality for you")

    __hash__ = object.__hash__

    def __str__(self):
        raise RuntimeError("no text for you")

    __repr__ = __str__


#: What the judge gives in place of a good value where ``$EVALKIT_GIVE_IN`` names it.
HOSTILE = {
    "int": lambda: 42, "none": lambda: None, "nan": lambda: float("nan"), "list": lambda: ["A"],
    "control": lambda: "judge\\x1b[2J\\nevalkit: ok", "huge": lambda: "j" * 1_000_000, "unequal": Unequal,
    "triple": lambda: ("A", "judge-model", "more"), "bool": lambda: True,
    "exception": lambda: RuntimeError("returned, not raised"), "interrupt": KeyboardInterrupt,
}


def given(place, value):
    if os.environ.get("EVALKIT_GIVE_IN") == place:
        return HOSTILE[os.environ["EVALKIT_GIVE"]]()
    return value


class Prompt:
    @property
    def version(self):
        return given("version", 1)


class Judge:
    def __init__(self, grader="rubric"):
        self.grader = grader

    def __getattribute__(self, name):  # raising as NAME is read (a property, a __getattr__), with "NAME read"
        raise_in(name + " read")
        return object.__getattribute__(self, name)

    @property
    def judge_instance(self):
        return given("judge_instance", "judge")

    @property
    def prompt(self):
        return given("prompt", Prompt())

    def bind_judge(self, config, under_test):
        raise_in("bind_judge")

    def check_ready(self):
        raise_in("check_ready")

    def judge_scale(self):
        raise_in("judge_scale")
        return given("judge_scale", (0, 1, 2, 3) if self.grader == "relevance" else ("fail", "pass"))

    def task(self, prompt, system):
        raise_in("task")
        return prompt

    def yardstick_for(self, model):
        raise_in("yardstick_for")
        return given("yardstick_for", "judging-yardstick")

    async def alabel(self, item):
        raise_in("alabel")
        return given("alabel", (given("label", item.label), given("model", "judge-model")))

    def aprefer(self, task, first, second):  # raising before its coroutine is made, with "aprefer"
        raise_in("aprefer")
        return self._prefer()

    async def _prefer(self):
        return given("aprefer", (given("verdict", "TIE"), given("model", "judge-model")))

    @property
    def agrade_document(self):  # a property, raising as it is read with "agrade_document property"
        raise_in("agrade_document property")
        return self._agrade_document

    async def _agrade_document(self, query, text):
        return given("agrade_document", (given("grade", 1), given("model", "judge-model")))

    @property
    def judge_on_scale(self):  # a property, raising as it is read with "judge_on_scale property"
        raise_in("judge_on_scale property")
        return lambda labels: None

    def aclose(self):  # a plain method: raising as it is called with "plain aclose"; a coroutine, or None where given
        raise_in("plain aclose")
        return None if os.environ.get("EVALKIT_GIVE_IN") == "aclose" else self._aclose()

    async def _aclose(self):
        raise_in("aclose")


class Grader:
    def __init__(self, **options):
        pass

    def __getattribute__(self, name):  # raising as NAME is read (a property, a __getattr__), with "NAME read"
        raise_in(name + " read")
        return object.__getattribute__(self, name)

    def grade(self, prompt, answer):
        raise RuntimeError("not a grader of runs")

    def calibration_judge(self, grader):
        raise_in("calibration_judge")
        return Judge(grader)

    def pairwise_judge(self):
        raise_in("pairwise_judge")
        return Judge()
"""


@pytest.fixture
def judging(cli, project, tmp_path):
    """``evalkit`` with evalkit-judging-plugins' ``deterministic`` and ``relevance`` graders in
    place of evalkit's own, their judges raising where ``place`` says; a judge instance configured."""
    from tests.support.distributions import write_distribution

    graders = {"deterministic": "judging_plugins:Grader", "relevance": "judging_plugins:Grader"}
    folder = write_distribution(tmp_path / "judging", "evalkit-judging-plugins", "0.1.0", {"evalkit.graders": graders},
                                {"judging_plugins.py": JUDGING_PLUGINS})  # fmt: skip
    (project / "labels.yaml").write_text(
        "kind: calibration\nidentifier: shop.labels\nname: Labels\ngrader: rubric\nlabels: [fail, pass]\nitems:\n"
        "  - {id: a1, prompt: How long?, answer: 30 days, criterion: Names the window., label: pass}\n"
        "  - {id: a2, prompt: How long?, answer: No idea, criterion: Names the window., label: fail}\n"
    )
    (project / "evalkit.toml").write_text(
        'judge = "judge"\n[sets]\npaths = ["labels.yaml"]\n\n'
        '[providers.judge]\nadapter = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )

    def run(*args: str, place: str = "", plugins: str = "", raised: str = "RuntimeError", give: tuple[str, str] = ("", "")):
        off = "evalkit-golden:deterministic,evalkit-golden:relevance"
        env = {"PYTHONPATH": os.pathsep.join(p for p in (str(folder), plugins) if p), "EVALKIT_DISABLE_PLUGINS": off,
               "EVALKIT_RAISE_IN": place, "EVALKIT_RAISE": raised, "EVALKIT_GIVE_IN": give[0], "EVALKIT_GIVE": give[1]}  # fmt: skip
        return cli(*args, env=env)

    return run


def said(method: str) -> list[str]:
    """The one line a judge command says when evalkit-judging-plugins' judge raises in ``method()``."""
    return [f"evalkit: error: grader \"{{}}\" (evalkit-judging-plugins 0.1.0) raised RuntimeError in {method}(): the plugin's own failure"]


@pytest.mark.parametrize("place", ["calibration_judge", "bind_judge", "judge_scale", "check_ready", "aclose"])
def test_a_judge_calibrations_judge_that_raises_names_its_grader_not_an_evalkit_bug(judging, project, place) -> None:
    """`evalkit judge calibrate` called the judge's plugin (calibration_judge(), bind_judge(),
    judge_scale(), check_ready(), aclose()) directly: a third-party grader raising there ended it
    as "internal error (an evalkit bug)" with a traceback. Each call is under the one rule
    (components.plugin_called): the grader and its distribution are named, exit 2, nothing stored."""
    failed = judging("judge", "calibrate", "--set", "shop.labels", place=place)
    assert failed.code == 2, failed.stderr[-2000:]
    assert [line.format("deterministic") for line in said(place)] == failed.stderr.splitlines()
    assert judging("judge", "calibrate", "--set", "shop.labels", "--json").code == 0


def test_a_calibration_whose_every_label_failed_unreadably_is_said(judging, project) -> None:
    """A judge whose every alabel() raised an exception whose message cannot be read ended
    `evalkit judge calibrate` as "internal error (an evalkit bug)" (str() of it raised): the
    calibration fails (exit 3), naming the failure's class."""
    failed = judging("judge", "calibrate", "--set", "shop.labels", place="alabel", raised="Unprintable")
    assert failed.code == 3, failed.stderr[-2000:]
    assert "the judge labelled none of the 2 items; the first failure: Unprintable: (its message could not be read" in failed.stderr


@pytest.mark.parametrize("place", ["pairwise_judge", "bind_judge", "check_ready", "task", "aclose"])
def test_a_pairwise_judge_that_raises_names_its_grader_not_an_evalkit_bug(judging, cli, project, place) -> None:
    """`evalkit compare BASE RUN --pairwise-judge NAME` called the pairwise judge's plugin directly:
    one raising ended it as "internal error (an evalkit bug)". It names the grader and its distribution."""
    ids = [cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()["run_id"] for _ in range(2)]
    failed = judging("compare", *ids, "--pairwise-judge", "judge", place=place)
    assert failed.code == 2, failed.stderr[-2000:]
    assert [line.format("deterministic") for line in said(place)] == failed.stderr.splitlines()
    assert judging("compare", *ids, "--pairwise-judge", "judge").code in (0, 1)


def test_a_pairwise_judge_raising_as_it_is_asked_fails_the_comparison_not_evalkit(judging, cli, project) -> None:
    """A pairwise judge whose aprefer() raised as it was called (before its coroutine was made)
    escaped the gathering of the judge's replies: "internal error (an evalkit bug)". It is a
    failed request of the judge, as a reply that raises is (exit 3, the judge named)."""
    ids = [cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()["run_id"] for _ in range(2)]
    failed = judging("compare", *ids, "--pairwise-judge", "judge", place="aprefer")
    assert failed.code == 3 and "internal error" not in failed.stderr, failed.stderr[-2000:]
    assert 'the pairwise judge "judge" failed 14 of 14 requests' in failed.stderr, failed.stderr[-2000:]
    # one whose message cannot be read is said all the same (str() of it raised: an internal error)
    unread = judging("compare", *ids, "--pairwise-judge", "judge", place="aprefer", raised="Unprintable")
    assert unread.code == 3 and "the first failure: Unprintable: (its message could not be read" in unread.stderr, unread.stderr[-2000:]


@pytest.mark.parametrize("place", ["calibration_judge", "bind_judge", "check_ready"])
def test_a_hole_judge_that_raises_before_the_run_names_its_grader_not_an_evalkit_bug(judging, plugin_dists, project, place) -> None:
    """`evalkit retrieval --judge-unjudged NAME` called the relevance judge's check_ready() (and
    binding) directly: one raising ended it as "internal error (an evalkit bug)". It names the
    grader and its distribution, exit 2, nothing stored."""
    plugins = plugin_dists("evalkit-raising-plugins")
    words = ("retrieval", "raising.questions", "raising.retriever", "--judge-unjudged", "judge")
    failed = judging(*words, place=place, plugins=plugins)
    assert failed.code == 2, failed.stderr[-2000:]
    assert [line.format("relevance") for line in said(place)] == failed.stderr.splitlines()
    assert stored_runs(project) == 0


def test_a_hole_judge_that_fails_to_close_after_the_run_is_stored_is_a_warning(judging, project) -> None:
    """The relevance judge's aclose() raising once a `retrieval --judge-unjudged` run was stored
    ended the command as "internal error (an evalkit bug)", the run's outcome unsaid: it is a
    warning in the one close wording (components.plugin_close_failed), the run kept as it is."""
    from tests.cli.test_retrieval_judged_holes import write_collection

    write_collection(project, "http://127.0.0.1:9/v1")
    words = ("retrieval", "beir.col", "--deployment", "prod", "--k", "3", "--judge-unjudged", "judge", "--json")
    result = judging(*words, place="aclose")
    assert result.code == 0, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["judged_holes"] is not None, document
    assert document["warnings"] == [
        "grader \"relevance\" (evalkit-judging-plugins 0.1.0) raised RuntimeError in aclose(): the plugin's own failure; the run is kept as it is"
    ]


def test_a_judges_plain_aclose_is_closed_under_the_rule_of_an_async_one(judging, cli, project) -> None:
    """A judge whose aclose() is a plain method: one raising as it was called escaped `evalkit
    judge calibrate` and `evalkit compare --pairwise-judge` as "internal error (an evalkit bug)";
    one returning None was awaited (`retrieval --judge-unjudged` warned "raised TypeError in
    aclose()" about a judge that closed fine). It is closed as an async one is
    (components.aclosed): raising, the grader is named (exit 2, nothing kept, as for an async
    aclose() that raises; a warning once a retrieval run is stored); returning None, all is well."""
    from tests.cli.test_retrieval_judged_holes import write_collection

    calibrate = ("judge", "calibrate", "--set", "shop.labels")
    failed = judging(*calibrate, place="plain aclose")
    assert failed.code == 2 and [line.format("deterministic") for line in said("aclose")] == failed.stderr.splitlines(), failed.stderr[-2000:]
    assert stored_calibrations(project) == 0
    assert judging(*calibrate, give=("aclose", "none")).code == 0
    ids = [cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()["run_id"] for _ in range(2)]
    failed = judging("compare", *ids, "--pairwise-judge", "judge", place="plain aclose")
    assert failed.code == 2 and [line.format("deterministic") for line in said("aclose")] == failed.stderr.splitlines(), failed.stderr[-2000:]
    assert judging("compare", *ids, "--pairwise-judge", "judge", give=("aclose", "none")).code in (0, 1)
    write_collection(project, "http://127.0.0.1:9/v1")
    words = ("retrieval", "beir.col", "--deployment", "prod", "--k", "3", "--judge-unjudged", "judge", "--json")
    closed = judging(*words, give=("aclose", "none"))
    assert closed.code == 0 and json.loads(closed.stdout)["warnings"] == [], closed.stdout[-2000:]
    warned = judging(*words, place="plain aclose")
    assert warned.code == 0 and json.loads(warned.stdout)["warnings"] == [
        "grader \"relevance\" (evalkit-judging-plugins 0.1.0) raised RuntimeError in aclose(): the plugin's own failure; the run is kept as it is"
    ], warned.stdout[-2000:]


def test_a_judges_optional_method_whose_property_raises_is_one_it_does_not_offer(judging, project) -> None:
    """The judge commands asked whether a judge offers judge_on_scale() (a calibration set on
    another scale) or agrade_document() (`retrieval --judge-unjudged`) with hasattr()/getattr():
    a property raising as it was read ended them as "internal error (an evalkit bug)". Each is
    read as every optional attribute of a plugin is (components.declared): one that raises is not
    offered, and the command says so as it does for a judge without it (exit 2, nothing stored)."""
    from tests.cli.test_retrieval_judged_holes import write_collection

    failed = judging("judge", "calibrate", "--set", "shop.labels", give=("judge_scale", "list"), place="judge_on_scale property")
    assert failed.code == 2 and failed.stderr.splitlines() == [
        "evalkit: error: calibration set \"shop.labels\" labels items ['fail', 'pass'], but the rubric judge answers ['A']: "
        "label the items on the judge's scale"
    ], failed.stderr[-2000:]
    write_collection(project, "http://127.0.0.1:9/v1")
    failed = judging("retrieval", "beir.col", "--deployment", "prod", "--k", "3", "--judge-unjudged", "judge", place="agrade_document property")
    assert failed.code == 2 and failed.stderr.splitlines() == [
        'evalkit: error: --judge-unjudged: the installed "relevance" grader cannot grade a document for a query'
    ], failed.stderr[-2000:]
    assert stored_runs(project) == 0 and stored_calibrations(project) == 0


@pytest.mark.parametrize("method", ["bind_judge", "check_ready", "task", "aclose", "pairwise_judge", "calibration_judge"])
def test_a_judges_method_that_raises_as_it_is_read_names_its_grader_not_an_evalkit_bug(judging, cli, project, method) -> None:
    """The judge commands read a judge's bind_judge, check_ready, task and aclose (and asked the
    grader for its judge with isinstance() against a Protocol, which reads the method) before the
    one rule for a plugin's call ran: a property or __getattr__ raising there ended `evalkit judge
    calibrate` and `evalkit compare --pairwise-judge` as "internal error (an evalkit bug)". Read
    within the call (components.plugin_method) or through components.offers, the grader and its
    distribution are named, exit 2, nothing stored; a grader whose pairwise_judge or
    calibration_judge raises as it is read offers none, and the command says so."""
    expected = {
        "pairwise_judge": ['evalkit: error: the installed "deterministic" grader has no pairwise judge'],
        "calibration_judge": ['evalkit: error: the "deterministic" grader has no judge to calibrate on "rubric" items'],
    }
    if method != "task" and method != "pairwise_judge":
        failed = judging("judge", "calibrate", "--set", "shop.labels", place=f"{method} read")
        assert failed.code == 2, failed.stderr[-2000:]
        assert expected.get(method, [line.format("deterministic") for line in said(method)]) == failed.stderr.splitlines()
        assert stored_calibrations(project) == 0
    if method != "calibration_judge":
        ids = [cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()["run_id"] for _ in range(2)]
        failed = judging("compare", *ids, "--pairwise-judge", "judge", place=f"{method} read")
        assert failed.code == 2, failed.stderr[-2000:]
        assert expected.get(method, [line.format("deterministic") for line in said(method)]) == failed.stderr.splitlines()


def test_which_protocol_a_plugin_offers_is_asked_without_letting_a_raising_property_through() -> None:
    """isinstance() against a runtime_checkable Protocol reads each member with hasattr(), which
    lets what a __getattr__ raises through (RuntimeError here), or says a method a property stands
    for is offered, which then raises as it is read: either ended the command that asked as an
    internal error. components.offers asks as isinstance does, each member read with
    components.declared: one that raises as it is read is not offered."""
    from evalkit import components
    from evalkit.judge_calibration import CalibratingGrader
    from evalkit.pairwise import PairwiseJudging

    class Raising:
        @property
        def pairwise_judge(self) -> object:
            raise RuntimeError("not set up")

    class Asking:
        def __getattr__(self, name: str) -> object:
            raise RuntimeError(f"no {name} for you")

    class Offering:
        def pairwise_judge(self) -> None: ...

        check_ready = None

    with pytest.raises(RuntimeError):
        isinstance(Asking(), PairwiseJudging)
    assert isinstance(Raising(), PairwiseJudging)  # found on the class, then its read raises
    for hostile in (Raising(), Asking()):
        assert not components.offers(hostile, PairwiseJudging) and not components.offers(hostile, CalibratingGrader)
    assert components.offers(Offering(), PairwiseJudging) and not components.offers(Offering(), CalibratingGrader)
    assert not components.offers(Offering(), components.ReadinessCheck)  # a method set to None, as isinstance says


def stored_calibrations(project: Path) -> int:
    """How many judge calibrations the project's SQLite store holds (0 when there is none)."""
    if not database(project).exists():
        return 0
    with sqlite3.connect(database(project)) as conn:
        if not conn.execute("select 1 from sqlite_master where name = 'evalkit_judge_calibration'").fetchone():
            return 0
        return conn.execute("select count(*) from evalkit_judge_calibration").fetchone()[0]


#: What evalkit-judging-plugins' judge gives where (``$EVALKIT_GIVE_IN``, ``$EVALKIT_GIVE``), and
#: what the judge commands then say after "grader NAME (evalkit-judging-plugins 0.1.0) gave ".
UNUSABLE = [
    (("judge_instance", "huge"), "a judge_instance evalkit cannot use: it is 1,000,000 characters long, more than the 1,000 allowed"),
    (("judge_instance", "control"), 'a judge_instance evalkit cannot use: "judge\\x1b[2J\\x0aevalkit: ok" contains control or invisible characters'),
    (("prompt", "int"), "a prompt.version evalkit cannot use: it must be a whole number from 1 to 2,147,483,647, got None"),
    (("version", "nan"), "a prompt.version evalkit cannot use: it must be a whole number from 1 to 2,147,483,647, got nan"),
    (("model", "unequal"), "a reply from {method}() evalkit cannot use: its model must be text or None, got (not shown: repr() raised RuntimeError)"),
    (("model", "control"), 'a reply from {method}() evalkit cannot use: its model "judge\\x1b[2J\\x0aevalkit: ok" contains control'),
    (("{method}", "triple"), "a reply from {method}() evalkit cannot use: it must be a (value, model) pair, got ('A', 'judge-model', 'more')"),
    (("{method}", "none"), "a reply from {method}() evalkit cannot use: it must be a (value, model) pair, got None"),
    # an exception object returned, not raised, is a reply (a failed request's was counted, a KeyboardInterrupt's raised)
    (("{method}", "exception"), "a reply from {method}() evalkit cannot use: it must be a (value, model) pair, got RuntimeError('returned, not raised')"),
    (("{method}", "interrupt"), "a reply from {method}() evalkit cannot use: it must be a (value, model) pair, got KeyboardInterrupt()"),
]


@pytest.mark.parametrize(("give", "gave"), UNUSABLE + [
    (("label", "unequal"), "a reply from alabel() evalkit cannot use: its value must be one of the set's labels ['fail', 'pass'], got (not shown"),
    (("label", "list"), "a reply from alabel() evalkit cannot use: its value must be one of the set's labels ['fail', 'pass'], got ['A']"),
    (("yardstick_for", "none"), "a yardstick from yardstick_for() evalkit cannot use: the yardstick must be a non-empty string of at most 1,000 characters, got None"),
    (("yardstick_for", "control"), 'a yardstick from yardstick_for() evalkit cannot use: the yardstick "judge\\x1b[2J\\x0aevalkit: ok" contains control'),
])  # fmt: skip
def test_a_judge_calibrations_judge_giving_what_evalkit_cannot_use_names_its_grader(judging, project, give, gave) -> None:
    """`evalkit judge calibrate` read what the judge gave as it came: a reply that was no (label,
    model) pair, a label that was no label, its judge_instance, prompt.version or yardstick_for()
    of the wrong type ended it as "internal error (an evalkit bug)" (a label whose __str__ raised,
    a prompt that was a number, None where the store keeps text), or stored it (a judge_instance or
    a model of a million characters or holding a terminal's escapes, a yardstick of 42). Each is
    held to the rule of a judge's values (evalkit.judge_replies): the grader and its distribution
    named with what it gave, exit 2, no calibration stored."""
    place = give[0].format(method="alabel")
    failed = judging("judge", "calibrate", "--set", "shop.labels", give=(place, give[1]))
    assert failed.code == 2, failed.stderr[-2000:]
    lines = failed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "evalkit: error: grader \"deterministic\" (evalkit-judging-plugins 0.1.0) gave " + gave.format(method="alabel")
    ), lines
    assert_shown_literally(failed.stdout, failed.stderr)
    assert stored_calibrations(project) == 0


def test_a_calibrations_judge_scale_evalkit_cannot_use_names_its_grader(judging, project) -> None:
    """`evalkit judge calibrate` read the judge's judge_scale() as it came: one that was no
    iterable (a number, None) ended it as "internal error (an evalkit bug)", and one of a million
    labels was printed whole in the refusal of a set labelled otherwise (megabytes on the
    terminal). The scale is read up to 1,000 labels, each a string or an integer (a calibration
    set's own rule), the grader and its distribution named otherwise (exit 2, nothing stored)."""
    calibrate = ("judge", "calibrate", "--set", "shop.labels")
    failed = judging(*calibrate, give=("judge_scale", "int"))
    assert failed.code == 2 and failed.stderr.splitlines() == [
        "evalkit: error: grader \"deterministic\" (evalkit-judging-plugins 0.1.0) raised TypeError in judge_scale(): 'int' object is not iterable"
    ], failed.stderr[-2000:]
    failed = judging(*calibrate, give=("judge_scale", "huge"))
    assert failed.code == 2 and len(failed.stderr) < 500, failed.stderr[-2000:]
    assert failed.stderr.startswith(
        "evalkit: error: grader \"deterministic\" (evalkit-judging-plugins 0.1.0) gave a judge_scale() evalkit cannot use: "
        "it must be 1 to 1,000 labels, each a string or an integer, got ('j', 'j',"
    ), failed.stderr[-2000:]
    assert stored_calibrations(project) == 0


@pytest.mark.parametrize(("give", "gave"), UNUSABLE + [
    (("verdict", "int"), "a reply from aprefer() evalkit cannot use: its value must be A, B, TIE or None (unusable twice), got 42"),
    (("verdict", "unequal"), "a reply from aprefer() evalkit cannot use: its value must be A, B, TIE or None (unusable twice), got (not shown"),
])  # fmt: skip
def test_a_pairwise_judge_giving_what_evalkit_cannot_use_names_its_grader(judging, cli, project, give, gave) -> None:
    """`evalkit compare BASE RUN --pairwise-judge NAME` read the judge's replies and identity as
    they came: a reply that was no (verdict, model) pair, a verdict whose __eq__ raised, a
    prompt.version that was no number ended it as "internal error (an evalkit bug)"; a verdict of
    42 was counted as a tie, and a judge_instance or a model holding a terminal's escapes printed.
    The grader and its distribution are named with what it gave, exit 2, nothing reported."""
    ids = [cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()["run_id"] for _ in range(2)]
    place = give[0].format(method="aprefer")
    failed = judging("compare", *ids, "--pairwise-judge", "judge", give=(place, give[1]))
    assert failed.code == 2, failed.stderr[-2000:]
    lines = failed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "evalkit: error: grader \"deterministic\" (evalkit-judging-plugins 0.1.0) gave " + gave.format(method="aprefer")
    ), lines
    assert failed.stdout == ""
    assert_shown_literally(failed.stderr)


@pytest.mark.parametrize(("give", "gave"), [
    (("agrade_document", "triple"), "a reply from agrade_document() evalkit cannot use: it must be a (value, model) pair, got ('A', 'judge-model', 'more')"),
    (("grade", "none"), "a reply from agrade_document() evalkit cannot use: its value must be one of its grades [0, 1, 2, 3], got None"),
    (("grade", "int"), "a reply from agrade_document() evalkit cannot use: its value must be one of its grades [0, 1, 2, 3], got 42"),
    (("model", "control"), 'a reply from agrade_document() evalkit cannot use: its model "judge\\x1b[2J\\x0aevalkit: ok" contains control'),
])  # fmt: skip
def test_a_hole_judges_unusable_reply_leaves_the_hole_and_is_a_warning(judging, project, give, gave) -> None:
    """`evalkit retrieval --judge-unjudged NAME` unpacked each reply of the relevance judge as it
    came: one that was no (grade, model) pair or a grade that was no number ended the run as
    "internal error (an evalkit bug)", the run left interrupted; a grade of 42 (on a 0-3 scale)
    filled a hole, and a model holding a terminal's escapes was stored in the run's metrics. Such a
    reply is a failed one: its hole stays a hole and is counted, and the run's warnings name the
    grader and what it gave; the stored, gated figures (people's labels alone) are untouched."""
    from tests.cli.test_retrieval_judged_holes import write_collection

    write_collection(project, "http://127.0.0.1:9/v1")
    words = ("retrieval", "beir.col", "--deployment", "prod", "--k", "3", "--judge-unjudged", "judge", "--json")
    result = judging(*words, give=give)
    assert result.code == 0, result.stderr[-2000:]
    document = json.loads(result.stdout)
    holes = document["judged_holes"]
    assert document["status"] == "complete" and (holes["judged"], holes["unjudged"]) == (0, 3), document
    assert holes["judge"]["models"] == [] and holes["judge"]["yardstick"] is None
    (warning,) = document["warnings"]
    assert warning.startswith("grader \"relevance\" (evalkit-judging-plugins 0.1.0) gave " + gave), warning
    assert warning.endswith("; 3 of its replies did, and their holes stay unjudged"), warning
    assert_shown_literally(result.stderr)


def test_a_hole_judges_identity_evalkit_cannot_use_is_refused_or_said(judging, project) -> None:
    """The relevance judge's prompt.version and yardstick_for() were read once the run's cases
    were stored: a prompt that was no prompt ended the run as "internal error (an evalkit bug)",
    left interrupted; a yardstick of 42 or holding a terminal's escapes was stored in the run's
    metrics. The prompt version, and the grades its replies are held to (its judge_scale()), are
    read as the judge is bound (exit 2, nothing stored); a yardstick that breaks a yardstick's
    rule is recorded as none, and a warning says so."""
    from tests.cli.test_retrieval_judged_holes import write_collection

    write_collection(project, "http://127.0.0.1:9/v1")
    words = ("retrieval", "beir.col", "--deployment", "prod", "--k", "3", "--judge-unjudged", "judge", "--json")
    refused = judging(*words, give=("prompt", "int"))
    assert refused.code == 2, refused.stderr[-2000:]
    assert refused.stderr.splitlines() == [
        "evalkit: error: grader \"relevance\" (evalkit-judging-plugins 0.1.0) gave a prompt.version evalkit cannot use: "
        "it must be a whole number from 1 to 2,147,483,647, got None"
    ]
    assert stored_runs(project) == 0
    refused = judging(*words, give=("judge_scale", "list"))
    assert refused.code == 2, refused.stderr[-2000:]
    assert refused.stderr.splitlines() == [
        "evalkit: error: grader \"relevance\" (evalkit-judging-plugins 0.1.0) gave a judge_scale() evalkit cannot use: "
        "its grades must be whole numbers from 0 to 2,147,483,647, got ('A',)"
    ]
    assert stored_runs(project) == 0
    result = judging(*words, give=("yardstick_for", "control"))
    assert result.code == 0, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["judged_holes"]["judge"]["yardstick"] is None and document["judged_holes"]["judged"] == 3
    (warning,) = document["warnings"]
    assert warning.startswith("grader \"relevance\" (evalkit-judging-plugins 0.1.0) gave a yardstick from yardstick_for() evalkit cannot use: "
                              'the yardstick "judge\\x1b[2J\\x0aevalkit: ok" contains control'), warning  # fmt: skip
    assert warning.endswith("; the judge's yardstick is recorded as none"), warning


#: A judge grader whose run_metrics() gives what ``$EVALKIT_GIVE`` names.
METRICS_PLUGIN = """
import os

from evalkit import Check, Grading


class Unwritable:
    def __repr__(self):
        raise RuntimeError("no text for you")


GIVEN = {"list": lambda: [1], "nan": lambda: {"judge": {"kappa": float("nan")}}, "object": lambda: {"judge": Unwritable()},
         "huge": lambda: {"judge": {"note": "j" * 2_000_000}}, "fine": lambda: {"judge": {"instance": "judge"}}}


class Grader:
    def __init__(self, **options):
        pass

    def grade(self, prompt, answer):
        return Grading(score=1.0, passed=True, checks=[Check("fine", True)], yardstick="metrics.judge")

    def run_metrics(self, cases):
        return GIVEN[os.environ["EVALKIT_GIVE"]]()
"""


@pytest.mark.parametrize(("give", "problem"), [
    ("list", "the value must be a mapping or None, got [1]"),
    ("nan", "the value holds NaN at judge.kappa, which is not a number JSON can carry"),
    ("object", "the value cannot be written as JSON: Object of type Unwritable is not JSON serializable"),
    ("huge", "the value is 2,000,023 characters of JSON, more than the 1,048,576 allowed"),
])  # fmt: skip
def test_a_judge_graders_run_metrics_evalkit_cannot_use_names_it(cli, project, tmp_path, give, problem) -> None:
    """A judge grader's run_metrics() (its identity and self-agreement, stored with the run) was
    stored as it came: an object no JSON writer takes ended `evalkit run` as "internal error (an
    evalkit bug)"; a list, a NaN or megabytes were stored whole. They are held to the rule of a
    mapping a plugin gives to be stored (evalkit.grading.mapping_problem, a grading's detail's):
    one that breaks it is the plugin's, named as one whose run_metrics() raises is (the run marked
    interrupted with its resume command, exit 3)."""
    from tests.support.distributions import write_distribution

    folder = write_distribution(tmp_path / "metrics", "evalkit-metrics-judge", "0.1.0", {"evalkit.graders": {"metrics.judge": "metrics_judge:Grader"}},
                                {"metrics_judge.py": METRICS_PLUGIN})  # fmt: skip
    env = {"PYTHONPATH": str(folder), "EVALKIT_GIVE": give}
    failed = cli("run", "evalkit.smoke", "--provider", "reference", "--grader", "metrics.judge", "--run-id", "own-1", env=env)
    assert failed.code == 3, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        f"evalkit: error: grader \"metrics.judge\" (evalkit-metrics-judge 0.1.0) gave run metrics from run_metrics() evalkit cannot use: {problem}",
        "evalkit: run own-1 was stored before this error: 7 cases committed before it are kept, the run is marked "
        "interrupted; continue it with `evalkit run evalkit.smoke --provider reference --grader metrics.judge --resume own-1`",
    ]
    fine = cli("run", "evalkit.smoke", "--provider", "reference", "--grader", "metrics.judge", "--json", env={**env, "EVALKIT_GIVE": "fine"})
    assert fine.code == 0, fine.stderr[-2000:]


def test_a_chat_generators_tools_refusal_that_raises_still_refuses_the_tools(raising, project) -> None:
    """A chat generator whose model takes no tools (supports_tools = False) and whose
    tools_refusal() raised ended `evalkit run` of a set offering tools as "internal error (an
    evalkit bug)": the tools are refused as they are for any such generator (exit 2, nothing
    stored), with the plain reason when it cannot say its own."""
    (project / "agent.yaml").write_text(
        "identifier: raising.agent\nname: Agent\nprompts:\n  - id: weather\n    prompt: Weather?\n    tools:\n"
        "      - {type: function, function: {name: get_weather, parameters: {type: object}}}\n"
        "    tool_results:\n      - {name: get_weather, result: {temp_c: 18}}\n    assertions: [{tool_called: get_weather}]\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["agent.yaml"]\n\n[providers.bot]\nadapter = "raising.toolless"\nmodel = "m"\n')
    refused = 'evalkit: error: set "raising.agent" offers tools (prompt "weather"), and the generator of "bot" ("raising.toolless") cannot send them: '
    failed = raising("run", "raising.agent", raised="RuntimeError", place="tools_refusal")
    assert failed.code == 2 and failed.stderr.splitlines() == [refused + "its model does not support tools"], failed.stderr[-2000:]
    said = raising("run", "raising.agent", raised="RuntimeError")
    assert said.code == 2 and said.stderr.splitlines() == [refused + "the raising model takes no tools"], said.stderr[-2000:]
    assert stored_runs(project) == 0


def test_an_ad_hoc_generators_redacted_options_that_raises_names_it(raising, project) -> None:
    """An ad-hoc run with --cache keys its answers by the generator's redacted_options(); one that
    raised ended the run as "internal error (an evalkit bug)": it names the generator and its
    distribution, exit 2, no run stored."""
    words = ("run", "evalkit.smoke", "--provider", "raising.generator", "--model", "m", "--cache", "--privacy", "full")
    failed = raising(*words, raised="RuntimeError", place="redacted_options")
    assert failed.code == 2, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        "evalkit: error: generator \"raising.generator\" (evalkit-raising-plugins 0.1.0) raised RuntimeError in redacted_options(): "
        "the plugin's own failure"
    ]
    assert stored_runs(project) == 0
    assert raising(*words, raised="RuntimeError").code == 0


def test_a_retrievers_thread_safe_property_that_raises_is_not_declared(raising, project) -> None:
    """A retriever whose thread_safe property raised ended `evalkit retrieval --concurrency 2` as
    "internal error (an evalkit bug)": a thread_safe it cannot say is not declared, so the
    concurrency is refused as for any retriever that does not declare itself thread-safe (exit 2)."""
    words = ("retrieval", "raising.questions", "raising.retriever", "--concurrency", "2")
    refused = raising(*words, raised="RuntimeError", place="thread_safe")
    assert refused.code == 2 and "internal error" not in refused.stderr, refused.stderr[-2000:]
    assert 'retriever "raising.retriever" does not declare itself thread-safe' in refused.stderr
    assert stored_runs(project) == 0
    assert raising(*words, raised="RuntimeError").code == 0  # declared thread-safe, it runs


@pytest.mark.parametrize(
    ("words", "place", "resume", "said"),
    [
        (("run", "evalkit.smoke", "--grader", "raising.grader", "--run-id", "late-1"), "kinds",
         "evalkit run evalkit.smoke --grader raising.grader --resume late-1", "the plugin refuses its configuration: no credentials for it"),
        # the command as it was given: pasted without its --database, it looked in another store
        (("retrieval", "raising.questions", "raising.retriever", "--run-id", "late-1", "--database", "sqlite:///.evalkit/results.db"),
         "secrets_late", "evalkit retrieval raising.questions raising.retriever --database sqlite:///.evalkit/results.db --resume late-1",
         # its credentials unknown, its answers could not be kept free of them: refused, naming it
         'retriever "raising.retriever": secret_values() raised ConfigError: the plugin refuses its configuration: '
         "no credentials for it; its credentials could not be kept out of what is stored"),
    ],
    ids=["prompts", "retrieval"],
)
def test_an_error_of_exit_2_after_the_lease_marks_the_run_interrupted_and_names_it(raising, project, words, place, resume, said) -> None:
    """A plugin's own ConfigError (exit 2's kind) raised once the run was stored and leased was
    raised as it was: the run stayed "running" (then "running (no live process)"), and the command
    said only that it was stored. It is marked interrupted at once, named with its resume command
    under the error, exit 3 (something was stored)."""
    failed = raising(*words, raised="ConfigError", place=place)
    assert failed.code == 3, failed.stderr[-2000:]
    assert failed.stderr.splitlines() == [
        f"evalkit: error: {said}",
        "evalkit: run late-1 was stored before this error: 0 cases committed before it are kept, the run is marked "
        f"interrupted; continue it with `{resume}`",
    ]
    history = raising("history", words[1], "--json", raised="ConfigError")
    assert [run["status"] for run in history.json()["runs"]] == ["interrupted"], history.stdout[-2000:]
    resumed = raising(*resume.split()[1:], raised="ConfigError", place="")
    assert resumed.code == 0, resumed.stderr[-2000:]


def test_a_set_made_of_str_subclasses_that_cannot_be_compared_is_plain_text(raising, project) -> None:
    """A set whose identifier or prompt ids were a ``str`` subclass whose ``==`` or ``str()``
    raises ended `list sets`, `validate` and `run` of every set in an internal error."""
    (project / "evalkit.toml").write_text('[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    listed = raising("list", "sets", raised="Skipped", place="touchy")
    assert listed.code == 0 and "raising.touchy" in listed.stdout and "evalkit.smoke" in listed.stdout, listed.stderr[-2000:]
    checked = raising("validate", "raising.touchy", raised="Skipped", place="touchy")
    assert checked.code == 0, checked.stderr[-2000:]
    ran = raising("run", "raising.touchy", "--json", raised="Skipped", place="touchy")
    assert ran.code == 0, ran.stderr[-2000:]
    assert [case["id"] for case in ran.json()["cases"]] == ["t1", "t2"]


def test_a_set_provider_shipping_a_set_of_another_kind_is_a_failed_provider_not_an_internal_error(raising, project) -> None:
    """A question set returned by golden_prompt_sets() (a provider registered in the wrong group)
    ended `list sets`, `validate` and `run` of any set in an internal error (AttributeError)."""
    listed = raising("list", "sets", raised="Skipped", place="wrong_kind")
    assert listed.code == 2 and "internal error" not in listed.stderr, listed.stderr[-2000:]
    assert "\"raising\" (evalkit-raising-plugins 0.1.0): golden_prompt_sets() returned GoldenQuestionSet(" in listed.stderr
    assert "which is no GoldenPromptSet" in listed.stderr and "evalkit.smoke" in listed.stdout
    checked = raising("validate", "raising.misplaced", raised="Skipped", place="wrong_kind")
    assert checked.code == 2 and "internal error" not in checked.stderr, checked.stderr[-2000:]
    ran = raising("run", "raising.misplaced", raised="Skipped", place="wrong_kind")
    assert ran.code == 2 and "internal error" not in ran.stderr and "which is no GoldenPromptSet" in ran.stderr, ran.stderr[-2000:]
    assert stored_runs(project) == 0


def test_a_plugin_changing_the_working_directory_does_not_move_evalkits_output_files(cli, project, plugin_dists, tmp_path) -> None:
    """A generator module that calls os.chdir() at import had `--report markdown:out.md` written
    into the folder it moved to; the store, resolved before, stayed where it was."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.wanderer"\nmodel = "m"\n')
    env = {"PYTHONPATH": plugin_dists("evalkit-raising-plugins"), "EVALKIT_CHDIR_TO": str(elsewhere)}
    result = cli("run", "evalkit.smoke", "--provider", "x", "--report", "markdown:reports/out.md", env=env)
    assert result.code == 0, result.stderr[-2000:]
    assert (project / "reports" / "out.md").is_file() and not list(elsewhere.iterdir())


def test_an_answer_made_of_a_str_subclass_that_cannot_be_compared_is_plain_text(raising, project) -> None:
    """A generator's text, model and finish reason of a ``str`` subclass whose ``==`` raises ended
    the run in an internal error when the case was stored (exit 2, the run left "running")."""
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "raising.touchy"\nmodel = "m"\n')
    result = raising("run", "evalkit.smoke", "--provider", "x", "--json", raised="Skipped")
    assert "internal error" not in result.stderr, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "complete" and document["identity"]["reported_model"] == "touchy-model"


def test_a_plugin_module_calling_sys_exit_at_import_is_a_plugin_that_failed_to_load(cli, project) -> None:
    (project / "evalkit.toml").write_text('[providers.x]\nadapter = "hostile.exits_at_import"\n')
    result = cli("run", "evalkit.smoke", "--provider", "x")
    assert result.code == 2, result.stderr
    assert "failed to load: SystemExit: 0" in result.stderr
    assert not (project / ".evalkit" / "results.db").exists()


@pytest.mark.parametrize(
    "command", [("show", "ID"), ("compare", "ID", "r1"), ("report", "ID"), ("baseline", "accept", "ID", "--reason", "ok")], ids=lambda c: c[0]
)
def test_a_run_id_that_is_not_utf8_is_no_run_not_a_crash(project, evalkit_cli, command) -> None:
    """Bytes that are not UTF-8 in argv reach evalkit as lone surrogates, which no database binds:
    `evalkit show $'\\xff'` was an internal error (UnicodeEncodeError)."""
    import os

    assert evalkit_cli("run", "evalkit.smoke").code == 0
    # The interpreter decodes argv with the file system's encoding: the bytes arrive as os.fsdecode gives them.
    done = evalkit_cli(*(os.fsdecode(b"\xff\xfebad") if a == "ID" else a for a in command))
    stderr = done.stderr_bytes.decode("utf-8", "replace")
    assert done.code == 2, stderr
    assert 'there is no run "\\udcff\\udcfebad"' in stderr and "internal error" not in stderr


@pytest.mark.parametrize("reporter", ["json", "html", "junit", "markdown"])
def test_a_report_file_holding_text_that_was_not_utf8_is_written_with_escapes(project, evalkit_cli, reporter) -> None:
    """A label given as bytes that are not UTF-8 is stored as it came (lone surrogates); writing a
    report file that showed it was an internal error (UnicodeEncodeError) — stdout took it."""
    import os

    # The interpreter decodes argv with the file system's encoding: the bytes arrive as os.fsdecode gives them.
    done = evalkit_cli("run", "evalkit.smoke", "--label", os.fsdecode(b"\xff\xfebad"), "--json")
    assert done.code == 0, done.stderr_bytes.decode(errors="replace")
    run_id = json.loads(done.stdout_bytes)["run_id"]
    out = project / f"report.{reporter}"
    result = evalkit_cli("report", run_id, "--format", reporter, "-o", str(out))
    assert result.code == 0 and "internal error" not in result.stderr, result.stderr
    text = out.read_text(encoding="utf-8")
    if reporter != "markdown":  # the markdown summary shows no label
        assert "\\udcff\\udcfebad" in text
    if reporter == "json":
        assert json.loads(text)["run"]["label"] == "\udcff\udcfebad"


def test_a_missing_set_lists_the_sets_here_and_a_stalled_provider_only_delays_the_error(cli, project) -> None:
    named = cli("run")
    assert named.code == 2 and "Missing argument 'SET'." in named.stderr
    assert named.stdout == ""  # the noisy provider's prints went to stderr, as on every command
    assert "\nsets here: hostile.markup, hostile.plain_string_assertion, " in named.stderr, named.stderr
    assert " more (`evalkit list sets` lists the installed sets)\n" in named.stderr  # eight are shown
    questions = cli("retrieval")
    assert questions.code == 2 and "sets here: hostile.questions" in questions.stderr and "evalkit.smoke" not in questions.stderr
    # a provider that never returns: the error still comes, with the pointer instead of the list
    started = time.monotonic()
    stalled = cli("history", env={"EVALKIT_HOSTILE_HANG_SETS": "1"}, timeout=60)
    assert stalled.code == 2 and stalled.stderr.rstrip().endswith("`evalkit list sets` lists the installed sets"), stalled.stderr
    assert time.monotonic() - started < 30
    shown = cli("show")
    assert shown.code == 2 and "run ids: `evalkit history SET` lists a set's stored runs" in shown.stderr


# --- issue 34: trust boundaries -------------------------------------------------------------------

SLASHED_KEY = "sk-hostile/KEY+0123456789abcdef"


def echoed_forms(secret: str) -> dict[str, str]:
    """The forms an endpoint may echo a key back in: JSON-escaped, percent-encoded, Basic auth."""
    import base64
    import re
    import urllib.parse

    return {
        "json slash": secret.replace("/", "\\/"),
        "json u002f": secret.replace("/", "\\u002f"),
        "json every character": "".join(f"\\u{ord(c):04X}" for c in secret),
        "percent upper": urllib.parse.quote(secret, safe=""),
        "percent lower": re.sub("%[0-9A-F]{2}", lambda hex_pair: hex_pair.group().lower(), urllib.parse.quote(secret, safe="")),
        "basic auth": base64.b64encode(f"svc:{secret}".encode()).decode(),
    }


def assert_no_form_anywhere(secret: str, project: Path, *texts: str) -> None:
    """Neither ``secret`` nor any echoed form of it in a printed text, a file or the store."""
    forms = [secret, *echoed_forms(secret).values()]
    files = [*database(project).parent.glob("results.db*"), *project.glob("report.*")]
    for form in forms:
        for text in texts:
            assert form not in text, form
        for path in files:
            assert form.encode() not in path.read_bytes(), (form, path.name)


@pytest.mark.parametrize("privacy", ["redacted", "full"])
def test_issue34_02_a_key_echoed_escaped_or_encoded_is_scrubbed_everywhere(cli, project, chat_server, privacy) -> None:
    forms = echoed_forms(SLASHED_KEY)
    # The endpoint echoes the key in every form in its answers, and percent-encoded in an error body.
    chat_server.responder = lambda body: "you sent " + " | ".join(forms.values())
    chat_server.fail_at(2, Fault.http_error(400, body=f"bad key {forms['percent lower']} / {forms['json u002f']}"))
    env = configure_openai(project, chat_server, base_url=chat_server.base_url, privacy=privacy)
    env["EVALKIT_TEST_KEY"] = SLASHED_KEY
    reports = ["--report", "junit:report.xml", "--report", "html:report.html", "--report", "markdown:report.md", "--report", "json:report.json"]
    table = cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", *reports, env=env)
    as_json = cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--json", env=env)
    assert table.code == 3, table.stdout + table.stderr  # the case that met the error
    assert "you sent ***" in as_json.stdout and "bad key ***" in table.stdout
    run_id = as_json.json()["run_id"]
    shown = cli("show", run_id)
    shown_json = cli("show", run_id, "--json")
    assert "***" in shown_json.stdout
    assert_no_form_anywhere(SLASHED_KEY, project, table.stdout, table.stderr, as_json.stdout, shown.stdout, shown_json.stdout)


def plant_hostile_config(folder: Path, server) -> Path:
    """``folder/evalkit.toml`` as someone else would plant it: their endpoint, and the CI's token."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "evalkit.toml"
    config.write_text(
        f'database = "sqlite:///{folder}/theirs.db"\n'
        '[providers.prod]\nadapter = "openai"\nmodel = "gpt-test"\n'
        f'base_url = "{server.base_url}"\napi_key_env = "GITHUB_TOKEN"\n'
    )
    (folder / "work").mkdir()
    return config


@pytest.mark.parametrize("planted", ["in a folder anyone can write (/tmp)", "owned by another user"])
def test_issue34_01_a_configuration_someone_else_wrote_is_refused_before_anything_is_sent(
    cli, tmp_path, chat_server, planted
) -> None:
    shared = tmp_path / "tmp"
    config = plant_hostile_config(shared, chat_server)
    if planted.startswith("owned"):
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user (uid 65534) needs root")
        os.chown(config, 65534, -1)
        reason = "is owned by"
    else:
        os.chmod(shared, 0o1777)
        reason = "is writable by others (mode 1777)"
    work = shared / "work"
    env = {"GITHUB_TOKEN": "ghp_" + "x" * 36}
    for command in (["run", "arith.basic", "--provider", "prod"], ["list", "sets"], ["validate"], ["history", "arith.basic"]):
        result = cli(*command, env=env, cwd=work)
        assert result.code == 2, (command, result.stdout, result.stderr)
        assert f"refusing the configuration file {config}" in result.stderr and reason in result.stderr
        assert f"--config {config}" in result.stderr and "EVALKIT_TRUSTED_CONFIG_DIRS" in result.stderr
        assert "Traceback" not in result.stderr
    assert chat_server.request_count == 0, "nothing was sent to the planted endpoint"
    assert not (shared / "theirs.db").exists() and not (work / ".evalkit").exists(), "no store was opened"
    trusted = cli("run", "arith.basic", "--provider", "prod", env={**env, "EVALKIT_TRUSTED_CONFIG_DIRS": str(shared)}, cwd=work)
    assert trusted.code in (0, 1, 3) and chat_server.request_count > 0, "trusted by name, it is used"


def test_issue34_01_naming_a_configuration_with_evalkit_config_trusts_it(cli, tmp_path, chat_server) -> None:
    shared = tmp_path / "tmp"
    config = plant_hostile_config(shared, chat_server)
    os.chmod(shared, 0o1777)
    result = cli("history", "arith.basic", env={"EVALKIT_CONFIG": str(config)}, cwd=shared / "work")
    assert "refusing" not in result.stderr and str(shared / "theirs.db") in result.stderr  # it looked in their store
    empty = cli("list", "sets", env={"EVALKIT_CONFIG": ""}, cwd=shared / "work")
    assert empty.code == 2 and "EVALKIT_CONFIG is set but empty" in empty.stderr


@pytest.mark.parametrize("pyproject", ["[tool]\nevalkit = 5\n", '[tool]\nevalkit = "yes"\n'])
def test_issue34_05_a_tool_evalkit_that_is_not_a_table_is_named_from_every_folder(cli, project, pyproject) -> None:
    (project / "pyproject.toml").write_text(pyproject)
    (project / "src" / "deep").mkdir(parents=True)
    for cwd, command in ((project, ["list", "sets"]), (project / "src" / "deep", ["run", "arith.basic"]), (project / "src", ["validate"])):
        result = cli(*command, cwd=cwd)
        assert result.code == 2, (command, result.stderr)
        assert f"{project / 'pyproject.toml'}: [tool] evalkit must be a table" in result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    named = cli("--config", str(project / "pyproject.toml"), "list", "sets", cwd=Path("/"))
    assert named.code == 2 and "[tool] evalkit must be a table" in named.stderr


FAKE_CREDENTIALS = "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n"
ONE_LINE_CREDENTIALS = "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n"


@pytest.mark.parametrize(
    ("planted", "paths"),
    [("a set file linking to ~/.aws/credentials", '["evals"]'), ("a pattern reaching into /proc", '["evals", "/proc/**/*.json"]')],
    ids=["link", "proc"],
)
def test_issue34_03_files_outside_the_project_are_refused_and_never_quoted(evalkit_cli, project, tmp_path, planted, paths) -> None:
    home = tmp_path / "home" / ".aws"
    home.mkdir(parents=True)
    (home / "credentials").write_text(ONE_LINE_CREDENTIALS)
    (project / "evals").mkdir()
    (project / "evals" / "good.yaml").write_text(
        "identifier: mine.good\nname: Good\nprompts:\n  - id: p\n    prompt: hi\n    assertions: [{contains: hi}]\n"
    )
    if planted.startswith("a set file"):
        (project / "evals" / "creds.yaml").symlink_to(home / "credentials")
        culprit, reason = "evals/creds.yaml", f"resolves to {home / 'credentials'}, outside the project"
    else:
        culprit, reason = "/proc/**/*.json", "is named in [sets] paths but its folder /proc lies outside the project"
    (project / "evalkit.toml").write_text(f"[sets]\npaths = {paths}\n")
    outputs = []
    for command in (["validate"], ["validate", "--json"], ["list", "sets"], ["run", "mine.good"], ["run", "mine.good", "--json"]):
        result = evalkit_cli(*command)
        assert result.code == 2, (command, result.stdout, result.stderr)
        printed = result.stdout + result.stderr
        assert culprit in printed and reason in printed and "[sets] allow_outside" in printed, (command, printed)
        outputs.append(printed)
    assert not any("wJalrXUtnFEMI" in text or "aws_secret" in text for text in outputs)
    assert stored_runs(project) == 0
    if planted.startswith("a set file"):  # allowed by name, it is read; its content is described, never quoted
        (project / "evalkit.toml").write_text(f'[sets]\npaths = {paths}\nallow_outside = ["{home}"]\n')
        allowed = evalkit_cli("validate")
        printed = allowed.stdout + allowed.stderr
        described = f"evals/creds.yaml:1:1: a string of {len(ONE_LINE_CREDENTIALS.strip())} characters is not of type 'object'"
        assert allowed.code == 2 and described in printed and "outside the project" not in printed
        assert "wJalrXUtnFEMI" not in printed


@pytest.mark.parametrize(
    ("config", "command", "option"),
    [
        ('[providers.app]\nadapter = "replay"\nmodel = "m"\npath = "evals/answers.jsonl"\n', ["run", "evalkit.smoke", "--provider", "app"], 'option "path" of [providers.app]'),
        ('[question_sets."trec.creds"]\nformat = "trec"\ntopics = "evals/answers.jsonl"\nqrels = "evals/answers.jsonl"\n', ["list", "questions"], 'option "topics" of [question_sets."trec.creds"]'),
    ],
    ids=["replay file", "collection topics"],
)
def test_issue34_03_a_plugins_file_linking_outside_the_project_is_refused_and_never_quoted(evalkit_cli, project, tmp_path, config, command, option) -> None:
    """The variant for plugin options: a collection's topics linked to ~/.aws/credentials were read and
    their first line quoted ("expected 'query-id<TAB>text', got 'aws_secret_access_key = …'")."""
    home = tmp_path / "home" / ".aws"
    home.mkdir(parents=True)
    (home / "credentials").write_text(ONE_LINE_CREDENTIALS)
    (project / "evals").mkdir()
    (project / "evals" / "answers.jsonl").symlink_to(home / "credentials")
    (project / "evalkit.toml").write_text(config)
    result = evalkit_cli(*command)
    printed = result.stdout + result.stderr
    assert result.code == 2, printed
    assert option in printed and f"resolves to {home / 'credentials'}, outside the project" in printed and "[sets] allow_outside" in printed
    assert "wJalrXUtnFEMI" not in printed and "aws_secret" not in printed
    assert stored_runs(project) == 0


def test_issue34_03_a_file_named_on_the_command_line_is_read_but_its_content_is_not_quoted(evalkit_cli, project, tmp_path) -> None:
    outside = tmp_path / "credentials.yaml"
    outside.write_text(FAKE_CREDENTIALS)
    one_line = tmp_path / "one-line.json"
    one_line.write_text(json.dumps(ONE_LINE_CREDENTIALS))
    result = evalkit_cli("validate", str(outside), str(one_line), "--json")
    assert result.code == 2
    reasons = [p["reason"] for p in result.json()["problems"]]
    assert reasons and "outside the project" not in " ".join(reasons)
    assert "a string of 63 characters is not of type 'object'" in reasons
    assert "wJalrXUtnFEMI" not in result.stdout + result.stderr and "AKIAIOSFODNN7" not in result.stdout + result.stderr


@pytest.mark.parametrize("line", ["~: y", "1: y"], ids=["null key", "number key"])
def test_issue34_05_a_yaml_key_that_is_not_text_names_the_file_and_key_not_a_traceback(evalkit_cli, project, line) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "odd.yaml").write_text(
        f"identifier: mine.odd\nname: Odd\nprompts:\n  - id: p\n    prompt: hi\n    assertions: [{{contains: hi}}]\n{line}\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals"]\n')
    key = line.split(":")[0]
    for command in (["validate"], ["list", "sets"], ["run", "mine.odd"], ["run", "mine.odd", "--json"]):
        result = evalkit_cli(*command)
        assert result.code == 2, (command, result.stdout, result.stderr)
        assert f"evals/odd.yaml:7:1: the key '{key}' is read as" in result.stdout + result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_issue34_12_a_link_loop_or_a_pipe_in_sets_paths_is_named_by_its_real_cause(evalkit_cli, project) -> None:
    (project / "loop.yaml").symlink_to("loop.yaml")
    (project / "a.yaml").symlink_to("b.yaml")
    (project / "b.yaml").symlink_to("a.yaml")
    (project / "gone.yaml").symlink_to("nowhere.yaml")
    os.mkfifo(project / "live.yaml")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["loop.yaml", "a.yaml", "gone.yaml", "live.yaml"]\n')
    result = evalkit_cli("validate", "--json")
    assert result.code == 2
    reasons = {p["file"]: p["reason"] for p in result.json()["problems"]}
    assert reasons["loop.yaml"] == reasons["a.yaml"] == "is named in [sets] paths but is a loop of symbolic links"
    assert reasons["gone.yaml"] == "is named in [sets] paths but is a symbolic link to nowhere.yaml, which does not exist"
    assert "does not exist" not in reasons.get("live.yaml", "")  # a pipe is read: nobody writes it, so it is empty


def test_issue34_08_a_report_or_export_path_that_is_a_pipe_nobody_reads_is_refused_not_waited_on(cli, project) -> None:
    os.mkfifo(project / "report.xml")
    os.mkfifo(project / "run.trec")
    summary = project / "summary"
    os.mkfifo(summary)
    report = cli("run", "evalkit.smoke", "--report", "junit:report.xml", timeout=60)
    assert report.code == 0 and "cannot write report.xml: no reader on the pipe" in report.stderr, report.stderr
    step = cli("run", "evalkit.smoke", "--report", "markdown", env={"GITHUB_STEP_SUMMARY": str(summary)}, timeout=60)
    assert step.code == 0 and f"cannot write {summary}: no reader on the pipe" in step.stderr, step.stderr
    write_collection(project)  # hostile.questions' ids hold whitespace: refused before any pipe is opened
    export = cli("retrieval", "mine.col", "--deployment", "prod", "--export-run", "run.trec", timeout=60)
    assert "cannot write run.trec: no reader on the pipe" in export.stderr, export.stderr


def test_issue34_06_an_export_through_a_link_that_fails_midway_leaves_the_target_whole(cli, project, tmp_path) -> None:
    target = tmp_path / "kept.trec"
    target.write_text("the previous export\n")
    (project / "run.trec").symlink_to(target)
    # a question id holding whitespace cannot be written to a TREC file: the writer fails midway
    result = cli("retrieval", "hostile.questions", "hostile.retriever", "--export-run", "run.trec")
    assert "contains whitespace" in result.stderr, result.stderr
    assert target.read_text() == "the previous export\n" and (project / "run.trec").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def write_collection(project: Path, *, judged: str = "d1") -> None:
    """A two-question BEIR collection ``mine.col`` (deployment ``prod``, ``evalkit.lexical`` over
    its corpus); question q1's judged document is ``judged`` (a corpus id too)."""
    folder = project / "col"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": judged, "title": "alpha", "text": "alpha beta"}, {"_id": "d2", "title": "gamma", "text": "gamma delta"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n{"_id": "q2", "text": "gamma"}\n')
    (folder / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\t{judged}\t1\nq2\td2\t1\n")
    (project / "evalkit.toml").write_text(
        '[question_sets."mine.col"]\npath = "col"\nsplit = "test"\n\n[deployments.prod]\nretriever = "evalkit.lexical"\n\n'
        '[deployments.prod.retrievers."evalkit.lexical"]\ncorpus = "col"\n'
    )


@pytest.mark.parametrize("option", ["--export-run", "--export-qrels"])
def test_issue34_06_an_id_an_export_cannot_hold_is_refused_before_anything_is_asked(cli, project, option) -> None:
    result = cli("retrieval", "hostile.questions", "hostile.retriever", option, "out.trec")
    assert result.code == 2, result.stderr
    assert f"{option}: question id" in result.stderr and "nothing was asked or stored" in result.stderr
    assert stored_runs(project) == 0 and not (project / "out.trec").exists()


def test_issue34_06_a_judged_document_id_holding_whitespace_refuses_the_qrels_before_the_run(cli, project, tmp_path) -> None:
    write_collection(project, judged="d 1")
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    refused = cli("retrieval", "mine.col", "--deployment", "prod", "--export-qrels", "qrels.trec", env=env)
    assert refused.code == 2 and "--export-qrels: judged document id 'd 1' cannot be written" in refused.stderr, refused.stderr
    assert stored_runs(project) == 0
    # the run file needs only the retriever's ids: known once it has answered, so the run is stored
    # and the export that cannot be written is an error after it (exit 3), never "nothing stored"
    late = cli("retrieval", "mine.col", "--deployment", "prod", "--export-run", "run.trec", env=env)
    assert late.code == 3, late.stderr
    assert "document id 'd 1'" in late.stderr and "is stored, the export is not written" in late.stderr
    assert stored_runs(project) == 1 and not (project / "run.trec").exists()
    assert "Retrieval evaluation" in late.stdout  # the stored run's outcome is still shown


# --- issue 34, item 10: environment faults exit 3 -----------------------------------------------


@needs_devices
def test_issue34_10_an_export_the_disk_cannot_take_exits_3_with_the_run_stored(cli, project, tmp_path) -> None:
    write_collection(project)
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    for option in ("--export-qrels", "--export-run"):
        result = cli("retrieval", "mine.col", "--deployment", "prod", option, "/dev/full", env=env)
        assert result.code == 3, result.stderr
        assert "cannot write /dev/full: No space left on device" in result.stderr and "is stored" in result.stderr
    assert stored_runs(project) == 2


def test_issue34_10_a_write_lock_held_when_a_run_starts_exits_3(cli, project) -> None:
    assert cli("run", "evalkit.smoke").code == 0
    holder = sqlite3.connect(database(project), isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, held
        for command in (("run", "evalkit.smoke"), ("retrieval", "hostile.questions", "hostile.retriever")):
            result = cli(*command, env={"EVALKIT_BUSY_TIMEOUT": "1"})
            assert result.code == 3, (command, result.stderr)
            assert "database is locked after 1 s" in result.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert stored_runs(project) == 1


@pytest.mark.parametrize(("column", "value"), [("heartbeat_at", "'abc'"), ("owner_pid", "'pid'"), ("shard_count", "'two'")])
def test_issue34_05_a_lease_row_holding_no_number_is_named_exit_3_not_a_traceback(cli, project, column, value) -> None:
    assert cli("run", "evalkit.smoke", "--run-id", "leased").code == 0
    with sqlite3.connect(database(project)) as conn:
        conn.execute("update evalkit_run set status = 'running'")  # a shard on another host is answering it
        conn.execute("update evalkit_run_lease set owner_host = 'elsewhere', owner_pid = 5, owner_token = 't', shard_count = 1, done_at = null")
        conn.execute(f"update evalkit_run_lease set {column} = {value}")
    shard = ("run", "evalkit.smoke", "--run-id", "leased", "--shard", "1/1", "--database", f"sqlite:///{database(project)}")
    for command in (("run", "evalkit.smoke", "--resume", "leased"), shard):  # a shard names its store (issue 34, item 14)
        result = cli(*command)
        assert result.code == 3, (command, result.stderr)
        assert f"lease row 1 of run 'leased' (part '*') in the store has {column} " in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


_TWICE = """
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet

def _set(name):
    return GoldenPromptSet(identifier="twice.set", name=name, prompts=[GoldenPrompt(id="p", prompt="hi", assertions=[Assertion.contains("hi")], reference="hi")])

class One:
    def golden_prompt_sets(self):
        return [_set("one")]

class Two:
    def golden_prompt_sets(self):
        return [_set("two")]

class Doubled:
    def golden_prompt_sets(self):
        return [_set("first"), _set("second")]
"""


@pytest.mark.parametrize(
    ("providers", "clash"),
    [
        ({"one": "twice_mod:One", "two": "twice_mod:Two"}, "is shipped by more than one provider of distribution evalkit-twice 1.0: \"one\" and \"two\""),
        ({"doubled": "twice_mod:Doubled"}, "is shipped 2 times by provider \"doubled\" (evalkit-twice 1.0)"),
    ],
    ids=["two providers", "one provider twice"],
)
def test_issue34_07_a_clash_within_one_distribution_names_it_once(evalkit_cli, project, tmp_path, providers, clash) -> None:
    from tests.support.distributions import write_distribution

    folder = write_distribution(tmp_path / "dists", "evalkit-twice", "1.0", {"evalkit.golden_sets": providers}, {"twice_mod.py": _TWICE})
    env = {"PYTHONPATH": str(folder)}
    for command in (("list", "sets"), ("run", "twice.set"), ("validate",)):
        result = evalkit_cli(*command, env=env)
        assert result.code == 2, (command, result.stderr)
        assert clash in result.stdout + result.stderr, (command, result.stdout, result.stderr)
        assert (result.stdout + result.stderr).count("evalkit-twice") == 1, (command, result.stdout, result.stderr)
    if "two" in providers:  # switching one provider off (item 7's first half) ends the clash
        assert evalkit_cli("run", "twice.set", env={**env, "EVALKIT_DISABLE_PLUGINS": "two"}).code == 0


# --- issue 34, item 4: plugins that keep the process alive ----------------------------------------
# Real processes (evalkit_process): how the process ends is what is under test, and only the console
# script ends it whatever a plugin left running (an in-process call never does).


@pytest.fixture
def unruly(plugin_dists) -> str:
    """PYTHONPATH with the unruly hook plugin installed (it misbehaves as $UNRULY says)."""
    return plugin_dists("evalkit-unruly-hooks")


@pytest.mark.parametrize("ways", ["thread", "atexit", "thread,atexit"])
def test_issue34_04_what_a_plugin_leaves_running_does_not_keep_a_finished_run_alive(project, evalkit_process, unruly, ways) -> None:
    result = evalkit_process("run", "evalkit.smoke", env={"PYTHONPATH": unruly, "UNRULY": ways}, timeout=90)
    assert result.code == 0, result.stderr
    assert "All 7 cases passed" in result.stdout and stored_runs(project) == 1
    if "thread" in ways:
        assert "evalkit: note: a plugin left 1 thread running ('unruly-forever'); the process ends without waiting" in result.stderr


def test_issue34_04_a_plugins_own_sigalrm_handler_or_timer_does_not_switch_off_hook_timeout(project, evalkit_process, unruly) -> None:
    (project / "evalkit.toml").write_text("hook_timeout = 1\n")
    result = evalkit_process("run", "evalkit.smoke", env={"PYTHONPATH": unruly, "UNRULY": "alarm"}, timeout=90)
    assert result.code == 0, result.stderr
    said = result.stdout + result.stderr
    assert 'hook plugin "evalkit-unruly-hooks:unruly" did not return from evalkit_case_graded within 1 s (hook_timeout)' in said, said


def _run_with_grader(project: Path, cli, kind: str, source: str, *, grade_timeout: int | None = None):  # noqa: ANN001, ANN202
    """``evalkit run evalkit.smoke --grader KIND.grader --concurrency 1``, the grader ``source``
    installed as a distribution of its own; the result and the seconds it took."""
    from tests.support.distributions import write_distribution

    if grade_timeout is not None:
        (project / "evalkit.toml").write_text(f"grade_timeout = {grade_timeout}\n")
    site = write_distribution(
        project / "site", f"{kind}-grader", "1.0", {"evalkit.graders": {f"{kind}.grader": f"{kind}_cli:Grader"}},
        {f"{kind}_cli.py": source},
    )  # fmt: skip
    started = time.monotonic()
    result = cli("run", "evalkit.smoke", "--grader", f"{kind}.grader", "--concurrency", "1", env={"PYTHONPATH": str(site)})
    return result, time.monotonic() - started


_ALARMIST_GRADER = """
import signal, time
from evalkit import Grading

class PluginAlarm(Exception):
    pass

def rang(signum, frame):
    raise PluginAlarm("the plugin's own alarm")

class Grader:
    yardstick = "alarmist:v1"

    def __init__(self):  # made outside evalkit's time limits
        signal.signal(signal.SIGALRM, rang)
        signal.setitimer(signal.ITIMER_REAL, 0.2)

    def grade(self, prompt, answer):
        time.sleep(0.1)
        return Grading(1.0, True, yardstick=self.yardstick)
"""


def test_a_plugins_own_sigalrm_handler_set_outside_evalkits_limits_is_not_the_hosts_nor_an_evalkit_bug(project, cli) -> None:
    """A grader that installs its own SIGALRM handler and timer as it is made (outside any time
    limit of evalkit's) had it wrapped as the host program's: its exception stopped the run as
    "internal error (an evalkit bug)", with a note blaming "the host's own SIGALRM handler", exit 3.
    A plugin call's SIGALRM handler and timer are not applied during a run: the run completes."""
    result, _ = _run_with_grader(project, cli, "alarmist", _ALARMIST_GRADER)
    assert result.code == 0, result.stderr
    assert "PluginAlarm" not in result.stderr and "host's own" not in result.stderr, result.stderr
    assert "All 7 cases passed" in result.stdout and stored_runs(project) == 1


_MASKING_GRADER = """
import signal, time
from evalkit import Grading

class Grader:
    yardstick = "masking:v1"

    def grade(self, prompt, answer):
        if prompt.id == "two-plus-two":  # blocks the alarm, then waits far past grade_timeout
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(20)
        return Grading(1.0, True, yardstick=self.yardstick)
"""


def test_a_grader_that_blocks_sigalrm_is_still_interrupted_at_grade_timeout(project, cli) -> None:
    """A grader that blocks SIGALRM in the main thread (``signal.pthread_sigmask``) and then waits
    was not interrupted: the ring went to another thread, the grader's ``sleep`` ran to its end (an
    hour, for ``sleep(3600)``), and SIGALRM stayed blocked for the rest of the process. While
    evalkit's limits hold SIGALRM, the mask a plugin asks for keeps it out."""
    import _signal

    try:
        result, took = _run_with_grader(project, cli, "masking", _MASKING_GRADER, grade_timeout=1)
    finally:
        _signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})  # what the old code left the test process
    assert took < 15, result.stderr
    said = result.stdout + result.stderr
    assert "no grading within 1 s (grade_timeout); the grader was interrupted" in said, said
    assert stored_runs(project) == 1


_RESTARTING_GRADER = """
import signal, socket, threading
from evalkit import Grading

class Grader:
    yardstick = "restarting:v1"

    def grade(self, prompt, answer):
        if prompt.id == "two-plus-two":  # the alarm restarts a blocking read, then a read answered in 20 s
            signal.siginterrupt(signal.SIGALRM, False)
            ours, theirs = socket.socketpair()

            def answer():
                try:
                    theirs.send(b"x")
                except OSError:  # the grading was interrupted long ago, its socket closed
                    pass

            answer_late = threading.Timer(20, answer)
            answer_late.daemon = True
            answer_late.start()
            ours.recv(1)
        return Grading(1.0, True, yardstick=self.yardstick)
"""


def test_a_grader_that_makes_sigalrm_restart_blocking_calls_is_still_interrupted_at_grade_timeout(project, cli) -> None:
    """``signal.siginterrupt(SIGALRM, False)`` makes a blocking read restart when the alarm rings,
    so a grader waiting on a socket that never answers was not interrupted: the run hung for ever
    (here, until the socket is answered 20 s later). While evalkit's limits hold SIGALRM, it is not
    applied."""
    result, took = _run_with_grader(project, cli, "restarting", _RESTARTING_GRADER, grade_timeout=1)
    assert took < 12, result.stderr
    said = result.stdout + result.stderr
    assert "no grading within 1 s (grade_timeout); the grader was interrupted" in said, said


_OFFLOADING_GRADER = """
import asyncio, time
from evalkit import Grading

class Grader:
    yardstick = "offloading:v1"

    async def agrade(self, prompt, answer):
        if prompt.id == "two-plus-two":  # a blocking call off the loop, far past grade_timeout
            await asyncio.to_thread(time.sleep, 20)
        return Grading(1.0, True, yardstick=self.yardstick)
"""


def test_an_async_grader_whose_thread_outlives_grade_timeout_does_not_hold_the_run(project, cli) -> None:
    """An async grader that waits on a thread (``asyncio.to_thread``, ``run_in_executor(None, …)``)
    was cancelled at grade_timeout, but closing the run's event loop waited for the loop's default
    executor, so the run ended only when the thread's call did (an hour, for ``sleep(3600)``), and
    its thread, not a daemon, held a library caller's process at exit. The loop's default executor
    is evalkit's daemon pool, not waited for (``evalkit.event_loops``)."""
    result, took = _run_with_grader(project, cli, "offloading", _OFFLOADING_GRADER, grade_timeout=1)
    assert took < 12, result.stderr
    said = result.stdout + result.stderr
    assert "no grading within 1 s (grade_timeout); the grader was cancelled" in said, said
    assert stored_runs(project) == 1


_HOARDING_GRADER = """
import asyncio, time
from evalkit import Grading

class Grader:
    yardstick = "hoarding:v1"

    async def agrade(self, prompt, answer):
        if prompt.id != "echo-token":  # six cases: a call off the loop that outlives grade_timeout
            await asyncio.to_thread(time.sleep, 60)
        else:  # the last case: one that returns at once
            await asyncio.to_thread(time.sleep, 0)
        return Grading(1.0, True, yardstick=self.yardstick)
"""


def test_an_async_graders_threads_that_outlive_grade_timeout_do_not_starve_the_later_cases(project, cli, monkeypatch) -> None:
    """Each call of an async grader's ``asyncio.to_thread`` cancelled at grade_timeout kept one of
    the loop's pool threads (``min(32, cpus + 4)``, five here) busy: once all were, every later
    call waited in the queue, and a grading that returns at once failed "no grading within 1 s" —
    six stuck cases cost the run all the rest. A call whose awaiting coroutine is cancelled while it
    runs is abandoned and its thread replaced, as a synchronous generator's is."""
    import evalkit.event_loops

    from tests.support.distributions import write_distribution

    monkeypatch.setattr(evalkit.event_loops.os, "cpu_count", lambda: 1)
    (project / "evalkit.toml").write_text("grade_timeout = 1\n")
    site = write_distribution(
        project / "site", "hoarding-grader", "1.0", {"evalkit.graders": {"hoarding.grader": "hoarding_cli:Grader"}},
        {"hoarding_cli.py": _HOARDING_GRADER},
    )  # fmt: skip
    result = cli("run", "evalkit.smoke", "--grader", "hoarding.grader", "--concurrency", "1", "--json", env={"PYTHONPATH": str(site)})
    cases = {case["id"]: case for case in json.loads(result.stdout)["cases"]}
    assert len(cases) == 7, result.stderr
    assert cases.pop("echo-token")["passed"] is True, result.stdout
    cancelled = "no grading within 1 s (grade_timeout); the grader was cancelled"
    assert all(case["checks"][0]["error"] == cancelled for case in cases.values()), result.stdout


def _wait_for_lines(path: Path, count: int, process) -> None:  # noqa: ANN001
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run did not reach {count} marks: {process.communicate(timeout=5)}")


@pytest.mark.parametrize("ways", ["sigterm,slow", "swallow"], ids=["own SIGTERM handler", "swallows BaseException"])
def test_issue34_04_sigterm_ends_the_process_whatever_a_plugin_does_saying_how_to_resume(project, evalkit_process, unruly, ways) -> None:
    marks = project / "marks.txt"
    (project / "ci.toml").write_text("hook_timeout = 30\n")
    store = f"sqlite:///{project / 'elsewhere.db'}"
    env = {"PYTHONPATH": unruly, "UNRULY": ways, "UNRULY_STARTED": str(marks)}
    process = evalkit_process.start("run", "evalkit.smoke", "--concurrency", "1", "--config", "ci.toml", "--database", store, env=env)
    try:
        _wait_for_lines(marks, 3, process)  # started, and two cases graded
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 3, out + err
    if ways == "swallow":
        assert "a plugin kept the command from stopping" in err, err
    found = re.search(r"continue it with `([^`]*)`", err)
    assert found, err
    resume = shlex.split(found.group(1))
    assert resume[:3] == ["evalkit", "run", "evalkit.smoke"] and "--resume" in resume
    assert resume[resume.index("--config") + 1] == "ci.toml" and resume[resume.index("--database") + 1] == store
    # pasted as printed, it resumes the run in the same store
    resumed = evalkit_process(*resume[1:], "--json", env={"PYTHONPATH": unruly}, timeout=90)
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete" and resumed.json()["run_id"] == resume[-1]


@pytest.mark.parametrize(
    ("ways", "second"),
    [("sigterm,slow", False), ("swallow", True), ("swallow", False)],
    ids=["orderly end", "a second SIGTERM", "the grace period"],
)
def test_issue34_04_a_forced_end_with_json_ends_stdout_with_one_error_object(project, evalkit_process, unruly, ways, second) -> None:
    """With --json a CI script parses standard output: the first SIGTERM's orderly end wrote the
    error object, the forced end (a second SIGTERM, a plugin that swallowed the first) wrote none."""
    marks = project / "marks.txt"
    (project / "evalkit.toml").write_text("hook_timeout = 30\n")
    env = {"PYTHONPATH": unruly, "UNRULY": ways, "UNRULY_STARTED": str(marks)}
    process = evalkit_process.start("run", "evalkit.smoke", "--concurrency", "1", "--run-id", "forced-1", "--json", env=env)
    try:
        _wait_for_lines(marks, 3, process)  # started, and two cases graded
        process.send_signal(signal.SIGTERM)
        if second:
            time.sleep(0.5)
            process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 3, out + err
    document = json.loads(out)  # one JSON object, nothing else
    assert document["exit_code"] == 3 and document["runs_kept"] == ["forced-1"], document
    assert document["error"].startswith("interrupted") and "continue it with `evalkit run evalkit.smoke" in document["error"], document
    if ways == "swallow":
        assert document["error"].startswith("interrupted: a second SIGTERM; " if second else "interrupted: SIGTERM 5 s ago"), document


def test_issue34_04_a_second_sigterm_after_the_orderly_end_wrote_its_error_object_writes_no_other(
    project, evalkit_process, unruly
) -> None:
    """The orderly end wrote the error object, then an exit handler that never returns held the
    process; the second SIGTERM that ends it adds no second object: standard output stays one."""
    marks, out = project / "marks.txt", project / "out.json"
    (project / "evalkit.toml").write_text("hook_timeout = 30\n")
    env = {"PYTHONPATH": unruly, "UNRULY": "atexit,slow", "UNRULY_STARTED": str(marks)}
    with out.open("w") as stdout:
        process = evalkit_process.start("run", "evalkit.smoke", "--concurrency", "1", "--run-id", "forced-2", "--json", env=env, stdout=stdout)
    try:
        _wait_for_lines(marks, 3, process)
        process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 60
        while not out.read_text().endswith("\n") and time.monotonic() < deadline:  # the orderly end wrote its object
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 3, err
    assert "interrupted: a second SIGTERM" in err, err
    document = json.loads(out.read_text())  # one JSON object, nothing else
    assert document["exit_code"] == 3 and document["error"].startswith("interrupted: run forced-2 keeps"), document


@pytest.mark.parametrize("value", ["", "   "], ids=["empty", "blank"])
@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke")], ids=lambda c: c[0])
def test_issue34_14_an_empty_database_url_is_refused_not_read_as_unset(cli, project, value, command) -> None:
    # a CI secret a fork's pull request cannot read arrives as an empty variable
    result = cli(*command, env={"EVALKIT_DATABASE_URL": value})
    assert result.code == 2 and "EVALKIT_DATABASE_URL is set but empty" in result.stderr, result.stderr
    assert stored_runs(project) == 0 and not database(project).exists()
    # so is an empty --database or --config: `--database "$SECRET"` with that secret unreadable
    for where in ("after", "before"):
        database_args = ("--database", value, *command) if where == "before" else (*command, "--database", value)
        blank = cli(*database_args)
        assert blank.code == 2 and "--database is empty" in blank.stderr, (where, blank.stderr)
        config_args = ("--config", value, *command) if where == "before" else (*command, "--config", value)
        blank = cli(*config_args)
        assert blank.code == 2 and "--config is empty" in blank.stderr, (where, blank.stderr)
    if command[0] == "run":  # and an empty --run-id: each job began a run of its own instead of joining it
        blank = cli(*command, "--run-id", value)
        assert blank.code == 2 and "--run-id is empty" in blank.stderr, blank.stderr
        # and an empty --resume (--resume "$RUN_ID"): it was read as --resume alone, the newest
        # unfinished run of the scope, which may be another than the one meant
        for given in (("--resume", value), (f"--resume={value}",)):
            blank = cli(*command, *given)
            assert blank.code == 2 and "--resume is empty; give a run id (--resume alone: the newest" in blank.stderr, blank.stderr
    assert stored_runs(project) == 0 and not database(project).exists()
    if command[0] == "run":
        alone = cli(*command, "--resume")  # still the newest unfinished run: there is none, nor a store
        assert alone.code == 2 and "--resume: there is no store at " in alone.stderr, alone.stderr
        assert not database(project).exists()


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
@pytest.mark.parametrize(
    ("command", "option", "named"),
    [
        (("run", "evalkit.smoke"), "--model", "a model alias"),  # was: the instance's own model, silently
        (("run", "evalkit.smoke"), "--shard", "a slice, I/N or auto"),  # was: the whole set, not a slice
        (("run", "evalkit.smoke"), "--provider", "a provider name"),  # was: [providers.] suggested
        (("run", "evalkit.smoke"), "--judge", "a provider name"),
        (("plan", "evalkit.smoke"), "--model", "a model alias"),
        (("flaky", "evalkit.smoke"), "--model", "a model alias"),
        (("baseline", "show"), "--model", "a model alias"),
        (("retrieval", "evalkit_stdlib.docs"), "--deployment", "a deployment name"),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0],
)
def test_an_empty_name_option_is_refused_not_read_as_not_given(cli, project, value, command, option, named) -> None:
    # `--model "$MODEL"` with the variable unset: read as not given, a CI job ran another model,
    # the whole set instead of its slice, or another command than meant
    result = cli(*command, option, value)
    assert result.code == 2 and f"{option} is empty; give {named}, or leave the option out" in result.stderr, result.stderr
    assert stored_runs(project) == 0 and not database(project).exists()


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
@pytest.mark.parametrize("command", ["run", "history", "flaky", "plan", "retrieval"])
def test_an_empty_set_identifier_is_refused_not_read_as_a_set_with_no_runs(cli, project, value, command) -> None:
    # `evalkit history "$SET"` with the variable unset said "No stored runs of set """, exit 0
    result = cli(command, value)
    assert result.code == 2 and "SET is empty; give a set identifier" in result.stderr, result.stderr
    assert stored_runs(project) == 0 and not database(project).exists()


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_an_empty_validate_target_is_refused_not_read_as_the_working_directory(cli, project, value) -> None:
    # `evalkit validate "$CHANGED_FILES"` with nothing in the variable checked the working
    # directory instead ("": is a folder holding no set file) — or passed, when it held set files
    (project / "faq.yaml").write_text("identifier: a.faq\nname: F\nprompts: [{id: p, prompt: q, reference: r}]\n")
    for targets in ((value,), ("faq.yaml", value)):
        result = cli("validate", *targets)
        assert result.code == 2 and "a TARGET is empty; name a set file, a folder or a set identifier" in result.stderr, result.stderr
        assert "ok" not in result.stdout
    assert cli("validate", "faq.yaml").code == 0


def test_a_run_id_not_in_the_store_is_quoted_by_every_command_that_looks_it_up(cli, project) -> None:
    # `evalkit regrade ''` said "there is no run  in the store", naming nothing: each command wrote
    # its own message, some quoting the id; one error (UnknownRunError) now says it, quoted
    assert cli("run", "evalkit.smoke").code == 0
    missing = 'there is no run "" in the store (see `evalkit history SET` for run ids)'
    for command, option in [
        (("regrade", ""), ""), (("show", ""), ""), (("report", ""), ""), (("compare", "", ""), ""),
        (("baseline", "accept", "", "--reason", "checked"), ""),
        (("run", "evalkit.smoke", "--answers-from", ""), "--answers-from: "),
        (("run", "evalkit.smoke", "--baseline", ""), "--baseline: "),
        (("run", "evalkit.smoke", "--resume", "nope"), "--resume: "),
    ]:
        result = cli(*command)
        expected = option + (missing.replace('""', '"nope"') if "nope" in command else missing)
        assert result.code == 2 and f"error: {expected}" in result.stderr, (command, result.stderr)
    export = cli("baseline", "export", "evalkit.smoke", "-o", "b.json", "--run", "")
    assert export.code == 2 and '--run: there is no run "" of set "evalkit.smoke" in the store' in export.stderr
    # a quote in the id is escaped, so the quotes still say where it ends
    assert 'there is no run "say \\"hi\\"" in the store' in cli("show", 'say "hi"').stderr
    flaky = cli("flaky", "")  # an empty SET is refused as every command's is (it said "no complete runs")
    assert flaky.code == 2 and "SET is empty; give a set identifier" in flaky.stderr, flaky.stderr
    assert stored_runs(project) == 1


#: Every character Unicode breaks a line at, each with the escape the output boundary writes.
LINE_BREAKS = {"\n": "\\x0a", "\r": "\\x0d", "\x0b": "\\x0b", "\x0c": "\\x0c", "\x85": "\\x85", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_a_line_break_in_a_word_the_user_gave_never_forges_a_line_of_evalkit_s(cli, project, brk: str) -> None:
    # `evalkit show $'a\nevalkit: forged'` printed "evalkit: forged\" in the store ..." on a line of
    # its own: error messages keep their line breaks (they are evalkit's), and a word put into one
    # was quoted with its newline raw. quoted() now escapes it as the output boundary does.
    assert cli("run", "evalkit.smoke").code == 0
    word = f"a{brk}evalkit: forged"
    shown = f"a{LINE_BREAKS[brk]}evalkit: forged"
    said_in_json = 0
    (project / word).write_text("a file, not a folder", encoding="utf-8")
    for command in [
        ("show", word), ("report", word), ("compare", word, word), ("regrade", word),
        ("baseline", "accept", word, "--reason", "checked"),
        ("run", word), ("run", "evalkit.smoke", "--baseline", word), ("run", "evalkit.smoke", "--provider", word),
        ("run", "evalkit.smoke", "--resume", word), ("run", "evalkit.smoke", "--run-id", word),
        ("run", "evalkit.smoke", "--resume", "a", "--run-id", word), ("run", "evalkit.smoke", "--baseline-file", word),
        ("run", "evalkit.smoke", "--config", word), ("run", "evalkit.smoke", "--database", word),
        ("retrieval", word), ("retrieval", "evalkit_stdlib.docs", "--deployment", word),
        ("import", "otel", word), ("import", "otel", "trace.json", "-o", word),
        ("run", "evalkit.smoke", "--report", f"{word}:"), ("run", "evalkit.smoke", "--provider", word, "--provider", word),
        ("plan", "evalkit.smoke", "--provider", word), ("baseline", "export", word, "-o", "b.json"),
        ("history", word), ("flaky", word), ("baseline", "show", word), ("flaky", "evalkit.smoke", "--provider", word),
        ("baseline", "export", "evalkit.smoke", "-o", f"{word}/b.json"), ("init", f"{word}/x"),
    ]:
        result = cli(*command)
        # str.splitlines breaks at every one of LINE_BREAKS; a noisy plugin of this suite prints its own
        lines = [line for line in result.stderr.splitlines() if not line.startswith("noisy: ")]
        expected = 4 if command[:3] == ("run", "evalkit.smoke", "--provider") and len(command) == 4 else 1  # an unknown provider's message ends with a TOML table
        if lines and lines[0].startswith("Usage: "):  # refused as the command line is read: click's usage, then one error line
            assert result.code == 2 and len(lines) == 4 and lines[2] == "", (command, result.stderr)
            lines = [lines[3].replace(f"evalkit {command[0]}: error: ", "evalkit: error: ", 1)]
        assert result.code == 2 and len(lines) == expected, (command, result.stderr)
        # (--report cuts the word at its first colon, so only its start is named there)
        assert lines[0].startswith("evalkit: error: ") and shown.partition(":")[0] in lines[0], (command, result.stderr)
        as_json = cli("--json", *command)
        error = json.loads(as_json.stdout.splitlines()[-1])["error"]  # one line, valid JSON
        if "does not apply" not in error:  # a command with a JSON document: its error says it as stderr does
            said_in_json += 1
            said = "\n".join(lines).removeprefix("evalkit: error: ")
            assert as_json.code == 2 and error == said, (command, as_json.stdout)
    assert said_in_json >= 10
    assert stored_runs(project) == 1


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--shard", "1/2", "--run-id", "ci-1"), {}),
        (("--wait-for-shards", "--run-id", "ci-1", "--timeout", "1s"), {}),
        (("--shard", "auto"), {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2", "CI_PIPELINE_ID": "7"}),
        (("--shard", "1/2", "--run-id", "ci-1"), {"EVALKIT_DATABASE_URL": "sqlite:///elsewhere.db"}),
    ],
    ids=["shard", "verdict-job", "auto", "sqlite-from-environment"],
)
def test_issue34_14_a_shard_or_verdict_job_on_a_store_local_to_the_job_is_refused(cli, project, args, env) -> None:
    result = cli("run", "evalkit.smoke", *args, env=env)
    assert result.code == 2 and "needs a store every job of the run shares" in result.stderr, result.stderr
    assert "name the file with --database" in result.stderr
    assert stored_runs(project) == 0 and not (project / "elsewhere.db").exists()


def _exported_baseline(cli, project: Path) -> dict:  # noqa: ANN001
    assert cli("run", "evalkit.smoke").code == 0
    assert cli("baseline", "export", "evalkit.smoke", "-o", "baseline.json").code == 0
    database(project).unlink()
    return json.loads((project / "baseline.json").read_text())


def test_issue34_15_a_hand_edited_baseline_file_is_refused_naming_it(cli, project) -> None:
    document = _exported_baseline(cli, project)
    document["run"]["cases"][0]["passed"] = not document["run"]["cases"][0]["passed"]
    (project / "baseline.json").write_text(json.dumps(document))
    result = cli("run", "evalkit.smoke", "--baseline-file", "baseline.json")
    assert result.code == 2 and "baseline file baseline.json: its content does not match its digest" in result.stderr
    assert stored_runs(project) == 0


@pytest.mark.parametrize(
    "content",
    [b"[default]\naws_secret_access_key = AKIAHOSTILE0123456789\n", b"\xff\xfe not utf-8", b'{"format": "evalkit-baseline"}', b""],
    ids=["credentials", "not-utf8", "schema", "empty"],
)
def test_issue34_15_a_foreign_file_as_baseline_is_refused_without_quoting_it(cli, project, content) -> None:
    (project / "foreign.json").write_bytes(content)
    result = cli("run", "evalkit.smoke", "--baseline-file", "foreign.json")
    assert result.code == 2 and "baseline file foreign.json: " in result.stderr, result.stderr
    assert "AKIAHOSTILE" not in result.stderr and "aws_secret" not in result.stderr
    assert stored_runs(project) == 0


def test_issue34_15_a_forged_baseline_files_hostile_strings_are_shown_literally(cli, project) -> None:
    document = _exported_baseline(cli, project)
    body = {k: v for k, v in document.items() if k != "digest"}
    body["run"]["cases"][0]["case_id"] = "evil\x1b]0;owned\x07\u202e"  # no longer in the set: a removed case
    body["acceptance"] = {"how": "manual", "at": 0, "by": "\x1b[2J", "reason": "\x9b31m"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    body["digest"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    (project / "baseline.json").write_text(json.dumps(body))
    result = cli("run", "evalkit.smoke", "--baseline-file", "baseline.json", "--show-all")
    assert result.code == 0, result.stderr
    assert_shown_literally(result.stdout, result.stderr)


def test_issue34_15_a_baseline_file_that_is_a_pipe_nobody_writes_is_refused_not_waited_on(cli, project) -> None:
    os.mkfifo(project / "baseline.json")
    result = cli("run", "evalkit.smoke", "--baseline-file", "baseline.json", timeout=60)
    assert result.code == 2 and "baseline file baseline.json: " in result.stderr


@pytest.mark.parametrize("where", ["--model", "config"])
def test_a_model_alias_of_a_million_characters_is_refused_before_anything_is_called(cli, project, where: str) -> None:
    """The alias keys a run's baseline scope and every report prints it: one of a million
    characters was sent with every request, and the run stored (each case erred "the generator
    returned an Answer … model is 1,000,000 characters long", exit 3)."""
    alias = "m" * 1_000_000
    if where == "config":
        (project / "evalkit.toml").write_text(f'[providers.x]\nadapter = "reference"\nmodel = "{alias}"\n')
        result = cli("run", "evalkit.smoke")
        said = f"model in [providers.x] of {project / 'evalkit.toml'}: the model alias is 1,000,000 characters long"
    else:
        result = cli("run", "evalkit.smoke", "--model", alias)
        said = "--model: the model alias is 1,000,000 characters long, more than the 1,000 allowed"
    assert result.code == 2 and said in result.stderr, result.stdout[-500:] + result.stderr[-500:]
    assert len(result.stderr) < 2_000 and not (project / ".evalkit").exists(), "nothing was run or stored"


@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical")], ids=["run", "retrieval"])
@pytest.mark.parametrize("run_id", ["bad id", "a\u202eb", "x" * 65])
def test_a_run_id_of_the_wrong_form_is_refused_as_the_command_line_is_read(cli, project, command: tuple[str, ...], run_id: str) -> None:
    """``--run-id "bad id"`` was refused where the run began, after the store was opened: exit 2,
    and a new store left in the project (a shared one named with --database, too)."""
    result = cli(*command, "--run-id", run_id, "--database", "sqlite:///shared.db")
    assert result.code == 2, result.stdout + result.stderr
    assert "Invalid value for '--run-id': run id " in result.stderr and "must be 1 to 64 letters" in result.stderr, result.stderr
    assert not (project / "shared.db").exists() and not (project / ".evalkit").exists(), "nothing was made"


def test_a_set_provider_that_raises_when_created_is_named_once(cli, project) -> None:
    """A set provider whose constructor raises was named twice in every message:
    ``golden prompt set provider X (dist): golden prompt set provider X (dist) raised RuntimeError
    when created: …``. Every rendering of a plugin failure goes through PluginFailure.named: the
    plugin once, then what went wrong."""
    env = {SPRAWLING: "created"}
    created = PROVIDER  # named as building it from its table is
    said = f"{created} raised RuntimeError when created: cannot reach the set archive"
    for args in (("list", "sets"), ("run", "no.such.set"), ("validate",)):
        shown = cli(*args, env=env)
        text = " ".join(shown.stderr.split())
        assert shown.code == 2 and text.count("sprawling_failures") == 1, (args, text[-800:])
        if args[0] != "validate":
            assert said in text, (args, text[-800:])
    assert said in cli("list", "sets", "--json", env=env).json()["problems"]
    reason = {"set": PROVIDER, "reason": "raised RuntimeError when created: cannot reach the set archive"}
    assert reason in cli("validate", "--json", env=env).json()["problems"]


@pytest.mark.parametrize("adapter", ["raising.forker", "raising.async_forker"], ids=["sync", "async"])
def test_a_generator_whose_forked_child_returns_into_evalkit_ends_that_child(evalkit_process, project, plugin_dists, adapter) -> None:
    """A generator that forked and let its child return went on running evalkit's whole command in
    each child: answering, storing and printing again, and holding the caller's pipes open after the
    real process had exited. Spawned: the processes themselves are under test (in-process, the
    child would be a copy of the test runner)."""
    import subprocess

    (project / "evalkit.toml").write_text(f'[providers.x]\nadapter = "{adapter}"\nmodel = "m"\n')
    env = {"PYTHONPATH": plugin_dists("evalkit-raising-plugins")}
    process = evalkit_process.start(
        "run", "evalkit.smoke", "--provider", "x", "--json", env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("a forked child held the output pipes open")
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever a failing run left behind
        except ProcessLookupError:
            pass
    stderr = err
    assert process.returncode == 0, stderr[-2000:]
    document = json.loads(out)  # one document: no child printed a second
    assert document["status"] == "complete"
    answered = len(document["cases"])
    assert "returned in a process its plugin forked" in stderr
    assert stderr.count("returned in a process its plugin forked") == answered, stderr[-2000:]
    assert stored_runs(project) == 1
    with sqlite3.connect(database(project)) as conn:
        assert conn.execute("select count(*) from evalkit_case").fetchone()[0] == answered
