"""Prompt templates × variables in set files: parsing, tables, expansion, and every mistake's place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit.set_versions import case_fingerprints
from evalkit.setfiles import load_set_files
from evalkit.setfiles.templates import TemplateSyntaxError, parse_template

CAPITALS = """\
identifier: geo.capitals
name: Capitals
prompts:
  - id: capital
    template: What is the capital of {country}? Answer in {{one}} word.
    system_prompt: You know {country} well.
    vars: capitals.csv
    id_column: country
    reference: "{capital}"
    tags: [geo, "{country}"]
    assertions:
      - contains: "{capital}"
        name: named_the_capital
      - contains_none: ["{wrong}", "I don't know"]
      - regex: '/^\\w{2,}\\.?$/'
      - json_schema: {type: string, pattern: "^[A-Z]{1}"}
"""

CSV = "country,capital,wrong\nFrance,Paris,Lyon\nJapan,Tokyo,Osaka\n"


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)  # type: ignore[operator]
    return folder / next(iter(files))


def problems_of(path: Path, root: Path | None = None) -> list[str]:
    return [str(p) for p in load_set_files([path], root=root or path.parent).problems]


def test_parse_template_reads_placeholders_and_escaped_braces() -> None:
    template = parse_template("{{a}} {b} }} {c}{b}")
    assert template.names == ("b", "c")
    assert template.render({"b": "B", "c": "{x}"}) == "{a} B } {x}B"
    assert parse_template("no braces").render({}) == "no braces"


@pytest.mark.parametrize(("text", "reason"), [
    ("a { b", "a lone '{' at character 3; write '{{' for a literal brace"),
    ("a } b", "a lone '}' at character 3; write '}}' for a literal brace"),
    ("x {}", "an empty placeholder {} at character 3; write '{{}}' for literal braces"),
    ("{a{b}", "a lone '{' at character 1; write '{{' for a literal brace"),
])  # fmt: skip
def test_parse_template_refuses_lone_braces_with_their_place(text: str, reason: str) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        parse_template(text)
    assert caught.value.reason == reason


def test_each_row_expands_into_a_golden_prompt_of_its_own(tmp_path: Path) -> None:
    path = write(tmp_path, {"faq.yaml": CAPITALS, "capitals.csv": CSV})
    loaded = load_set_files([path])
    assert loaded.problems == ()
    (golden,) = loaded.prompt_sets
    france, japan = golden.prompts
    assert france.id == "capital/France" and japan.id == "capital/Japan"
    assert france.prompt == "What is the capital of France? Answer in {one} word."
    assert france.system_prompt == "You know France well." and france.reference == "Paris"
    assert france.tags == ("geo", "France")
    kinds = [(a.kind, a.value, a.name) for a in france.assertions]
    assert kinds == [
        ("contains", "Paris", "named_the_capital"),
        ("contains_none", ("Lyon", "I don't know"), None),
        ("regex", "/^\\w{2,}\\.?$/", None),  # never substituted: {2,} is the regex's own
        ("json_schema", {"type": "string", "pattern": "^[A-Z]{1}"}, None),
    ]
    assert japan.assertions[0].value == "Tokyo"


def test_without_an_id_column_a_row_is_named_by_its_number(tmp_path: Path) -> None:
    text = CAPITALS.replace("    id_column: country\n", "    ignore_columns: []\n")
    (golden,) = load_set_files([write(tmp_path, {"faq.yaml": text, "capitals.csv": CSV})]).prompt_sets
    assert [p.id for p in golden.prompts] == ["capital/1", "capital/2"]


def test_editing_one_row_changes_the_fingerprint_of_that_case_only(tmp_path: Path) -> None:
    path = write(tmp_path, {"faq.yaml": CAPITALS, "capitals.csv": CSV})
    before = case_fingerprints(load_set_files([path]).prompt_sets[0])
    (tmp_path / "capitals.csv").write_text(CSV.replace("Osaka", "Kyoto"))
    after = case_fingerprints(load_set_files([path]).prompt_sets[0])
    assert before.keys() == after.keys()
    assert before["capital/France"] == after["capital/France"]
    assert before["capital/Japan"] != after["capital/Japan"]


def test_inline_rows_jsonl_tables_numbers_and_a_byte_order_mark(tmp_path: Path) -> None:
    text = """\
identifier: sums.basic
name: Sums
prompts:
  - id: inline
    template: "{a} + {b} = ?"
    vars:
      - {a: 1, b: 2.5, sum: "3.5"}
    assertions: [{exact: "{sum}"}]
  - id: lines
    template: "{a} + {b} = ?"
    vars: sums.jsonl
    assertions: [{exact: "{sum}"}]
  - id: tabs
    template: "{a} + {b} = ?"
    vars: sums.tsv
    assertions: [{exact: "{sum}"}]
