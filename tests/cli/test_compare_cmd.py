"""`evalkit compare BASE RUN`: per-case flips, aggregate deltas, exact McNemar p."""

from __future__ import annotations

import json

import pytest
from evalkit.verdict import mcnemar_exact_p

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with, run_json


@pytest.fixture
def two_runs(evalkit_cli, project) -> tuple[str, str]:
    answer_with(project, {**ARITH_GOOD, "add-99-1": "99", "json-sum": "nope"})
    base = run_json(evalkit_cli, "arith.basic")["run_id"]
    answer_with(
        project,
        {
            k: v
            for k, v in {**ARITH_GOOD, "add-2-2": "5", "add-7-5": "11", "json-sum": "nope"}.items()
            if k != "times-table"
        },
    )
    run = run_json(evalkit_cli, "arith.basic")["run_id"]
    return base, run


def test_compare_sorts_every_case_and_weighs_the_flips(evalkit_cli, two_runs) -> None:
    base, run = two_runs
    document = evalkit_cli("compare", base, run, "--json").json()
    assert document["cases"] == {
        "regressed": ["add-2-2", "add-7-5", "times-table"],
        "fixed": ["add-99-1"],
        "still_failing": ["json-sum"],
        "added": [],
        "edited": [],
        "removed": [],
    }
    assert document["mcnemar_p"] == mcnemar_exact_p(3, 1) == 0.625
    assert document["pass_rate_delta"] == pytest.approx(2 / 6 - 4 / 6)
    assert document["regressed"] is True and document["base"]["run_id"] == base
    assert any("incomplete" in note for note in document["notes"]), "the errored case makes RUN incomplete"
    assert document["run"]["errored"] == 1, "an errored case counts as failing: times-table regressed"
    assert document["regressed_checks"] == {
        "add-2-2": {"failed_checks": ["matches_pattern"], "errored": False},
        "add-7-5": {"failed_checks": ["matches_pattern"], "errored": False},
        "times-table": {"failed_checks": [], "errored": True},
    }

    text = evalkit_cli("compare", base, run)
    assert text.code == 0
    out = text.stdout
    assert out.index("Regressed (passed in the baseline, fail now): 3") < out.index(
        "Fixed (failed in the baseline, pass now): 1"
    )
    assert "  - add-2-2: regex\n" in out and "  - times-table: errored\n" in out and "Still failing: 1" in out
    assert "-33.3 pp" in out and "exact McNemar p = 0.625; too few flips to call a trend" in out


def test_fail_on_regression_gates_and_tolerances_apply(evalkit_cli, two_runs) -> None:
    base, run = two_runs
    assert evalkit_cli("compare", base, run, "--fail-on-regression").code == 1
    lenient = evalkit_cli(
        "compare", base, run, "--fail-on-regression", "--max-pass-rate-drop", "0.5", "--max-mean-score-drop", "0.5"
    )
    assert lenient.code == 0 and "No regression" in lenient.stdout
    assert evalkit_cli("compare", run, base, "--fail-on-regression").code == 0


def test_compare_refuses_unknown_runs_runs_of_two_sets_and_bad_tolerances(evalkit_cli, two_runs) -> None:
    base, _ = two_runs
    smoke = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--json").json()["run_id"]
    other = evalkit_cli("compare", base, smoke)
    assert other.code == 2 and "different sets" in other.stderr
    missing = evalkit_cli("compare", base, "nope")
    assert missing.code == 2 and 'there is no run "nope"' in missing.stderr
    bad = evalkit_cli("compare", base, base, "--max-pass-rate-drop", "2")
    assert bad.code == 2 and "must be a finite number in 0..1" in bad.stderr


def test_a_run_compared_with_itself_is_refused(evalkit_cli, two_runs) -> None:
    """`evalkit compare A A` (one id pasted twice) printed a comparison, "inconclusive" under the
    paired gate, and failed the gate under --fail-on-inconclusive: it compared nothing."""
    base, _ = two_runs
    for extra in ((), ("--fail-on-inconclusive",)):
        result = evalkit_cli("compare", base, base, *extra)
        assert result.code == 2, result.stdout + result.stderr
        assert (
            f"BASE and RUN are both run {base}: a run compared with itself tells nothing; name two runs"
            in result.stderr
        )
        assert "Inconclusive" not in result.stdout


