"""The effective concurrency (--concurrency, else the instance's option, else $EVALKIT_CONCURRENCY,
else the generator's own, else 8) sizes both the runner and the openai generator's connection pool:
counted as requests in flight at the test server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SET = "stdlib.asked"  # 50 prompts, from the test distribution evalkit-rag-app


def configure(project, server, concurrency: int | None) -> None:
    lines = [
        "[providers.app]",
        'adapter = "openai"',
        f'base_url = "{server.base_url}"',
        'model = "app-model"',
        'api_key_env = ""',
    ]
    if concurrency is not None:
        lines.append(f"concurrency = {concurrency}")
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("cli", "configured", "environment", "expected"),
    [
        (16, None, None, 16),  # CLI only: the pool no longer stays at the generator's default of 8
        (None, 12, None, 12),  # config only
        (16, 4, "3", 16),  # both: the command line wins
        (None, None, "10", 10),  # the environment, when neither says
        (None, 5, "10", 5),  # the instance's option beats the environment
        (None, None, None, 8),  # nothing said: 8
    ],
    ids=["cli-only", "config-only", "cli-and-config", "env-only", "config-over-env", "default"],
)
def test_requests_in_flight_follow_the_effective_concurrency(
    project, evalkit_cli, chat_server, plugin_dists, cli, configured, environment, expected
) -> None:
    chat_server.delay = 0.3
    configure(project, chat_server, configured)
    env = {"PYTHONPATH": plugin_dists("evalkit-rag-app")}
    if environment is not None:
        env["EVALKIT_CONCURRENCY"] = environment
    args = ["run", SET, "--provider", "app"] + (["--concurrency", str(cli)] if cli else [])
    result = evalkit_cli(*args, env=env)
    assert result.code == 0, result.stderr
    assert f"Concurrency: {expected} requests in flight" in result.stdout
    assert chat_server.max_in_flight == expected
    document = evalkit_cli(*args, "--json", env=env).json()
    assert document["concurrency"] == expected


def test_run_help_names_every_source_of_the_concurrency_in_the_order_they_win(evalkit_cli) -> None:
    # It said "the instance's, else 8", while $EVALKIT_CONCURRENCY and the generator's own came between.
    shown = " ".join(evalkit_cli("run", "--help").stdout.split())
    assert (
        "prompts in flight (default: the instance's concurrency, else $EVALKIT_CONCURRENCY, else what the generator asks for, else 8)"
    ) in shown


@pytest.mark.parametrize("configured", [1_000_001, 10**20])
def test_a_configured_concurrency_past_the_limit_is_refused_like_the_command_lines(
    project, evalkit_cli, chat_server, configured
) -> None:
    """``--concurrency`` and ``$EVALKIT_CONCURRENCY`` stop at 1,000,000; the instance's option did not."""
    configure(project, chat_server, configured)
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "app")
    assert result.code == 2, result.stdout + result.stderr
    assert 'provider instance "app"' in result.stderr and "concurrency must be a whole number from 1 to 1,000,000" in result.stderr
    assert f"got {configured}" in result.stderr
    assert chat_server.requests == [] and not (project / ".evalkit" / "results.db").exists()


def test_a_generator_asking_for_more_than_the_limit_gets_the_limit() -> None:
    from evalkit.components import MAX_CONCURRENCY, BoundGenerator

    class Greedy:
        concurrency = 10**20

    bound = BoundGenerator(Greedy(), "greedy", "greedy", None, True, None)
    assert bound.concurrency == MAX_CONCURRENCY


def _run_with_open_file_limit(project, soft: int, hard: int, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``evalkit ARGS`` in ``project``, in a process whose RLIMIT_NOFILE is (``soft``, ``hard``)."""
    start = (
        "import resource, runpy, sys; "
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard})); "
        "sys.argv[0] = 'evalkit'; runpy.run_module('evalkit', run_name='__main__', alter_sys=True)"
    )
    environment = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE_URL"}
    environment.update({"NO_COLOR": "1", "COLUMNS": "200", **env})
    return subprocess.run(
        [sys.executable, "-c", start, *args], cwd=project, env=environment, capture_output=True, text=True, timeout=120
    )


def test_a_concurrency_past_the_soft_open_file_limit_raises_it_and_past_the_hard_one_says_so(project, chat_server, plugin_dists) -> None:
    chat_server.delay = 0.3
    configure(project, chat_server, None)
    env = {"PYTHONPATH": plugin_dists("evalkit-rag-app")}
    args = ("run", SET, "--provider", "app", "--concurrency", "50", "--json")
    # soft 40: 50 connections did not fit ("Too many open files"); the run raises its soft limit
    raised = _run_with_open_file_limit(project, 40, 4096, *args, env=env)
    assert raised.returncode == 0, raised.stderr
    document = json.loads(raised.stdout)
    assert document["status"] == "complete" and document["answered"] == 50 and document["errored"] == 0, document
    assert not any("open files" in note for note in document["notes"])
    assert chat_server.max_in_flight == 50
    # hard 60: it cannot, and says so before the first request (the run goes ahead as asked)
    refused = _run_with_open_file_limit(project, 60, 60, *args, env=env)
    document = json.loads(refused.stdout)
    (note,) = [note for note in document["notes"] if "open files" in note]
    assert note.startswith("--concurrency 50 holds up to 50 connections beside evalkit's own 64 files, and this process may open 60 files in all")