"""
    jsonl = '{"a": 2, "b": 3, "sum": 5}\n\n{"a": "x", "b": "y", "sum": "xy"}\n'
    path = write(tmp_path, {"s.yaml": text, "sums.jsonl": jsonl, "sums.tsv": b"\xef\xbb\xbfa\tb\tsum\n1\t1\t2\n"})
    loaded = load_set_files([path])
    assert loaded.problems == ()
    prompts = {p.id: (p.prompt, p.assertions[0].value) for p in loaded.prompt_sets[0].prompts}
    assert prompts == {
        "inline/1": ("1 + 2.5 = ?", "3.5"),
        "lines/1": ("2 + 3 = ?", "5"),
        "lines/2": ("x + y = ?", "xy"),
        "tabs/1": ("1 + 1 = ?", "2"),
    }


def test_prompts_that_are_not_templates_keep_their_braces(tmp_path: Path) -> None:
    text = 'identifier: a.b\nname: N\nprompts:\n  - {id: p, prompt: "Return {\\"a\\": {x}}", assertions: [{contains: "{x}"}]}\n'
    (golden,) = load_set_files([write(tmp_path, {"a.yaml": text})]).prompt_sets
    assert golden.prompts[0].prompt == 'Return {"a": {x}}' and golden.prompts[0].assertions[0].value == "{x}"


def test_templates_in_jsonl_and_toml_set_files(tmp_path: Path) -> None:
    jsonl = json.dumps({"id": "t", "template": "Say {w}", "vars": [{"w": "hi"}], "assertions": [{"contains": "{w}"}]}) + "\n"
    toml = '''identifier = "x.toml"\nname = "T"\n[[prompts]]\nid = "t"\ntemplate = "Say {w}"\nvars = "words.csv"\nassertions = [{ contains = "{w}" }]\n'''
    files = [write(tmp_path, {"x.jsonl": jsonl}), write(tmp_path, {"t.toml": toml, "words.csv": "w\nhey\n"})]
    loaded = load_set_files(files)
    assert loaded.problems == ()
    assert {s.identifier: [p.prompt for p in s.prompts] for s in loaded.prompt_sets} == {"x": ["Say hi"], "x.toml": ["Say hey"]}


def test_every_mistake_of_a_template_is_named_with_its_place(tmp_path: Path) -> None:
    text = """\
identifier: geo.bad
name: Bad
prompts:
  - id: typo
    template: Capital of {contry}?
    vars: [{country: France, capital: Paris}]
    assertions: [{contains: "{capital}"}]
  - id: rows
    template: Capital of {country}?
    id_column: country
    vars:
      - {country: France, capital: Paris}
      - {country: France, capital: Lyon}
      - {capital: Rome}
      - {country: Spain, capital: ""}
    assertions: [{contains: "{capital}"}]
  - id: unused
    template: Capital of {country}?
    vars: [{country: France, notes: x}]
    reference: Paris
  - id: braces
    template: 'Return {"a": 1} for {country}'
    vars: [{country: France}]
    reference: Paris
  - id: taken/1
    prompt: Hello
    reference: hi
  - id: taken
    template: Capital of {country}?
    vars: [{country: France}]
    reference: Paris