def test_retrieval_runs_at_different_k_compare_their_hit_rates_only(evalkit_cli, project, tmp_path) -> None:
    # MRR@10, recall@10 and nDCG@10 of the base were compared with the run's @5 values, labelled
    # "@5" on both sides: a "significant drop" that was only the cut-off, a regression under a
    # [gate] tolerance for nDCG, exit 1 under --fail-on-regression.
    (project / "evalkit.toml").write_text("[gate]\nmax_ndcg_drop = 0.01\n")
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    args = ("retrieval", "evalkit_stdlib.docs", "--deployment", "demo", "--json")
    base = evalkit_cli(*args, env=env).json()["run_id"]
    run = evalkit_cli(*args, "--k", "5", env=env).json()["run_id"]
    result = evalkit_cli("compare", base, run, "--fail-on-regression")
    assert result.code == 0, result.stdout + result.stderr
    assert "The runs measured at different cut-offs (k 10 and 5)" in result.stdout
    assert "nDCG@5" not in result.stdout and "MRR@5" not in result.stdout
    assert "top-1 hit rate  34.4% → 34.4%" in result.stdout
    document = evalkit_cli("compare", base, run, "--json").json()
    assert document["regressed"] is False and document["notes"][0].startswith("The runs measured at different cut-offs")
    # Its report printed the base's MRR@10 and nDCG@10 in the rows "MRR@5" and "nDCG@5" with a
    # delta, and a first line in prompt words ("pass rate +0.0 pp, mean score +0.000") where the
    # command said "top-1 hit rate … top-3 hit rate".
    report = evalkit_cli("compare", base, run, "--report", "markdown:-")
    assert report.code == 0, report.stderr
    first_line = report.stdout.splitlines()[0]
    assert "top\\-1 hit rate \\+0\\.0 pp\\, top\\-3 hit rate \\+0\\.0 pp" in first_line, first_line
    assert "pass rate" not in first_line
    rows = {line.split(" | ")[0]: line for line in report.stdout.splitlines() if line.startswith("| ")}
    assert rows["| MRR\\@5"].split(" | ")[1] == "—" and rows["| MRR\\@5"].rstrip(" |").endswith("—")
    assert rows["| nDCG\\@5"].split(" | ")[1] == "—" and rows["| nDCG\\@5"].rstrip(" |").endswith("—")
    assert rows["| hit\\@1"].split(" | ")[1] == "34.4%", rows


def test_retrieval_runs_of_two_deployments_and_corpora_say_so(evalkit_cli, project, plugin_dists) -> None:
    # Two runs of one retriever in staging and production over corpora of different revisions were
    # compared with no note: both sides read "Model  unverified (fixtures.declaring)", and two
    # runs of different retrievers were "answered by different generators".
    env = {"PYTHONPATH": plugin_dists("evalkit-retrieval-fixtures")}
    (project / "answers.json").write_text(json.dumps({"deserialize a JSON document": ["doc-json"]}), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        '[deployments.staging.retrievers."fixtures.declaring"]\nanswers = "answers.json"\ncorpus_revision = "export-2"\n'
        '[deployments.production.retrievers."fixtures.declaring"]\nanswers = "answers.json"\n'
        '[deployments.production.retrievers."fixtures.scripted"]\nanswers = "answers.json"\n',
        encoding="utf-8",
    )
    ran = [
        evalkit_cli("retrieval", "retrievalkit.tiny", *retriever, "--deployment", deployment, "--json", env=env).json()[
            "run_id"
        ]
        for deployment, retriever in (
            ("production", ("fixtures.declaring",)),
            ("staging", ()),
            ("production", ("fixtures.scripted",)),
        )
    ]
    result = evalkit_cli("compare", ran[0], ran[1], env=env)
    assert result.code == 0, result.stderr
    assert (
        'The runs measured different retrievers or deployments: fixtures.declaring in deployment "production" vs '
        'fixtures.declaring in deployment "staging".'
    ) in result.stdout
    assert 'The runs searched different corpora (corpus revision "corpus-v1" vs "export-2")' in result.stdout
    assert "different generators" not in result.stdout and "unverified" not in result.stdout
    other = evalkit_cli("compare", ran[0], ran[2], "--json", env=env).json()
    assert other["notes"] == [
        'The runs measured different retrievers or deployments: fixtures.declaring in deployment "production" vs '
        'fixtures.scripted in deployment "production".'
    ]


HOSTILE_CHECK = "::error::said [red]x[/red]\x1b[31m\u202e"


def test_a_regressed_case_names_the_checks_it_fails_now_shown_literally(evalkit_cli, project) -> None:
    # compare listed a regressed case by its id alone, while `evalkit run` named its failed checks:
    # the user saw that a case regressed, not which check failed. The name, hostile here, is
    # escaped where it is printed and carried exactly by --json.
    prompts = [
        {
            "id": cid,
            "prompt": "q",
            "assertions": [
                {"kind": "contains", "value": "yes", "name": HOSTILE_CHECK},
                {"kind": "max_words", "value": 3},
            ],
        }
        for cid in ("a", "b")
    ]
    (project / "evals.json").write_text(json.dumps({"identifier": "my.set", "name": "S", "prompts": prompts}))
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["evals.json"]\n[providers.p]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "m"\n'
    )
    ids = []
    for answer in ("yes", "no, this is not it"):
        (project / "answers.jsonl").write_text(
            "".join(json.dumps({"id": cid, "text": answer if cid == "a" else "yes"}) + "\n" for cid in ("a", "b"))
        )
        ids.append(run_json(evalkit_cli, "my.set", "--provider", "p")["run_id"])
    text = evalkit_cli("compare", *ids)
    assert text.code == 0, text.stderr
    assert "  - a: ::error::said [red]x[/red]\\x1b[31m\\u202e, max_words\n" in text.stdout
    assert "\x1b" not in text.stdout and "\u202e" not in text.stdout
    document = evalkit_cli("compare", *ids, "--json")
    assert "\x1b" not in document.stdout and "\u202e" not in document.stdout
    assert document.json()["regressed_checks"] == {
        "a": {"failed_checks": [HOSTILE_CHECK, "within_length"], "errored": False}
    }
