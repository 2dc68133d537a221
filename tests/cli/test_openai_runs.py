"""Runs against a real chat-completions server on 127.0.0.1: faults, serving identity, privacy, Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.support.chat_server import Fault
from tests.support.crashes import ctrl_c_reaches_child

KEY = "sk-test-SECRETKEY0123456789abcdefXYZ"
HEADER_SECRET = "gateway-token-9f8e7d6c5b4a"

ANSWERS = {
    "What is 2 + 2?": "4", "What is 7 + 5?": "12", "What is 12 + 30?": "42", "What is 99 + 1?": "100",
    "What is 6 times 7?": "42", 'Return {"sum": <3 + 4>} as JSON.': '{"sum": 7}',
}


def arithmetic(body) -> str:
    question = body["messages"][-1]["content"]
    for prefix, answer in ANSWERS.items():
        if question.startswith(prefix):
            return answer
    return "no idea"


def configure(project: Path, server, *, instances=("prod",), model="gpt-test", privacy=None, extra="") -> dict[str, str]:
    lines = [f'privacy = "{privacy}"'] if privacy else []
    for name in instances:
        lines += [
            f"[providers.{name}]",
            'adapter = "openai"',
            f'base_url = "{server.base_url}"',
            f'model = "{model}"',
            'api_key_env = "EVALKIT_TEST_KEY"',
            "backoff_base = 0.01",
            "backoff_max = 0.05",
            "max_attempts = 3",
            "timeout = 5",
            f'extra_headers = {{ "X-Gateway-Token" = "{HEADER_SECRET}" }}',
            extra,
        ]
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n")
    return {"EVALKIT_TEST_KEY": KEY}


def runs(project: Path) -> list[sqlite3.Row]:
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("select * from evalkit_run order by started_at").fetchall()


def cases(project: Path, run_id: str) -> list[sqlite3.Row]:
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("select * from evalkit_case where run_id = ? order by case_id", (run_id,)).fetchall()


def completions(server) -> list:
    """The chat-completion requests the server received (free GETs such as /models left out)."""
    return [r for r in server.requests if r.method == "POST"]


def test_a_configured_instance_is_verified_and_compared(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    chat_server.model = "gpt-test-2025-01-01"
    env = configure(project, chat_server)
    first = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert first.code == 0, first.stdout + first.stderr
    assert "Model:      gpt-test-2025-01-01 (alias gpt-test via prod)" in first.stdout
    assert "recorded as the baseline" in first.stdout
    second = evalkit_cli("run", "arith.basic", "--fail-on-regression", env=env)
    assert second.code == 0 and "No regression" in second.stdout
    probe, request = chat_server.requests[0], chat_server.requests[1]
    assert (probe.method, probe.path) == ("GET", "/v1/models"), "one free readiness probe before the first paid request"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "gpt-test"
    row = runs(project)[0]
    assert (row["provider_instance"], row["model_alias"], row["reported_model"], row["verified"]) == ("prod", "gpt-test", "gpt-test-2025-01-01", 1)


def test_a_windows_path_as_the_reported_model_is_a_verified_identity(evalkit_cli, project, chat_server) -> None:
    """A llama.cpp or LM Studio server on Windows reports its model file's path: the identity was
    "not well formed" (a backslash), the run never compared, where the same server's POSIX path was
    verified. Control and bidi characters are still refused (test_hostile_storage, test_judges)."""
    chat_server.responder = arithmetic
    chat_server.model = "C:\\models\\app-Q4_K_M.gguf"
    env = configure(project, chat_server)
    first = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert first.code == 0, first.stdout + first.stderr
    assert "recorded as the baseline" in first.stdout, first.stdout
    second = evalkit_cli("run", "arith.basic", "--provider", "prod", "--fail-on-regression", env=env)
    assert second.code == 0 and "No regression" in second.stdout, second.stdout
    row = runs(project)[0]
    assert (row["reported_model"], row["verified"]) == ("C:\\models\\app-Q4_K_M.gguf", 1)


def test_a_refused_model_name_shows_a_control_character_apart_from_a_typed_backslash(evalkit_cli, project, chat_server) -> None:
    """Backslashes are allowed in a model name (a Windows path), so a refused name holding U+202E,
    shown escaped, read the same as one holding the typed text backslash-u-2-0-2-e (refused for
    its space). The refused name is shown with a typed backslash doubled and
    the hidden character named by its code point."""
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    notes, run_ids = [], []
    for reported in ("C:\\m\\j\u202e.gguf", "C:\\m\\j\\u202e x.gguf"):
        chat_server.model = reported
        result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
        assert result.code == 0, result.stdout + result.stderr
        notes.append(result.json()["identity_note"])
        run_ids.append(result.json()["run_id"])
    hidden, typed = notes
    assert hidden.endswith(
        'reported model "C:\\\\m\\\\j\\u202e.gguf" contains control or invisible characters '
        "(the first: U+202E RIGHT-TO-LEFT OVERRIDE, character 7)"
    ), hidden
    assert typed.endswith('reported model "C:\\\\m\\\\j\\\\u202e x.gguf" may only use ASCII letters, digits and _ . / \\ : @ + -'), typed
    shown = evalkit_cli("show", run_ids[1], env=env)
    assert 'reported model "C:\\\\m\\\\j\\\\u202e x.gguf"' in shown.stdout, shown.stdout


def test_a_run_speaks_aiohttp_and_imports_neither_httpx_nor_the_question_types(project, chat_server) -> None:
    """The generator's one HTTP client is aiohttp (httpx is no longer a dependency; a run that
    imported it would pay ~65 ms for nothing). Nor does a prompt run import the question types
    (~3 ms), nor, in a project that names no set files, the set-file readers (~8 ms), nor, for a
    set without rubric checks, the judge machinery the deterministic grader hands out only for
    them (~2 % of a run's start-up)."""
    from bench.startup import imported_modules

    chat_server.responder = arithmetic
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and k != "EVALKIT_DATABASE_URL"}
    env.update(configure(project, chat_server), NO_COLOR="1")
    watched = (
        "httpx", "httpcore", "aiohttp", "evalkit.questions", "evalkit.setfiles", "evalkit_plugins.openai",
        "evalkit_plugins.deterministic", "evalkit_plugins._judge", "evalkit_plugins.rubric", "evalkit_plugins.pairwise",
    )  # fmt: skip
    loaded = imported_modules(["run", "arith.basic", "--provider", "prod"], watched, cwd=project, env=env)
    assert loaded == ["aiohttp", "evalkit_plugins.openai", "evalkit_plugins.deterministic"]
    assert completions(chat_server) and [r.path for r in chat_server.requests if r.method == "GET"] == ["/v1/models"]


