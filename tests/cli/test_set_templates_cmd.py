"""Prompt templates × variables through the CLI: validate, schema, run, and set versions per row."""

from __future__ import annotations

import json
from pathlib import Path

SET = """\
identifier: geo.capitals
name: Capitals
prompts:
  - id: capital
    template: What is the capital of {country}? One word.
    vars: capitals.csv
    id_column: country
    ignore_columns: [source]
    reference: "{capital}"
    assertions:
      - contains: "{capital}"
      - regex: '/^\\w{3,}$/'
"""
CSV = "country,capital,source\nFrance,Paris,atlas\nJapan,Tokyo,atlas\nItaly,Rome,atlas\n"
ANSWERS = {"capital/France": "Paris", "capital/Japan": "Tokyo", "capital/Italy": "Rome"}


def project_with(project: Path, csv_text: str = CSV, answers: dict[str, str] = ANSWERS) -> None:
    (project / "evals").mkdir(exist_ok=True)
    (project / "evals" / "capitals.yaml").write_text(SET)
    (project / "evals" / "capitals.csv").write_text(csv_text)
    answer_with(project, answers)


def answer_with(project: Path, answers: dict[str, str]) -> None:
    lines = [json.dumps({"id": case_id, "text": text, "model": "atlas-1"}) for case_id, text in answers.items()]
    (project / "evals" / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["evals/*.yaml"]\n\n[providers.app]\nadapter = "replay"\nmodel = "atlas"\npath = "evals/answers.jsonl"\n'
    )


def test_validate_lists_the_expanded_prompts_and_run_answers_each_row(evalkit_cli, project: Path) -> None:
    project_with(project)
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stderr
    assert "ok  evals/capitals.yaml" in checked.stdout and "ok  set geo.capitals (3 prompts)" in checked.stdout
    by_reference = evalkit_cli("run", "geo.capitals", "--provider", "reference", "--json")
    assert by_reference.code == 0, by_reference.stderr
    assert by_reference.json()["pass_rate"] == 1.0
    replayed = evalkit_cli("run", "geo.capitals", "--provider", "app", "--json")
    assert replayed.code == 0, replayed.stderr
    document = replayed.json()
    assert [c["id"] for c in document["cases"]] == ["capital/France", "capital/Japan", "capital/Italy"]
    assert document["pass_rate"] == 1.0


def test_editing_one_row_is_one_edited_case_and_a_new_row_an_added_one(evalkit_cli, project: Path) -> None:
    project_with(project)
    first = evalkit_cli("run", "geo.capitals", "--provider", "app", "--json")
    assert first.code == 0, first.stderr
    edited = CSV.replace("Japan,Tokyo", "Japan,Kyoto") + "Spain,Madrid,atlas\n"
    (project / "evals" / "capitals.csv").write_text(edited)
    answer_with(project, {**ANSWERS, "capital/Spain": "Madrid"})
    second = evalkit_cli("run", "geo.capitals", "--provider", "app")
    out = second.stdout
    assert "Edited cases (content changed; baseline → now): 1" in out, out + second.stderr
    assert "  - capital/Japan: pass → FAIL" in out
    assert "Added cases (not in the baseline; 0 fail): 1" in out and "  - capital/Spain  pass" in out
    assert "on the 2 unchanged cases (1 added, 1 edited, 0 removed are reported apart)" in out


def test_validate_names_the_unknown_placeholder_the_row_and_the_unused_column(evalkit_cli, project: Path) -> None:
    project_with(project)
    (project / "evals" / "capitals.yaml").write_text(SET.replace("{country}?", "{contry}?").replace("    ignore_columns: [source]\n", ""))
    result = evalkit_cli("validate", "--json")
    assert result.code == 2
    problems = {(p["file"], p["line"], p["path"], p["reason"]) for p in result.json()["problems"]}
    assert problems == {
        ("evals/capitals.yaml", 5, "prompts[0].template",
         """the placeholder 'contry' names no column of the table in evals/capitals.csv (columns: 'country', 'capital', 'source'). Did you mean "country"?"""),
    }  # fmt: skip
    (project / "evals" / "capitals.yaml").write_text(SET.replace("    ignore_columns: [source]\n", ""))
    (project / "evals" / "capitals.csv").write_text(CSV + "Spain\n")
    result = evalkit_cli("validate")
    assert result.code == 2
    assert "evals/capitals.csv:5: row 4 has 1 field; the header names 3 fields" in result.stderr
    (project / "evals" / "capitals.csv").write_text(CSV)
    result = evalkit_cli("validate")
    assert "evals/capitals.yaml:6:11: prompt 'capital': vars: column 'source' is used by no placeholder; use it, or list it in ignore_columns" in result.stderr
    assert result.code == 2 and evalkit_cli("run", "geo.capitals", "--provider", "app").code == 2


