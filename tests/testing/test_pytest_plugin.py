"""The evalkit pytest plugin, in a real pytest subprocess: inert until asked, fixtures, sets as tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE_TEST = """\
def test_smoke_runs_into_a_temporary_store(evalkit_store, evalkit_run):
    outcome = evalkit_run("evalkit.smoke")
    assert outcome.run.pass_rate == 1.0 and outcome.verdict.state == "baseline"
    again = evalkit_run("evalkit.smoke")
    assert again.verdict.state == "no_regression" and not again.verdict.regressed
    assert [r.id for r in evalkit_store.runs("evalkit.smoke")] == [again.run.id, outcome.run.id]
    assert evalkit_store.url.startswith("sqlite:///")
"""


def pytest_run(folder: Path, *args: str, env: dict[str, str] | None = None, cache: bool = False) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EVALKIT_DATABASE"))}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", *(() if cache else ("-p", "no:cacheprovider")), "-q", *args],
        cwd=folder, env=environment, capture_output=True, text=True, timeout=300,
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "plugin-suite"
    folder.mkdir()
    (folder / "test_with_fixtures.py").write_text(FIXTURE_TEST)
    return folder


def test_the_plugin_is_inert_until_asked(suite: Path) -> None:
    done = pytest_run(suite)
    assert done.returncode == 1
    assert "the evalkit pytest fixtures are off: run `pytest -p evalkit`, or add `evalkit = true`" in done.stdout
    assert "fixture 'evalkit_store' not found" not in done.stdout


def test_dash_p_evalkit_activates_the_fixtures(suite: Path) -> None:
    done = pytest_run(suite, "-p", "evalkit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_the_ini_option_activates_the_fixtures(suite: Path) -> None:
    (suite / "pytest.ini").write_text("[pytest]\nevalkit = true\n")
    done = pytest_run(suite)
    assert done.returncode == 0, done.stdout + done.stderr


def project_with_replay(folder: Path, answers: dict[str, str]) -> None:
    (folder / "evalkit.toml").write_text(
        '[sets]\npaths = ["faq.yaml"]\n\n[providers.my-app]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "app-v1"\n'
    )
    (folder / "faq.yaml").write_text(
        "identifier: myapp.faq\nname: FAQ\nprompts:\n"
        "  - {id: capital, prompt: Capital of France?, assertions: [{contains: Paris}, {max_words: 3}]}\n"
        "  - {id: sum, prompt: 2 + 2?, assertions: [{regex: '/^4$/', name: just_the_digit}]}\n"
    )
    (folder / "answers.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in answers.items()))


def test_a_set_becomes_one_test_per_case_and_a_regression_gate(tmp_path: Path) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    project_with_replay(folder, {"capital": "Paris", "sum": "4"})
    store = f"sqlite:///{tmp_path / 'results.db'}"
    args = ("-p", "evalkit", "--evalkit-set", "myapp.faq", "--evalkit-provider", "my-app", "--evalkit-database", store, "-vv")
    first = pytest_run(folder, *args)
    assert first.returncode == 0, first.stdout + first.stderr
    for name in ("capital", "sum", "evalkit:regression-gate"):
        assert f"evalkit-set:myapp.faq::{name} PASSED" in first.stdout

    project_with_replay(folder, {"capital": "It is Paris, of course", "sum": "four"})
    second = pytest_run(folder, *args)
    assert second.returncode == 1
    assert "evalkit-set:myapp.faq::capital FAILED" in second.stdout
    assert "max_words: 5 words, limit 3" in second.stdout  # an unnamed check by its kind, as `evalkit run` shows it
    assert "just_the_digit: regex(/^4$/) did not hold" in second.stdout
    assert "evalkit-set:myapp.faq::evalkit:regression-gate FAILED" in second.stdout
    assert "Regression" in second.stdout


def test_an_unknown_set_is_a_usage_error(tmp_path: Path) -> None:
    done = pytest_run(tmp_path, "-p", "evalkit", "--evalkit-set", "no.such_set")
    assert done.returncode == 4
    assert 'Unknown golden prompt set "no.such_set"' in done.stderr


def test_a_run_that_cannot_start_fails_every_case_with_the_reason(tmp_path: Path) -> None:
    done = pytest_run(tmp_path, "-p", "evalkit", "--evalkit-set", "evalkit.smoke", "--evalkit-provider", "no-such-provider")
    assert done.returncode == 1
    assert done.stdout.count('Unknown provider "no-such-provider"') >= 8


def test_a_sets_hostile_ids_reach_pytests_output_escaped(tmp_path: Path, plugin_dists) -> None:  # noqa: ANN001
    (tmp_path / "evalkit.toml").write_text('[providers.self]\nadapter = "reference"\n')
    env = {"PYTHONPATH": plugin_dists("evalkit-hostile-sets")}
    done = pytest_run(tmp_path, "-p", "evalkit", "--evalkit-set", "hostile.markup", "-vv", "-rA", env=env)
    assert done.returncode == 1, done.stdout + done.stderr  # the case "fails-…" fails its check
    for control in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert control not in done.stdout + done.stderr, f"raw {control!r} printed"
    assert "evalkit-set:hostile.markup::fails-\\x1b\\x5d0;pwned\\x07 FAILED" in done.stdout
    assert "evalkit-set:hostile.markup::ansi-\\x1b\\x5b31mred\\x1b\\x5b0m PASSED" in done.stdout


def test_last_failed_reruns_only_the_failed_cases_whatever_their_ids(tmp_path: Path) -> None:
    """``--lf`` reads the failed tests' ids back (pytest 9 parses them: ``::`` separates names,
    ``[`` begins parameters). The collector ``evalkit-set[myapp.faq]`` and a case id ``x[1]`` or
    ``a::b`` read back as other ids: "1 known failures not in selected tests", and every case ran."""
    folder = tmp_path / "app"
    folder.mkdir()
    ids = ["a::b", "x[1]", "p/q", "line\nbreak", "c:", "ok"]
    (folder / "evalkit.toml").write_text(
        '[sets]\npaths = ["faq.json"]\n\n[providers.my-app]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "app-v1"\n'
    )
    prompts = [{"id": i, "prompt": "Say hi.", "assertions": [{"contains": "hi"}]} for i in ids]
    (folder / "faq.json").write_text(json.dumps({"identifier": "myapp.faq", "name": "FAQ", "prompts": prompts}))
    failing = {"x[1]", "a::b"}
    (folder / "answers.jsonl").write_text("".join(json.dumps({"id": i, "text": "no" if i in failing else "hi"}) + "\n" for i in ids))
    args = ("-p", "evalkit", "--evalkit-set", "myapp.faq", "--evalkit-provider", "my-app", "--evalkit-database", f"sqlite:///{tmp_path / 'r.db'}", "-vv")
    first = pytest_run(folder, *args, cache=True)
    assert first.returncode == 1 and "2 failed, 5 passed" in first.stdout, first.stdout + first.stderr
    again = pytest_run(folder, *args, "--lf", cache=True)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "rerun previous 2 failures" in again.stdout
    assert "2 failed, 5 deselected" in again.stdout
    assert "collected 7 items / 5 deselected / 2 selected" in again.stdout  # was "0 items / 5 deselected / -5 selected"
    assert "evalkit-set:myapp.faq::x\\x5b1\\x5d FAILED" in again.stdout
    assert "evalkit-set:myapp.faq::a\\x3a\\x3ab FAILED" in again.stdout


def test_ctrl_c_while_the_set_runs_stops_the_session_as_interrupted(tmp_path: Path) -> None:
    """Ctrl-C is pytest's to act on: it stopped the run, and every case then failed as "could not
    run … interrupted", the session went on and exited 1 ("tests failed")."""
    import signal
    import time

    from tests.support.chat_server import ChatServer

    folder = tmp_path / "app"
    folder.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EVALKIT_DATABASE"))}
    with ChatServer(delay=60.0) as server:  # answers every chat request a minute late
        (folder / "evalkit.toml").write_text(
            f'[providers.slow]\nadapter = "openai"\nbase_url = "{server.base_url}"\nmodel = "m"\napi_key_env = ""\n'
            "max_attempts = 1\ntimeout = 120\n"
        )
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "evalkit", "--evalkit-set", "evalkit.smoke",
                   "--evalkit-provider", "slow", "--evalkit-database", f"sqlite:///{tmp_path / 'r.db'}", "-rA"]  # fmt: skip
        child = subprocess.Popen(command, cwd=folder, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while not any(r.path.endswith("/chat/completions") for r in server.requests) and time.monotonic() < deadline:
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        output, _ = child.communicate(timeout=60)
    assert child.returncode == 2, output
    assert "evalkit: interrupted: run " in output and "--resume" in output
    assert "could not run" not in output and "FAILED" not in output