@pytest.mark.parametrize(
    "fault",
    [Fault.rate_limited(retry_after=0.01), Fault.http_error(500), Fault.http_error(503), Fault.drop(), Fault.reset()],
    ids=["429-retry-after", "500", "503", "dropped-connection", "reset-connection"],
)
def test_transient_faults_are_retried_and_the_run_completes(evalkit_cli, project, chat_server, fault) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    chat_server.fail_at(2, fault)
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", env=env)
    assert result.code == 0, result.stdout + result.stderr
    assert "Pass rate:  100.0% (6/6)" in result.stdout
    assert len(completions(chat_server)) == 7  # six prompts and one retry


def test_a_slow_answer_times_out_and_is_retried(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server, extra="")
    (project / "evalkit.toml").write_text((project / "evalkit.toml").read_text().replace("timeout = 5", "timeout = 0.5"))
    chat_server.fail_at(1, Fault.stall(2))
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", env=env)
    assert result.code == 0, result.stdout + result.stderr


def test_an_answer_trickled_for_ever_times_out_and_is_retried(evalkit_cli, project, chat_server) -> None:
    """A slow-loris endpoint (a byte every 50 ms, never done) still hits the instance's timeout."""
    chat_server.responder = arithmetic
    configure(project, chat_server)
    (project / "evalkit.toml").write_text((project / "evalkit.toml").read_text().replace("timeout = 5", "timeout = 0.5"))
    chat_server.fail_at(2, Fault.trickle(0.05))
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", env={"EVALKIT_TEST_KEY": KEY}, timeout=60)
    assert result.code == 0, result.stdout + result.stderr
    assert "Pass rate:  100.0% (6/6)" in result.stdout
    assert len(completions(chat_server)) == 7  # six prompts and the retry of the trickled one


