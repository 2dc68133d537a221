"""Names that print alike must be alike: a case id, a provider instance or a quarantined case
written in a Unicode form other than NFC ("cafe" + a combining accent) prints exactly as its NFC
twin ("café") and never matches it. Such a name is refused, naming it escaped and its NFC form."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from evalkit.checks import BUILTIN_KINDS
from evalkit.printable import not_nfc
from evalkit.prompts import Assertion, GoldenPrompt, GoldenPromptSet
from evalkit.questions import GoldenQuestion, GoldenQuestionSet
from evalkit.retrieval.validation import question_set_problems
from evalkit.validation import prompt_set_problems

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
#: What every refusal says of the NFD name.
REFUSAL = "'cafe\\u0301' is not in Unicode normal form NFC (it prints like other text it never matches); write it as \"café\" ('caf\\xe9')"


def set_file(project: Path, *ids: str) -> None:
    prompts = [{"id": i, "prompt": "hi", "reference": "x", "assertions": [{"contains": "x"}]} for i in ids]
    (project / "evals").mkdir()
    (project / "evals" / "nf.json").write_text(json.dumps({"identifier": "a.nf", "name": "N", "prompts": prompts}, ensure_ascii=False), encoding="utf-8")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.json"]\n', encoding="utf-8")


def test_the_rule_names_the_text_escaped_and_its_nfc_form() -> None:
    assert not_nfc(NFC) is None and not_nfc("plain-id") is None
    assert not_nfc(NFD) == REFUSAL
    long = not_nfc(NFD * 400)
    assert long is not None and len(long) < 500  # a 1,000-character id is not repeated whole


@pytest.mark.parametrize("ids", [(NFC, NFD), (NFD,)], ids=["twins", "alone"])
def test_validate_and_run_refuse_a_case_id_that_is_not_nfc(evalkit_cli, project: Path, ids: tuple[str, ...]) -> None:
    # both ids were accepted: a set held two cases printed "café" that no one could tell apart
    set_file(project, *ids)
    expected = f'set "a.nf", prompt "{NFD}": field id {REFUSAL}'
    checked = evalkit_cli("validate")
    assert checked.code == 2 and expected in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    ran = evalkit_cli("run", "a.nf")
    assert ran.code == 2 and expected in ran.stderr, ran.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_an_nfc_id_runs(evalkit_cli, project: Path) -> None:
    set_file(project, NFC, "other")
    assert evalkit_cli("run", "a.nf").code == 0


def test_an_installed_set_gets_the_same_rule() -> None:
    # a plugin's set is checked by the same function as a set file's
    golden = GoldenPromptSet(identifier="pkg.nf", name="N", prompts=[GoldenPrompt(id=NFD, prompt="hi", assertions=[Assertion.contains("x")])])
    assert prompt_set_problems(golden, BUILTIN_KINDS) == [f'set "pkg.nf", prompt "{NFD}": field id {REFUSAL}']


def test_a_question_id_gets_the_same_rule() -> None:
    questions = GoldenQuestionSet(identifier="demo.nf", name="N", questions=[GoldenQuestion(id=NFD, question="q?", expected_document_ids=["d"])])
    assert question_set_problems(questions) == [f'question set "demo.nf", question "{NFD}": field id {REFUSAL}']


def test_a_quarantined_case_id_that_is_not_nfc_is_a_config_error(evalkit_cli, project: Path) -> None:
    # it named no case: every case id is NFC, and this one only printed like one
    set_file(project, NFC)
    with (project / "evalkit.toml").open("a", encoding="utf-8") as config:
        config.write(f'[gate]\nquarantine = ["{NFD}"]\n')
    ran = evalkit_cli("run", "a.nf")
    assert ran.code == 2 and f"[gate] quarantine: the case id {REFUSAL}" in ran.stderr, ran.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_a_provider_instance_name_that_is_not_nfc_is_a_config_error(evalkit_cli, project: Path) -> None:
    set_file(project, NFC)
    with (project / "evalkit.toml").open("a", encoding="utf-8") as config:
        config.write(f'[providers."{NFD}"]\nadapter = "openai"\n')
    ran = evalkit_cli("run", "a.nf", "--provider", NFC)
    assert ran.code == 2 and f"the provider instance name {REFUSAL}" in ran.stderr, ran.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_a_provider_typed_in_nfd_names_the_instance_it_prints_as(evalkit_cli, project: Path) -> None:
    set_file(project, NFC)
    with (project / "evalkit.toml").open("a", encoding="utf-8") as config:
        config.write(f'[providers."{NFC}"]\nadapter = "no-such-adapter"\n')
    ran = evalkit_cli("run", "a.nf", "--provider", NFD)
    # the instance is found (its adapter is what is missing), not "no provider instance named ..."
    assert ran.code == 2 and "no-such-adapter" in ran.stderr, ran.stderr


def test_a_calibration_item_id_gets_the_same_rule() -> None:
    from evalkit.calibration import CalibrationItem, CalibrationSet, calibration_set_problems

    labels = CalibrationSet("acme.nf", "N", "rubric", ["fail", "pass"], [CalibrationItem(NFD, "pass", prompt="p", answer="a", criterion="c")])
    assert calibration_set_problems(labels) == [f"item id {REFUSAL}"]


def test_a_deployment_name_that_is_not_nfc_is_a_config_error(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(f'[deployments."{NFD}"]\nretriever = "evalkit.lexical"\n', encoding="utf-8")
    ran = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", NFC)
    assert ran.code == 2 and f"the deployment name {REFUSAL}" in ran.stderr, ran.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_a_deployment_typed_in_nfd_names_the_deployment_it_prints_as(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(f'[deployments."{NFC}"]\nretriever = "evalkit.lexical"\n', encoding="utf-8")
    ran = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", NFD)
    # the deployment is found (its retriever's missing corpus is what is refused), not "no deployment ..."
    assert ran.code == 2 and f'in deployment "{NFC}" of configuration' in ran.stderr, ran.stderr


def test_a_tag_is_read_in_nfc_so_a_set_saved_in_nfd_is_the_same_set(evalkit_cli, project: Path) -> None:
    # A tag only labels its prompt: it is read as the text it prints as, not refused as an id is.
    # Written in NFD (macOS), it made the set's fingerprint differ from the same file in NFC, so the
    # next run read "The set changed between the two runs"; a tag made by a template from a table
    # in NFD is read the same way.
    assert GoldenPrompt(id="p", prompt="hi", tags=[NFD, "plain"], assertions=[Assertion.contains("x")]).tags == (NFC, "plain")
    (project / "answers.jsonl").write_text('{"id": "a", "text": "x"}\n{"id": "t/1", "text": "x"}\n', encoding="utf-8")
    (project / "evalkit.toml").write_text(
        '[sets]\npaths = ["set.json"]\n[providers.p]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "m"\n', encoding="utf-8"
    )
    runs = []
    for tag in (NFC, NFD):
        prompts = [
            {"id": "a", "prompt": "hi", "reference": "x", "tags": [tag], "assertions": [{"contains": "x"}]},
            {"id": "t", "template": "hi {v}", "vars": [{"v": "x", "tag": tag}], "tags": ["{tag}"], "assertions": [{"contains": "{v}"}]},
        ]
        (project / "set.json").write_text(json.dumps({"identifier": "a.tags", "name": "T", "prompts": prompts}, ensure_ascii=False), encoding="utf-8")
        ran = evalkit_cli("run", "a.tags", "--provider", "p", "--json")
        assert ran.code == 0, ran.stderr
        runs.append(ran.json()["run_id"])
    compared = evalkit_cli("compare", *runs, "--json").json()
    assert compared["notes"] == [] and compared["comparison"]["set_changed"] is False
