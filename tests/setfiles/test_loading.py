"""Set files in every format: what they declare, and every mistake reported with its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit import Answer, Assertion, GoldenPromptSet, GoldenQuestionSet, QuestionForm
from evalkit.config import load_config
from evalkit.errors import ConfigError
from evalkit.setfiles import load_configured_sets, load_set_files

EVERY_KIND_YAML = """\
identifier: myapp.faq
name: FAQ answers
description: every assertion kind
version: "3"
prompts:
  - id: hours
    prompt: When is the office open?
    system_prompt: Be brief.
    tags: [faq, hours]
    assertions:
      - exact: Monday to Friday
      - contains: Monday
      - regex: '/9(:00)?\\s*(am|-)/i'
        name: opening_time
      - json_schema: {type: object, required: [email]}
      - contains_any: [Monday, weekdays]
      - contains_none: [Sunday]
      - max_words: 12
      - refusal: true
      - cites_any: [policy#3]
      - citations_resolve: true
      - kind: shouting
        value: 3
        name: is_loud
  - id: reference-only
    prompt: Say hello.
    reference: {text: Hello, abstained: false, citations: [greetings, {source_id: manual, passage: p. 3}, {passage: hi}],
                passages: [say hi, {text: greetings page, source_id: greetings}]}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def shouting_kinds():
    from evalkit.checks import BUILTIN_KINDS, AssertionKind

    return {**BUILTIN_KINDS, "shouting": AssertionKind("shouting", lambda value, answer: answer.text.isupper())}


def test_yaml_expresses_every_assertion_kind_named_checks_and_references(tmp_path: Path) -> None:
    loaded = load_set_files([write(tmp_path, "faq.yaml", EVERY_KIND_YAML)], shouting_kinds())
    assert loaded.problems == ()
    (golden,) = loaded.prompt_sets
    assert isinstance(golden, GoldenPromptSet) and golden.version == "3"
    hours, reference_only = golden.prompts
    assert hours.tags == ("faq", "hours") and hours.system_prompt == "Be brief."
    assert hours.assertions == (
        Assertion.exact("Monday to Friday"),
        Assertion.contains("Monday"),
        Assertion.regex(r"/9(:00)?\s*(am|-)/i", name="opening_time"),
        Assertion.json_schema({"type": "object", "required": ["email"]}),
        Assertion.contains_any(["Monday", "weekdays"]),
        Assertion.contains_none(["Sunday"]),
        Assertion.max_words(12),
        Assertion.refusal(),
        Assertion.cites_any(["policy#3"]),
        Assertion.citations_resolve(),
        Assertion("shouting", 3, "is_loud"),
    )
    assert [a.check_name for a in hours.assertions][2] == "opening_time"
    assert reference_only.reference == Answer(
        text="Hello", abstained=False,
        citations=["greetings", {"source_id": "manual", "passage": "p. 3"}, {"passage": "hi"}],
        passages=["say hi", {"text": "greetings page", "source_id": "greetings"}],
    )


def test_the_schema_offers_every_builtin_assertion_kind() -> None:
    from evalkit.checks import BUILTIN_KINDS
    from evalkit.setfiles.schemas import schema

    offered = set(schema("golden-set")["$defs"]["assertion"]["properties"]) - {"name", "kind", "value", "turn"}
    assert offered == set(BUILTIN_KINDS)


ONE_KIND_YAML = """\
identifier: myapp.kinds
name: Kinds
prompts:
  - id: a
    prompt: hi
    assertions:
      - contains: x
        exact: y
      - name: only_a_name
      - {}
      - kind: shouting
        contains: y
      - kind: shouting
        value: 3
"""


def test_an_assertion_needs_exactly_one_kind_key_one_problem_each(tmp_path: Path) -> None:
    """Two kind keys, none, or a plugin's kind beside a built-in one: one problem at the assertion."""
    problems = load_set_files([write(tmp_path, "kinds.yaml", ONE_KIND_YAML)], root=tmp_path).problems
    found = [(p.line, p.column, p.json_path) for p in problems if p.reason.startswith("needs exactly one assertion kind key (exact, ")]
    assert found == [(7, 9, "prompts[0].assertions[0]"), (9, 9, "prompts[0].assertions[1]"), (10, 9, "prompts[0].assertions[2]"),
                     (11, 9, "prompts[0].assertions[3]")]  # fmt: skip
    rest = [p.reason for p in problems if not p.reason.startswith("needs exactly one")]
    assert len(rest) == 1 and "unknown assertion kind 'shouting'" in rest[0]  # the last: no plugin adds it


@pytest.mark.parametrize(
    ("assertion", "valid"),
    [({"contains": "x"}, True), ({"kind": "k", "value": 1, "name": "n", "turn": 2}, True), ({"contains": "x", "exact": "y"}, False),
     ({"contains": "x", "kind": "k"}, False), ({"name": "n"}, False), ({}, False), ({"value": 1}, False)],
)  # fmt: skip
def test_the_published_schema_says_exactly_one_kind_key_to_any_validator(assertion: dict, valid: bool) -> None:
    """What an editor reads (``evalkit schema golden-set``) keeps the rule, whichever way it is written."""
    from evalkit.setfiles.schemas import schema
    from jsonschema import Draft202012Validator

    document = {"identifier": "a.b", "name": "N", "prompts": [{"id": "p", "prompt": "q", "assertions": [assertion]}]}
    assert Draft202012Validator(schema("golden-set")).is_valid(document) is valid


def test_json_toml_and_jsonl_declare_the_same_set(tmp_path: Path) -> None:
    document = {
        "identifier": "myapp.same",
        "name": "Same",
        "prompts": [
            {"id": "a", "prompt": "Say hi", "assertions": [{"contains": "hi"}, {"regex": "/^hi$/i", "name": "only_hi"}]},
            {"id": "b", "prompt": "Count", "assertions": [{"max_words": 2}]},
        ],
    }
    toml_text = """identifier = "myapp.same"\nname = "Same"\n
[[prompts]]\nid = "a"\nprompt = "Say hi"\nassertions = [{contains = "hi"}, {regex = "/^hi$/i", name = "only_hi"}]
[[prompts]]\nid = "b"\nprompt = "Count"\n[[prompts.assertions]]\nmax_words = 2\n"""
    header = json.dumps({"identifier": "myapp.same", "name": "Same"})
    jsonl_text = "\n".join([header, *(json.dumps(p) for p in document["prompts"])]) + "\n"
    files = [
        write(tmp_path / "json", "same.json", json.dumps(document, indent=2)),
        write(tmp_path / "toml", "same.toml", toml_text),
        write(tmp_path / "jsonl", "same.jsonl", jsonl_text),
    ]
    sets = [load_set_files([f]).prompt_sets for f in files]
    assert all(s == sets[0] for s in sets) and len(sets[0]) == 1
    assert sets[0][0].prompts[0].assertions[1] == Assertion.regex("/^hi$/i", name="only_hi")


def test_jsonl_without_a_header_takes_the_set_from_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "myapp.smalltalk.jsonl", '{"id": "a", "prompt": "Hi", "assertions": [{"contains": "hello"}]}\n\n')
    (golden,) = load_set_files([path]).prompt_sets
    assert golden.identifier == "myapp.smalltalk" and golden.name == "myapp.smalltalk" and len(golden.prompts) == 1


