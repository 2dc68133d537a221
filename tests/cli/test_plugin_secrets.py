"""What evalkit reads from a generator besides its answers — ``secret_values()`` and
``concurrency`` — read from a real installed distribution (tests/data/evalkit-secretive-plugins)
that breaks the contract: the run is refused naming the plugin, or goes on, never hangs, fills
memory or ends in an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

UNHASHABLE_KEY = "sk-unhashable-0123456789abcdef"


@pytest.fixture
def secretive(plugin_dists) -> dict[str, str]:  # noqa: ANN001 - the suite's fixture
    return {"PYTHONPATH": plugin_dists("evalkit-secretive-plugins")}


def _configure(project: Path, adapter: str) -> None:
    (project / "evalkit.toml").write_text(f'[providers.x]\nadapter = "{adapter}"\nmodel = "m"\n')


@pytest.mark.parametrize(
    ("adapter", "problem"),
    [
        ("secretive.endless", "secret_values() returned more than 1,000 values (one that never ends?)"),
        ("secretive.huge", "secret_values() returned a value of 10,000,000 characters, more than the 10,000 a secret may have"),
    ],
    ids=["endless", "huge"],
)
def test_a_generator_whose_secrets_cannot_be_kept_out_of_sight_is_refused_naming_it(evalkit_cli, project, secretive, adapter, problem) -> None:
    # Before: the endless one filled memory at the generator's creation (tuple() of it); the huge
    # one was compiled into a scrubbing pattern for minutes and gigabytes before a line was printed.
    _configure(project, adapter)
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "x", env=secretive, timeout=60)
    assert result.code == 2, result.stderr
    assert f'generator "{adapter}" (evalkit-secretive-plugins 0.1.0): {problem}' in result.stderr
    assert "internal error" not in result.stderr
    assert not (project / ".evalkit" / "results.db").exists() or evalkit_cli("history", "evalkit.smoke").code != 0


def test_a_secret_whose_hash_raises_is_scrubbed_as_plain_text(evalkit_cli, project, secretive) -> None:
    # Before: "internal error (an evalkit bug): RuntimeError: no hash for you", exit 2.
    _configure(project, "secretive.unhashable")
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "x", "--privacy", "full", "--json", env=secretive)
    assert result.code in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "complete"
    assert {case["answer"] for case in document["cases"]} == {"ok ***"}
    assert UNHASHABLE_KEY not in result.stdout + result.stderr


def test_a_concurrency_property_that_raises_is_no_concurrency_said(evalkit_cli, project, secretive) -> None:
    # Before: "internal error (an evalkit bug): RuntimeError: the pool is not configured", exit 2.
    _configure(project, "secretive.touchy_concurrency")
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "x", "--json", env=secretive)
    assert result.code in (0, 1), result.stderr
    assert json.loads(result.stdout)["status"] == "complete"


def test_plan_of_a_generator_whose_max_tokens_property_raises_estimates_as_for_none(evalkit_cli, project, secretive) -> None:
    # Before: "internal error (an evalkit bug): RuntimeError: the client is not configured", exit 2.
    _configure(project, "secretive.touchy_max_tokens")
    result = evalkit_cli("plan", "evalkit.smoke", "--provider", "x", env=secretive)
    assert result.code == 0, result.stderr
    assert "Tokens:" in result.stdout and "internal error" not in result.stderr
