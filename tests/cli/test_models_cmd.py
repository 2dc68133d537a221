"""``evalkit models rank`` end to end: real runs in a real SQLite file, the CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit.cli.models_cmd import POLICY_NAMES
from evalkit.routing import POLICIES
from evalkit_plugins.smoke import SmokeSetProvider

from tests.routing.routing_support import Lab, replay_instance


def smoke_replay(good: bool) -> str:
    """Replay lines answering the smoke set with its references (good) or with nonsense."""
    lines = []
    for prompt in SmokeSetProvider().golden_prompt_sets()[0].prompts:
        reference = prompt.reference
        line: dict[str, object] = {"id": prompt.id, "model": "smoke-model"}
        if not good:
            line["text"] = "I do not know, and that is my final answer to every question you could possibly ask me."
        elif isinstance(reference, str):
            line["text"] = reference
        else:
            line["text"] = reference.text
            line["citations"] = [c.source_id for c in reference.citations]
            if reference.abstained is not None:
                line["abstained"] = reference.abstained
        lines.append(json.dumps(line))
    return "\n".join(lines) + "\n"


def test_runs_made_with_evalkit_run_rank_the_better_instance_first(evalkit_cli, project: Path) -> None:
    (project / "good.jsonl").write_text(smoke_replay(True), encoding="utf-8")
    (project / "bad.jsonl").write_text(smoke_replay(False), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        'database = "sqlite:///.evalkit/results.db"\n\n'
        + replay_instance("bad", "smoke-alias")
        + replay_instance("good", "smoke-alias"),
        encoding="utf-8",
    )
    good = evalkit_cli("run", "evalkit.smoke", "--provider", "good", "--json")
    bad = evalkit_cli("run", "evalkit.smoke", "--provider", "bad", "--json")
    assert good.code == 0, good.stderr
    assert bad.code == 0, bad.stderr
    good_id, bad_id = good.json()["run_id"], bad.json()["run_id"]

    default = evalkit_cli("models", "rank")
    assert default.code == 0, default.stderr
    assert default.stdout.index(" 1. bad ") < default.stdout.index(" 2. good ")  # configuration order
    assert "Selected: bad" in default.stdout

    ranked = evalkit_cli("models", "rank", "--policy", "quality")
    assert ranked.code == 0, ranked.stderr
    out = ranked.stdout
    assert out.startswith("Ranking under policy quality: ")
    assert " 1. good  model smoke-alias  adapter replay  priority 0  cost/1k —  quality 1.0000  score 1.0000" in out
    assert f"runs: {good_id} (evalkit.smoke 1.0000)" in out
    assert f"runs: {bad_id} (evalkit.smoke " in out
    assert out.index(" 1. good ") < out.index(" 2. bad ")
    assert "why:  below good: same priority 0, score" in out
    assert "Selected: good" in out


@pytest.fixture
def lab(project: Path) -> Lab:
    """Runs stored in-process into the database the project's evalkit.toml names."""
    lab = Lab(project, f"sqlite:///{project / 'results.db'}")
    lab.configure(
        replay_instance("alpha", "shared", priority=1)
        + replay_instance("beta", "shared", cost_per_1k_tokens=0.002)
        + replay_instance("gamma", "m-gamma")
        + replay_instance("delta", "m-delta", capabilities=["embeddings"])
    )
    lab.measure("alpha", "tests.set_a", [False, False])
    lab.measure("beta", "tests.set_a", [True, True])
    lab.measure("delta", "tests.set_a", [True, False])
    return lab