def test_one_file_holds_several_sets_and_question_sets(tmp_path: Path) -> None:
    prompts = write(tmp_path, "two.yaml", """\
sets:
  - {identifier: a.one, name: One, prompts: [{id: p, prompt: q, reference: r}]}
  - {identifier: a.two, name: Two, prompts: [{id: p, prompt: q, assertions: [{contains: x}]}]}
""")
    questions = write(tmp_path, "questions.json", json.dumps({
        "identifier": "a.docs", "name": "Docs",
        "questions": [
            {"id": "q1", "question": "Where is it?", "form": "gap", "expected_document_ids": ["d1", "d2"], "hard_class": "paraphrase"},
            {"id": "q2", "question": "Nothing answers this", "expected_document_ids": []},
        ],
    }))
    loaded = load_set_files([prompts, questions])
    assert loaded.problems == ()
    assert [s.identifier for s in loaded.prompt_sets] == ["a.one", "a.two"]
    (docs,) = loaded.question_sets
    assert isinstance(docs, GoldenQuestionSet)
    assert docs.questions[0].form is QuestionForm.GAP and docs.questions[0].expected_document_ids == ("d1", "d2")
    assert docs.questions[1].expects_no_result


BROKEN_YAML = """\
identifier: My App
name: Broken
prompts:
  - id: hours
    prompt: When?
    assertions:
      - contains: Monday
      - regex: '/9(:00)?\\s*(am/i'
      - contian: x
  - id: hours
    prompt: ""
    assertions:
      - max_words: -1
      - json_schema: {type: objekt}
      - kind: unheard_of
  - id: bare
    prompt: hi
"""


