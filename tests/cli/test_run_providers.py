"""`evalkit run SET --provider a --provider b`: one run per provider, each its own scope and
verdict, then a side-by-side summary; the exit code is the worst of the runs'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_run_cmd import ARITH_GOOD, stored_runs


def two_providers(project: Path, worse: dict[str, str]) -> None:
    """Replay instances ``good`` (every answer right) and ``worse`` (``worse`` overrides)."""
    for name, answers in (("good", ARITH_GOOD), ("worse", {**ARITH_GOOD, **worse})):
        lines = [json.dumps({"id": cid, "text": text, "model": f"{name}-model"}) for cid, text in answers.items()]
        (project / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text(
        '[providers.good]\nadapter = "replay"\nmodel = "good"\npath = "good.jsonl"\n\n'
        '[providers.worse]\nadapter = "replay"\nmodel = "worse"\npath = "worse.jsonl"\n'
    )


def test_each_provider_gets_its_own_run_then_a_summary_side_by_side(evalkit_cli, project) -> None:
    two_providers(project, {"add-7-5": "13"})
    result = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse")
    assert result.code == 0, result.stderr  # both are their scope's first run: baselines
    out = result.stdout
    assert out.count("Evaluation: arith.basic") == 2
    assert "Side by side: arith.basic  (2 providers)" in out
    summary = out.split("Side by side")[1]
    good = next(line for line in summary.splitlines() if line.startswith("good "))
    worse = next(line for line in summary.splitlines() if line.startswith("worse "))
    assert "100.0% (6/6)" in good and "61.0–100.0%" in good and "baseline" in good
    assert "83.3% (5/6)" in worse
    assert "Cases where they disagree: 1\n  - add-7-5: good pass · worse FAIL" in summary
    assert [run[1:] for run in stored_runs(project)] == [("complete", "deterministic", 1, 6, 6), ("complete", "deterministic", 1, 5, 6)]


def test_json_prints_every_run_and_the_summary_in_one_document(evalkit_cli, project) -> None:
    two_providers(project, {"add-7-5": "13", "times-table": "41"})
    document = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse", "--json").json()
    assert [run["identity"]["provider_instance"] for run in document["runs"]] == ["good", "worse"]
    assert all(len(run["cases"]) == 6 for run in document["runs"])
    summary = document["summary"]
    assert [p["provider"] for p in summary["providers"]] == ["good", "worse"]
    assert summary["providers"][1]["passed"] == 4 and summary["providers"][1]["verdict"] == "baseline"
    low, high = summary["providers"][0]["pass_rate_ci95"]
    assert 0.6 < low < 0.62 and high == 1.0
    assert summary["disagreements"] == [
        {"id": "add-7-5", "passed": {"good": True, "worse": False}},
        {"id": "times-table", "passed": {"good": True, "worse": False}},
    ]


def test_the_exit_code_is_the_worst_of_the_runs(evalkit_cli, project) -> None:
    two_providers(project, {})
    assert evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse").code == 0
    two_providers(project, {"add-7-5": "13", "add-2-2": "5"})
    gated = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse", "--fail-on-regression")
    assert gated.code == 1, gated.stdout
    summary = gated.stdout.split("Side by side")[1]
    assert "no_regression" in next(line for line in summary.splitlines() if line.startswith("good "))
    assert "regressed" in next(line for line in summary.splitlines() if line.startswith("worse "))


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (("--run-id", "r1"), "--run-id"),
        (("--baseline", "r0"), "--baseline"),
        (("--shard", "1/2"), "--shard"),
        (("--report", "junit:out.xml"), "--report"),
        (("--provider", "good"), '--provider "good" is given twice'),
    ],
)
def test_options_that_name_one_run_are_refused_with_several_providers(evalkit_cli, project, extra, named) -> None:
    two_providers(project, {})
    refused = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse", *extra)
    assert refused.code == 2 and named in refused.stderr, refused.stderr
    assert stored_runs(project) == [] and not (project / "out.xml").exists()


def test_an_internal_error_after_every_provider_ran_names_each_stored_run(evalkit_cli, project, monkeypatch) -> None:
    """A bug in the side-by-side summary, after each provider's run was stored, exited 2 ("nothing
    stored"): it names every run it kept (exit 3)."""
    from evalkit.cli import provider_comparison

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in the summary")

    two_providers(project, {})
    monkeypatch.setattr(provider_comparison, "render_summary", broken)
    result = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse")
    assert result.code == 3, result.stderr
    first, second = (run[0] for run in stored_runs(project))
    assert (
        f"internal error (an evalkit bug) after runs {first}, {second} were stored: RuntimeError: a bug in the summary — "
        f"the runs and their results are kept (see `evalkit show {first}`, `evalkit show {second}`)"
    ) in result.stderr


@pytest.mark.parametrize(("unknown", "said"), [("nosuch", 'Unknown provider "nosuch"'), ("", "--provider is empty")])
def test_an_unknown_provider_among_several_is_refused_before_any_runs(evalkit_cli, project, unknown, said) -> None:
    # it was found only when its turn came: the providers before it had run and were stored, and
    # the refusal exited 3 as a failure after a stored run
    two_providers(project, {})
    refused = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", unknown, "--provider", "worse")
    assert refused.code == 2 and said in refused.stderr, refused.stderr
    assert stored_runs(project) == []
