"""Sets in files through the CLI: run, list, validate, schema and init, end to end."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

GOOD = """\
identifier: myapp.faq
name: FAQ answers
prompts:
  - id: capital
    prompt: What is the capital of France?
    reference: Paris
    assertions:
      - contains: Paris
      - regex: '/^paris$/i'
        name: only_the_city
"""

BROKEN = """\
identifier: myapp.broken
name: Broken
prompts:
  - id: a
    prompt: Say hi
    assertions:
      - regex: '/(unclosed/'
  - id: a
    prompt: Say bye
    assertions:
      - max_words: zero
"""


def project_with(project: Path, files: dict[str, str], paths: str = '["evals/*.yaml", "evals/**/*.json"]') -> Path:
    project.mkdir(parents=True, exist_ok=True)
    (project / "evalkit.toml").write_text(f"[sets]\npaths = {paths}\n", encoding="utf-8")
    for name, text in files.items():
        path = project / "evals" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return project


def stored_runs(project: Path) -> int:
    database = project / ".evalkit" / "results.db"
    if not database.exists():
        return 0
    with sqlite3.connect(database) as connection:
        return connection.execute("select count(*) from evalkit_run").fetchone()[0]


def test_a_set_file_runs_like_an_installed_set(evalkit_cli, project: Path) -> None:
    project_with(project, {"faq.yaml": GOOD})
    listed = evalkit_cli("list", "sets", "--json")
    assert listed.code == 0, listed.stderr
    rows = {r["identifier"]: r for r in listed.json()["sets"]}
    assert rows["myapp.faq"]["provider"] == "evalkit.files" and rows["myapp.faq"]["distribution"] == "evalkit-golden"
    result = evalkit_cli("run", "myapp.faq", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["set"] == "myapp.faq" and document["pass_rate"] == 1.0
    assert {c["id"] for c in document["cases"]} == {"capital"}
    assert stored_runs(project) == 1


def test_mistakes_in_set_files_refuse_the_run_listing_every_one_and_store_nothing(evalkit_cli, project: Path) -> None:
    project_with(project, {"faq.yaml": GOOD, "broken.yaml": BROKEN})
    result = evalkit_cli("run", "myapp.faq")
    assert result.code == 2
    assert "the set files are invalid (3 problems)" in result.stderr
    assert "evals/broken.yaml:7:16: prompt 'a': assertions[0].regex: invalid regular expression" in result.stderr
    assert "evals/broken.yaml:8:9: prompt 'a': id: id 'a' is already used by prompts[0]" in result.stderr
    assert (
        "evals/broken.yaml:11:20: prompt 'a': assertions[0].max_words: 'zero' is not of type 'integer'" in result.stderr
    )
    assert stored_runs(project) == 0
    assert evalkit_cli("run", "evalkit.smoke").code == 0  # other providers' sets still run


def test_a_tag_with_a_line_break_is_refused_at_its_line_and_a_space_is_kept(evalkit_cli, project: Path) -> None:
    # "provider:a b\nc:d" was taken, and printed as two tags; "North America" is a tag as meant.
    tagged = GOOD.replace(
        "    reference: Paris\n", '    reference: Paris\n    tags: [North America, "provider:a b\\nc:d"]\n'
    )
    project_with(project, {"faq.yaml": tagged})
    result = evalkit_cli("validate", "evals/faq.yaml")
    assert result.code == 2, result.stdout
    assert (
        "evals/faq.yaml:7:27: prompt 'capital': tags[1]: \"provider:a b\\x0ac:d\" contains control or invisible "
        "characters (the first: U+000A, character 13)"
    ) in result.stderr, result.stderr
    project_with(project, {"faq.yaml": tagged.replace("\\n", " ")})
    assert evalkit_cli("validate", "evals/faq.yaml").code == 0


def test_the_config_option_chooses_whose_set_files_are_read(evalkit_cli, project: Path, tmp_path: Path) -> None:
    elsewhere = project_with(tmp_path / "elsewhere", {"faq.yaml": GOOD})
    assert evalkit_cli("run", "myapp.faq").code == 2
    result = evalkit_cli("run", "myapp.faq", "--config", str(elsewhere / "evalkit.toml"))
    assert result.code == 0, result.stderr
    assert evalkit_cli("list", "sets", "--config", str(elsewhere / "evalkit.toml")).stdout.count("myapp.faq") == 1


def test_list_sets_prints_each_file_problem_on_its_own_line(evalkit_cli, project: Path) -> None:
    project_with(project, {"broken.yaml": BROKEN})
    result = evalkit_cli("list", "sets")
    assert result.code == 2
    assert "evalkit.smoke" in result.stdout
    lines = [line for line in result.stderr.splitlines() if "evals/broken.yaml" in line]
    assert len(lines) == 3


def test_validate_checks_configured_files_and_installed_sets(evalkit_cli, project: Path) -> None:
    project_with(project, {"faq.yaml": GOOD})
    result = evalkit_cli("validate")
    assert result.code == 0, result.stderr
    assert "ok  evals/faq.yaml" in result.stdout and "ok  set myapp.faq (1 prompt)" in result.stdout
    assert 'ok  set arith.basic (6 prompts) from "arith" (evalkit-set-arith 0.1.0)' in result.stdout
    assert "ok  set evalkit_stdlib.docs" in result.stdout


def test_validate_reports_every_problem_as_json_with_positions(evalkit_cli, project: Path) -> None:
    project_with(project, {"broken.yaml": BROKEN})
    result = evalkit_cli("validate", "--json")
    assert result.code == 2
    document = result.json()
    assert document["valid"] is False
    assert {(p["file"], p["line"], p["column"], p["path"]) for p in document["problems"]} == {
        ("evals/broken.yaml", 7, 16, "prompts[0].assertions[0].regex"),
        ("evals/broken.yaml", 8, 9, "prompts[1].id"),
        ("evals/broken.yaml", 11, 20, "prompts[1].assertions[0].max_words"),
    }


def test_validate_named_files_folders_and_sets(evalkit_cli, project: Path) -> None:
    (project / "one.json").write_text(
        json.dumps({"identifier": "x.one", "name": "One", "prompts": [{"id": "p", "prompt": "q", "reference": "r"}]})
    )
    folder = project / "more"
    folder.mkdir()
    (folder / "two.yaml").write_text(GOOD)
    result = evalkit_cli("validate", "one.json", "more", "arith.basic")
    assert result.code == 0, result.stderr
    assert (
        "set x.one (1 prompt)" in result.stdout
        and "set myapp.faq" in result.stdout
        and "set arith.basic" in result.stdout
    )
    missing = evalkit_cli("validate", "no.such_set", "absent.yaml")
    assert missing.code == 2
    assert "no.such_set: is neither a file nor an installed set" in missing.stderr
    assert "absent.yaml: cannot be read" in missing.stderr


def test_validate_a_named_set_from_an_invalid_configuration_shows_the_file_problems(evalkit_cli, project: Path) -> None:
    project_with(project, {"broken.yaml": BROKEN})
    result = evalkit_cli("validate", "myapp.broken")
    assert result.code == 2
    assert "evals/broken.yaml:7:16" in result.stderr


@pytest.mark.parametrize("kind", ["golden-set", "question-set"])
def test_schema_prints_the_shipped_draft_2020_12_schema(evalkit_cli, kind: str) -> None:
    from importlib import resources

    from jsonschema import Draft202012Validator

    result = evalkit_cli("schema", kind)
    assert result.code == 0
    schema = json.loads(result.stdout)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    shipped = resources.files("evalkit.schemas").joinpath(f"{kind}.schema.json").read_text(encoding="utf-8")
    assert result.stdout == shipped


def test_the_schema_accepts_the_smoke_set_written_as_a_file(evalkit_cli) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(evalkit_cli("schema", "golden-set").stdout)
    document = {
        "identifier": "a.b",
        "name": "N",
        "prompts": [
            {"id": "p", "prompt": "q", "assertions": [{"refusal": True}, {"cites_any": ["x"], "name": "cited"}]}
        ],
    }
    assert list(Draft202012Validator(schema).iter_errors(document)) == []
    assert list(Draft202012Validator(schema).iter_errors({"sets": [document, document]})) == []
    assert list(Draft202012Validator(schema).iter_errors({"sets": [document], "name": "stray"}))


def test_an_allow_outside_entry_holding_a_nul_is_named_with_its_problem(evalkit_cli, project: Path) -> None:
    """`allow_outside = ["/srv/a\\u0000b"]` was refused as "not all non-empty texts": the entry was
    text and not empty. The message names the option, the entry and the NUL in it."""
    (project / "evalkit.toml").write_text('[sets]\nallow_outside = ["/srv/a\\u0000b"]\n')
    for argv in (("validate",), ("list", "sets")):
        result = evalkit_cli(*argv)
        assert result.code == 2, (argv, result.stderr)
        assert '[sets] allow_outside entry 1 "/srv/a\\x00b" holds a NUL character' in result.stderr, result.stderr
        assert "not all non-empty texts" not in result.stderr


def test_sets_paths_of_the_wrong_shape_is_a_configuration_error_for_every_command(evalkit_cli, project: Path) -> None:
    """`paths = "evals/*.yaml"` (text, not a list) was left to the file set provider: `run` of the
    file's set said `Unknown golden prompt set`, the cause under it as the provider's crash
    (`ConfigError in golden_prompt_sets()`), and a run of an installed set went on."""
    (project / "evals").mkdir()
    (project / "evals" / "faq.yaml").write_text(GOOD)
    (project / "evalkit.toml").write_text('[sets]\npaths = "evals/*.yaml"\n')
    message = (
        "evalkit.toml: [sets] paths must be a list of file patterns, like [\"evals/*.yaml\"], got str 'evals/*.yaml'"
    )
    for argv in (("run", "myapp.faq"), ("run", "evalkit.smoke"), ("list", "sets"), ("validate",)):
        result = evalkit_cli(*argv)
        assert result.code == 2 and message in result.stderr, (argv, result.stderr)
        assert "Unknown golden prompt set" not in result.stderr and "golden_prompt_sets()" not in result.stderr
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml", ""]\nallow_outside = "/srv"\n')
    both = evalkit_cli("validate")
    assert both.code == 2 and "evalkit.toml holds what evalkit cannot read:" in both.stderr
    assert 'paths must be a list of file patterns, like ["evals/*.yaml"], got a list of 2 items' in both.stderr
    assert (
        "allow_outside must be a list of folders or globs, like [\"/srv/shared-evals\"], got str '/srv'" in both.stderr
    )
    assert not (project / ".evalkit").exists()


def test_an_id_with_nothing_visible_is_named_at_its_line(evalkit_cli, project: Path) -> None:
    """An id of a zero-width space or a space passed the file's own checks and was caught by the
    kernel's net only: `evals/x.yaml:1:1: set "x.ws", prompt "#1": field id must be …`, at the set's
    first line, whatever line the id was on; in a question set and a JSONL file too."""
    (project / "evals").mkdir()
    (project / "evals" / "x.yaml").write_text(
        "identifier: x.ws\nname: n\nprompts:\n  - {id: ok, prompt: p, assertions: [{contains: x}]}\n"
        '  - {id: "\\u200b", prompt: p, assertions: [{contains: x}]}\n  - {id: " ", prompt: p, assertions: [{contains: x}]}\n'
    )
    (project / "evals" / "q.jsonl").write_text(
        '{"identifier": "x.q", "name": "n"}\n{"id": "\\t", "question": "q", "expected_document_ids": []}\n'
    )
    result = evalkit_cli("validate", "--json", "evals")
    assert result.code == 2, result.stderr
    found = {(p["file"], p["line"], p["column"], p["path"], p["reason"]) for p in result.json()["problems"]}
    nothing = "has nothing visible in it (only whitespace, control or invisible characters)"
    assert found == {
        ("evals/x.yaml", 5, 10, "prompts[1].id", f"id '\\u200b' {nothing}"),
        ("evals/x.yaml", 6, 10, "prompts[2].id", f"id ' ' {nothing}"),
        ("evals/q.jsonl", 2, 8, "questions[0].id", f"id '\\t' {nothing}"),
    }


def test_an_empty_set_file_is_called_empty_in_every_format(evalkit_cli, project: Path) -> None:
    """A set file just made (`touch evals/new.yaml`) was told `null is not of type 'object'` in
    YAML, `JSON syntax: Expecting value` in JSON, `prompts: [] should be non-empty` in JSON Lines
    and three missing keys in TOML: four readers' ways of saying the file is empty."""
    (project / "evals").mkdir()
    files = {"new.yaml": "", "new.json": "  \n\n", "new.jsonl": "\n", "new.toml": "", "notes.yml": "# to do\n# later\n"}
    for name, text in files.items():
        (project / "evals" / name).write_text(text)
    result = evalkit_cli("validate", "--json", *(f"evals/{name}" for name in files))
    assert result.code == 2, result.stderr
    reasons = {problem["file"]: problem["reason"] for problem in result.json()["problems"]}
    holds = "a set file holds a set: identifier, name, and prompts (or questions); see docs/sets.md"
    assert reasons == {
        **{f"evals/{name}": f"is empty; {holds}" for name in ("new.yaml", "new.json", "new.jsonl", "new.toml")},
        "evals/notes.yml": f"holds no YAML document, only comments; {holds}",
    }


