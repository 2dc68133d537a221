"""Verdicts with error bars, end to end through the CLI against the test chat server (issue 33):
the bar that never moves down by itself (the drift sequence), the uncertainty every comparison
carries, the gate that knows noise and its configuration, repeats and flaky cases, the plan, and
the backend behind an alias (a LiteLLM-style swap)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.chat_server import StochasticResponder

KEY = "sk-test-verdicts-0123456789abcdef"
SET = "verdicts.words"


def write_set(project: Path, n: int) -> list[str]:
    """A set of ``n`` cases ``Say w-I`` that pass when the answer contains ``w-I``; their prompts."""
    prompts = [{"id": f"case-{i:02d}", "prompt": f"Say w-{i:02d}", "assertions": [{"contains": f"w-{i:02d}"}]} for i in range(n)]
    (project / "evals").mkdir(exist_ok=True)
    (project / "evals" / "words.json").write_text(json.dumps({"identifier": SET, "name": "Words", "prompts": prompts}))
    return [p["prompt"] for p in prompts]


def configure(project: Path, server, gate: str = "", extra: str = "") -> dict[str, str]:  # noqa: ANN001
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["evals/*.json"]\n'
        f'[providers.prod]\nadapter = "openai"\nbase_url = "{server.base_url}"\nmodel = "smart"\n'
        'api_key_env = "EVALKIT_TEST_KEY"\nmax_attempts = 1\ntimeout = 5\n'
        f"{extra}\n{gate}\n"
    )
    return {"EVALKIT_TEST_KEY": KEY}


def breaking(broken: set[str]):  # noqa: ANN201
    """A model that answers every prompt but those in ``broken`` (by prompt text) correctly."""

    def respond(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        return "I cannot say." if prompt in broken else prompt

    return respond


@pytest.fixture
def words(project: Path) -> list[str]:
    return write_set(project, 12)


def run(evalkit_cli, env, *args: str):  # noqa: ANN001, ANN201
    result = evalkit_cli("run", SET, "--provider", "prod", *args, env=env)
    assert result.code in (0, 1), result.stdout + result.stderr
    return result


# -- §1 the bar never moves down by itself ----------------------------------------------------------


def test_the_drift_sequence_fails_the_gate_once_the_cumulative_drop_exceeds_the_tolerance(evalkit_cli, project, chat_server, words) -> None:
    """Four runs, each breaking one more case of a 12-case set: once every run passing its own
    comparison was accepted and the bar drifted to 66.7 % green. Now the baseline stays the first
    run, and the run whose cumulative drop exceeds 10 pp fails."""
    env = configure(project, chat_server)
    chat_server.responder = breaking(set())
    first = run(evalkit_cli, env, "--json").json()
    assert first["accepted"]["how"] == "first"
    codes, states, notes = [], [], []
    for broken in range(1, 5):
        chat_server.responder = breaking(set(words[:broken]))
        result = run(evalkit_cli, env, "--fail-on-regression", "--json")
        document = result.json()
        codes.append(result.code)
        states.append(document["verdict"]["state"])
        notes.append(document["verdict"]["acceptance_note"])
        assert document["verdict"]["baseline_id"] == first["run_id"], "the bar stays where the first run put it"
        assert document["accepted"] is None
    # 1 broken: 8.3 pp (within 10 pp); 2 broken: 16.7 pp — the gate fails from there on
    assert states == ["no_regression", "regressed", "regressed", "regressed"] and codes == [0, 1, 1, 1]
    assert "worse than the baseline on pass_rate" in notes[0]  # passed, stored, not accepted

    # The paired gate on 12 cases cannot call a 16.7 pp drop significant: it says so, and fails the gate only when asked to.
    paired = run(evalkit_cli, env, "--gate", "paired", "--fail-on-regression")
    assert paired.code == 0 and "Inconclusive" in paired.stdout and "the smallest drop of pass rate it detects is" in paired.stdout
    assert "--fail-on-inconclusive makes it fail the gate" in paired.stdout
    strict = run(evalkit_cli, env, "--gate", "paired", "--fail-on-inconclusive", "--json")
    assert strict.code == 1 and strict.json()["verdict"]["state"] == "inconclusive"

    # Lowering the bar is a decision someone takes, and records.
    latest = strict.json()["run_id"]
    accepted = evalkit_cli("baseline", "accept", latest, "--reason", "four answers changed on purpose", env=env)
    assert accepted.code == 0, accepted.stderr
    again = run(evalkit_cli, env, "--fail-on-regression", "--json")
    assert again.code == 0 and again.json()["verdict"]["baseline_id"] == latest


def test_a_significantly_better_run_is_accepted_and_a_passing_worse_one_is_not(evalkit_cli, project, chat_server) -> None:
    words = write_set(project, 30)
    env = configure(project, chat_server)
    chat_server.responder = breaking(set(words[:8]))
    first = run(evalkit_cli, env, "--json").json()
    chat_server.responder = breaking(set(words[:1]))  # seven fixed: significant (p = 1/128)
    better = run(evalkit_cli, env, "--json").json()
    assert better["accepted"]["how"] == "no_regression" and "significantly better" in better["accepted"]["reason"]
    chat_server.responder = breaking(set(words[:2]))  # one case worse: passes the gate, not accepted
    worse = run(evalkit_cli, env)
    assert worse.code == 0 and "No regression" in worse.stdout
    assert f"Not accepted as the baseline: run {better['run_id']} stays the baseline (it is worse than the baseline on pass_rate" in worse.stdout
    history = evalkit_cli("history", SET, "--json", env=env).json()["runs"]
    assert [r["accepted"] and r["accepted"]["how"] for r in history] == [None, "no_regression", "first"]
    assert first["run_id"] == history[2]["run_id"]


@pytest.mark.parametrize("method", ["tolerance", "paired"])
def test_a_lucky_run_does_not_move_the_bar_up(evalkit_cli, project, chat_server, method) -> None:
    """Two cases fixed of 30 (exact p = 1/4): better, not significantly — under either gate the run
    passes and the bar stays, so an unchanged model does not start failing against a lucky run."""
    words = write_set(project, 30)
    env = configure(project, chat_server, gate=f'[gate]\nmethod = "{method}"\n')
    chat_server.responder = breaking(set(words[:2]))
    first = run(evalkit_cli, env, "--json").json()
    chat_server.responder = breaking(set())
    lucky = run(evalkit_cli, env, "--fail-on-regression", "--json")
    assert lucky.code == 0 and lucky.json()["accepted"] is None
    verdict = lucky.json()["verdict"]
    assert verdict["baseline_id"] == first["run_id"] and verdict["metrics"]["pass_rate"]["delta"] > 0
    if verdict["state"] == "no_regression":
        assert "not significantly better" in verdict["acceptance_note"]
    chat_server.responder = breaking(set(words[:2]))  # the model as it was: compared with the first run, unchanged
    again = run(evalkit_cli, env, "--fail-on-regression", "--json")
    assert again.code == 0 and again.json()["verdict"]["baseline_id"] == first["run_id"]
    assert again.json()["verdict"]["metrics"]["pass_rate"]["delta"] == 0


# -- §2 every comparison carries its uncertainty ------------------------------------------------------


def test_a_comparison_prints_one_line_per_metric_and_writes_one_verdict_object(evalkit_cli, project, chat_server, words) -> None:
    env = configure(project, chat_server)
    chat_server.responder = breaking(set())
    run(evalkit_cli, env)
    chat_server.responder = breaking(set(words[:3]))
    text = run(evalkit_cli, env).stdout
    assert "Statistics on 12 paired cases (tolerance gate;" in text
    assert "  pass rate   100.0% → 75.0%  -25.0 pp (95% CI " in text and "MDD " in text and "tolerance 10.0 pp" in text
    assert "  mean score  1.000 → 0.750  -0.250 (95% CI " in text
    # 10 pp on 12 cases is a promise the set cannot keep: said, with what would keep it
    assert "warning: the tolerance of pass rate (10.0 pp) is below the smallest drop 12 cases can detect" in text
    assert "cases would." in text

    verdict = run(evalkit_cli, env, "--json").json()["verdict"]
    assert verdict["state"] == "regressed" and verdict["pass_rate_delta"] == -0.25  # today's flat keys stay
    pass_rate = verdict["metrics"]["pass_rate"]
    assert set(pass_rate) >= {"baseline", "value", "delta", "ci95", "p_value", "minimum_detectable_drop", "tolerance"}
    assert (pass_rate["baseline"], pass_rate["value"], pass_rate["delta"], pass_rate["tolerance"]) == (1.0, 0.75, -0.25, 0.1)
    low, high = pass_rate["ci95"]
    assert -1 <= low < -0.25 < high <= 1
    assert pass_rate["p_value"] == verdict["mcnemar_p"] == 0.25  # exact McNemar: 3 regressed, 0 fixed
    assert pass_rate["minimum_detectable_drop"] > 0.1 and verdict["warnings"]


# -- §3 a gate that knows noise --------------------------------------------------------------------------


def test_the_gate_is_configured_in_the_file_and_the_options_override_it(evalkit_cli, project, chat_server, words) -> None:
    env = configure(project, chat_server, gate='[gate]\nmethod = "paired"\nmax_regressed_cases = 0\nquarantine = ["case-00"]\n')
    chat_server.responder = breaking(set())
    run(evalkit_cli, env)
    chat_server.responder = breaking({words[0]})
    quarantined = run(evalkit_cli, env, "--fail-on-regression")
    assert quarantined.code == 0, quarantined.stdout
    assert "Quarantined ([gate] quarantine): 1 case left out of the gate, reported here:" in quarantined.stdout
    assert "  - case-00: pass → FAIL" in quarantined.stdout
    chat_server.responder = breaking({words[1]})
    capped = run(evalkit_cli, env, "--fail-on-regression", "--json")
    assert capped.code == 1 and capped.json()["verdict"]["state"] == "regressed"
    assert "max_regressed_cases allows" in capped.json()["verdict"]["reason"]
    assert capped.json()["verdict"]["method"] == "paired"
    loose = run(evalkit_cli, env, "--max-regressed-cases", "1", "--gate", "tolerance", "--fail-on-regression", "--json")
    assert loose.code == 0 and loose.json()["verdict"]["method"] == "tolerance"


def test_a_quarantined_id_that_names_no_case_is_said_not_silently_ignored(evalkit_cli, project, chat_server, words) -> None:
    # quarantine = ["casee-05"] (a typo) kept nothing out of the gate and said nothing: the flaky
    # case went on failing builds while the file said it was quarantined
    env = configure(project, chat_server, gate='[gate]\nquarantine = ["casee-05", "gone"]\n')
    chat_server.responder = breaking(set())
    run(evalkit_cli, env)
    chat_server.responder = breaking({words[0]})
    result = run(evalkit_cli, env, "--fail-on-regression")
    assert "Quarantined (" not in result.stdout  # case-00 regressed, gated as any case
    said = 'warning: [gate] quarantine names "casee-05", which is no case of this run or its baseline, so it keeps nothing out of the gate'
    line = next(line for line in result.stdout.splitlines() if line.startswith(said))
    assert line.endswith('. Did you mean "case-05"?'), line
    assert 'quarantine names "gone", which is no case of this run or its baseline, so it keeps nothing out of the gate.\n' in result.stdout
    warnings = run(evalkit_cli, env, "--fail-on-regression", "--json").json()["verdict"]["warnings"]
    assert line in warnings


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[gatee]\nmethod = "paired"\n', 'unknown table [gatee] — evalkit does not read it. Did you mean "gate"?'),
        ("[gate]\nmax_pass_rate_dorp = 0.5\n", "[gate] has no key 'max_pass_rate_dorp'. Did you mean \"max_pass_rate_drop\"?"),
        ('[gate]\nmethod = "pared"\n', '[gate] method must be "tolerance" or "paired"'),
        # a number written as text was read as the number it spells, where [run] repeats = "3" is refused
        ('[gate]\nalpha = "0.05"\n', "[gate] alpha must be a number from 1e-9 and below 0.5 (the one-sided level), got '0.05', which is text"),
        ('[gate]\nmax_regressed_cases = "3"\n', "[gate] max_regressed_cases must be a whole number from 0 to 999,999,999, got '3', which is text"),
        ('[gate]\nmax_pass_rate_drop = "0.05"\n', "[gate] max_pass_rate_drop must be a finite number in 0..1, got '0.05', which is text"),
    ],
)
def test_a_misspelled_gate_is_refused_before_anything_is_called(evalkit_cli, project, chat_server, words, toml, message) -> None:
    env = configure(project, chat_server, gate=toml)
    result = evalkit_cli("run", SET, "--provider", "prod", env=env)
    assert result.code == 2 and message in result.stderr
    assert chat_server.request_count == 0 and not (project / ".evalkit").exists()


def test_a_bad_gate_option_is_a_usage_error(evalkit_cli, project, chat_server, words) -> None:
    env = configure(project, chat_server)
    for args, message in ((("--alpha", "0.7"), "--alpha must be a number from 1e-9 and below 0.5"),
                          (("--max-regressed-cases", "-1"), "--max-regressed-cases must be a whole number from 0 to 999,999,999, got '-1'"),
                          # ten digits: the message used to say "from 0" and nothing of the bound
                          (("--max-regressed-cases", "1000000000"), "--max-regressed-cases must be a whole number from 0 to 999,999,999, got '1000000000'"),
                          (("--max-regressed-cases", "999999999"), None),
                          (("--gate", "both"), "Invalid value for '--gate': 'both' is not one of")):  # fmt: skip
        before = chat_server.request_count
        result = evalkit_cli("run", SET, "--provider", "prod", *args, env=env)
        if message is None:
            assert result.code == 0, result.stderr
            continue
        assert result.code == 2 and message in result.stderr
        assert chat_server.request_count == before, "a refused option sends nothing"


def test_init_writes_a_paired_gate(evalkit_cli, project) -> None:
    assert evalkit_cli("init").code == 0
    text = (project / "evalkit.toml").read_text()
    assert '[gate]\nmethod = "paired"' in text
    assert evalkit_cli("run", "starter.faq", "--provider", "recorded", "--json").json()["verdict"]["state"] == "baseline"
    second = evalkit_cli("run", "starter.faq", "--provider", "recorded", "--json").json()["verdict"]
    assert second["method"] == "paired" and second["state"] in ("inconclusive", "no_regression")


# -- §4 repeats, flaky cases, the plan --------------------------------------------------------------------


def test_repeats_answer_every_prompt_n_times_and_pair_the_fractions(evalkit_cli, project, chat_server) -> None:
    write_set(project, 10)
    env = configure(project, chat_server, extra="")
    chat_server.responder = StochasticResponder(0.7, seed=3)
    first = run(evalkit_cli, env, "--repeats", "5", "--json")
    assert chat_server.request_count == 10 * 5 + 1  # + the free readiness probe
    document = first.json()
    cases = document["cases"]
    assert all(c["answers"] == 5 for c in cases)
    assert all(c["pass_fraction"] in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0) for c in cases)
    assert all(c["pass_at_n"] == (c["pass_fraction"] > 0) and c["pass_all_n"] == (c["pass_fraction"] == 1) for c in cases)
    summary = document["metrics"]["repeats"]
    assert summary["answers_per_case"] == 5 and summary["flaky_count"] == sum(1 for c in cases if c["flaky"]) > 0
    second = run(evalkit_cli, env, "--json")  # [run] repeats unset: once
    assert "answers" not in second.json()["cases"][0]
    (project / "evalkit.toml").write_text((project / "evalkit.toml").read_text() + "\n[run]\nrepeats = 3\n")
    third = run(evalkit_cli, env, "--show-all")
    assert "Statistics on 10 paired cases, 3 answers each (the baseline's: 5)" in third.stdout
    assert "Repeats:    3 answers per case" in third.stdout and "(flaky)" in third.stdout


def test_flaky_lists_cases_that_flip_back_and_forth(evalkit_cli, project, chat_server, words) -> None:
    env = configure(project, chat_server)
    for broken in (set(), {words[0]}, set(), {words[0], words[1]}, set()):
        chat_server.responder = breaking(broken)
        run(evalkit_cli, env)
    listed = evalkit_cli("flaky", SET, "--provider", "prod", "--json", env=env)
    assert listed.code == 0, listed.stderr
    scope = listed.json()["scopes"][0]
    flaky = {c["id"]: c for c in scope["flaky"]}
    assert set(flaky) == {"case-00", "case-01"}  # case-01 failed once and came back: back and forth too
    assert flaky["case-01"]["flips"] == 2 and flaky["case-00"]["flips"] == 4
    assert [c["id"] for c in scope["flaky"]] == ["case-00", "case-01"]  # most flips first
    assert flaky["case-00"]["flips"] == 4 and flaky["case-00"]["last_outcomes"] == [True, False, True, False, True]
    text = evalkit_cli("flaky", SET, env=env).stdout
    assert "case-00" in text and "✓✗✓✗✓" in text and "quarantine" in text
    # the run's own output marks it when its verdict names it
    chat_server.responder = breaking({words[0]})
    marked = run(evalkit_cli, env)
    assert "  - case-00 (flaky: flipped 5 times in 6 runs)" in marked.stdout


def test_plan_says_what_a_set_can_detect_before_anything_is_called(evalkit_cli, project, chat_server) -> None:
    write_set(project, 30)
    env = configure(project, chat_server)
    planned = evalkit_cli("plan", SET, "--provider", "prod", "--rate", "0.8", "--json", env=env)
    assert planned.code == 0, planned.stderr
    plan = planned.json()
    assert (plan["cases"], plan["repeats"], plan["answers"], plan["rate"]) == (30, 1, 30, 0.8)
    assert plan["detectable"] == pytest.approx(0.335, abs=0.005)  # the exact McNemar figure, not the formula's 0.26
    assert plan["warnings"] and plan["cases_needed"] > 30
    repeated = evalkit_cli("plan", SET, "--provider", "prod", "--rate", "0.8", "--repeats", "5", "--target-drop", "0.2", "--json", env=env).json()
    assert repeated["answers"] == 150 and repeated["detectable"] < plan["detectable"] and repeated["repeats_needed"] >= 1
    text = evalkit_cli("plan", SET, "--provider", "prod", env=env).stdout
    assert "Detectable drop:" in text and "assumed: no stored run of this scope gives one" in text
    assert chat_server.request_count == 0 and not (project / ".evalkit").exists()


def test_plan_without_provider_reads_the_baseline_of_the_one_instance_run_uses(evalkit_cli, project, chat_server) -> None:
    # `evalkit run SET` answers with the only configured instance when none is named; `evalkit plan
    # SET` passed its baseline over and said "assumed: no stored run of this scope gives one"
    write_set(project, 4)
    env = configure(project, chat_server)
    first = evalkit_cli("run", SET, env=env)
    assert first.code == 0, first.stderr
    run_id = re.search(r"\(run (\S+)\)", first.stdout).group(1)
    planned = evalkit_cli("plan", SET, env=env)
    assert planned.code == 0, planned.stderr
    assert f"(the accepted baseline, run {run_id})" in planned.stdout, planned.stdout
    assert "assumed" not in planned.stdout.split("Pass rate:", 1)[1].splitlines()[0]


def test_a_tiny_drop_or_a_rate_at_the_edge_is_planned_not_a_crash(evalkit_cli, project, chat_server) -> None:
    """Numbers the options take (a drop above 0, a rate in 0..1) at their extremes: a target drop of
    1e-300 crashed `evalkit plan` with OverflowError, and a rate of 99.9999999999% planned
    "--repeats 1 with these 30 cases" beside a detectable drop the exact test puts far higher."""
    write_set(project, 30)
    env = configure(project, chat_server)

    def plan(*args: str) -> dict:
        done = evalkit_cli("plan", SET, "--provider", "prod", *args, "--json", env=env)
        assert done.code == 0, done.stderr
        return done.json()

    tiny = plan("--rate", "0.5", "--target-drop", "1e-300")
    assert (tiny["cases_needed"], tiny["repeats_needed"]) == (1_000_000, None), "more answers a case than a run takes are no way"
    text = evalkit_cli("plan", SET, "--provider", "prod", "--target-drop", "1e-300", env=env)
    assert text.code == 0 and "needs 1,000,000 or more cases at 1 answer each\n" in text.stdout, text.stdout + text.stderr
    edge, whole = plan("--rate", "0.999999999999"), plan("--rate", "1")
    assert edge["rate"] == whole["rate"] == pytest.approx(1 - 0.5 / 30), "half a case from the edge, as for 100%"
    assert edge["cases_needed"] == whole["cases_needed"] > 30 and edge["repeats_needed"] == whole["repeats_needed"]
    assert edge["repeats_needed"] is None or edge["repeats_needed"] > 1, "never 'as many answers as now' while the cases fall short"
    assert any("99.9999999999% is within half a case of 100% for 30 cases" in note for note in edge["notes"])


def test_a_tolerance_too_small_to_detect_is_a_warning_not_a_crash_of_the_run(evalkit_cli, project) -> None:
    """`[gate] max_pass_rate_drop = 1e-300` is a number in 0..1: the run's noise warning asked the
    power formulas about that drop, which overflowed a float after the run was stored (an internal
    error in place of the verdict and its exit code)."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, {**ARITH_GOOD, "add-99-1": "99"})  # 5 of 6 pass: the noise is not zero
    config = project / "evalkit.toml"
    config.write_text(config.read_text() + "[gate]\nmax_pass_rate_drop = 1e-300\n")
    for method in ("tolerance", "paired"):
        assert evalkit_cli("run", "arith.basic", "--gate", method, "--json").code == 0
        again = evalkit_cli("run", "arith.basic", "--gate", method, "--fail-on-regression")
        assert again.code == 0, again.stderr
        verdict = "No regression" if method == "tolerance" else "Inconclusive"  # the paired gate cannot rule out a drop of 0
        assert verdict in again.stdout and "1,000,000 or more cases would." in again.stdout, again.stdout


