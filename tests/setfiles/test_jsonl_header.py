"""Which first line of a JSON Lines set file is its header."""

from __future__ import annotations

import json
from pathlib import Path


def jsonl(*items: dict) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def test_a_first_jsonl_line_with_an_id_is_a_member_whose_prompt_is_misspelt_not_a_header(evalkit_cli, project: Path) -> None:
    """A header is a first line without prompt, template, messages or question: a first prompt
    whose `prompt` was misspelt was read as the set's header, and the user got `'identifier' is
    required`, `'name' is required` and `unknown field 'id'` for a file that needs no header. A
    line with an `id` and no `identifier` is a member."""
    (project / "evals").mkdir()
    (project / "evals" / "demo.typo.jsonl").write_text(
        jsonl({"id": "a", "promt": "hi", "assertions": [{"contains": "x"}]}, {"id": "b", "prompt": "hi", "assertions": [{"contains": "x"}]})
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.jsonl"]\n')
    checked = evalkit_cli("validate", "--json")
    assert checked.code == 2
    problems = [(p["line"], p["path"], p["reason"]) for p in checked.json()["problems"]]
    assert all(line == 1 and path.startswith("prompts[0]") for line, path, _ in problems), problems
    assert any("unknown field 'promt'; did you mean 'prompt'?" in reason for _, _, reason in problems), problems
    (project / "evals" / "demo.typo.jsonl").write_text(
        jsonl({"identifier": "demo.head", "name": "H", "id": "x"}, {"id": "b", "prompt": "hi", "assertions": [{"contains": "x"}]})
    )
    problems = [(p["line"], p["path"], p["reason"]) for p in evalkit_cli("validate", "--json").json()["problems"]]
    assert problems == [(1, "id", "unknown field 'id'; allowed here: description, identifier, name, prompts, version")]
