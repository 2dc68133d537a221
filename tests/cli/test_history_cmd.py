"""`evalkit history SET`: newest first, verdicts as stored, one trend line per series."""

from __future__ import annotations

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with, run_json


def test_an_installed_set_never_run_has_an_empty_history(evalkit_cli, project) -> None:
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    result = evalkit_cli("history", "arith.basic")
    assert result.code == 0 and 'No stored runs of set "arith.basic".' in result.stdout
    assert evalkit_cli("history", "arith.basic", "--json").json() == {"set": "arith.basic", "runs": [], "series": []}


def test_history_without_a_store_names_the_path_and_creates_nothing(evalkit_cli, project) -> None:
    result = evalkit_cli("history", "evalkit.smoke")
    assert result.code == 2 and result.stdout == ""
    assert f"There is no results store at {project / '.evalkit' / 'results.db'}" in result.stderr
    assert "No configuration file was found" in result.stderr
    assert not (project / ".evalkit").exists()


def test_history_lists_runs_newest_first_with_their_verdicts_and_a_trend(evalkit_cli, project) -> None:
    answer_with(project, ARITH_GOOD)
    first = run_json(evalkit_cli, "arith.basic")
    answer_with(project, {**ARITH_GOOD, "add-7-5": "13", "times-table": "forty-two", "json-sum": "7"})
    second = run_json(evalkit_cli, "arith.basic")
    answer_with(project, ARITH_GOOD)
    third = run_json(evalkit_cli, "arith.basic")
    ad_hoc = evalkit_cli("run", "arith.basic", "--provider", "reference", "--json").json()

    document = evalkit_cli("history", "arith.basic", "--json").json()
    runs = document["runs"]
    assert [r["run_id"] for r in runs] == [ad_hoc["run_id"], third["run_id"], second["run_id"], first["run_id"]]
    assert [r["verdict"]["state"] for r in runs] == ["not_comparable", "no_regression", "regressed", "baseline"]
    # The regressed run never became the baseline: the third run is compared with the first.
    assert runs[1]["verdict"]["baseline_id"] == first["run_id"]
    assert runs[2]["verdict"]["baseline_id"] == first["run_id"]
    # As good as the first run, not significantly better: the first stays the baseline.
    assert [r["accepted"] and r["accepted"]["how"] for r in runs] == [None, None, None, "first"]
    assert [r["current_baseline"] for r in runs] == [False, False, False, True]
    assert "Regression: pass rate dropped 50.0 pp" in runs[2]["verdict"]["note"]
    assert [r["pass_rate"] for r in runs[1:]] == [1.0, 0.5, 1.0]
    assert "cases" not in runs[0]

    series = {(s["identity"], s["grader"]): s for s in document["series"]}
    verified = series[("my-app-2025-01 (my-app/my-app)", "deterministic")]
    assert verified["runs"] == [first["run_id"], second["run_id"], third["run_id"]]
    assert verified["sparkline"] == "█▅█"
    assert ("unverified (reference/?)", "deterministic") in series or len(series) == 2

    table = evalkit_cli("history", "arith.basic")
    assert table.code == 0
    lines = table.stdout.splitlines()
    rows = [line for line in lines if first["run_id"] in line or second["run_id"] in line or third["run_id"] in line]
    assert [r.split("│")[1].strip() for r in rows] == [third["run_id"], second["run_id"], first["run_id"]]
    assert "REGRESSED" in rows[1] and "50.0%" in rows[1] and "baseline" in rows[2] and "ok" in rows[0]
    assert rows[0].rstrip().endswith("no") and rows[1].rstrip().endswith("no") and rows[2].rstrip().endswith("* first")
    assert "  my-app-2025-01 (my-app/my-app) · deterministic\n    █▅█  100.0% → 100.0%  (3 runs)\n" in table.stdout
    trend = table.stdout.split("Trend (pass rate")[1]
    assert all(len(line) <= 80 for line in trend.splitlines()), "the trend fits 80 columns"


