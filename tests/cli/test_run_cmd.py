"""`evalkit run` end to end: real subprocesses, real SQLite files, real installed plugins."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

SMOKE_IDS = [
    "capital-of-france",
    "two-plus-two",
    "opening-hours",
    "contact-json",
    "receipt-deadline",
    "colleague-claims",
    "echo-token",
]


def stored_runs(project: Path) -> list[tuple]:
    db = project / ".evalkit" / "results.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
        if "evalkit_run" not in tables:
            return []
        return conn.execute(
            "select id, status, grader, verified, passed_count, answered_count from evalkit_run order by started_at"
        ).fetchall()


def write_replay(project: Path, answers: dict[str, str], model: str = "my-app-2025-01") -> None:
    lines = [json.dumps({"id": cid, "text": text, "model": model}) for cid, text in answers.items()]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text(
        '[providers.my-app]\nadapter = "replay"\nmodel = "my-app"\npath = "answers.jsonl"\n'
    )


ARITH_GOOD = {
    "add-2-2": "4",
    "add-7-5": "12",
    "add-12-30": "42",
    "add-99-1": "100",
    "times-table": "42",
    "json-sum": '{"sum": 7}',
}


def test_smoke_run_stores_a_baseline_and_the_second_run_compares(evalkit_cli, project) -> None:
    first = evalkit_cli("run", "evalkit.smoke", "--show-all")
    assert first.code == 0, first.stderr
    assert "answers are the set's own references" in first.stdout
    assert "does not report its own" not in first.stdout, "the reference self-check serves no model to echo an alias"
    assert "Pass rate:  100.0% (7/7)" in first.stdout
    assert "recorded as the baseline" in first.stdout
    for case_id in SMOKE_IDS:
        assert case_id in first.stdout
    second = evalkit_cli("run", "evalkit.smoke", "--fail-on-regression")
    assert second.code == 0, second.stderr
    first_id = stored_runs(project)[0][0]
    assert f"No regression: pass rate +0.0 pp, mean score +0.000 versus run {first_id}" in second.stdout
    runs = stored_runs(project)
    assert [r[1:] for r in runs] == [("complete", "deterministic", 1, 7, 7)] * 2


def test_json_output_is_one_document(evalkit_cli) -> None:
    evalkit_cli("run", "evalkit.smoke")
    result = evalkit_cli("run", "evalkit.smoke", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["set"] == "evalkit.smoke"
    assert document["pass_rate"] == 1.0 and document["mean_score"] == 1.0
    assert [c["id"] for c in document["cases"]] == SMOKE_IDS
    assert {c["name"] for c in document["cases"][2]["checks"]} == {
        "stated_the_fact",
        "matches_pattern",
        "avoided_known_error",
    }
    assert document["verdict"]["state"] == "no_regression"
    assert document["baseline_id"] and document["verdict"]["regressed"] is False
    assert document["identity"] == {
        "version": 1,
        "provider_instance": "reference",
        "model_alias": "reference",
        "reported_model": "reference",
    }
    assert "serving" not in (document.get("metrics") or {}), "no echoed-alias note for the reference self-check"


def test_regression_is_flagged_with_the_cases_that_broke_first(evalkit_cli, project) -> None:
    write_replay(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic").code == 0
    write_replay(project, {**ARITH_GOOD, "add-7-5": "13", "times-table": "forty-two"})
    gated = evalkit_cli("run", "arith.basic", "--fail-on-regression")
    assert gated.code == 1, gated.stdout + gated.stderr
    out = gated.stdout
    check_section = out[out.index("Regression check") :]
    assert check_section.index("add-7-5") < check_section.index("Regression: pass rate dropped 33.3 pp")
    assert "times-table" in check_section
    assert "Quality regression detected" in out
    assert "exact McNemar p" in out
    ungated = evalkit_cli("run", "arith.basic")
    assert ungated.code == 0  # no gate: reported, not failed


def test_a_drop_equal_to_the_tolerance_passes_the_gate(evalkit_cli, project) -> None:
    units = {"km-to-m": "3000 metres", "hours-in-week": "168 hours"}
    write_replay(project, units)
    assert evalkit_cli("run", "arith.units").code == 0
    write_replay(project, {**units, "hours-in-week": "about a week"})  # pass rate 1 -> 1/2, mean 1 -> 1/2
    equal = evalkit_cli(
        "run", "arith.units", "--fail-on-regression", "--max-pass-rate-drop", "0.5", "--max-mean-score-drop", "5e-1"
    )
    assert equal.code == 0, equal.stdout
    assert "No regression: pass rate -50.0 pp, mean score -0.500" in equal.stdout
    write_replay(project, units)
    assert evalkit_cli("run", "arith.units").code == 0
    write_replay(project, {**units, "hours-in-week": "about a week"})
    beyond = evalkit_cli(
        "run", "arith.units", "--fail-on-regression", "--max-pass-rate-drop", "0.4999", "--max-mean-score-drop", "1"
    )
    assert beyond.code == 1
    assert "Regression: pass rate dropped 50.0 pp beyond the configured tolerance" in beyond.stdout


@pytest.mark.parametrize("value", ["", "nan", "inf", "-inf", "1.01", "-0.1", "abc", "1e309"])
@pytest.mark.parametrize("option", ["--max-pass-rate-drop", "--max-mean-score-drop"])
def test_bad_tolerances_exit_2_before_anything_is_stored(evalkit_cli, project, option, value) -> None:
    result = evalkit_cli("run", "evalkit.smoke", f"{option}={value}")
    assert result.code == 2
    assert f'Option "{option}" must be a finite number in 0..1' in result.stderr
    assert stored_runs(project) == []


def test_unknown_set_lists_the_available_ones(evalkit_cli, project) -> None:
    result = evalkit_cli("run", "nope.set")
    assert result.code == 2
    assert 'Unknown golden prompt set "nope.set"' in result.stderr
    assert "evalkit.smoke" in result.stderr and "arith.basic" in result.stderr
    assert stored_runs(project) == []


def test_a_set_file_path_given_as_the_set_names_the_identifier_it_declares(evalkit_cli, project) -> None:
    # `evalkit run evals/mine.yaml` said only: Unknown golden prompt set "evals/mine.yaml".
    (project / "evals").mkdir()
    (project / "evals" / "mine.yaml").write_text("identifier: myapp.faq\nname: FAQ\nprompts: []\n")
    result = evalkit_cli("run", "evals/mine.yaml")
    assert result.code == 2
    assert 'it declares the set "myapp.faq": list the file under [sets] paths in evalkit.toml' in result.stderr
    assert "(evalkit run myapp.faq)" in result.stderr
    question = evalkit_cli("retrieval", "evals/mine.yaml")
    assert question.code == 2 and "(evalkit retrieval myapp.faq)" in question.stderr
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    (project / "evals" / "mine.yaml").write_text(
        "identifier: myapp.faq\nname: FAQ\nprompts:\n  - id: p\n    prompt: q\n    reference: r\n"
    )
    listed = evalkit_cli("run", "evals/mine.yaml")
    assert listed.code == 2
    assert (
        'it declares the set "myapp.faq", which is known: run it by that identifier (evalkit run myapp.faq)'
        in listed.stderr
    )
    assert stored_runs(project) == []


@pytest.mark.parametrize(
    ("file_name", "content", "declared"),
    [
        # no header line: the loader takes the file name without .jsonl as the identifier
        ("myapp.faq.jsonl", '{"id": "a", "prompt": "hi"}\n', "myapp.faq"),
        # a member's text that reads like a declaration is not one
        ("myapp.faq.jsonl", '\n{"id": "a", "prompt": "identifier: other.set"}\n', "myapp.faq"),
        ("mine.jsonl", '{"identifier": "myapp.faq", "name": "FAQ"}\n{"id": "a", "prompt": "hi"}\n', "myapp.faq"),
    ],
)
def test_a_jsonl_set_file_path_is_named_by_the_identifier_the_loader_gives_it(
    evalkit_cli, project, file_name, content, declared
) -> None:
    # `evalkit run myapp.faq.jsonl` (no header line) gave the generic hint, though the file holds the set myapp.faq
    (project / file_name).write_text(content)
    result = evalkit_cli("run", file_name)
    assert result.code == 2
    assert f'it declares the set "{declared}": list the file under [sets] paths in evalkit.toml' in result.stderr
    assert f"(evalkit run {declared})" in result.stderr


def test_a_jsonl_set_file_whose_name_is_no_identifier_gets_the_generic_hint(evalkit_cli, project) -> None:
    (project / "My FAQ.jsonl").write_text('{"id": "a", "prompt": "hi"}\n')
    result = evalkit_cli("run", "My FAQ.jsonl")
    assert result.code == 2
    assert (
        "Set files are listed under [sets] paths in evalkit.toml and run by the identifier they declare."
        in result.stderr
    )


@pytest.mark.parametrize("content", [b"name: no identifier\n", b"\xff\xfe" + b"x" * 200_000])
def test_a_set_file_path_without_a_readable_identifier_gets_the_generic_hint(evalkit_cli, project, content) -> None:
    (project / "odd.yaml").write_bytes(content)
    result = evalkit_cli("run", "odd.yaml")
    assert result.code == 2
    assert (
        "Set files are listed under [sets] paths in evalkit.toml and run by the identifier they declare."
        in result.stderr
    )


def test_a_fifo_given_as_the_set_is_not_read_for_the_hint(evalkit_cli, project) -> None:
    import os

    os.mkfifo(project / "pipe")  # opening it to read would wait for a writer
    result = evalkit_cli("run", "pipe")
    assert result.code == 2
    assert 'Unknown golden prompt set "pipe"' in result.stderr and "set file" not in result.stderr


def test_an_unknown_set_names_the_providers_switched_off(evalkit_cli, project) -> None:
    # EVALKIT_DISABLE_PLUGINS=evalkit.smoke made `evalkit run evalkit.smoke` a plain "Unknown set".
    result = evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_DISABLE_PLUGINS": "evalkit.smoke"})
    assert result.code == 2
    assert 'EVALKIT_DISABLE_PLUGINS switches off the provider "evalkit.smoke" (evalkit-golden' in result.stderr
    assert "which may ship it" in result.stderr
    assert "EVALKIT_DISABLE_PLUGINS" not in evalkit_cli("run", "nope.set").stderr


@pytest.mark.parametrize(
    ("switched_off", "args", "unknown"),
    [
        ("replay", ("run", "arith.basic"), 'Unknown generator "replay"'),  # [providers.my-app] adapter = "replay"
        ("replay", ("run", "arith.basic", "--provider", "replay"), 'Unknown provider "replay"'),
        ("evalkit-golden:decision", ("run", "arith.basic", "--grader", "decision"), 'Unknown grader "decision"'),
        (
            "evalkit.lexical",
            ("retrieval", "evalkit_stdlib.docs", "--deployment", "demo"),
            'Unknown retriever "evalkit.lexical"',
        ),
    ],
)
def test_an_unknown_plugin_names_the_switch_that_turned_it_off(
    evalkit_cli, project, switched_off, args, unknown
) -> None:
    """A generator, grader or retriever EVALKIT_DISABLE_PLUGINS switches off was a bare "Unknown
    generator" (with a table to define a provider "replay" of adapter "openai"), as a set was before."""
    write_replay(project, ARITH_GOOD)
    result = evalkit_cli(*args, env={"EVALKIT_DISABLE_PLUGINS": switched_off})
    assert result.code == 2, result.stdout + result.stderr
    name = switched_off.split(":")[-1]
    assert unknown in result.stderr
    assert f'EVALKIT_DISABLE_PLUGINS switches it off ("{name}" of evalkit-golden ' in result.stderr
    assert "take it out of EVALKIT_DISABLE_PLUGINS to use it." in result.stderr
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize("grader", ["llm_judge", "llm_judg", "DETERMINISTIC"])
def test_unknown_grader_lists_the_known_ones(evalkit_cli, project, grader) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--grader", grader)
    assert result.code == 2
    assert f'Unknown grader "{grader}"' in result.stderr and "deterministic" in result.stderr
    assert stored_runs(project) == []


