"""`evalkit plan SET`: the pass rate its figures assume, read from the store."""

from __future__ import annotations

from pathlib import Path

SET = "planned.mixed"


def test_a_plan_assumes_the_rate_of_its_own_graders_runs_not_of_another_graders(cli, plugin_dists, project: Path) -> None:
    # The latest complete run of the instance was graded by another grader (a plugin's, passing all):
    # `evalkit plan SET` (the deterministic grader) said "Pass rate: 75.0% (the latest complete run,
    # by-plugin)" — a figure of what another grader measured — and not the 50% its own grader gave.
    env = {"PYTHONPATH": plugin_dists("evalkit-raising-plugins")}
    (project / "mixed.yaml").write_text(
        f"identifier: {SET}\nname: Mixed\nprompts:\n"
        "  - {id: says-x, prompt: Say x, assertions: [{contains: x}]}\n"
        "  - {id: says-y, prompt: Say y, assertions: [{contains: y}]}\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["mixed.yaml"]\n[providers.app]\nadapter = "raising.generator"\n')
    own = cli("run", SET, "--provider", "app", "--run-id", "by-deterministic", env=env)
    assert own.code == 0 and "50.0% (1/2)" in own.stdout, own.stdout + own.stderr[-2000:]
    other = cli("run", SET, "--provider", "app", "--grader", "raising.grader", "--run-id", "by-plugin", env=env)
    assert other.code == 0 and "100.0% (2/2)" in other.stdout, other.stdout + other.stderr[-2000:]

    planned = cli("plan", SET, "--json", env=env)
    assert planned.code == 0, planned.stderr[-2000:]
    assert (planned.json()["rate"], planned.json()["rate_source"]) == (0.5, "the latest complete run, by-deterministic")
    by_plugin = cli("plan", SET, "--grader", "raising.grader", "--json", env=env).json()
    assert by_plugin["rate_source"] == "the latest complete run, by-plugin"
    # nor another alias's: `--model other` was never answered, so no stored run gives its rate
    other_alias = cli("plan", SET, "--model", "other", "--json", env=env)
    assert other_alias.code == 0, other_alias.stderr[-2000:]
    assert other_alias.json()["rate_source"].startswith("assumed"), other_alias.json()["rate_source"]
