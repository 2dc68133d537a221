"""Tokens, cost, budget, the answer cache and re-grading, end to end through the CLI against the
chat-completions test server (which reports usage: one token a word)."""

from __future__ import annotations

import shlex
from decimal import Decimal
from pathlib import Path

import pytest

from tests.cli.test_openai_runs import arithmetic, completions, configure

PRICES = "price_per_million_input = 1000\nprice_per_million_output = 2000\ncurrency = \"EUR\""


def priced(project: Path, server, *, extra: str = "", privacy: str | None = "full", cache: str = "") -> dict[str, str]:
    env = configure(project, server, privacy=privacy, extra=PRICES + ("\n" + extra if extra else ""))
    if cache:
        with (project / "evalkit.toml").open("a") as config:
            config.write(cache)
    return env


def expected_cost(server) -> str:
    """What the server's usage costs at PRICES: one token a word (its own rule)."""
    total = Decimal(0)
    for request in completions(server):
        prompt = sum(len(m["content"].split()) for m in request.body["messages"])
        answer = arithmetic(request.body)
        total += (Decimal(1000) * prompt + Decimal(2000) * len(answer.split())) / Decimal(1_000_000)
    return str(total)


def test_a_run_sums_its_usage_and_cost_in_the_summary_json_show_history_compare_and_reports(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    first = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert first.code == 0, first.stderr
    document = first.json()
    spend = document["spend"]
    assert spend["currency"] == "EUR" and spend["cost"] == expected_cost(chat_server)
    assert spend["generator"]["requests"] == len(completions(chat_server)) == document["case_count"]
    assert spend["generator"]["prompt_tokens"] > 0 and spend["generator"]["completion_tokens"] > 0
    case = document["cases"][0]
    assert case["usage"]["prompt_tokens"] > 0 and case["usage"]["total_tokens"] == case["usage"]["prompt_tokens"] + case["usage"]["completion_tokens"]

    text = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert text.code == 0, text.stderr
    assert "Tokens:     " in text.stdout and f"Cost:       {spend['cost'].rstrip('0')} EUR" in text.stdout
    run_ids = [document["run_id"], None]
    shown = evalkit_cli("show", document["run_id"], env=env)
    assert shown.code == 0 and "Cost:       " in shown.stdout and " EUR" in shown.stdout
    history = evalkit_cli("history", "arith.basic", env=env)
    assert history.code == 0 and "Cost" in history.stdout and "EUR" in history.stdout, history.stdout
    history_json = evalkit_cli("history", "arith.basic", "--json", env=env).json()
    assert all(run["spend"]["currency"] == "EUR" for run in history_json["runs"])
    run_ids[1] = history_json["runs"][0]["run_id"]
    compared = evalkit_cli("compare", run_ids[0], run_ids[1], env=env)
    assert compared.code in (0, 1) and "Cost" in compared.stdout and "+0 EUR" in compared.stdout, compared.stdout
    compared_json = evalkit_cli("compare", run_ids[0], run_ids[1], "--json", env=env).json()
    cost = compared_json["cost"]
    assert (cost["baseline"], cost["run"], cost["currency"]) == (spend["cost"], spend["cost"], "EUR") and Decimal(cost["delta"]) == 0
    for fmt in ("markdown", "html", "junit", "json"):
        out = project / f"report.{fmt}"
        reported = evalkit_cli("report", run_ids[0], "--format", fmt, "--output", str(out), env=env)
        assert reported.code == 0, reported.stderr
        assert "EUR" in out.read_text(), fmt


def test_an_unpriced_instance_reads_unknown_never_zero(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert result.code == 0, result.stderr
    spend = result.json()["spend"]
    assert spend["cost"] is None and spend["currency"] is None and spend["generator"]["prompt_tokens"] > 0
    text = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert "Cost:       unknown" in text.stdout and "0 USD" not in text.stdout
    history = evalkit_cli("history", "arith.basic", env=env)
    assert "unknown" in history.stdout