def test_ad_hoc_adapter_runs_are_stored_but_never_compared(evalkit_cli, project) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--fail-on-regression")
    assert result.code == 1
    assert "not compared: no single verified serving identity" in result.stdout
    assert "ad-hoc run" in result.stdout
    assert "Model:      (unknown)" in result.stdout
    assert [r[1:4] for r in stored_runs(project)] == [("complete", "deterministic", 0)]
    assert evalkit_cli("run", "evalkit.smoke", "--provider", "reference").code == 0


def test_a_case_the_generator_cannot_answer_makes_the_run_incomplete(evalkit_cli, project) -> None:
    write_replay(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    result = evalkit_cli("run", "arith.basic", "--fail-on-regression")
    assert result.code == 3
    assert "ERROR" in result.stdout and "has no line for prompt id 'json-sum'" in result.stdout
    assert "the run is incomplete" in result.stdout
    write_replay(project, ARITH_GOOD)
    after = evalkit_cli("run", "arith.basic")
    assert after.code == 0
    assert "recorded as the baseline" in after.stdout  # the incomplete run is never a baseline


def test_unknown_provider_lists_instances_and_adapters(evalkit_cli, project) -> None:
    write_replay(project, ARITH_GOOD)
    result = evalkit_cli("run", "arith.basic", "--provider", "nope")
    assert result.code == 2
    assert 'Unknown provider "nope"' in result.stderr
    assert f'Configured provider instances (in {project / "evalkit.toml"}): "my-app". Adapters' in result.stderr
    assert 'Adapters (evalkit.generators, usable as --provider for an ad-hoc run) are "llm", "openai",' in result.stderr
    # the adapters were listed twice, the first time in "Available providers: my-app (configured),
    # llm, openai, reference, replay (configured in …/evalkit.toml)", as if replay were configured
    assert "Available providers" not in result.stderr and result.stderr.count("replay") == 1, result.stderr


def test_a_misspelt_adapter_key_is_named_with_the_key_meant(evalkit_cli, project) -> None:
    """`adaptr = "replay"` was told `needs adapter = "<generator name>"`, as if nothing was written."""
    (project / "evalkit.toml").write_text('[providers.x]\nadaptr = "replay"\nmodel = "m"\n')
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 2
    assert (
        '[providers.x] needs adapter = "<generator name>", e.g. "openai" ("adaptr" is no key of it: did you mean adapter?)'
        in result.stderr
    )
    assert stored_runs(project) == []


def test_broken_config_is_a_clear_error(evalkit_cli, project) -> None:
    (project / "evalkit.toml").write_text("[providers.x]\nmodel = 'm'\n")
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 2 and "needs adapter" in result.stderr
    (project / "evalkit.toml").write_text("[providers\n")
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 2 and "is not valid TOML" in result.stderr
    assert stored_runs(project) == []


def test_invalid_set_exits_2_naming_every_problem(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-broken-plugin")}
    result = evalkit_cli("run", "broken.invalid", env=env)
    assert result.code == 2
    assert 'set "broken.invalid", prompt "bad-regex": field assertions[1] (regex)' in result.stderr
    assert 'prompt "bad-schema": field assertions[1] (json_schema) is not a valid JSON Schema' in result.stderr
    assert 'prompt "nothing": field id is used by more than one prompt' in result.stderr
    assert stored_runs(project) == []


def test_a_broken_plugin_does_not_break_a_run_that_does_not_use_it(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-broken-plugin")}
    result = evalkit_cli("run", "evalkit.smoke", env=env)
    assert result.code == 0, result.stderr
    assert "Pass rate:  100.0% (7/7)" in result.stdout


def test_a_hook_plugin_adds_an_assertion_kind_and_sees_the_lifecycle(evalkit_cli, project, plugin_dists) -> None:
    log = project / "hooks.log"
    env = {"PYTHONPATH": plugin_dists("evalkit-hook-plugin"), "HOOK_LOG": str(log)}
    result = evalkit_cli("run", "hook.shout", env=env)
    assert result.code == 0, result.stderr
    assert "Pass rate:  50.0% (1/2)" in result.stdout
    events = log.read_text().splitlines()
    assert events[0] == "started hook.shout 2"
    assert sorted(events[1:3]) == ["case loud True", "case quiet False"]
    assert events[3].startswith("finished ") and events[3].endswith(" complete")


def test_a_relative_replay_path_is_relative_to_the_config_file(evalkit_cli, project) -> None:
    write_replay(project, ARITH_GOOD)
    elsewhere = project / "sub"
    elsewhere.mkdir()
    result = evalkit_cli("run", "arith.basic", "--config", str(project / "evalkit.toml"), cwd=elsewhere)
    assert result.code == 0, result.stdout + result.stderr
    assert "Pass rate:  100.0% (6/6)" in result.stdout


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (b'{"id": "add-2-2", "text": "caf\xe9"}\n', "not UTF-8 text (invalid continuation byte at byte "),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 7: not JSON (nested too deeply: line 1 column 501 (char 500))"),
        (
            b'{"id": "add-2-2", "text": "4", "abstained": "no"}\n',
            'line 7: "model" must be a string or null, "abstained" true, false or null',
        ),
        # a second answer to one prompt: the last line won, and nothing said which answer was graded
        (b'{"id": "add-2-2", "text": "5"}\n', "line 7: id 'add-2-2' is answered again (first on line "),
        # a key written twice: the last "id" won, so the line answered another prompt, unsaid
        (
            b'{"id": "add-2-2", "text": "5", "id": "nothing"}\n',
            'line 7: not JSON (key "id" appears more than once: line 1 column 32',
        ),
    ],
)
def test_a_replay_file_no_reader_can_follow_is_a_usage_error_naming_it(
    evalkit_cli, project, tail: bytes, reason: str
) -> None:
    write_replay(project, ARITH_GOOD)
    (project / "answers.jsonl").write_bytes((project / "answers.jsonl").read_bytes() + tail)
    result = evalkit_cli("run", "arith.basic")
    assert result.code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(
        f'evalkit: error: provider instance "my-app" ("replay"): replay file {project / "answers.jsonl"}'
    ), result.stderr
    assert reason in result.stderr, result.stderr


def test_configuration_in_pyproject_tool_evalkit(evalkit_cli, project) -> None:
    lines = [json.dumps({"id": cid, "text": text, "model": "m-1"}) for cid, text in ARITH_GOOD.items()]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "someapp"\n\n[tool.evalkit.providers.app]\nadapter = "replay"\nmodel = "app-v1"\npath = "answers.jsonl"\n'
    )
    result = evalkit_cli("run", "arith.basic", "--json")
    assert result.code == 0, result.stderr
    assert result.json()["identity"] == {
        "version": 1,
        "provider_instance": "app",
        "model_alias": "app-v1",
        "reported_model": "m-1",
    }


def test_the_table_lists_what_needs_a_look_and_counts_the_passing_cases(evalkit_cli) -> None:
    quiet = evalkit_cli("run", "evalkit.smoke")
    assert quiet.code == 0
    assert "All 7 cases passed (--show-all lists them)." in quiet.stdout
    assert "capital-of-france" not in quiet.stdout and "Case" not in quiet.stdout
    every = evalkit_cli("run", "evalkit.smoke", "--show-all")
    assert every.code == 0 and "All 7 cases passed" not in every.stdout
    for case_id in ("capital-of-france", "two-plus-two", "opening-hours", "contact-json", "echo-token"):
        assert case_id in every.stdout


def test_the_failed_cases_kept_for_the_table_are_bounded() -> None:
    from evalkit.cli.run_cmd import LiveFailures
    from evalkit.runs import CaseResult

    kept = LiveFailures()
    kept.LIMIT = 3
    for number in range(10):
        kept.keep(CaseResult(case_id=f"c{number}", passed=number % 2 == 0, score=0.0))
    assert list(kept) == ["c1", "c3", "c5"]  # failed ones only, up to the limit