def test_validate_names_the_row_that_lacks_a_variable_and_repeated_ids(evalkit_cli, project: Path) -> None:
    project_with(project)
    (project / "evals" / "capitals.yaml").write_text(SET.replace("capitals.csv", "capitals.jsonl"))
    rows = [{"country": "France", "capital": "Paris", "source": "a"}, {"country": "Japan", "source": "a"}, {"country": "France", "capital": "Lyon"}]
    (project / "evals" / "capitals.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = evalkit_cli("validate", "evals/capitals.yaml")
    assert result.code == 2
    assert (
        "evals/capitals.jsonl:2: row 2 ('Japan') has no value for {capital}, which the template uses "
        "(the template at prompts[0] of evals/capitals.yaml)" in result.stderr
    )
    assert "evals/capitals.jsonl:3: row 3 ('France') expands to the id 'capital/France', which row 1 ('France') already has" in result.stderr


def test_a_value_that_breaks_a_prompt_rule_is_named_at_its_row_and_column(evalkit_cli, project: Path) -> None:
    # a tag made from a row holding a control character, an id made from a row in NFD and a
    # prompt made empty by a row were all placed at the set file's first line ("capitals.yaml:1:1:
    # set ..., prompt "capital/Japan": field tags[1] ..."), by the kernel's check of the built set
    project_with(project)
    tagged = SET.replace("    reference:", '    tags: [geo, "{region}"]\n    reference:').replace("ignore_columns: [source]", "ignore_columns: []")
    (project / "evals" / "capitals.yaml").write_text(tagged.replace("capitals.csv", "capitals.jsonl"))
    rows = [
        {"country": "France", "capital": "Paris", "region": "europe"},
        {"country": "Japan", "capital": "Tokyo", "region": "as\u0007ia"},
        {"country": "Co\u0302te", "capital": "Yamoussoukro", "region": "africa"},
        {"country": "x" * 1000, "capital": "Nowhere", "region": "none"},
    ]
    (project / "evals" / "capitals.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    of = " (the template at prompts[0] of evals/capitals.yaml)"
    for result in (evalkit_cli("validate"), evalkit_cli("run", "geo.capitals", "--provider", "app")):
        assert result.code == 2
        assert (
            "evals/capitals.jsonl:2: row 2 ('Japan') makes prompts[0].tags[1] invalid through its column 'region' "
            '("as\\x07ia" contains control or invisible characters (the first: U+0007, character 3))' + of
        ) in result.stderr, result.stderr
        assert (
            "evals/capitals.jsonl:3: row 3 ('Co\u0302te') makes the id invalid through its column 'country' (the id "
            "'capital/Co\\u0302te' is not in Unicode normal form NFC" in result.stderr
        )
        long_id = next(line for line in result.stderr.splitlines() if "evals/capitals.jsonl:4: row 4 (" in line)
        assert "makes the id invalid through its column 'country' (the id is 1,008 characters long, more than the 1,000 allowed)" in long_id
        assert ":1:1:" not in result.stdout + result.stderr
    (project / "evals" / "capitals.yaml").write_text(SET.replace("What is the capital of {country}? One word.", '"{source}"').replace("ignore_columns: [source]", "ignore_columns: []"))
    (project / "evals" / "capitals.csv").write_text("country,capital,source\nFrance,Paris,atlas\nJapan,Tokyo,\" \"\n")
    result = evalkit_cli("validate")
    assert result.code == 2 and (
        "evals/capitals.csv:3: row 2 ('Japan') makes prompts[0].template invalid through its column 'source' (must not be "
        "empty (or hold only whitespace and control characters))"
    ) in result.stderr, result.stderr


def test_a_set_file_whose_table_cannot_be_read_fails_and_the_problem_names_both_files(evalkit_cli, project: Path) -> None:
    # the table's problem was filed on the table alone: validate printed "ok  evals/capitals.yaml"
    # above it, and a table that could not be read at all did not say which set file named it
    project_with(project)
    (project / "evals" / "plain.yaml").write_text(SET.replace("geo.capitals", "geo.plain").replace("capitals.csv", "plain.csv"))
    (project / "evals" / "plain.csv").write_text(CSV)
    of = "(the template at prompts[0] of evals/capitals.yaml)"
    for table, reason in [
        (b"country,capital,source\nFran\xffce,Paris,atlas\n", f"evals/capitals.csv: is not UTF-8 text (invalid start byte at byte 27) {of}"),
        (CSV.encode() + b"Spain\n", f"evals/capitals.csv:5: row 4 has 1 field; the header names 3 fields {of}"),
        (b"country,capital,source\n", f"evals/capitals.csv: holds no row; a template needs at least one {of}"),
        (None, f"evals/capitals.csv: cannot be read: No such file or directory {of}"),
    ]:
        if table is None:
            (project / "evals" / "capitals.csv").unlink()
        else:
            (project / "evals" / "capitals.csv").write_bytes(table)
        for args in [(), ("evals/capitals.yaml", "evals/plain.yaml")]:
            result = evalkit_cli("validate", *args)
            assert result.code == 2 and reason in result.stderr, (args, result.stderr)
            assert "ok  evals/capitals.yaml" not in result.stdout, (args, result.stdout)
            assert "ok  evals/plain.yaml" in result.stdout and "ok  set geo.plain (3 prompts)" in result.stdout
            document = evalkit_cli("validate", *args, "--json").json()
            assert "evals/capitals.yaml" not in document["checked"] and "evals/plain.yaml" in document["checked"]


def test_the_schema_accepts_a_template_entry(evalkit_cli) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(evalkit_cli("schema", "golden-set").stdout)
    entry = {"id": "t", "template": "Say {w}", "vars": [{"w": "hi", "n": 2}], "id_column": "w", "ignore_columns": ["n"], "assertions": [{"contains": "{w}"}]}
    document = {"identifier": "a.b", "name": "N", "prompts": [entry, {"id": "p", "prompt": "q", "reference": "r"}]}
    assert list(Draft202012Validator(schema).iter_errors(document)) == []
    assert list(Draft202012Validator(schema).iter_errors({**document, "prompts": [{**entry, "vars": "rows.csv"}]})) == []
    for wrong in ({**entry, "prompt": "q"}, {**entry, "vars": []}, {**entry, "vars": [{"w": True}]}, {"id": "t", "template": "x"}):
        assert list(Draft202012Validator(schema).iter_errors({**document, "prompts": [wrong]})), wrong


CONVERSATION = """\
identifier: chat.support
name: Support
prompts:
  - id: lamp
    messages:
      - {role: system, content: You are the shop's assistant.}
      - {role: user, content: I bought a lamp.}
      - {role: assistant, content: Which order?}
      - {role: user, content: A-1234. Can I return it?}
    assertions: [{contains: "30 days"}]
  - id: weather
    messages:
      - {role: user, content: Weather in Paris?}
      - role: assistant
        tool_calls: [{id: call_1, name: get_weather, arguments: {city: Paris}}]
      - {role: tool, tool_call_id: call_1, content: '{"temp": 18}'}
    skip: holds tool calls
    reference: 18 degrees.
"""


def test_a_conversation_validates_and_runs_and_a_skipped_prompt_is_listed_not_run(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "chat.yaml").write_text(CONVERSATION)
    answer_with(project, {"lamp": "Yes, within 30 days.", "weather": "18 degrees."})
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stderr
    assert "ok  set chat.support (1 prompt)" in checked.stdout
    assert "skip  evals/chat.yaml:11: prompts[1] 'weather': holds tool calls" in checked.stdout
    as_json = evalkit_cli("validate", "--json").json()
    assert as_json["skipped"] == [{"file": "evals/chat.yaml", "line": 11, "path": "prompts[1]", "id": "weather", "reason": "holds tool calls"}]
    result = evalkit_cli("run", "chat.support", "--provider", "app", "--json")
    assert result.code == 0, result.stderr
    assert [c["id"] for c in result.json()["cases"]] == ["lamp"]
