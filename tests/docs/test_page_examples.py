"""The docs' worked examples do what the pages say: the files a page shows are written as shown,
the commands it gives are run in-process, and the output it quotes is checked line by line."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def page(name: str) -> str:
    """The text of docs/NAME."""
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def fenced(text: str, language: str) -> list[str]:
    """Every fenced block of LANGUAGE in TEXT, in order."""
    return re.findall(r"```" + language + r"\n(.*?)```", text, re.S)


def checked_block(text: str, name: str) -> list[str]:
    """The lines of the block a page marks ``<!-- doc-check: NAME -->``."""
    found = re.search(r"<!-- doc-check: " + re.escape(name) + r" -->\s*\n```\w*\n(.*?)\n```", text, re.S)
    assert found, f"no block marked doc-check: {name}"
    return found.group(1).splitlines()


def test_the_template_example_of_sets_md_validates_and_its_quoted_mistakes_are_the_real_ones(evalkit_cli, project: Path) -> None:
    text = page("sets.md")
    template = next(block for block in fenced(text, "yaml") if block.startswith("identifier: geo.capitals"))
    table = next(block for block in fenced(text, "text") if block.startswith("country,capital"))
    evals = project / "evals"
    evals.mkdir()
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')

    def validate(set_text: str, table_text: str) -> str:
        (evals / "capitals.yaml").write_text(set_text, encoding="utf-8")
        (evals / "capitals.csv").write_text(table_text, encoding="utf-8")
        result = evalkit_cli("validate", "evals/capitals.yaml")
        return result.stdout if result.code == 0 else result.stderr

    counted = re.search(r"`(ok  set geo\.capitals \(\d+ prompts\))`", text).group(1)
    assert counted in validate(template, table)

    quoted = checked_block(text, "sets.md templates")
    misspelled = validate(template.replace("{country}? Answer", "{contry}? Answer"), table)
    more_rows = validate(template, table + "Italy,,Milan,Europe,atlas 2024\nFrance,Paris,Lyon,Europe,atlas 2024\n")
    no_ignore = validate(re.sub(r"\n *ignore_columns:[^\n]*", "", template), table)
    assert quoted[0] in misspelled.splitlines()
    assert quoted[1:3] == [line for line in more_rows.splitlines() if line.startswith("evals/capitals.csv")]
    assert quoted[3] in no_ignore.splitlines()


def test_the_broken_set_file_of_sets_md_is_refused_with_the_quoted_problems(evalkit_cli, project: Path) -> None:
    text = page("sets.md")
    broken = next(block for block in fenced(text, "yaml") if block.startswith("identifier: myapp.broken"))
    (project / "evals").mkdir()
    (project / "evals" / "broken.yaml").write_text(broken, encoding="utf-8")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    result = evalkit_cli("run", "myapp.broken")
    assert result.code == 2
    assert result.stderr.splitlines() == checked_block(text, "sets.md broken")


RUN_ID = re.compile(r"\d{8}T\d{6}-[0-9a-f]{6}")


def test_the_side_by_side_summary_of_providers_md_is_what_two_providers_print(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.good]\nadapter = "reference"\nmodel = "smoke-alias"\n')
    references = evalkit_cli("run", "arith.basic", "--privacy", "full", "--json", "--database", "sqlite:///:memory:")
    assert references.code == 0, references.stderr
    lines = [
        {"id": case["id"], "text": "13" if case["id"] == "add-7-5" else case["answer"], "model": "worse-2026"}
        for case in references.json()["cases"]
    ]
    (project / "worse.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (project / "evalkit.toml").write_text(
        '[providers.good]\nadapter = "reference"\nmodel = "smoke-alias"\n\n'
        '[providers.worse]\nadapter = "replay"\nmodel = "smoke-alias"\npath = "worse.jsonl"\n'
    )
    result = evalkit_cli("run", "arith.basic", "--provider", "good", "--provider", "worse")
    assert result.code == 0, result.stdout + result.stderr
    printed = result.stdout[result.stdout.index("Side by side:"):].rstrip("\n").splitlines()
    quoted = checked_block(page("providers.md"), "providers.md side by side")
    def masked(line: str) -> str:  # run ids and the median latency (a slow machine takes a millisecond) aside
        return re.sub(r"\d+ │ (\w+)$", r"N │ \1", RUN_ID.sub("RUN", line))

    assert [masked(line) for line in printed] == [masked(line) for line in quoted]


def matches_quoted(printed: list[str], quoted: list[str]) -> bool:
    """True when PRINTED is QUOTED, where ``…`` in a quoted line stands for any text and a quoted
    line that is ``…`` alone for any number of printed lines."""
    pattern = "".join(r"(?:.*\n)*?" if line == "…" else re.escape(line).replace("…", ".*?") + r"\n" for line in quoted)
    return re.fullmatch(pattern, "".join(line + "\n" for line in printed)) is not None


def test_the_set_versions_comparison_of_baselines_md_is_what_run_prints(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["evals/*.yaml"]\n\n[providers.prod]\nadapter = "replay"\nmodel = "m"\npath = "answers.jsonl"\n'
    )

    def version(ids: list[str], edited: str, failing: set[str]) -> None:
        prompts = "".join(
            f"  - id: {i}\n    prompt: Q {i}{' edited' if i == edited else ''}\n    assertions:\n      - contains: A{i}\n" for i in ids
        )
        (project / "evals" / "s.yaml").write_text(f"identifier: s.v\nname: V\nprompts:\n{prompts}")
        answers = [{"id": i, "text": "no" if i in failing else f"A{i}", "model": "m-1"} for i in ids]
        (project / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))

    version(["p0", "p1", "p2", "p3", "p4"], "", set())
    assert evalkit_cli("run", "s.v").code == 0
    version(["p0", "p1", "p2", "p3", "n1", "n2"], "p1", {"p1", "p2", "n1", "n2"})
    result = evalkit_cli("run", "s.v")
    printed = result.stdout[result.stdout.index("Regressed (passed"):].splitlines()
    printed = [line for line in printed if not line.startswith("Not accepted as the baseline")]
    quoted = checked_block(page("baselines.md"), "baselines.md set versions")
    assert matches_quoted(printed, quoted), "\n".join(printed)


def test_the_library_examples_of_api_md_run_as_written(project: Path, monkeypatch) -> None:  # noqa: ANN001
    """evaluate_set, evaluate_retrieval and ModelSelection exactly as docs/api.md shows them, in a
    project that has the set and the instances they name; then what the page says they return."""
    blocks = fenced(page("api.md"), "python")
    (project / "evals").mkdir()
    (project / "evals" / "faq.yaml").write_text(
        "identifier: myapp.faq\nname: FAQ\nprompts:\n  - id: a\n    prompt: Say hello.\n    reference: hello\n"
        "    assertions: [{contains: hello}]\n"
    )
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["evals/*.yaml"]\n\n'
        '[providers.prod-gpt]\nadapter = "reference"\nmodel = "gpt-4o-mini"\ncapabilities = ["chat"]\n'
    )
    monkeypatch.chdir(project)
    for block in (b for b in blocks if "evaluate_set(" in b or "evaluate_retrieval(" in b or "ModelSelection(" in b):
        scope: dict = {}
        exec(compile(block, "docs/api.md", "exec"), scope)  # noqa: S102 - the page's own example
        if "outcome" in scope:
            assert scope["outcome"].verdict.state in {"baseline", "no_regression"}
            assert scope["outcome"].exit_code(fail_on_regression=True) == 0
        if "ranking" in scope:
            assert scope["ranking"].selected.name == "prod-gpt"

    from evalkit import validate_prompt_set, validate_question_set
    from evalkit.setfiles import load_set_files

    files = load_set_files([project / "evals" / "faq.yaml"])
    assert not files.problems
    assert validate_prompt_set(files.prompt_sets[0]) == 1
    assert "`validate_prompt_set` the number of prompts" in " ".join(page("api.md").split())
    assert validate_question_set.__annotations__["return"] in (None, "None")


def test_the_next_steps_import_md_quotes_are_what_import_otel_prints(evalkit_cli, project: Path) -> None:
    from tests.importers.test_otel import recorded

    (project / "traces").mkdir()
    recorded(project / "traces" / "prod-2026-05-02.jsonl")
    (project / "evalkit.toml").write_text("# a project without [sets]\n")
    quoted = checked_block(page("import.md"), "import.md otel")
    command = shlex.split(quoted[0].removeprefix("$ evalkit "))
    result = evalkit_cli(*command)
    assert result.code == 0, result.stderr
    printed = result.stdout.splitlines()
    at = next(i for i, line in enumerate(quoted) if line.startswith("Next:"))
    assert printed[printed.index(quoted[at]):] == quoted[at:], "the next steps the page quotes"
    assert (project / "evals" / "prod.yaml").is_file() and (project / "evals" / "prod-answers.jsonl").is_file()
    identifier = re.search(r"^identifier: (\S+)$", (project / "evals" / "prod.yaml").read_text(), re.M).group(1)
    assert f"identifier: {identifier}" in page("import.md")


def test_the_migration_table_of_storage_md_lists_every_migration() -> None:
    from evalkit.storage.schema import MIGRATIONS

    section = page("storage.md").split("## Schema and migrations", 1)[1].split("\nRules:", 1)[0]
    listed = [int(number) for number in re.findall(r"^\| (\d+) \|", section, re.M)]
    assert listed == [migration.version for migration in MIGRATIONS], "add a row for each new migration"