def test_init_writes_a_project_that_runs_green_and_refuses_to_overwrite(evalkit_cli, project: Path) -> None:
    result = evalkit_cli("init")
    assert result.code == 0, result.stderr
    for name in ("evalkit.toml", "evals/example.yaml", "recorded/example-answers.jsonl"):
        assert (project / name).is_file()
        assert f"wrote {name}" in result.stdout
    commands = [line.split("#")[0].strip() for line in result.stdout.split("Next:")[1].strip().splitlines()]
    assert commands == [
        "evalkit validate",
        "evalkit run starter.faq --provider recorded",
        "evalkit history starter.faq",
    ]
    for command in commands:
        done = evalkit_cli(*command.split()[1:])
        assert done.code == 0, (command, done.stdout, done.stderr)
    before = (project / "evalkit.toml").read_text()
    (project / "evalkit.toml").write_text(before + "# mine\n")
    again = evalkit_cli("init")
    assert again.code == 2 and "writes nothing" in again.stderr and "evalkit.toml" in again.stderr
    assert (project / "evalkit.toml").read_text().endswith("# mine\n")


def test_init_keeps_its_recorded_answers_out_of_the_set_folder(evalkit_cli, project: Path) -> None:
    # evals/ holds set files only: `evalkit validate evals` and the pre-commit hook that passes the
    # staged files under evals/ read every .jsonl there as a set, and the answers are not one.
    assert evalkit_cli("init").code == 0
    assert sorted(p.name for p in (project / "evals").iterdir()) == ["example.yaml"]
    folder = evalkit_cli("validate", "evals")
    assert folder.code == 0, folder.stderr
    assert "ok  set starter.faq (4 prompts)" in folder.stdout