def test_limit_keeps_the_newest_runs(evalkit_cli) -> None:
    ids = [evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"] for _ in range(3)]
    limited = evalkit_cli("history", "evalkit.smoke", "--limit", "2", "--json").json()
    assert [r["run_id"] for r in limited["runs"]] == ids[:0:-1]
    assert evalkit_cli("history", "evalkit.smoke", "--limit", "0").code == 2


def test_a_long_history_draws_the_newest_fifty_runs(evalkit_cli, project) -> None:
    for _ in range(52):
        assert evalkit_cli("run", "evalkit.smoke").code == 0
    table = evalkit_cli("history", "evalkit.smoke", "--limit", "60", env={"COLUMNS": "80"})
    assert table.code == 0, table.stderr
    bars = next(line for line in table.stdout.splitlines() if "100.0% → 100.0%" in line).split()[0]
    assert bars == "…" + "█" * 50
    document = evalkit_cli("history", "evalkit.smoke", "--limit", "60", "--json").json()
    assert len(document["series"][0]["pass_rates"]) == 52, "the JSON keeps every run"


def test_history_and_show_read_an_inconclusive_verdict(evalkit_cli, project) -> None:
    # `evalkit init` configures the paired gate; a second run of its four-case example cannot
    # tell a change from noise, and is stored "inconclusive": history and show once failed on it
    # with an internal error (KeyError) instead of showing it.
    assert evalkit_cli("init").code == 0
    assert evalkit_cli("run", "starter.faq", "--provider", "recorded").code == 0
    second = evalkit_cli("run", "starter.faq", "--provider", "recorded", "--json").json()
    assert second["verdict"]["state"] == "inconclusive"

    table = evalkit_cli("history", "starter.faq")
    assert table.code == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if second["run_id"] in line)
    assert "│ inconclusive │" in row

    shown = evalkit_cli("show", second["run_id"])
    assert shown.code == 0, shown.stderr
    assert "Verdict:    inconclusive vs " in shown.stdout


def test_a_mistyped_set_is_refused_by_every_command_that_reads_the_store(evalkit_cli, project) -> None:
    # A typo in the set id of a command that reads the store answered "No stored runs of set
    # "evalkit.smok". Did you mean …", exit 0: a CI step reading a misspelt set's history passed.
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    for command in (
        ("history", "evalkit.smok"), ("baseline", "show", "evalkit.smok"), ("flaky", "evalkit.smok"),
        ("baseline", "export", "evalkit.smok", "-o", "b.json"), ("history", "evalkit.smok", "--json"),
    ):  # fmt: skip
        result = evalkit_cli(*command)
        assert result.code == 2, (command, result.stdout, result.stderr)
        assert (
            'error: Unknown set "evalkit.smok": no installed provider ships it and the store holds no run of it. '
            'Did you mean "evalkit.smoke"?'
        ) in result.stderr, command
    far = evalkit_cli("history", "nobody.ran")
    assert far.code == 2 and 'Unknown set "nobody.ran"' in far.stderr and "Did you mean" not in far.stderr
    assert not (project / "b.json").exists()


