"""Set files built to exhaust evalkit: alias bombs, values that contain themselves, nesting past
the stack. Each is one problem naming the file (and the line where the format tells it), never a
hang, a traceback or a run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from evalkit.setfiles import load_set_files
from evalkit.setfiles.documents import ALIASED_VALUES_ALLOWED, MAX_NESTING

HEADER = "identifier: a.bomb\nname: N\n"
PROMPTS = "prompts:\n  - id: x\n    prompt: hi\n    assertions: [{contains: x}]\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def alias_bomb(levels: int) -> str:
    """Nine aliases of the level below, ``levels`` times: 9 ** (levels + 1) values from ~10 lines."""
    lines = ['l0: &l0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels + 1)]
    return HEADER + "\n".join(lines) + "\n" + PROMPTS


def only_problem(path: Path) -> str:
    loaded = load_set_files([path], root=path.parent)
    (problem,) = loaded.problems
    assert not loaded.prompt_sets
    return str(problem)


def test_an_alias_bomb_is_refused_before_anything_expands_it(tmp_path: Path) -> None:
    # 9 ** 8 = 43 million values: walked value by value this took minutes and gigabytes.
    problem = only_problem(write(tmp_path, "bomb.yaml", alias_bomb(7)))
    assert problem.startswith("bomb.yaml: YAML aliases: the ")
    assert f"more than {ALIASED_VALUES_ALLOWED:,} added by aliases" in problem


def test_aliases_that_add_a_bounded_number_of_values_are_fine(tmp_path: Path) -> None:
    text = (
        HEADER
        + "prompts:\n"
        + "".join(
            f"  - id: p{n}\n    prompt: hi\n    assertions: {'&common [{contains: x}, {max_words: 5}]' if n == 0 else '*common'}\n"
            for n in range(50)
        )
    )
    loaded = load_set_files([write(tmp_path, "shared.yaml", text)], root=tmp_path)
    assert not loaded.problems
    (golden,) = loaded.prompt_sets
    assert all([a.kind for a in p.assertions] == ["contains", "max_words"] for p in golden.prompts)
    # 5,000 values from the file's own ~50 and aliases: within ten times what is written
    assert len(golden.prompts) == 50


@pytest.mark.parametrize(
    "value",
    ["&loop [*loop]", "&loop {a: *loop}", "&outer [1, [2, *outer]]"],
)
def test_a_value_that_contains_itself_is_refused_at_its_anchor(tmp_path: Path, value: str) -> None:
    text = HEADER + f"prompts:\n  - id: x\n    prompt: hi\n    tags: {value}\n    assertions: [{{contains: x}}]\n"
    problem = only_problem(write(tmp_path, "loop.yaml", text))
    assert (
        problem
        == "loop.yaml:6:11: YAML alias: an alias refers to a value that contains it, so the value would never end"
    )


def deep_set_text(depth: int, suffix: str) -> str:
    """A set whose one assertion's JSON Schema holds a list nested to level ``depth`` (the
    ``enum`` is level 6: prompts, prompts[0], assertions, assertions[0], json_schema, enum), as text:
    ``json.dumps`` itself cannot write 990 levels."""
    enum = "[" * (depth - 5) + '"x"' + "]" * (depth - 5)  # JSON, YAML flow and TOML alike; innermost at ``depth``
    if suffix == ".yaml":
        return f"identifier: a.deep\nname: N\nprompts:\n  - id: x\n    prompt: hi\n    assertions:\n      - json_schema: {{enum: {enum}}}\n"
    if suffix == ".toml":
        return f'identifier = "a.deep"\nname = "N"\n[[prompts]]\nid = "x"\nprompt = "hi"\n[[prompts.assertions]]\njson_schema = {{enum = {enum}}}\n'
    prompt = f'{{"id": "x", "prompt": "hi", "assertions": [{{"json_schema": {{"enum": {enum}}}}}]}}'
    if suffix == ".jsonl":
        return '{"identifier": "a.deep", "name": "N"}\n' + prompt + "\n"
    return f'{{"identifier": "a.deep", "name": "N", "prompts": [{prompt}]}}'


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl", ".toml"])
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 900])
def test_values_nested_deeper_than_the_limit_are_one_problem_naming_the_value(
    tmp_path: Path, suffix: str, depth: int
) -> None:
    problem = only_problem(write(tmp_path, f"deep{suffix}", deep_set_text(depth, suffix)))
    if suffix == ".toml" and depth == 900:  # tomllib itself runs out of stack first
        assert problem == "deep.toml: TOML syntax: arrays or inline tables nested too deeply"
        return
    assert (
        f"prompts[0].assertions[0].json_schema.enum: nested more than {MAX_NESTING} lists and mappings deep" in problem
    )
    where = {".yaml": "deep.yaml:7:", ".jsonl": "deep.jsonl:2:1:"}.get(
        suffix, f"deep{suffix}: "
    )  # the line, where known
    assert problem.startswith(where)


def test_nesting_up_to_the_limit_loads(tmp_path: Path) -> None:
    for suffix in (".yaml", ".json", ".jsonl", ".toml"):
        loaded = load_set_files([write(tmp_path, f"deep{suffix}", deep_set_text(MAX_NESTING, suffix))], root=tmp_path)
        assert not loaded.problems and [s.identifier for s in loaded.prompt_sets] == ["a.deep"]


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        (
            "deep.toml",
            'identifier = "a.b"\nname = "N"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n",
            "TOML syntax: arrays or inline tables nested too deeply",
        ),
        (
            "deep.json",
            '{"identifier": "a.b",\n"x": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "JSON syntax: nested too deeply",
        ),
        ("deep.yaml", "identifier: a.b\nx: " + "[" * 100_000 + "]" * 100_000 + "\n", "YAML syntax: "),
        ("latin1.yaml", "identifier: caf\xe9\n", "is not UTF-8 text"),
    ],
)
def test_text_no_parser_can_follow_is_a_syntax_problem(tmp_path: Path, name: str, text: str, reason: str) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    problem = only_problem(path)
    assert problem.startswith(f"{name}:") and reason in problem


def test_the_pure_python_yaml_loader_says_nested_too_deeply_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    path = write(tmp_path, "deep.yaml", "identifier: a.b\nx: " + "[" * 5_000 + "]" * 5_000 + "\n")
    assert only_problem(path) == "deep.yaml: YAML syntax: nested too deeply"


def test_validate_and_run_refuse_a_bomb_through_the_cli(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    write(project / "evals", "bomb.yaml", alias_bomb(8))
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n[providers.self]\nadapter = "reference"\n')
    checked = evalkit_cli("validate", timeout=60)
    assert checked.code == 2 and "evals/bomb.yaml: YAML aliases: the " in checked.stdout + checked.stderr
    ran = evalkit_cli("run", "a.bomb", timeout=60)
    assert ran.code == 2 and "evals/bomb.yaml: YAML aliases: the " in ran.stderr and "Traceback" not in ran.stderr
    assert not (project / ".evalkit" / "results.db").exists() or "a.bomb" not in evalkit_cli("history", "a.bomb").stdout


def test_near_answers_as_the_scan_of_every_flagged_path_did() -> None:
    """`near` scanned every path the schema flagged, for each prompt and assertion (a JSONL file
    of 200,000 broken prompts never finished validating); it looks up the path's own prefixes now,
    and answers as the scan did: the path, an ancestor or a descendant of a flagged one."""
    import itertools

    from evalkit.setfiles.sets import FlaggedPaths, near

    flagged = [(), ("prompts", 3), ("prompts", 5, "assertions", 0), ("sets", 0, "prompts", 1, "id")]
    parts = ["prompts", "sets", "assertions", "id", 0, 1, 3, 5]
    paths = [path for length in range(5) for path in itertools.product(parts, repeat=length)]
    for chosen in (flagged[1:], flagged[2:], flagged):
        lookup = FlaggedPaths.of(chosen)
        for path in paths:
            assert near(path, lookup) == any(path[: len(f)] == f or f[: len(path)] == path for f in chosen), (
                chosen,
                path,
            )
            assert (path in lookup) == (path in chosen)


def test_a_tab_that_indents_yaml_is_named_as_a_tab(tmp_path: Path) -> None:
    # libyaml says "found character that cannot start any token" without saying which: a tab,
    # which an editor shows as spaces
    problem = only_problem(write(tmp_path, "tab.yaml", "identifier: a.tab\nname: T\nprompts:\n\t- id: a\n"))
    assert problem.startswith("tab.yaml:4:1: YAML syntax: ") and problem.endswith(
        "(a tab: YAML indents with spaces only)"
    ), problem


@pytest.mark.parametrize("blank", [" ", "\\t", "\\u200b", "\\u2028 "])
def test_an_id_of_only_blank_or_invisible_characters_is_refused_by_validate_and_run(
    evalkit_cli, project: Path, blank: str
) -> None:
    # such an id was accepted: it showed as an empty cell in every table and named nothing one could type
    (project / "evals").mkdir()
    write(project / "evals", "blank.json", '{"identifier": "a.blank", "name": "N", "prompts": [{"id": "ok", "prompt": "hi", '
          '"reference": "x", "assertions": [{"contains": "x"}]}, {"id": "' + blank + '", "prompt": "hi", "reference": "x", '
          '"assertions": [{"contains": "x"}]}]}')  # fmt: skip
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.json"]\n')
    expected = "has nothing visible in it (only whitespace, control or invisible characters)"
    checked = evalkit_cli("validate")
    assert checked.code == 2 and expected in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert "prompts[1].id: id " in checked.stdout + checked.stderr  # named at the id, not the set's first line
    ran = evalkit_cli("run", "a.blank")
    assert ran.code == 2 and expected in ran.stderr
    assert not (project / ".evalkit" / "results.db").exists()