def test_every_problem_in_a_yaml_file_at_once_with_line_column_and_path(tmp_path: Path) -> None:
    loaded = load_set_files([write(tmp_path, "broken.yaml", BROKEN_YAML)], root=tmp_path)
    assert loaded.prompt_sets == ()
    found = {(p.line, p.column, p.json_path): p.reason for p in loaded.problems}
    assert all(p.file == "broken.yaml" for p in loaded.problems)
    assert "does not match" in found[(1, 13, "identifier")]
    assert "invalid regular expression" in found[(8, 16, "prompts[0].assertions[1].regex")]
    assert "unknown field 'contian'" in found[(9, 9, "prompts[0].assertions[2].contian")]
    assert "already used by prompts[0]" in found[(10, 9, "prompts[1].id")]
    assert found[(11, 13, "prompts[1].prompt")] == "must not be empty"
    assert "minimum of 1" in found[(13, 20, "prompts[1].assertions[0].max_words")]
    assert "not a valid JSON Schema" in found[(14, 22, "prompts[1].assertions[1].json_schema")]
    assert "unknown assertion kind 'unheard_of'" in found[(15, 15, "prompts[1].assertions[2].kind")]
    assert "no assertions and no reference" in found[(16, 5, "prompts[2]")]
    assert len(loaded.problems) == 9  # one report per mistake
    assert str(loaded.problems[0]).startswith("broken.yaml:1:13: identifier: ")


def test_json_problems_carry_lines_and_columns_and_repeated_keys_are_caught(tmp_path: Path) -> None:
    text = '{\n  "identifier": "a.b",\n  "name": "N",\n  "prompts": [\n    {"id": "p", "prompt": "q", "assertions": [{"max_words": "five"}], "id": "p2"}\n  ]\n}\n'
    problems = load_set_files([write(tmp_path, "a.json", text)], root=tmp_path).problems
    by_path = {p.json_path: p for p in problems}
    words = by_path["prompts[0].assertions[0].max_words"]
    assert (words.line, words.column) == (5, text.splitlines()[4].index('"five"') + 1)
    assert "appears more than once" in by_path["prompts[0].id"].reason and by_path["prompts[0].id"].line == 5


def test_jsonl_problems_point_at_their_line(tmp_path: Path) -> None:
    text = '{"identifier": "a.lines", "name": "Lines"}\n{"id": "a", "prompt": "x", "assertions": [{"contains": "x"}]}\n{"id": "b", "prompt": "y", "assertions": [{"regex": "(open"}]}\n'
    (problem,) = load_set_files([write(tmp_path, "a.jsonl", text)], root=tmp_path).problems
    assert (problem.line, problem.json_path) == (3, "prompts[1].assertions[0].regex")
    assert problem.column == text.splitlines()[2].index('"(open"') + 1