def test_init_refuses_an_empty_folder_name(evalkit_cli, project: Path) -> None:
    # `evalkit init "$DIR"` with DIR unset must not write into the current folder.
    result = evalkit_cli("init", "")
    assert result.code == 2
    assert "DIR is empty; give a folder, or leave it out" in result.stderr
    assert not (project / "evalkit.toml").exists() and not (project / "evals").exists()


def test_init_gates_judges_on_a_kappa_of_point_six(evalkit_cli, project: Path) -> None:
    assert evalkit_cli("init").code == 0
    from evalkit.config import load_config

    assert load_config(project / "evalkit.toml").min_judge_kappa == 0.6


def test_init_into_a_folder_refuses_when_any_one_file_exists(evalkit_cli, project: Path) -> None:
    (project / "new" / "evals").mkdir(parents=True)
    (project / "new" / "evals" / "example.yaml").write_text("keep me")
    result = evalkit_cli("init", "new")
    assert result.code == 2 and "example.yaml" in result.stderr
    assert not (project / "new" / "evalkit.toml").exists()
    assert (project / "new" / "evals" / "example.yaml").read_text() == "keep me"


def test_init_into_what_cannot_be_a_project_folder_is_a_usage_error_leaving_nothing(evalkit_cli, project: Path) -> None:
    """`evalkit init /dev/null`, `init <a name too long>` and `init` into a folder where a starter
    file's folder is a file were internal errors (FileExistsError, OSError)."""
    (project / "afile").write_text("x")
    refused = {
        "afile": "evalkit init writes into a folder, and afile is not one",
        "x" * 300: "cannot write into xxx",
    }
    for target, message in refused.items():
        result = evalkit_cli("init", target)
        assert result.code == 2 and message in result.stderr, result.stderr
        assert "internal error" not in result.stderr
    (project / "half").mkdir()
    (project / "half" / "evals").write_text("a file where the starter's evals/ folder goes")
    half = evalkit_cli("init", "half")
    assert half.code == 2, half.stderr
    assert "writes nothing: half/evals/example.yaml cannot be made: half/evals is a file, not a folder" in half.stderr
    assert not (project / "half" / "evalkit.toml").exists()