def test_the_smallest_alpha_a_gate_takes_decides_runs_and_plans(evalkit_cli, project) -> None:
    """`[gate] alpha = 1e-20` (above 0, as the check asked) crashed every paired comparison and
    `evalkit plan` with StatisticsError (1 - alpha is 1.0 in a float); the smallest level taken,
    1e-9, decides and plans."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, {**ARITH_GOOD, "add-99-1": "99"})
    config = project / "evalkit.toml"
    plain = config.read_text()
    config.write_text(plain + '[gate]\nmethod = "paired"\nalpha = 1e-20\n')
    refused = evalkit_cli("run", "arith.basic")
    assert refused.code == 2 and "[gate] alpha must be a number from 1e-9 and below 0.5 (the one-sided level), got 1e-20" in refused.stderr, refused.stderr
    config.write_text(plain + '[gate]\nmethod = "paired"\nalpha = 1e-9\n')
    assert evalkit_cli("run", "arith.basic", "--json").code == 0
    again = evalkit_cli("run", "arith.basic", "--fail-on-regression", "--json")
    assert again.code == 0, again.stderr
    assert (again.json()["verdict"]["state"], again.json()["verdict"]["alpha"]) == ("inconclusive", 1e-9)
    planned = evalkit_cli("plan", "arith.basic", "--json")
    assert planned.code == 0 and planned.json()["alpha"] == 1e-9, planned.stderr


# -- §5 the backend behind an alias --------------------------------------------------------------------------


def test_a_litellm_backend_swap_is_not_compared_as_the_same_identity(evalkit_cli, project, chat_server, words) -> None:
    env = configure(project, chat_server)
    chat_server.responder = breaking(set())
    chat_server.reply_headers = (("x-litellm-model-name", "gpt-4o-2024-08-06"),)
    first = run(evalkit_cli, env, "--json").json()
    assert first["metrics"]["serving"]["evidence"]["routed_model"] == "gpt-4o-2024-08-06"
    same = run(evalkit_cli, env, "--json").json()
    assert same["verdict"]["state"] == "no_regression"

    chat_server.reply_headers = (("x-litellm-model-name", "claude-3-5-haiku"),)  # an equally good other model
    swapped = run(evalkit_cli, env, "--fail-on-regression", "--json")
    assert swapped.code == 1
    verdict = swapped.json()["verdict"]
    assert verdict["state"] == "not_comparable" and verdict["baseline_id"] == first["run_id"]
    assert "routed_model 'gpt-4o-2024-08-06' (baseline run" in verdict["reason"] and "'claude-3-5-haiku' (this run)" in verdict["reason"]
    assert swapped.json()["accepted"] is None
    # the new backend becomes the baseline on purpose, and is compared from then on
    assert evalkit_cli("baseline", "accept", swapped.json()["run_id"], "--reason", "gateway moved to haiku", env=env).code == 0
    assert run(evalkit_cli, env, "--json").json()["verdict"]["state"] == "no_regression"

    chat_server.reply_headers = ()  # the gateway stopped naming its backend: compared, with a note
    silent = run(evalkit_cli, env)
    assert "No regression" in silent.stdout and "gave no evidence of the backend serving the alias" in silent.stdout


def test_flaky_grader_filter_leaves_out_runs_without_a_grader_as_the_model_filter_does(evalkit_cli, project, plugin_dists) -> None:
    # a retrieval run's scope has no grader (nor model): `--grader X` listed it, `--model X` did not
    # (an alias a configured instance sends: one neither configured nor stored is refused as a typo)
    env = {"PYTHONPATH": plugin_dists("evalkit-retrieval-fixtures")}
    (project / "evalkit.toml").write_text(
        '[deployments.local]\nretriever = "fixtures.raising"\n[deployments.local.retrievers."fixtures.raising"]\nfail_on = "never"\n'
        '[providers.app]\nadapter = "openai"\nmodel = "smart"\n'
    )
    done = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "local", env=env)
    assert done.code == 0, done.stderr
    every = evalkit_cli("flaky", "retrievalkit.tiny", "--json", env=env)
    assert every.code == 0 and [s["scope"]["kind"] for s in every.json()["scopes"]] == ["retrieval"]
    for option, value in (("--model", "smart"), ("--grader", "deterministic")):
        filtered = evalkit_cli("flaky", "retrievalkit.tiny", option, value, "--json", env=env)
        assert filtered.code == 0 and filtered.json()["scopes"] == [], (option, filtered.stdout)


@pytest.mark.parametrize(
    ("first", "second", "advice"),
    [
        ("wrong", "wrong", None),  # 0 % → 0 %: it said "about 2 cases would", from a noise of 0
        ("wrong", "right", None),  # 0 % → 100 %: the same baseline, the same "about 2 cases"
        ("right", "right", "about 66 cases would."),  # 100 % → 100 %: a drop of 10 pp from 100 % can happen
    ],
)
def test_the_noise_advice_is_given_only_where_the_baseline_can_drop_by_the_tolerance(evalkit_cli, project, first, second, advice) -> None:
    """A pass rate cannot fall below 0: from a 0 % baseline no drop of the 10 pp tolerance can
    happen, so none can hide in noise, and no number of cases is what would tell it."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answers = {"wrong": dict.fromkeys(ARITH_GOOD, "wrong"), "right": ARITH_GOOD}
    answer_with(project, answers[first])
    assert evalkit_cli("run", "arith.basic").code == 0
    answer_with(project, answers[second])
    again = evalkit_cli("run", "arith.basic")
    assert again.code == 0, again.stderr
    pass_rate_warning = [line for line in again.stdout.splitlines() if line.startswith("warning: the tolerance of pass rate")]
    if advice is None:
        assert pass_rate_warning == [] and "about 2 cases" not in again.stdout, again.stdout
    else:
        assert len(pass_rate_warning) == 1 and pass_rate_warning[0].endswith(advice), again.stdout


