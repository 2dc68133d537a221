"""The cost estimate of a run before anything is sent (evalkit.run.estimate), for ``evalkit plan``."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from evalkit.config import load_config
from evalkit.errors import UsageError
from evalkit.run.answering.spending import DEFAULT_OUTPUT_TOKENS, estimate_tokens
from evalkit.run.estimate import estimate_set

from tests.cli.test_costs import PRICES, arithmetic, completions
from tests.cli.test_openai_runs import configure


def test_an_estimate_asks_nothing_then_follows_the_stored_usage_of_the_latest_run(evalkit_cli, project, chat_server, monkeypatch) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server, privacy="full", extra=PRICES)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = load_config(project / "evalkit.toml")
    database = f"sqlite:///{project / '.evalkit' / 'results.db'}"
    before = estimate_set("arith.basic", provider="prod", config=config, database=database)
    assert chat_server.requests == [], "an estimate sends nothing, not even a readiness probe"
    assert not (project / ".evalkit" / "results.db").exists(), "an estimate never creates a store"
    from evalkit.catalog import prompt_set_catalog

    prompts = prompt_set_catalog(config=config).get("arith.basic").set.prompts
    assert (before.cases, before.generator_requests, before.judge_requests, before.measured_cases) == (6, 6, 0, 0)
    assert before.prompt_tokens == sum(estimate_tokens(p) for p in prompts)
    assert before.completion_tokens == 6 * DEFAULT_OUTPUT_TOKENS and before.seconds is None and before.from_run is None
    assert before.currency == "EUR"
    assert before.cost == (Decimal(1000) * before.prompt_tokens + Decimal(2000) * before.completion_tokens) / Decimal(1_000_000)

    run = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env).json()
    after = estimate_set("arith.basic", provider="prod", config=config, database=database)
    assert len(completions(chat_server)) == 6, "the estimate after the run asked nothing either"
    assert after.from_run == run["run_id"] and after.measured_cases == 6
    spend = run["spend"]["generator"]
    assert (after.prompt_tokens, after.completion_tokens) == (spend["prompt_tokens"], spend["completion_tokens"])
    assert str(after.cost) == run["spend"]["cost"] and after.document()["cost"] == run["spend"]["cost"]
    assert after.seconds is not None and after.seconds >= 0 and not math.isnan(after.seconds)


def test_an_unpriced_instance_estimates_tokens_and_an_unknown_cost(project, chat_server, monkeypatch) -> None:
    env = configure(project, chat_server)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = load_config(project / "evalkit.toml")
    estimate = estimate_set("arith.basic", provider="prod", config=config, database="sqlite:///:memory:")
    assert estimate.cost is None and estimate.document()["cost"] is None and estimate.prompt_tokens > 0
    with pytest.raises(UsageError):
        estimate_set("no.such_set", provider="prod", config=config, database="sqlite:///:memory:")


def test_an_estimate_takes_the_repeats_a_run_takes(project, chat_server, monkeypatch) -> None:
    """``repeats`` as :func:`evalkit.evaluate_set` takes it: else ``[run] repeats``, else once,
    and refused past what a run takes (1,000)."""
    env = configure(project, chat_server, extra="[run]\nrepeats = 4\n")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = load_config(project / "evalkit.toml")
    configured = estimate_set("arith.basic", provider="prod", config=config, database="sqlite:///:memory:")
    given = estimate_set("arith.basic", provider="prod", config=config, database="sqlite:///:memory:", repeats=2)
    assert (configured.generator_requests, given.generator_requests) == (24, 12)
    assert configured.prompt_tokens == 2 * given.prompt_tokens > 0
    for wrong in (0, 1001, True, 2.0):
        with pytest.raises(UsageError, match=f"repeats must be a whole number from 1 to 1000, got {wrong!r}"):
            estimate_set("arith.basic", provider="prod", config=config, database="sqlite:///:memory:", repeats=wrong)