def test_a_set_no_longer_installed_still_answers_from_the_store(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-example-faq")}
    ran = evalkit_cli("run", "example_faq.office", "--provider", "reference", "--json", env=env)
    assert ran.code in (0, 1), ran.stderr
    # uninstalled: the store still knows the set, and a typo of it is told its stored name
    history = evalkit_cli("history", "example_faq.office", "--json")
    assert history.code == 0 and [r["run_id"] for r in history.json()["runs"]] == [ran.json()["run_id"]]
    assert evalkit_cli("flaky", "example_faq.office", "--provider", "reference").code == 0
    typo = evalkit_cli("history", "example_faq.ofice")
    assert typo.code == 2 and 'Did you mean "example_faq.office"?' in typo.stderr, typo.stderr


def test_a_mistyped_filter_is_refused_and_a_known_one_without_runs_answers_empty(evalkit_cli, project) -> None:
    # `evalkit baseline show SET --provider refrence` said "No accepted baseline … matches", exit 0
    assert evalkit_cli("run", "evalkit.smoke", "--provider", "reference").code == 0
    for command, said in (
        (("flaky", "evalkit.smoke", "--provider", "refrence"), '--provider "refrence": no provider of that name'),
        (("baseline", "show", "evalkit.smoke", "--provider", "refrence"), '--provider "refrence": no provider'),
        (("baseline", "show", "evalkit.smoke", "--grader", "determinstic"), '--grader "determinstic": no grader'),
        (("baseline", "export", "evalkit.smoke", "-o", "b.json", "--grader", "determinstic"), '--grader "determinstic"'),
        (("baseline", "show", "evalkit.smoke", "--retriever", "evalkit.lexicl"), '--retriever "evalkit.lexicl"'),
        (("baseline", "show", "evalkit.smoke", "--deployment", "stagng"), '--deployment "stagng": no deployment'),
        # an alias no configured instance sends and no stored run sent: a typo (it answered empty, exit 0)
        (("flaky", "evalkit.smoke", "--model", "gpt-4o-mnii"), '--model "gpt-4o-mnii": no model alias of that name'),
        (("baseline", "show", "evalkit.smoke", "--model", "gpt-4o-mnii"), '--model "gpt-4o-mnii"'),
    ):
        result = evalkit_cli(*command)
        assert result.code == 2 and said in result.stderr, (command, result.stderr)
    assert 'Did you mean "reference"?' in evalkit_cli("flaky", "evalkit.smoke", "--provider", "refrence").stderr
    assert 'Did you mean "deterministic"?' in evalkit_cli("baseline", "show", "evalkit.smoke", "--grader", "determinstic").stderr
    # installed, with no run of the set: an empty answer, as before
    empty = evalkit_cli("baseline", "show", "evalkit.smoke", "--provider", "openai")
    assert empty.code == 0 and 'No accepted baseline of set "evalkit.smoke" matches.' in empty.stdout
    assert evalkit_cli("flaky", "evalkit.smoke", "--provider", "reference").code == 0
    # an alias a configured instance sends, never run: an empty answer
    (project / "evalkit.toml").write_text('[providers.prod]\nadapter = "openai"\nmodel = "gpt-4o-mini"\n', encoding="utf-8")
    configured = evalkit_cli("baseline", "show", "evalkit.smoke", "--model", "gpt-4o-mini")
    assert configured.code == 0, configured.stderr
    assert 'Did you mean "gpt-4o-mini"?' in evalkit_cli("flaky", "evalkit.smoke", "--model", "gpt-4o-mnii").stderr


def test_a_mistyped_run_id_is_told_the_stored_run_it_is_close_to(evalkit_cli, project) -> None:
    run_id = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    for command in (("show", run_id[:-1]), ("report", run_id[:-1]), ("compare", run_id, run_id[:-1])):
        result = evalkit_cli(*command)
        assert result.code == 2 and result.stderr.rstrip().endswith(f'for run ids). Did you mean "{run_id}"?'), result.stderr


def test_a_retrievers_runs_in_two_deployments_are_two_series_each_named(evalkit_cli, project, plugin_dists) -> None:
    # Staging and production runs of one retriever were one series, "unverified (fixtures.scripted)",
    # their pass rates alternating in one trend line read as a retriever going up and down, and the
    # table did not say which run measured which deployment; their baselines are scoped apart.
    import json

    env = {"PYTHONPATH": plugin_dists("evalkit-retrieval-fixtures")}
    (project / "good.json").write_text(json.dumps({"deserialize a JSON document": ["doc-json"]}), encoding="utf-8")
    (project / "bad.json").write_text(json.dumps({}), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        '[deployments.staging.retrievers."fixtures.scripted"]\nanswers = "bad.json"\n'
        '[deployments.production.retrievers."fixtures.scripted"]\nanswers = "good.json"\n',
        encoding="utf-8",
    )
    for deployment in ("production", "staging", "production", "staging"):
        ran = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", deployment, env=env)
        assert ran.code == 0, ran.stderr
    document = evalkit_cli("history", "retrievalkit.tiny", "--json", env=env).json()
    series = {s["identity"]: s for s in document["series"]}
    assert set(series) == {'fixtures.scripted in deployment "production"', 'fixtures.scripted in deployment "staging"'}
    assert series['fixtures.scripted in deployment "production"']["pass_rates"] == [0.5, 0.5]
    assert series['fixtures.scripted in deployment "staging"']["pass_rates"] == [0.25, 0.25]
    assert series['fixtures.scripted in deployment "staging"']["deployment"] == "staging"
    table = evalkit_cli("history", "retrievalkit.tiny", env=env).stdout
    assert table.count('fixtures.scripted in deployment "staging"') == 3, "two rows and one trend"
    assert '  fixtures.scripted in deployment "production" · retrieval_hit_rate\n' in table


def test_a_run_whose_every_case_errored_has_no_rate_in_the_trend(evalkit_cli, project, plugin_dists) -> None:
    # Its table cell said "—" (no case scored), but the trend drew it as a 0 % bar ("0.0% → 0.0%")
    # and --json's pass_rates said 0.0: a retriever that failed read as one that found nothing.
    import json

    env = {"PYTHONPATH": plugin_dists("evalkit-retrieval-fixtures")}
    (project / "good.json").write_text(json.dumps({"deserialize a JSON document": ["doc-json"]}), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        '[deployments.x.retrievers."fixtures.garbage"]\nmode = "string"\n'
        '[deployments.x.retrievers."fixtures.scripted"]\nanswers = "good.json"\n',
        encoding="utf-8",
    )
    for retriever in ("fixtures.scripted", "fixtures.garbage", "fixtures.scripted"):
        ran = evalkit_cli("retrieval", "retrievalkit.tiny", retriever, "--deployment", "x", env=env)
        assert ran.code in (0, 3), ran.stderr
    document = evalkit_cli("history", "retrievalkit.tiny", "--json", env=env).json()
    series = {s["identity"]: s for s in document["series"]}
    assert series['fixtures.garbage in deployment "x"']["pass_rates"] == [None]
    assert series['fixtures.garbage in deployment "x"']["sparkline"] == " "
    assert series['fixtures.scripted in deployment "x"']["pass_rates"] == [0.5, 0.5]
    table = evalkit_cli("history", "retrievalkit.tiny", env=env).stdout
    assert '  fixtures.garbage in deployment "x" · retrieval_hit_rate\n       — → —  (1 run)\n' in table, table
    assert " 0.0%" not in table, table
