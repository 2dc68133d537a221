"""docs/plugins.md's examples are real distributions under tests/data: installed, checked with the kit, run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from evalkit.testing import (
    check_generator,
    check_grader,
    check_prompt_set_provider,
    check_question_set_provider,
    check_repository,
    check_retriever,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
EXAMPLES = {
    "evalkit-example-faq": "evalkit_example_faq/__init__.py",
    "evalkit-example-questions": "evalkit_example_questions/__init__.py",
    "evalkit-example-generator": "evalkit_example_generator/__init__.py",
    "evalkit-example-grader": "evalkit_example_grader/__init__.py",
    "evalkit-example-retriever": "evalkit_example_retriever/__init__.py",
    "evalkit-minimal-repo": "evalkit_minimal_repo/__init__.py",
    "evalkit-hook-plugin": "evalkit_hook_plugin/__init__.py",
}


@pytest.fixture(scope="module")
def examples(plugin_dists) -> str:  # noqa: ANN001 - the session fixture from tests/conftest.py
    """Every example distribution, installed for real into one folder."""
    return plugin_dists(*EXAMPLES)


@pytest.fixture
def installed(examples: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The examples importable in this process too."""
    monkeypatch.syspath_prepend(examples)
    return examples


@pytest.mark.parametrize("distribution", sorted(EXAMPLES))
def test_the_docs_show_each_example_exactly_as_it_is_tested(distribution: str) -> None:
    docs = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    source = (DATA / distribution / EXAMPLES[distribution]).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n# " + re.escape(f"tests/data/{distribution}/{EXAMPLES[distribution]}") + r"\n(.*?)```", docs, re.S)
    assert blocks == [source], f"docs/plugins.md must show tests/data/{distribution}/{EXAMPLES[distribution]} verbatim"
    metadata = (DATA / distribution / "pyproject.toml").read_text(encoding="utf-8")
    entry_points = metadata[metadata.index("[project.entry-points"):metadata.index("[tool.hatch")].strip()
    assert entry_points in docs, f"docs/plugins.md must show the entry points of {distribution}"


def test_every_example_distribution_depends_on_the_kernel_by_its_distribution_name() -> None:
    for distribution in EXAMPLES:
        metadata = (DATA / distribution / "pyproject.toml").read_text(encoding="utf-8")
        assert 'dependencies = ["evalkit-golden"]' in metadata, distribution


def test_the_set_providers_pass_the_kit(installed: str) -> None:
    from evalkit_example_faq import FaqSets
    from evalkit_example_questions import DocsQuestions

    check_prompt_set_provider(FaqSets)
    check_question_set_provider(DocsQuestions)


def test_the_generator_passes_the_kit(installed: str) -> None:
    from evalkit_example_faq import FaqSets
    from evalkit_example_generator import InProcessApp

    check_generator(InProcessApp, app="evalkit_example_generator:office_assistant", model="office-assistant-2.1")
    (office,) = FaqSets().golden_prompt_sets()
    check_generator(InProcessApp, prompt_set=office, app="evalkit_example_generator:office_assistant", model="v2")


def test_the_grader_passes_the_kit(installed: str) -> None:
    from evalkit_example_grader import KeywordCoverageGrader

    check_grader(KeywordCoverageGrader)
    check_grader(KeywordCoverageGrader, threshold=0.9)


def test_the_retriever_passes_the_kit_with_provenance(installed: str) -> None:
    from evalkit_example_questions import DocsQuestions, corpus_path
    from evalkit_example_retriever import KeywordRetriever

    (questions,) = DocsQuestions().golden_question_sets()
    check_retriever(KeywordRetriever, question_set=questions, pages=corpus_path())


def test_the_repository_passes_the_kit(installed: str, tmp_path: Path) -> None:
    from evalkit_minimal_repo import MinimalRepository

    check_repository(MinimalRepository(f"minimal://{tmp_path / 'store.json'}"))


def test_the_examples_run_end_to_end_through_the_cli(evalkit_cli, examples: str, project: Path) -> None:
    (project / "evalkit.toml").write_text(
        '[providers.office]\nadapter = "example_app"\napp = "evalkit_example_generator:office_assistant"\nmodel = "office-assistant-2.1"\n'
    )
    env = {"PYTHONPATH": examples}
    run = evalkit_cli("run", "example_faq.office", "--provider", "office", "--grader", "keyword_coverage", "--json", env=env)
    assert run.code == 0, run.stderr
    document = run.json()
    assert document["grader"] == "keyword-coverage:v1:0.6" and document["verified"] is True
    assert document["identity"]["reported_model"] == "office-assistant-2.1"
    assert evalkit_cli("run", "example_faq.office", "--provider", "office", env=env).code == 0

    retrieval = evalkit_cli("retrieval", "example_docs.help", "example.keywords", "--deployment", "packaged", "--json", env=env)
    assert retrieval.code == 0, retrieval.stderr
    assert retrieval.json()["status"] == "complete"

    store = f"minimal://{project / 'third-party.json'}"
    stored = evalkit_cli("run", "example_faq.office", "--provider", "office", "--database", store, env=env)
    assert stored.code == 0, stored.stderr
    assert (project / "third-party.json").is_file()