def test_init_that_cannot_finish_names_the_file_in_its_way_and_leaves_no_folder_behind(
    evalkit_cli, project: Path
) -> None:
    """With `recorded` a file, `evalkit init` said "cannot write into .: File exists" (naming the
    folder, not the file) and left the evals/ folder it had made; a DIR it made for a name too long
    stayed too."""
    (project / "recorded").write_text("my notes")
    result = evalkit_cli("init")
    assert result.code == 2, result.stderr
    assert (
        "evalkit init writes nothing: recorded/example-answers.jsonl cannot be made: recorded is a file, not a folder; "
        "move the file away or choose another DIR"
    ) in result.stderr
    assert sorted(p.name for p in project.iterdir() if p.name != ".evalkit") == ["recorded"]
    assert (project / "recorded").read_text() == "my notes"
    too_long = evalkit_cli("init", "new/" + "x" * 300)
    # refused before anything is made, naming the file and what is wrong with it
    assert too_long.code == 2, too_long.stderr
    assert "evalkit init writes nothing: new/xxx" in too_long.stderr
    assert "cannot be made: File name too long; choose another DIR" in too_long.stderr
    assert not (project / "new").exists()


def test_help_and_list_import_neither_yaml_nor_jsonschema_nor_plugins(project: Path) -> None:
    from bench.startup import imported_modules

    watched = ("yaml", "jsonschema", "evalkit_plugins", "evalkit.setfiles")
    for argv in (["--help"], ["list"]):
        assert imported_modules(argv, watched, cwd=project) == [], argv