def test_jsonl_places_are_found_when_a_problem_asks_on_any_line_in_any_order(tmp_path: Path) -> None:
    """A JSONL file's places are not kept for every value (a large file's took more memory than
    its data): each problem still points at its line and column, far apart, looked up in any
    order, and the document's map of places is whole when read in full."""
    from evalkit.setfiles.documents import read_document

    rows = [{"id": f"p{n}", "prompt": f"q{n}", "assertions": [{"contains": "x"}]} for n in range(40)]
    rows[4]["assertions"][0] = {"max_words": "five"}
    rows[16]["assertions"] = [{"contains": "x"}, {"regex": "(open"}]
    rows[38]["prompt"] = "   "
    lines = [json.dumps({"identifier": "a.many", "name": "Many"}), *(json.dumps(row) for row in rows)]
    lines[12] = lines[12][:-1] + ', "id": "again"}'  # prompt #11 repeats its id key
    text = "\n".join(lines) + "\n"
    file = write(tmp_path, "many.jsonl", text)
    problems = load_set_files([file], root=tmp_path).problems
    found = {p.json_path: (p.line, p.column) for p in problems}

    def column(line: int, needle: str) -> int:
        return text.splitlines()[line - 1].index(needle) + 1

    assert found == {
        "prompts[4].assertions[0].max_words": (6, column(6, '"five"')),
        "prompts[11].id": (13, column(13, '"id": "again"')),
        "prompts[16].assertions[1].regex": (18, column(18, '"(open"')),
        "prompts[38].prompt": (40, column(40, '"   "')),
    }
    document = read_document(file)
    assert document.positions[("prompts", 38, "prompt")] == (40, column(40, '"   "'))
    assert document.positions[("prompts", 4)] == (6, 1) and document.key_positions[("prompts", 4, "id")] == (6, 2)
    assert document.positions.get(("prompts", 40)) is None and document.positions.get(("prompts", 4, "nothing")) is None
    every = dict(document.positions)
    assert len(every) == len(document.positions) and every[("prompts", 0, "assertions", 0, "contains")] == (2, column(2, '"x"'))
    assert sum(1 for path in every if path[:1] == ("prompts",) and len(path) == 2) == 40


@pytest.mark.parametrize("name", ["many.jsonl", "many.json"])
def test_reading_a_json_file_leaves_nothing_for_the_cyclic_collector(tmp_path: Path, name: str) -> None:
    """A run reads its set files while the collector is held back (evalkit.cli.common): a scan that
    left a reference cycle per line kept every line's text and places alive (a 100,000-prompt file
    set ran at 650 MiB)."""
    import gc

    from evalkit.setfiles.documents import read_document

    rows = [{"id": f"p{n}", "prompt": f"q{n}", "assertions": [{"contains": "x"}, {"max_words": 3}]} for n in range(300)]
    text = "\n".join(json.dumps(row) for row in rows) if name.endswith("l") else json.dumps({"identifier": "a.b", "name": "N", "prompts": rows})
    file = write(tmp_path, name, text)
    read_document(file)  # whatever it imports is imported
    gc.collect()
    gc.disable()
    try:
        document = read_document(file)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert len(document.data["prompts"]) == 300


def test_toml_problems_point_at_the_table_or_key_line(tmp_path: Path) -> None:
    text = 'identifier = "a.t"\nname = "T"\n\n[[prompts]]\nid = "x"\nprompt = "p"\nreference = "r"\n\n[[prompts]]\nid = "y"\nprompt = "p"\n[[prompts.assertions]]\nmax_words = "five"\n'
    (problem,) = load_set_files([write(tmp_path, "t.toml", text)], root=tmp_path).problems
    assert (problem.line, problem.json_path) == (13, "prompts[1].assertions[0].max_words")


@pytest.mark.parametrize(
    ("name", "text", "line", "reason"),
    [
        ("bad.yaml", "identifier: a.b\nprompts: [\n", 3, "YAML syntax"),
        ("bad.json", '{"identifier": "a.b",\n "name": }', 2, "JSON syntax"),
        ("bad.jsonl", '{"id": "a", "prompt": "x"}\n{"id": \n', 2, "JSON syntax"),
        ("bad.toml", 'identifier = "a.b"\nname = \n', 2, "TOML syntax"),
    ],
)
def test_syntax_errors_name_the_line(tmp_path: Path, name: str, text: str, line: int, reason: str) -> None:
    (problem,) = load_set_files([write(tmp_path, name, text)], root=tmp_path).problems
    assert problem.line == line and problem.reason.startswith(reason) and problem.file == name


def test_an_unsupported_suffix_and_a_set_declared_twice_are_problems(tmp_path: Path) -> None:
    one = write(tmp_path, "one.yaml", "identifier: a.b\nname: N\nprompts: [{id: p, prompt: q, reference: r}]\n")
    two = write(tmp_path, "two.yaml", "identifier: a.b\nname: N\nprompts: [{id: p, prompt: q, reference: r}]\n")
    odd = write(tmp_path, "odd.txt", "hello")
    loaded = load_set_files([one, two, odd], root=tmp_path)
    reasons = [str(p) for p in loaded.problems]
    assert any(r.startswith("two.yaml:1:13: identifier: set 'a.b' is already declared at one.yaml:1") for r in reasons)
    assert any(r.startswith("odd.txt: has an unsupported type") for r in reasons)
    assert [s.identifier for s in loaded.prompt_sets] == ["a.b"]


