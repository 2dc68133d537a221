"""JSON Lines files are split at line ends only: ``\\n``, ``\\r\\n`` and a lone ``\\r``.

``str.splitlines()`` also splits at U+2028, U+2029 and U+0085 (NEL), which JSON allows raw inside
a string (only U+0000..U+001F must be escaped; JavaScript's ``JSON.stringify`` and Go's encoder
write U+2028 as it is). A JSONL set file, a template's JSONL table, a ``replay`` answer file or a
trace to import holding one in a value was cut in two there: "Unterminated string" at a line the
file does not have, exit 2 for a valid file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: Characters ``str.splitlines()`` breaks at that JSON carries raw in a string.
NOT_LINE_ENDS = ["\u2028", "\u2029", "\u0085"]


def jsonl(*items: dict, end: str = "\n") -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + end for item in items)


@pytest.mark.parametrize("separator", NOT_LINE_ENDS)
def test_a_jsonl_set_file_with_a_raw_line_separator_in_a_string_validates_and_runs(evalkit_cli, project: Path, separator: str) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "sep.jsonl").write_text(
        jsonl(
            {"identifier": "demo.sep", "name": "Sep"},
            {"id": "a", "prompt": "p", "reference": f"one{separator}two", "assertions": [{"contains": f"one{separator}two"}]},
            {"id": "b", "prompt": "plain", "reference": "plain", "assertions": [{"contains": "plain"}]},
        ),
        encoding="utf-8",
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.jsonl"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert "ok  set demo.sep (2 prompts)" in checked.stdout
    ran = evalkit_cli("run", "demo.sep", "--json")
    assert ran.code == 0, ran.stderr
    assert ran.json()["pass_rate"] == 1.0 and len(ran.json()["cases"]) == 2


def test_a_problem_in_a_jsonl_file_after_a_raw_line_separator_names_its_real_line(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    text = jsonl({"identifier": "demo.sep", "name": "Sep"}, {"id": "a", "prompt": "one\u2028two", "assertions": [{"contains": "x"}]})
    (project / "evals" / "sep.jsonl").write_text(text + '{"id": "b", "prompt": "p", "assertions": [{"max_words": "zero"}]}\n', encoding="utf-8")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.jsonl"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 2
    (problem,) = [line for line in (checked.stdout + checked.stderr).splitlines() if line.startswith("evals/sep.jsonl")]
    assert problem.startswith("evals/sep.jsonl:3:"), problem


def test_crlf_lone_cr_and_a_last_line_without_its_end_still_split(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    header, first, second = {"identifier": "demo.ends", "name": "E"}, {"id": "a", "prompt": "p", "assertions": [{"contains": "p"}]}, {"id": "b", "prompt": "q", "assertions": [{"contains": "q"}]}
    (project / "evals" / "crlf.jsonl").write_text(jsonl(header, first, second, end="\r\n") + "  \r\n\t\r\n", encoding="utf-8", newline="")
    (project / "evals" / "cr.jsonl").write_text(jsonl({**header, "identifier": "demo.cr"}, first, end="\r") + json.dumps(second), encoding="utf-8", newline="")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.jsonl"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert "ok  set demo.ends (2 prompts)" in checked.stdout and "ok  set demo.cr (2 prompts)" in checked.stdout


def test_a_jsonl_table_of_variables_keeps_a_raw_line_separator_in_a_value(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "rows.jsonl").write_text(jsonl({"city": "Par\u2028is"}, {"city": "Lyon"}), encoding="utf-8")
    (project / "evals" / "t.yaml").write_text(
        "identifier: demo.rows\nname: R\nprompts:\n  - id: t\n    template: 'Say {city}'\n    vars: rows.jsonl\n"
        "    assertions: [{contains: '{city}'}]\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert "ok  set demo.rows (2 prompts)" in checked.stdout


def test_a_replay_file_with_a_raw_line_separator_in_an_answer_replays_it(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "s.yaml").write_text("identifier: demo.replay\nname: R\nprompts:\n  - id: a\n    prompt: p\n    assertions: [{contains: two}]\n")
    (project / "answers.jsonl").write_text(jsonl({"id": "a", "text": "one\u2028two"}), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["evals/*.yaml"]\n[providers.recorded]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "m"\n'
    )
    ran = evalkit_cli("run", "demo.replay", "--provider", "recorded", "--json")
    assert ran.code == 0, ran.stderr
    assert ran.json()["pass_rate"] == 1.0


def test_a_trace_file_with_a_raw_line_separator_is_read_line_by_line(tmp_path: Path) -> None:
    from evalkit.importers.otlp import read_spans

    span = {"traceId": "t", "spanId": "s", "name": "chat m", "startTimeUnixNano": "1", "attributes": [{"key": "k", "value": {"stringValue": "a\u2028b"}}]}
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    (tmp_path / "t.jsonl").write_text(jsonl(request, request), encoding="utf-8")
    reading = read_spans(tmp_path / "t.jsonl")
    assert reading.unreadable_lines == () and len(reading.spans) == 2
    assert reading.spans[0].attributes["k"] == "a\u2028b"


def test_json_lines_splits_where_json_lines_end_and_nowhere_else() -> None:
    from evalkit.jsonparse import json_lines

    assert json_lines('{"a": "x\u2028y\u2029z\u0085"}\r\n{}\r{}\n\n{}') == ['{"a": "x\u2028y\u2029z\u0085"}', "{}", "{}", "", "{}"]
    assert json_lines("{}\n") == ["{}"] and json_lines("") == [] and json_lines("\n") == [""]
    assert json_lines("a\x0bb\x0cc\x1cd") == ["a\x0bb\x0cc\x1cd"]  # JSON escapes these; the parser names them


@pytest.mark.parametrize("separator", NOT_LINE_ENDS)
def test_yaml_and_toml_problems_after_a_raw_line_separator_name_the_line_an_editor_shows(evalkit_cli, project: Path, separator: str) -> None:
    """PyYAML (YAML 1.1) counts U+2028, U+2029 and U+0085 as line breaks, and the TOML places
    were found by ``splitlines()``: every problem after one named a line too far."""
    (project / "evals").mkdir()
    (project / "evals" / "a.yaml").write_text(
        f'identifier: demo.a\nname: "a{separator}b"\nprompts:\n  - id: a\n    prompt: p\n    assertions: [{{max_words: zero}}]\n',
        encoding="utf-8",
    )
    (project / "evals" / "b.yaml").write_text(f'identifier: demo.b\nname: "a{separator}b"\nprompts: [\n', encoding="utf-8")
    (project / "evals" / "c.yaml").write_text(f'identifier: demo.c\nname: "a{separator}b"\n1: x\n', encoding="utf-8")
    (project / "evals" / "d.toml").write_text(
        f'identifier = "demo.d"\nname = "a{separator}b"\n\n[[prompts]]\nid = "a"\nprompt = "p"\nassertions = [{{ max_words = "zero" }}]\n',
        encoding="utf-8",
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*"]\n')
    checked = evalkit_cli("validate", "--json")
    assert checked.code == 2
    places = {p["file"]: (p["line"], p["column"]) for p in checked.json()["problems"]}
    assert places == {"evals/a.yaml": (6, 30), "evals/b.yaml": (4, 1), "evals/c.yaml": (3, 1), "evals/d.toml": (7, 1)}