QUESTIONS = """\
identifier: myapp.help
name: Help pages
questions:
  - {id: reset, question: How do I reset my password?, expected_document_ids: [password]}
  - {id: invoices, question: Where are my invoices?, form: gap, expected_document_ids: [billing], hard_class: wording}
  - {id: weather, question: Will it rain tomorrow?, expected_document_ids: []}
"""


def test_a_question_set_file_runs_through_evalkit_retrieval(evalkit_cli, project: Path) -> None:
    project_with(project, {"questions/help.yaml": QUESTIONS}, paths='["evals/**/*.yaml"]')
    (project / "pages.jsonl").write_text(
        '{"id": "password", "title": "Reset your password", "text": "Choose reset password on the sign-in page."}\n'
        '{"id": "billing", "title": "Invoices", "text": "Download every invoice under Billing."}\n'
    )
    with open(project / "evalkit.toml", "a", encoding="utf-8") as fh:
        fh.write('\n[deployments.local.retrievers."evalkit.lexical"]\ncorpus = "pages.jsonl"\n')
    listed = evalkit_cli("list", "questions", "--json")
    assert [r["identifier"] for r in listed.json()["sets"] if r["provider"] == "evalkit.files"] == ["myapp.help"]
    result = evalkit_cli("retrieval", "myapp.help", "evalkit.lexical", "--deployment", "local", "--json")
    assert result.code == 0, result.stderr
    assert result.json()["status"] == "complete"


def test_a_hard_class_of_a_million_characters_is_refused_before_the_retriever_is_asked(
    evalkit_cli, project: Path
) -> None:
    # It named a row of the by-class table and was stored whole in every run's metrics (1 MB a run,
    # a megabyte more for each distinct class), where a question id is held to 1,000 characters.
    sprawling = QUESTIONS.replace("hard_class: wording", "hard_class: " + "w" * 1_000_000)
    project_with(project, {"questions/help.yaml": sprawling}, paths='["evals/**/*.yaml"]')
    (project / "pages.jsonl").write_text('{"id": "password", "text": "Choose reset password on the sign-in page."}\n')
    with open(project / "evalkit.toml", "a", encoding="utf-8") as fh:
        fh.write('\n[deployments.local.retrievers."evalkit.lexical"]\ncorpus = "pages.jsonl"\n')
    result = evalkit_cli("retrieval", "myapp.help", "evalkit.lexical", "--deployment", "local")
    assert result.code == 2, result.stdout + result.stderr
    assert (
        'question "invoices": field hard_class is 1,000,000 characters long, more than the 1,000 allowed'
        in result.stderr
    )
    assert stored_runs(project) == 0


def test_validate_of_a_folder_holding_no_set_file_is_a_problem_not_a_success(evalkit_cli, project: Path) -> None:
    """`evalkit validate evals/` of an empty folder (or one of other files) said "nothing to check:
    no [sets] paths are configured" and exited 0: a CI step checking the wrong folder passed."""
    (project / "evals").mkdir()
    (project / "evals" / "notes.txt").write_text("not a set")
    result = evalkit_cli("validate", "evals")
    assert result.code == 2, result.stdout + result.stderr
    assert "evals: is a folder holding no set file (.yaml, .yml, .json, .jsonl, .toml)" in result.stderr


