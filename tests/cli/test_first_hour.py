"""The README's tour, replayed as a new user would: the files it shows, a real pip-installed
distribution, and the commands it gives — from the project, from a subdirectory, and from
elsewhere with --config — with the outputs and exit codes it promises."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TOUR_FILE = re.compile(r"<!-- tour: (\S+) -->\s*\n(\s*)```\w*\n(.*?)\n\s*```", re.S)
TOUR_OUTPUT = re.compile(r"<!-- tour-output: (\S+) -->\s*\n(\s*)```\w*\n(.*?)\n\s*```", re.S)
RUN_ID = re.compile(r"\d{8}T\d{6}-[0-9a-f]{6}")


def tour_files() -> dict[str, str]:
    """The files the README's tour asks the reader to write, by path, exactly as shown."""
    files = {path: textwrap.dedent(body) + "\n" for path, _, body in TOUR_FILE.findall(README.read_text(encoding="utf-8"))}
    assert {"pyproject.toml", "myapp/evaluation.py", "evalkit.toml", "answers.jsonl"} <= set(files)
    return files


def quoted_output(name: str) -> list[str]:
    """The lines of the output the README's tour quotes under ``<!-- tour-output: NAME -->``."""
    quoted = {key: textwrap.dedent(body).splitlines() for key, _, body in TOUR_OUTPUT.findall(README.read_text(encoding="utf-8"))}
    assert name in quoted, f"no block marked tour-output: {name}"
    return quoted[name]


def quoted_spans(start: str, end: str) -> list[str]:
    """The inline code the README's tour quotes between START and END, its line breaks and
    indentation read as one space (as Markdown renders them)."""
    text = README.read_text(encoding="utf-8")
    begin = text.index(start)
    passage = text[begin : text.index(end, begin)]
    return [re.sub(r"\n\s*", " ", span) for span in re.findall(r"`([^`]+)`", passage)]


def shows_in_order(quoted: list[str], printed: str) -> bool:
    """Whether every quoted line is a line of PRINTED, in the quoted order (run ids may differ)."""
    lines = iter(RUN_ID.sub("RUN", line) for line in printed.splitlines())
    return all(any(RUN_ID.sub("RUN", want) == line for line in lines) for want in quoted)


@pytest.fixture(scope="module")
def installed_tour(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The tour's project written from the README and pip-installed (a real build) into a folder."""
    project = tmp_path_factory.mktemp("home") / "myapp"
    for path, text in tour_files().items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text, encoding="utf-8")
    (project / "myapp" / "__init__.py").write_text("")
    site = project.parent / "site-packages"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(site), str(project)],
        check=True, capture_output=True, text=True,
    )
    return project, str(site)


def test_the_readme_tour_from_the_project_a_subdirectory_and_elsewhere(evalkit_cli, installed_tour, tmp_path: Path) -> None:
    project, site = installed_tour
    env = {"PYTHONPATH": site}

    listed = evalkit_cli("list", "sets", env=env, cwd=project)
    assert listed.code == 0, listed.stderr
    assert re.search(r"myapp\.faq .*FAQ answers .* 2 .* myapp 0\.1\.0", listed.stdout)

    first = evalkit_cli("run", "myapp.faq", env=env, cwd=project)
    assert first.code == 0, first.stdout + first.stderr
    assert "Pass rate:  100.0% (2/2)" in first.stdout
    assert "No accepted run for this set, serving identity and grader — recorded as the baseline." in first.stdout
    for quoted in quoted_spans("It prints each case that failed", "exit **0**"):
        assert quoted in first.stdout, f"the README quotes {quoted!r}, which the first run does not print"
    assert (project / ".evalkit" / "results.db").is_file()

    again = evalkit_cli("run", "myapp.faq", env=env, cwd=project / "myapp")
    assert again.code == 0, again.stdout + again.stderr
    assert "No regression" in again.stdout, "the subdirectory uses the project's store and baseline"
    assert not (project / "myapp" / ".evalkit").exists()

    answers = project / "answers.jsonl"
    answers.write_text(answers.read_text().replace("Within 30 days.", "Within 14 days."))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config = str(project / "evalkit.toml")
    gated = evalkit_cli("run", "myapp.faq", "--fail-on-regression", "--config", config, env=env, cwd=elsewhere)
    assert gated.code == 1, gated.stdout + gated.stderr
    assert "Regressed (passed in the baseline, fail now): 1\n  - receipts: contains_any, contains_none\n" in gated.stdout
    assert shows_in_order(quoted_output("regression"), gated.stdout), "the README quotes what the gate prints"
    assert "Regression: pass rate dropped 50.0 pp and mean score dropped 0.500" in gated.stdout
    assert not (elsewhere / ".evalkit").exists(), "no second store where the command ran"
    assert not any(line.endswith(" ") for line in gated.stdout.splitlines()), "no padding when piped"

    again = evalkit_cli("run", "myapp.faq", "--fail-on-regression", env=env, cwd=project)
    assert again.code == 1, "a regressed run never becomes the baseline by itself"
    regressed_id = re.search(r"\(run (\S+)\)", again.stdout).group(1)
    accepted = evalkit_cli("baseline", "accept", regressed_id, "--reason", "14 days is the new policy", env=env, cwd=project)
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    after = evalkit_cli("run", "myapp.faq", "--fail-on-regression", env=env, cwd=project)
    assert after.code == 0 and "No regression" in after.stdout, after.stdout

    history = evalkit_cli("--config", config, "history", "myapp.faq", "--json", env=env, cwd=elsewhere)
    assert history.code == 0 and len(history.json()["runs"]) == 5
    table = evalkit_cli("history", "myapp.faq", env=env, cwd=project / "myapp")
    assert "(5 runs, newest first)" in table.stdout


def test_the_tours_mistakes_end_in_clear_messages(evalkit_cli, installed_tour, tmp_path: Path) -> None:
    project, site = installed_tour
    env = {"PYTHONPATH": site}
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    typo = evalkit_cli("run", "myapp.fqa", env=env, cwd=project)
    assert typo.code == 2 and 'Did you mean "myapp.faq"?' in typo.stderr
    lost = evalkit_cli("run", "myapp.faq", "--provider", "my-app", env=env, cwd=stranger)
    assert lost.code == 2 and "No configuration file was found" in lost.stderr
    assert '[providers.my-app]\n    adapter = "openai"' in lost.stderr
    nothing = evalkit_cli("history", "myapp.faq", env=env, cwd=stranger)
    assert nothing.code == 2 and f"There is no results store at {stranger / '.evalkit' / 'results.db'}" in nothing.stderr
    assert not (stranger / ".evalkit").exists()