def test_json_ranking_carries_quality_runs_and_reasons(evalkit_cli, lab: Lab) -> None:
    result = evalkit_cli("models", "rank", "--policy", "quality", "--capability", "chat", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["method"] == "policy" and document["policy"] == "quality"
    assert document["weights"] == {"quality": 0.7, "health": 0.3, "cost": 0.0}
    assert document["selected"] == "alpha"
    candidates = document["candidates"]
    assert [c["instance"] for c in candidates] == ["alpha", "beta", "gamma"]  # priority, then score 1.0 > 0.5
    assert [c["quality"] for c in candidates] == [0.0, 1.0, None]
    assert [c["score"] for c in candidates] == [0.0, 1.0, 0.5]
    assert len(candidates[0]["run_ids"]) == 1 and candidates[0]["runs"][0]["set"] == "tests.set_a"
    assert candidates[2]["run_ids"] == []
    assert "priority 1 > 0" in candidates[0]["reason"]
    assert "score 0.5000 < 1.0000" in candidates[2]["reason"]
    assert [e["instance"] for e in document["excluded"]] == ["delta"]
    assert "does not offer chat" in document["excluded"][0]["reason"]
    assert "api_key" not in result.stdout and "path" not in candidates[0]


def test_min_quality_ranks_by_quality_alone_and_is_inclusive(evalkit_cli, lab: Lab) -> None:
    result = evalkit_cli("models", "rank", "--min-quality", "0.5", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["method"] == "select_by_quality" and document["min_quality"] == 0.5
    assert [c["instance"] for c in document["candidates"]] == ["beta", "delta"]  # 1.0, then 0.5 (equal stays)
    assert {e["instance"]: e["quality"] for e in document["excluded"]} == {"alpha": 0.0, "gamma": None}

    text = evalkit_cli("models", "rank", "--min-quality", "0.5")
    assert text.code == 0
    assert text.stdout.startswith("Ranking by measured quality: ")
    assert "excluded: quality 0.0000 is below the minimum 0.5" in text.stdout
    assert "a minimum quality of 0.5 needs a measurement" in text.stdout
    assert "Selected: beta" in text.stdout


def test_min_quality_zero_keeps_unmeasured_candidates_behind_the_measured(evalkit_cli, lab: Lab) -> None:
    result = evalkit_cli("models", "rank", "--min-quality", "0", "--json")
    assert result.code == 0
    assert [c["instance"] for c in result.json()["candidates"]] == ["beta", "delta", "alpha", "gamma"]


def test_nothing_qualifying_exits_1(evalkit_cli, lab: Lab) -> None:
    result = evalkit_cli("models", "rank", "--min-quality", "1", "--capability", "embeddings")
    assert result.code == 1
    assert "No candidate qualifies." in result.stdout
    assert "excluded: quality 0.5000 is below the minimum 1" in result.stdout


def test_no_configured_instance_is_a_usage_error_with_a_hint(evalkit_cli, project: Path) -> None:
    result = evalkit_cli("models", "rank", "--database", f"sqlite:///{project / 'r.db'}")
    assert result.code == 2, "nothing configured is a usage problem, not a gate that failed"
    assert "No provider instance is configured" in result.stderr and "[providers.NAME]" in result.stderr
    assert not (project / "r.db").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "bogus"], "Option \"--policy\": unknown routing policy 'bogus'; choose one of provider_priority"),
        (["--policy", ""], "unknown routing policy"),
        (
            ["--policy", "balanc"],
            'choose one of provider_priority, balanced, quality, economy. Did you mean "balanced"?',
        ),
        (["--min-quality", "nan"], 'Option "--min-quality" must be a finite number in 0..1'),
        (["--min-quality", "1.5"], 'Option "--min-quality" must be a finite number in 0..1'),
        (["--min-quality", "-0.1"], 'Option "--min-quality" must be a finite number in 0..1'),
        (["--min-quality", "high"], 'Option "--min-quality" must be a finite number in 0..1'),
        (["--min-quality", "inf"], 'Option "--min-quality" must be a finite number in 0..1'),
        (["--min-quality", ""], 'Option "--min-quality" must be a finite number in 0..1'),
        (["--policy", "quality", "--min-quality", "0.5"], "cannot be combined with --policy"),
        (["--prefer-lowest-cost", "--min-quality", "0.5"], "cannot be combined with --prefer-lowest-cost"),
        (["--capability", " "], "--capability needs a capability name"),
    ],
)
def test_bad_options_exit_2_before_anything_is_opened(
    evalkit_cli, project: Path, args: list[str], message: str
) -> None:
    (project / "evalkit.toml").write_text(
        'database = "sqlite:///.evalkit/results.db"\n\n' + replay_instance("alpha", "m"), encoding="utf-8"
    )
    result = evalkit_cli("models", "rank", *args)
    assert result.code == 2
    assert message in result.stderr
    assert result.stdout == ""
    assert not (project / ".evalkit").exists()


def test_models_without_a_subcommand_exits_2(evalkit_cli) -> None:
    result = evalkit_cli("models")
    assert result.code == 2
    assert "rank" in result.stderr


def test_help_names_every_policy(evalkit_cli) -> None:
    assert POLICY_NAMES == tuple(POLICIES)
    result = evalkit_cli("models", "rank", "--help")
    assert result.code == 0
    for name in POLICIES:
        assert name in result.stdout