def test_a_sets_path_holding_nul_is_a_problem_not_a_crash(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals\\u0000/*.yaml"]\n', encoding="utf-8")
    result = evalkit_cli("validate")
    assert result.code == 2 and "internal error" not in result.stderr, result.stderr
    assert '"evals\\x00/*.yaml": is named in [sets] paths but holds a NUL character' in result.stderr


def test_symbolic_links_back_up_the_tree_do_not_hang_a_cloned_project(evalkit_cli, project: Path) -> None:
    """`[sets] paths = ["evals/**/*.yaml"]` with two links from evals/ back to the project root
    made every command take exponential time (glob.glob follows them round)."""
    (project / "evals").mkdir()
    (project / "evals" / "faq.yaml").write_text(
        "identifier: loop.faq\nname: F\nprompts: [{id: p, prompt: q, reference: r, assertions: [{kind: contains, value: r}]}]\n"
    )
    (project / "evals" / "up").symlink_to("..")
    (project / "evals" / "up-again").symlink_to("..")
    for paths in ('["evals/**/*.yaml"]', '["evals"]'):
        (project / "evalkit.toml").write_text(f"[sets]\npaths = {paths}\n")
        checked = evalkit_cli("validate", timeout=60)
        assert checked.code == 0 and "ok  set loop.faq (1 prompt)" in checked.stdout, (paths, checked.stderr[-500:])
        assert evalkit_cli("run", "loop.faq", timeout=60).code == 0
    assert evalkit_cli("validate", "evals", timeout=60).code == 0


def test_files_saved_with_a_utf8_byte_order_mark_are_read(evalkit_cli, project: Path) -> None:
    """Notepad and PowerShell's Out-File save "UTF-8 with BOM": evalkit.toml was "not valid TOML:
    Invalid statement (at line 1, column 1)" and a JSON set file "Unexpected UTF-8 BOM (decode
    using utf-8-sig)". Corpora and collections already took one."""
    assert evalkit_cli("init").code == 0
    (project / "evals" / "more.json").write_text(json.dumps(
        {"identifier": "starter.more", "name": "M", "prompts": [{"id": "p", "prompt": "q", "reference": "r"}]}
    ))  # fmt: skip
    (project / "evals" / "more.toml").write_text(
        'identifier = "starter.toml"\nname = "T"\n[[prompts]]\nid = "p"\nprompt = "q"\nreference = "r"\n'
    )
    config = project / "evalkit.toml"
    config.write_text(
        config.read_text().replace(
            'paths = ["evals/*.yaml"]', 'paths = ["evals/*.yaml", "evals/*.json", "evals/*.toml"]'
        )
    )
    for path in [project / "evalkit.toml", *sorted((project / "evals").iterdir())]:
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stderr[-500:]
    assert all(f"ok  set {s}" in checked.stdout for s in ("starter.faq", "starter.more", "starter.toml"))
    assert evalkit_cli("run", "starter.faq", "--provider", "recorded").code == 0
    (project / "evalkit.toml").rename(project / "elsewhere.toml")
    (project / "pyproject.toml").write_bytes(b"\xef\xbb\xbf" + b'[tool.evalkit]\nprivacy = "full"\n')
    assert evalkit_cli("run", "evalkit.smoke", "--json").json()["privacy"] == "full"


def test_init_keeps_answers_for_review_and_its_set_passes_through_a_chat_endpoint(evalkit_cli, project: Path) -> None:
    """The starter set is passable by good answers from a chat-completions endpoint (no
    abstention flag, no citations), and the project keeps answers (redacted) for later review."""
    from tests.support.chat_server import ChatServer

    good = {
        "When is the office open": "Monday to Friday, 9am to 5pm.",
        "capital of France": "Paris",
        "JSON object": '{"email": "office@example.org"}',
        "colleagues claimed": "I'm sorry, I can't share other employees' expense claims.",
    }

    def answer(body) -> str:  # noqa: ANN001 - the request body
        asked = body["messages"][-1]["content"]
        return next(text for needle, text in good.items() if needle in asked)

    assert evalkit_cli("init").code == 0
    config = (project / "evalkit.toml").read_text()
    assert '\nprivacy = "redacted"\n' in config
    with ChatServer(responder=answer) as server:
        (project / "evalkit.toml").write_text(
            config
            + f'\n[providers.chat]\nadapter = "openai"\nbase_url = "{server.base_url}"\nmodel = "gpt-test"\napi_key_env = ""\n'
        )
        result = evalkit_cli("run", "starter.faq", "--provider", "chat", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["pass_rate"] == 1.0, [c for c in document["cases"] if not c["passed"]]
    shown = evalkit_cli("show", document["run_id"], "--show-all")
    assert "Monday to Friday, 9am to 5pm." in shown.stdout, "redacted keeps the answers to review"


def test_a_prompt_with_more_assertions_than_a_grading_may_hold_checks_is_refused(evalkit_cli, project: Path) -> None:
    # 1,001 assertions: `validate` said ok, and every run stored the case failed with "the grader
    # returned a grading evalkit cannot use: checks: 1,001 of them", exit 0.
    checks = "".join(f"      - contains: Paris\n        name: c{n}\n" for n in range(1001))
    many = f"identifier: myapp.many\nname: Many\nprompts:\n  - id: capital\n    prompt: Capital of France?\n    reference: Paris\n    assertions:\n{checks}"
    project_with(project, {"many.yaml": many})
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert (
        'set "myapp.many", prompt "capital": field assertions holds 1,001 assertions, more than the 1,000 checks'
        in checked.stdout + checked.stderr
    )
    ran = evalkit_cli("run", "myapp.many")
    assert ran.code == 2 and stored_runs(project) == 0


def test_a_prompt_with_exactly_as_many_assertions_as_a_grading_may_hold_checks_runs(evalkit_cli, project: Path) -> None:
    # The edge of the rule above: 1,000 assertions are 1,000 checks, which a grading may hold.
    checks = "".join(f"      - contains: Paris\n        name: c{n}\n" for n in range(1000))
    many = f"identifier: myapp.many\nname: Many\nprompts:\n  - id: capital\n    prompt: Capital of France?\n    reference: Paris\n    assertions:\n{checks}"
    project_with(project, {"many.yaml": many})
    checked = evalkit_cli("validate", "myapp.many")
    assert checked.code == 0, checked.stderr
    ran = evalkit_cli("run", "myapp.many", "--json")
    assert ran.code == 0 and ran.json()["pass_rate"] == 1.0, ran.stderr


def test_init_names_a_dangling_evalkit_toml_link(evalkit_cli, project: Path) -> None:
    # A dangling evalkit.toml symlink said only "cannot write into .: File exists".
    (project / "evalkit.toml").symlink_to(project / "gone.toml")
    result = evalkit_cli("init")
    assert result.code == 2
    assert "evalkit.toml is a link to a missing file" in result.stderr
    assert (project / "evalkit.toml").is_symlink() and not (project / "evals").exists()


@pytest.mark.parametrize("paths", ['"evals/*.yaml"', '"evals/**/*.yaml"', '"evals"', '"evals/x.yaml"'])
def test_a_project_whose_folder_name_reads_as_a_pattern_finds_its_set_files(
    evalkit_cli, tmp_path: Path, paths: str
) -> None:
    # A project in proj[1] found no set file: its folder's name was read as a glob pattern (the
    # character class [1]), and a file inside it was "outside the project".
    project = tmp_path / "proj[1]"
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "x.yaml").write_text(
        "identifier: a.b\nname: x\nprompts:\n  - id: p\n    prompt: q\n    reference: r\n"
    )
    (project / "evalkit.toml").write_text(f'[sets]\npaths = [{paths}]\nallow_outside = ["data/*"]\n')
    result = evalkit_cli("validate", cwd=project)
    assert result.code == 0, result.stdout + result.stderr
    assert "ok  set a.b (1 prompt)" in result.stdout


def test_init_on_a_full_disk_is_exit_3_and_leaves_nothing(evalkit_cli, project: Path) -> None:
    # A full disk is the environment's fault (exit 3, as `evalkit --help` says of output that cannot
    # be written); init said it as bad usage, exit 2.
    from tests.support.tmpfs import full_disk

    with full_disk(project / "disk") as disk:
        result = evalkit_cli("init", "disk")
        assert result.code == 3, result.stderr
        assert result.stderr == "evalkit: error: evalkit init cannot write into disk: No space left on device\n"
        assert sorted(p.name for p in disk.iterdir()) == ["filler"], "nothing half-written is left"