"""
    found = problems_of(write(tmp_path, {"bad.yaml": text}))
    assert found == [
        """bad.yaml:5:15: prompt 'typo': template: the placeholder 'contry' names no column of the table (columns: 'country', 'capital'). Did you mean "country"?""",
        "bad.yaml:13:9: prompt 'rows': vars[1]: row 2 ('France') expands to the id 'rows/France', which row 1 ('France') already has",
        "bad.yaml:14:9: prompt 'rows': vars[2]: row 3 has no value for {country}, which the template uses",
        "bad.yaml:15:9: prompt 'rows': vars[3]: row 4 ('Spain') makes prompts[1].assertions[0].contains invalid (must be a non-empty string)",
        "bad.yaml:19:11: prompt 'unused': vars: column 'notes' is used by no placeholder; use it, or list it in ignore_columns",
        """bad.yaml:22:15: prompt 'braces': template: the placeholder '"a": 1' names no column of the table (columns: 'country'). Write {{ and }} for literal braces""",
        "bad.yaml:30:12: prompt 'taken': vars[0]: row 1 expands to the id 'taken/1', which the prompt at prompts[4].id already has",
    ]


def test_table_file_problems_name_the_file_and_line(tmp_path: Path) -> None:
    text = CAPITALS.replace("capitals.csv", "{table}")
    cases = {
        "ragged.csv": ("country,capital,wrong\nFrance,Paris\n", "ragged.csv:2: row 1 has 2 fields; the header names 3 fields"),
        "dup.csv": ("country,country\n", "dup.csv:1: the header names column 'country' more than once"),
        "nameless.csv": ("country,,wrong\n", "nameless.csv:1: column 2 of the header has no name"),
        "empty.csv": ("", "empty.csv: holds no header row; its first row names the columns"),
        "header.csv": ("country,capital,wrong\n", "header.csv: holds no row; a template needs at least one"),
        "quote.csv": ('country,capital,wrong\nFrance,"Par"is,x\n', "quote.csv:2: CSV syntax: ',' expected after '\"'"),
        "nul.csv": ("country,capital,wrong\nFra\x00nce,Paris,x\n", "nul.csv:2: holds a NUL character; a table of variables is text"),
        "latin.csv": (b"country,capital,wrong\nFran\xe7e,Paris,x\n", "latin.csv: is not UTF-8 text (invalid continuation byte at byte 26)"),
        "rows.jsonl": ('{"country": "France", "capital": "Paris", "wrong": true}\n[1]\n', None),
        "deep.jsonl": ("[" * 100_000 + "]" * 100_000 + "\n", "deep.jsonl:1:501: JSON syntax: nested too deeply"),
        # a key written twice: the last value was the row's, unsaid
        "twice.jsonl": (
            '{"country": "France", "capital": "Paris", "capital": "Lyon", "wrong": "x"}\n',
            'twice.jsonl:1:43: JSON syntax: key "capital" appears more than once',
        ),
        # "\ud800" without its pair: no Unicode text, so no endpoint could be sent the prompt made of it
        "lone.jsonl": (
            '{"country": "Fr\\ud800", "capital": "Paris", "wrong": "x"}\n',
            "lone.jsonl:1: row 1: 'Fr\\ud800' holds a lone surrogate (U+D800, character 3): a \\ud800 escape without the "
            "other half of its pair, which is no Unicode text and cannot be sent to an endpoint or written as UTF-8; "
            "write the character itself, or both halves of its pair",
        ),
        "table.xlsx": ("x", "table.xlsx: has an unsupported type; a table of variables is one of .csv, .tsv, .jsonl"),
        "missing.csv": (None, "missing.csv: cannot be read: No such file or directory"),
    }
    for name, (content, expected) in cases.items():
        folder = tmp_path / name.replace(".", "_")
        files: dict[str, str | bytes] = {"faq.yaml": text.replace("{table}", name)}
        if content is not None:
            files[name] = content
        found = problems_of(write(folder, files))
        of = " (the template at prompts[0] of faq.yaml)"  # each names the set file whose template named the table
        if expected is None:
            assert found == [
                "rows.jsonl:1: row 1: the value of 'wrong' is true; a variable is text or a number" + of,
                "rows.jsonl:2: row 2 is a list of 1 item, not an object of variables" + of,
            ]
        else:
            assert found == [expected + of], name


def test_a_row_of_a_table_file_is_named_by_its_id_and_line(tmp_path: Path) -> None:
    text = CAPITALS.replace("capitals.csv", "capitals.jsonl")
    jsonl = '{"country": "France", "capital": "Paris", "wrong": "Lyon"}\n\n{"country": "Japan", "wrong": "Osaka"}\n'
    found = problems_of(write(tmp_path, {"faq.yaml": text, "capitals.jsonl": jsonl}))
    assert found == ["capitals.jsonl:3: row 2 ('Japan') has no value for {capital}, which the template uses (the template at prompts[0] of faq.yaml)"]


def test_a_cell_longer_than_the_csv_modules_own_limit_is_read(tmp_path: Path) -> None:
    import csv

    long = "x" * 300_000
    path = write(tmp_path, {"faq.yaml": CAPITALS, "capitals.csv": f"country,capital,wrong\nFrance,{long},y\n"})
    (golden,) = load_set_files([path]).prompt_sets
    assert golden.prompts[0].reference == long
    assert csv.field_size_limit() == 131072  # restored


def test_a_table_past_its_size_limit_is_one_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.setfiles import tables

    monkeypatch.setattr(tables, "MAX_TABLE_BYTES", 64)
    path = write(tmp_path, {"faq.yaml": CAPITALS, "capitals.csv": CSV + "Italy,Rome,Milan\n" * 10})
    assert problems_of(path) == ["capitals.csv: cannot be read: larger than the 64 bytes it may hold (the template at prompts[0] of faq.yaml)"]


def test_templates_that_expand_past_the_text_limit_stop_with_one_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.setfiles import templates

    monkeypatch.setattr(templates, "MAX_EXPANDED_CHARACTERS", 100)
    path = write(tmp_path, {"faq.yaml": CAPITALS, "capitals.csv": CSV + "Italy,Rome,Milan\n" * 10})
    (problem,) = problems_of(path)
    assert problem.startswith("faq.yaml:4:5: prompt 'capital': the templates of this file expand into more than 100 characters")


def test_a_table_outside_the_project_is_refused_naming_where_it_leads(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secrets.csv": "country,capital,wrong\nFrance,Paris,Lyon\n"})
    project = tmp_path / "project"
    path = write(project, {"faq.yaml": CAPITALS.replace("capitals.csv", "capitals.csv")})
    (project / "capitals.csv").symlink_to(outside / "secrets.csv")
    (problem,) = problems_of(path)
    assert problem.startswith("faq.yaml:7:11: prompt 'capital': vars: the table of variables capitals.csv resolves to ")
    assert "outside the project" in problem and "allow_outside" in problem
    from evalkit.project_files import ProjectBoundary

    allowed = ProjectBoundary(project.resolve(), (str(outside.resolve()),))
    assert load_set_files([path], boundary=allowed).problems == ()
