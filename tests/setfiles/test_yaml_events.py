"""A YAML set file written plainly is read from libyaml's events, not composed into nodes.

Composing a 50 MB set file into PyYAML nodes (two marks each) took 1.4 GB and minutes before
anything was checked. A file with one document, a mapping on top, no anchor, alias or explicit tag
and only text keys is now built event by event (``documents._read_plain_yaml``); anything else is
read by the node reader as before. Both must give the same data, the same repeated-key problems
and the same places, so every message and every fingerprint stays as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from evalkit.set_versions import case_fingerprints
from evalkit.setfiles import documents, load_set_files
from evalkit.setfiles.documents import FileSyntaxError, read_document

needs_libyaml = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml")

PLAIN = """\
identifier: demo.plain
name: Plain
description: "quoted: text"
prompts:
  - id: hours
    prompt: When is the office open?
    tags: [hours, "2024-01-01"]
    assertions:
      - contains_any: [Monday, weekdays]
        name: named_the_days
      - regex: '/9(:00)?\\s*(am|-)/i'
      - max_words: 40
  - id: capital
    prompt: |
      What is the capital
      of France?
    reference: Paris
    assertions: [{exact: Paris}, {max_words: 3}]
"""

REPEATED = """\
identifier: demo.repeated
name: Repeated
prompts:
  - id: a
    prompt: What is 2 + 2?
    id: b
    assertions:
      - contains: "4"
        contains: four
name: Again
"""

ODD_SCALARS = """\
identifier: demo.odd
name: Odd
sets_note: ~
prompts:
  - {id: x, prompt: hi, tags: [yes, no, ~, 1.5, 0x1f, 0o17, 1_000, 2024-01-01, 2024-01-01 10:00:00, .inf, -.nan, '']}
  - id: y
    prompt: "\\u00e9t\\u00e9"
    assertions: [{json_schema: {type: object, properties: {a: {type: [string, "null"]}}}}]
"""

NESTED_SETS = """\
sets:
  - identifier: demo.one
    name: One
    prompts:
      - id: a
        prompt: q
        assertions: [{contains: a}]
  - identifier: demo.two
    name: Two
    prompts:
      - id: b
        prompt: r
        assertions: [{contains: b}]
"""


def _same(text: str, tmp_path: Path) -> None:
    file = tmp_path / "set.yaml"
    plain = documents._read_plain_yaml(file, text)
    nodes = documents._read_yaml_nodes(file, text)
    assert repr(plain.data) == repr(nodes.data)
    assert plain.problems == nodes.problems
    assert dict(plain.positions) == dict(nodes.positions)
    assert dict(plain.key_positions) == dict(nodes.key_positions)
    for path, place in nodes.positions.items():  # each looked up alone, as a problem asks
        assert documents._read_plain_yaml(file, text).positions[path] == place, path


@needs_libyaml
@pytest.mark.parametrize("text", [PLAIN, REPEATED, ODD_SCALARS, NESTED_SETS], ids=["plain", "repeated", "odd", "sets"])
def test_the_event_reader_finds_the_data_problems_and_places_the_node_reader_does(text: str, tmp_path: Path) -> None:
    _same(text, tmp_path)


@needs_libyaml
def test_a_plain_file_is_not_composed_into_nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def composed(self: object) -> None:
        raise AssertionError("composed the whole file into nodes")

    monkeypatch.setattr(yaml.CSafeLoader, "get_single_node", composed)
    (tmp_path / "plain.yaml").write_text(PLAIN)
    (golden,) = load_set_files([tmp_path / "plain.yaml"]).prompt_sets
    assert [p.id for p in golden.prompts] == ["hours", "capital"]


@needs_libyaml
def test_repeated_keys_are_refused_with_their_lines_without_composing_nodes(
    evalkit_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def composed(self: object) -> None:
        raise AssertionError("composed the whole file into nodes")

    monkeypatch.setattr(yaml.CSafeLoader, "get_single_node", composed)
    (project / "evals").mkdir()
    (project / "evals" / "repeated.yaml").write_text(REPEATED)
    checked = evalkit_cli("validate", "evals")
    assert checked.code == 2, checked.stdout + checked.stderr
    assert "evals/repeated.yaml:6:5: prompts[0].id: key 'id' appears more than once" in checked.stderr
    assert "evals/repeated.yaml:9:9: prompts[0].assertions[0].contains: key 'contains' appears more than once" in checked.stderr
    assert "evals/repeated.yaml:10:1: name: key 'name' appears more than once" in checked.stderr


def test_a_problem_inside_a_prompt_names_its_line_and_column(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    broken = PLAIN.replace("      - max_words: 40\n", "      - max_words: 40\n        colour: red\n")
    (project / "evals" / "plain.yaml").write_text(broken)
    checked = evalkit_cli("validate", "evals")
    assert checked.code == 2, checked.stdout + checked.stderr
    assert "evals/plain.yaml:13:9: prompt 'hours': assertions[2].colour: unknown field 'colour'" in checked.stderr


LEFT_TO_THE_NODE_READER = {
    "alias": "identifier: a\nname: &n b\nprompts:\n  - {id: x, prompt: *n, assertions: [{contains: b}]}\n",
    "merge": "identifier: a\nname: b\nprompts:\n  - <<: {id: x}\n    prompt: q\n    assertions: [{contains: b}]\n",
    "tag": "identifier: a\nname: !!str 7\nprompts:\n  - {id: x, prompt: q, assertions: [{contains: b}]}\n",
    "key not text": "identifier: a\nname: b\n1: c\n",
    "two documents": "identifier: a\n---\nname: b\n",
    "only comments": "# nothing\n",
    "a list on top": "- identifier: a\n",
    "syntax": "identifier: a\nname: [b\n",
    "tab": "identifier: a\n\tname: b\n",
    "deep": "identifier: a\nname: b\nprompts:\n  - x: " + "[" * 70 + "]" * 70 + "\n",
    "bad date": "identifier: a\nname: b\nwhen: 2024-13-45\n",
}


@needs_libyaml
@pytest.mark.parametrize("text", LEFT_TO_THE_NODE_READER.values(), ids=LEFT_TO_THE_NODE_READER.keys())
def test_what_the_event_reader_leaves_is_read_by_the_node_reader(text: str, tmp_path: Path) -> None:
    file = tmp_path / "set.yaml"
    file.write_text(text)

    def outcome(read: object) -> object:
        try:
            document = read(file, text)  # type: ignore[operator]
        except FileSyntaxError as exc:
            return [str(p) for p in exc.problems]
        except ValueError as exc:
            return f"ValueError {exc}"
        return repr(document.data), document.problems, dict(document.positions)

    with pytest.raises(Exception):  # noqa: B017 - any refusal: the node reader reads it
        documents._read_plain_yaml(file, text)
    try:
        read = read_document(file)
    except FileSyntaxError as exc:
        got: object = [str(p) for p in exc.problems]
    except ValueError as exc:
        got = f"ValueError {exc}"
    else:
        got = repr(read.data), read.problems, dict(read.positions)
    assert got == outcome(documents._read_yaml_nodes)


def test_the_fingerprints_are_the_node_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain.yaml").write_text(PLAIN)
    by_events = case_fingerprints(load_set_files([tmp_path / "plain.yaml"]).prompt_sets[0])

    def not_plain(file: Path, text: str) -> None:
        raise documents._NotPlain

    monkeypatch.setattr(documents, "_read_plain_yaml", not_plain)
    by_nodes = case_fingerprints(load_set_files([tmp_path / "plain.yaml"]).prompt_sets[0])
    assert by_events == by_nodes