def test_control_characters_in_a_file_are_shown_not_sent_to_the_terminal(tmp_path: Path) -> None:
    path = write(tmp_path, "evil.yaml", 'identifier: "a.b\\e[31m"\nname: "\\u202eN"\n"x\\e[2J": 1\nprompts: [{id: p, prompt: q, reference: r}]\n')
    problems = [str(p) for p in load_set_files([path]).problems]
    assert len(problems) == 2
    assert not any(c in p for p in problems for c in "\x1b\u202e")
    assert "\\u001b[31m" in problems[0] and "'x\\x1b[2J'" in problems[1]


def test_configured_paths_are_globbed_relative_to_the_config_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "evalkit.toml", '[sets]\npaths = ["evals/*.yaml", "evals/**/*.json", "extra.toml"]\n')
    write(project, "evals/a.yaml", "identifier: p.a\nname: A\nprompts: [{id: p, prompt: q, reference: r}]\n")
    write(project, "evals/deep/er/b.json", '{"identifier": "p.b", "name": "B", "prompts": [{"id": "p", "prompt": "q", "reference": "r"}]}')
    loaded = load_configured_sets(load_config(project / "evalkit.toml", cwd=tmp_path))
    assert [s.identifier for s in loaded.prompt_sets] == ["p.a", "p.b"]
    (missing,) = loaded.problems
    assert missing.file == "extra.toml" and "does not exist" in missing.reason


def test_sets_in_pyproject_tool_evalkit(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.evalkit.sets]\npaths = ["*.yaml"]\n')
    write(tmp_path, "a.yaml", "identifier: p.a\nname: A\nprompts: [{id: p, prompt: q, reference: r}]\n")
    assert [s.identifier for s in load_configured_sets(load_config(cwd=tmp_path)).prompt_sets] == ["p.a"]


@pytest.mark.parametrize("table", ['sets = "evals"', "[sets]\npaths = \"evals/*.yaml\"", "[sets]\npath = [\"x\"]"])
def test_a_wrong_sets_table_is_a_configuration_error(tmp_path: Path, table: str) -> None:
    write(tmp_path, "evalkit.toml", table + "\n")
    with pytest.raises(ConfigError, match=r"\[sets\]"):
        load_configured_sets(load_config(cwd=tmp_path))


def test_a_folder_named_without_wildcards_stands_for_every_set_file_under_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "evalkit.toml", '[sets]\npaths = ["evals"]\n')
    write(project, "evals/a.yaml", "identifier: p.a\nname: A\nprompts: [{id: p, prompt: q, reference: r}]\n")
    write(project, "evals/deep/b.json", '{"identifier": "p.b", "name": "B", "prompts": [{"id": "p", "prompt": "q", "reference": "r"}]}')
    write(project, "evals/notes.txt", "not a set file")
    loaded = load_configured_sets(load_config(project / "evalkit.toml", cwd=tmp_path))
    assert [s.identifier for s in loaded.prompt_sets] == ["p.a", "p.b"] and loaded.problems == ()


def test_double_star_enters_each_real_folder_once_through_symbolic_links(tmp_path: Path) -> None:
    """Two links back to a folder above made glob.glob take exponential time (a cloned project
    hung every command); a folder reached through a link is followed, once."""
    import time

    project = tmp_path / "project"
    write(project, "evalkit.toml", '[sets]\npaths = ["evals/**/*.yaml"]\n')
    write(project, "evals/a.yaml", "identifier: p.a\nname: A\nprompts: [{id: p, prompt: q, reference: r}]\n")
    write(project, "shared/b.yaml", "identifier: p.b\nname: B\nprompts: [{id: p, prompt: q, reference: r}]\n")
    (project / "evals" / "loop").symlink_to("..")
    (project / "evals" / "again").symlink_to("..")
    (project / "evals" / "shared").symlink_to(project / "shared")
    started = time.perf_counter()
    loaded = load_configured_sets(load_config(project / "evalkit.toml", cwd=tmp_path))
    assert time.perf_counter() - started < 10
    assert sorted(s.identifier for s in loaded.prompt_sets) == ["p.a", "p.b"]
    assert loaded.problems == ()