def test_garbage_is_an_errored_case_that_shows_what_came_back(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    chat_server.fail_at(3, Fault.garbage(b"<html><body>upstream exploded</body></html>"))
    env["COLUMNS"] = "400"  # the whole message on one line of the table
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", "--fail-on-regression", env=env)
    assert result.code == 3, result.stdout + result.stderr
    assert "ERROR" in result.stdout and "upstream exploded" in result.stdout, result.stdout
    assert "the run is incomplete" in result.stdout
    (row,) = runs(project)
    assert row["status"] == "incomplete" and row["errored_count"] == 1 and row["answered_count"] == 6
    errored = [c for c in cases(project, row["id"]) if c["errored"]]
    assert len(errored) == 1 and "upstream exploded" in errored[0]["error"]


@pytest.mark.parametrize("fault", [Fault.no_choices(), Fault.empty_content()], ids=["no-choices", "empty-content"])
def test_malformed_completions_are_errors(evalkit_cli, project, chat_server, fault) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    chat_server.fail_at(1, fault)
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", env=env)
    assert result.code == 3
    assert "ERROR" in result.stdout


def test_exhausted_retries_are_stored_as_errored_never_as_a_pass(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    chat_server.fail_next(Fault.http_error(502), count=4)  # the first answers the readiness probe: a warning only
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", "--json", env=env)
    assert result.code == 3
    document = result.json()
    assert document["status"] == "incomplete"
    (errored,) = [c for c in document["cases"] if c["errored"]]
    assert errored["passed"] is False and "after 3 attempts" in errored["error"] and "502" in errored["error"]
    assert document["verdict"]["state"] == "not_comparable"


def test_an_endpoint_that_switches_models_midway_is_stored_but_not_comparable(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    chat_server.model = "gpt-test-2025-01-01"
    env = configure(project, chat_server)
    assert evalkit_cli("run", "arith.basic", env=env).code == 0
    chat_server.fail_at(chat_server.request_count + 4, Fault.other_model("gpt-test-2025-06-01"))
    result = evalkit_cli("run", "arith.basic", "--concurrency", "1", "--fail-on-regression", env=env)
    assert result.code == 1
    assert "switched models midway" in result.stdout
    assert "gpt-test-2025-06-01" in result.stdout and "Model:      (unknown)" in result.stdout
    latest = runs(project)[-1]
    assert latest["status"] == "complete" and latest["verified"] == 0
    per_case = {c["reported_model"] for c in cases(project, latest["id"])}
    assert per_case == {"gpt-test-2025-01-01", "gpt-test-2025-06-01"}


def test_two_instances_with_one_adapter_and_alias_are_different_generators(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server, instances=("eu", "us"))
    assert evalkit_cli("run", "arith.basic", "--provider", "eu", env=env).code == 0
    chat_server.responder = lambda body: "wrong"
    result = evalkit_cli("run", "arith.basic", "--provider", "us", "--fail-on-regression", env=env)
    assert result.code == 0  # a first run of "us": its own baseline, never compared with "eu"
    assert "recorded as the baseline" in result.stdout


def test_a_new_snapshot_is_a_new_series(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    chat_server.model = "snap-1"
    env = configure(project, chat_server)
    assert evalkit_cli("run", "arith.basic", env=env).code == 0
    chat_server.model = "snap-2"
    chat_server.responder = lambda body: "wrong"
    result = evalkit_cli("run", "arith.basic", "--fail-on-regression", env=env)
    assert "recorded as the baseline" in result.stdout and result.code == 0


def test_model_override_is_the_alias_sent(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    result = evalkit_cli("run", "arith.basic", "--model", "gpt-other", "--json", env=env)
    assert result.code == 0
    assert result.json()["identity"]["model_alias"] == "gpt-other"
    assert {r.body["model"] for r in completions(chat_server)} == {"gpt-other"}


def test_ad_hoc_openai_run_from_the_environment_is_never_compared(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = {"OPENAI_BASE_URL": chat_server.base_url, "OPENAI_API_KEY": KEY}
    result = evalkit_cli("run", "arith.basic", "--provider", "openai", "--model", "gpt-x", "--fail-on-regression", env=env)
    assert result.code == 1, result.stdout + result.stderr
    assert "Pass rate:  100.0% (6/6)" in result.stdout
    assert "ad-hoc run" in result.stdout and "not compared" in result.stdout
    assert chat_server.requests[0].headers["authorization"] == f"Bearer {KEY}"


LEAKY = "Contact ada@example.org, my key is {key} and the gateway said {header}. Paris."


@pytest.mark.parametrize("privacy", ["metadata", "redacted", "full"])
def test_no_credential_reaches_the_database_at_any_privacy_level(evalkit_cli, project, chat_server, privacy) -> None:
    chat_server.responder = lambda body: LEAKY.format(key=KEY, header=HEADER_SECRET)
    env = configure(project, chat_server, privacy=privacy)
    result = evalkit_cli("run", "evalkit.smoke", env=env)
    assert result.code == 0, result.stderr
    raw = b"".join(p.read_bytes() for p in (project / ".evalkit").glob("results.db*"))
    assert KEY.encode() not in raw
    assert HEADER_SECRET.encode() not in raw
    (run,) = runs(project)
    assert run["provider_instance"] == "prod" and run["reported_model"] == "gpt-test"  # the proof is kept
    texts = [c["answer_text"] for c in cases(project, run["id"])]
    if privacy == "metadata":
        assert texts == [None] * len(texts)
    elif privacy == "redacted":
        assert all("ada@example.org" not in t and "***" in t and "Paris" in t for t in texts)
    else:
        assert all("ada@example.org" in t and "***" in t for t in texts)


def test_privacy_option_overrides_the_config(evalkit_cli, project, chat_server) -> None:
    chat_server.text = None
    env = configure(project, chat_server, privacy="metadata")
    assert evalkit_cli("run", "evalkit.smoke", "--privacy", "full", env=env).code == 0
    (run,) = runs(project)
    assert run["privacy"] == "full"
    assert all(c["answer_text"] is not None for c in cases(project, run["id"]))


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_keeps_finished_cases_and_marks_the_run_interrupted(project, chat_server, evalkit_process, stop) -> None:  # noqa: ANN001
    """SIGTERM (a CI job's timeout, ``docker stop``) stops a run as Ctrl-C does."""
    chat_server.responder = arithmetic
    chat_server.delay = 0.4
    # A process of its own: the signal is sent to the process, as a terminal or CI runner sends it.
    process = evalkit_process.start(
        "run", "arith.basic", "--concurrency", "1", env=configure(project, chat_server), preexec_fn=ctrl_c_reaches_child
    )
    deadline = time.monotonic() + 20
    while chat_server.request_count < 4 and time.monotonic() < deadline:  # the readiness probe and three prompts
        time.sleep(0.05)
    process.send_signal(stop)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 3, out + err
    assert "interrupted" in err
    (run,) = runs(project)
    assert run["status"] == "interrupted"
    kept = cases(project, run["id"])
    assert 2 <= len(kept) < 6
    assert re.search(rf"--resume {re.escape(run['id'])}", err)


def test_a_server_that_echoes_the_alias_is_said_to_and_its_own_evidence_is_stored(evalkit_cli, project, chat_server) -> None:
    """llama.cpp's and LiteLLM's servers report whatever model the request named; the run says so and
    keeps what they do report for free: the models listing's meta, /props, the gateway's routed model."""
    chat_server.responder = arithmetic  # chat_server.model is None: the requested alias is echoed
    chat_server.pages = {
        "/v1/models": {"object": "list", "data": [
            {"id": "other", "owned_by": "llamacpp"},
            {"id": "gpt-test", "owned_by": "llamacpp", "meta": {"n_params": 134515008, "size": 97000000, "n_ctx_train": 8192}},
        ]},
        "/props": {"model_path": "/models/SmolLM2-135M-Instruct.Q4_1.gguf", "total_slots": 2, "secret": KEY},
    }
    chat_server.reply_headers = (("x-litellm-model-name", "[bold]smollm2-q4[/bold]"),)
    env = configure(project, chat_server)
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert result.code == 0, result.stderr
    serving = result.json()["metrics"]["serving"]
    assert serving["reported_model_is_alias"] is True
    assert serving["note"] == "reported model is the alias sent; the server does not report its own"
    assert serving["evidence"] == {
        "routed_model": "[bold]smollm2-q4[/bold]",
        "owned_by": "llamacpp",
        "meta.n_params": 134515008,
        "meta.size": 97000000,
        "meta.n_ctx_train": 8192,
        "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "total_slots": 2,
    }
    shown = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert "(reported model is the alias sent; the server does not report its own)" in shown.stdout
    assert "Served by:  gateway routed to [bold]smollm2-q4[/bold], model list says owned by llamacpp" in shown.stdout  # markup shown, not applied
    # `show` never printed the serving note nor the evidence the run printed: it says them again
    stored = evalkit_cli("show", result.json()["run_id"], env=env)
    assert stored.code == 0, stored.stderr
    lines = stored.stdout.splitlines()
    model = next(i for i, line in enumerate(lines) if line.startswith("Model:"))
    assert lines[model + 1].strip() == "(reported model is the alias sent; the server does not report its own)", lines
    assert "Served by:  gateway routed to [bold]smollm2-q4[/bold], model list says owned by llamacpp" in stored.stdout
    assert evalkit_cli("show", result.json()["run_id"], "--json", env=env).json()["metrics"]["serving"] == serving
    assert KEY.encode() not in b"".join(p.read_bytes() for p in (project / ".evalkit").glob("results.db*"))


def test_a_server_that_reports_its_own_snapshot_gets_no_echo_note(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    chat_server.model = "gpt-test-2025-01-01"
    env = configure(project, chat_server)
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert result.code == 0
    assert "serving" not in (result.json().get("metrics") or {})
    probes = [r.path for r in chat_server.requests if r.method == "GET"]
    assert probes == ["/v1/models"]  # no /props asked of a server that is not llama.cpp
