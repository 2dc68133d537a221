"""A JSON set file keeps the places of the values inside its prompts only when a problem asks.

Every value's place, kept under its full path, took more memory than the data of a large JSON set
(270 MiB for a 15 MB file). The places outside the prompts and questions are kept; those inside
one are found by scanning the file again the first time a problem asks, and are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit.setfiles import documents, load_set_files
from evalkit.setfiles.documents import read_document

SET = {
    "identifier": "demo.json",
    "name": "Json",
    "prompts": [
        {"id": "a", "prompt": "What is 2 + 2?", "tags": ["math"], "assertions": [{"contains": "4"}, {"max_words": 3}]},
        {"id": "b", "prompt": "Capital of France?", "assertions": [{"exact": "Paris"}]},
    ],
}


def test_the_places_found_when_asked_are_every_place_of_the_file(tmp_path: Path) -> None:
    text = json.dumps(SET, indent=2)
    (tmp_path / "set.json").write_text(text)
    every, every_key = documents._json_places(text)
    assert ("prompts", 0, "assertions", 1, "max_words") in every
    for path, place in every.items():  # each looked up alone, as a problem asks
        assert read_document(tmp_path / "set.json").positions[path] == place, path
    for path, place in every_key.items():
        assert read_document(tmp_path / "set.json").key_positions[path] == place, path
    document = read_document(tmp_path / "set.json")
    assert dict(document.positions) == every and dict(document.key_positions) == every_key


def test_a_valid_file_is_not_scanned_for_the_places_inside_its_prompts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[int] = []
    whole = documents._json_places
    monkeypatch.setattr(documents, "_json_places", lambda text: scans.append(1) or whole(text))
    (tmp_path / "set.json").write_text(json.dumps(SET, indent=2))
    loaded = load_set_files([tmp_path / "set.json"], root=tmp_path)
    assert not loaded.problems and scans == []
    broken = json.dumps({**SET, "prompts": [SET["prompts"][0], {**SET["prompts"][1], "colour": "red"}]}, indent=2)
    (tmp_path / "set.json").write_text(broken)
    (problem,) = load_set_files([tmp_path / "set.json"], root=tmp_path).problems
    assert (problem.line, problem.column, problem.json_path) == (28, 7, "prompts[1].colour"), str(problem)
    assert scans == [1]


def test_a_repeated_key_inside_a_prompt_is_still_found_at_its_place(tmp_path: Path) -> None:
    (tmp_path / "set.json").write_text(json.dumps(SET, indent=2).replace('"id": "b",', '"id": "b",\n      "id": "c",'))
    problems = load_set_files([tmp_path / "set.json"], root=tmp_path).problems
    assert [(p.line, p.column, p.json_path, p.reason) for p in problems] == [
        (22, 7, "prompts[1].id", "key 'id' appears more than once")
    ]