def test_plan_gives_no_case_count_for_a_drop_the_rate_cannot_make_or_a_drop_of_0(evalkit_cli, project, chat_server) -> None:
    """`evalkit plan` said "10.0 pp needs about N cases" at a pass rate below 10 % (the normal
    formula, where no such drop can happen) and "0.0 pp needs about 0 cases" for a tolerance of 0."""
    write_set(project, 4)
    env = configure(project, chat_server)

    def plan(*args: str) -> tuple[dict, str]:
        done = evalkit_cli("plan", SET, "--provider", "prod", *args, "--json", env=env)
        text = evalkit_cli("plan", SET, "--provider", "prod", *args, env=env)
        assert done.code == 0 and text.code == 0, done.stderr + text.stderr
        return done.json(), next(line for line in text.stdout.splitlines() if line.startswith("Target drop:"))

    none_pass, line = plan("--rate", "0", "--target-drop", "0.2")  # taken as half a case: 12.5 %
    assert none_pass["cases_needed"] is None and none_pass["repeats_needed"] is None
    assert line.endswith("20.0 pp: a pass rate of 12.5% cannot drop that far"), line
    zero, line = plan("--rate", "0.5", "--max-pass-rate-drop", "0")
    assert zero["cases_needed"] is None and line.endswith("0.0 pp: no set can detect a drop of 0"), line
    one_case, line = plan("--rate", "1", "--target-drop", "0.1")  # at 100 %, taken as 87.5 %: a drop can happen
    assert isinstance(one_case["cases_needed"], int) and one_case["cases_needed"] > 4 and "needs about" in line, line
