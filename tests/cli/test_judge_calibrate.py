"""``evalkit judge calibrate`` end to end: a calibration set file with people's labels, the judge an
``openai`` instance pointed at the local chat-completions server (scripted verdicts)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from tests.plugins.judge_support import JUDGE_MODEL, closed_port_url, user_message
from tests.support.chat_server import ChatServer
from tests.support.providers import openai_provider_table

#: (answer, the people's label); the criterion is the same for every item.
RUBRIC_ITEMS = [
    ("Within 30 days, refunded to the card.", "pass"),
    ("30 days; we refund to the original card.", "pass"),
    ("Any time, cash at the till.", "fail"),
    ("We pay cash within 30 days.", "fail"),
    ("You have a month, refunded to your card.", "pass"),
    ("No idea.", "fail"),
]
CRITERION = "The answer names the refund window and does not promise cash."


def rubric_set(items: list[tuple[str, str]] = RUBRIC_ITEMS) -> str:
    lines = ["kind: calibration", "identifier: shop.refund_labels", "name: Refund answers labelled by support",
             "grader: rubric", "labels: [fail, pass]", "items:"]  # fmt: skip
    for number, (answer, label) in enumerate(items, 1):
        lines += [f"  - id: a{number}", "    prompt: How long do I have to return a jacket?",
                  f"    answer: {json.dumps(answer)}", f"    criterion: {CRITERION}", f"    label: {label}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def write_project(project: Path, judge_url: str, set_text: str, *, judge: bool = True) -> None:
    (project / "labels.yaml").write_text(set_text, encoding="utf-8")
    (project / "evalkit.toml").write_text(
        ('judge = "judge"\n' if judge else "")
        + f"""[sets]
paths = ["labels.yaml"]

{openai_provider_table('judge', judge_url, 'judge-alias')}""",
        encoding="utf-8",
    )


def answer_of(body: Mapping[str, Any]) -> str:
    return user_message(body).split("RESPONSE\n<<<\n", 1)[1].split("\n>>>", 1)[0]


def labelling(labels: Mapping[str, str]) -> Callable[[Mapping[str, Any]], str]:
    """Reply with the verdict ``labels`` gives the answer in the request."""
    return lambda body: json.dumps({"verdict": labels[answer_of(body)], "reason": "Because."})


@pytest.fixture
def judge(chat_server: ChatServer, project: Path) -> ChatServer:
    chat_server.model = JUDGE_MODEL
    write_project(project, chat_server.base_url, rubric_set())
    return chat_server


def calibrate(evalkit_cli: Callable[..., Any], *args: str) -> Any:
    return evalkit_cli("judge", "calibrate", "--set", "shop.refund_labels", *args)


def test_a_judge_that_agrees_with_people_scores_kappa_one(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = labelling(dict(RUBRIC_ITEMS))
    result = calibrate(evalkit_cli, "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert (document["n"], document["agreement"], document["kappa"]) == (6, 1.0, 1.0)
    assert document["confusion"] == [[3, 0], [0, 3]] and document["labels"] == ["fail", "pass"]
    assert document["judge"] == {
        "instance": "judge", "model": JUDGE_MODEL, "prompt_version": 1, "temperature": 0.0,
        "yardstick": f"deterministic:rubric:judge:{JUDGE_MODEL}:v1",
    }  # fmt: skip
    assert document["self_agreement"] is None and document["unjudged"] == []
    assert [p["precision"] for p in document["per_label"]] == [1.0, 1.0]
    assert len([r for r in judge.requests if r.method == "POST"]) == 6
    assert all(CRITERION in user_message(r.body) for r in judge.requests if r.method == "POST")


def test_an_inverting_judge_scores_minus_one_and_a_constant_one_zero(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    flipped = {answer: "fail" if label == "pass" else "pass" for answer, label in RUBRIC_ITEMS}
    judge.responder = labelling(flipped)
    inverted = calibrate(evalkit_cli, "--json").json()
    assert inverted["kappa"] == -1.0 and inverted["agreement"] == 0.0
    judge.responder = lambda body: json.dumps({"verdict": "pass", "reason": "Fine."})
    constant = calibrate(evalkit_cli, "--json").json()
    assert constant["kappa"] == 0.0 and constant["judge_positive_rate"] == 1.0 and constant["human_positive_rate"] == 0.5


def test_kappa_equals_scikit_learns_and_repeats_measure_self_agreement(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judged = {answer: label for answer, label in RUBRIC_ITEMS}
    judged["No idea."] = "pass"  # one disagreement
    judge.responder = labelling(judged)
    document = calibrate(evalkit_cli, "--json", "--repeats", "3").json()
    people = [label for _, label in RUBRIC_ITEMS]
    assert document["kappa"] == pytest.approx(cohen_kappa_score(people, [judged[a] for a, _ in RUBRIC_ITEMS]))
    low, high = document["kappa_ci95"]
    assert low <= document["kappa"] <= high
    assert document["self_agreement"] == 1.0 and document["repeats"] == 3
    assert len([r for r in judge.requests if r.method == "POST"]) == 18


def test_the_table_reports_the_figures(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = labelling(dict(RUBRIC_ITEMS))
    result = calibrate(evalkit_cli)
    assert result.code == 0, result.stderr
    assert f'Judge "judge" ({JUDGE_MODEL}, prompt v1) on calibration set shop.refund_labels' in result.stdout
    assert "Kappa:      1.000 (95% CI 1.000 to 1.000)" in result.stdout
    assert "Confusion (rows: people, columns: judge)" in result.stdout


def test_an_unusable_judge_leaves_items_out_and_one_that_labels_none_fails(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    labels = dict(RUBRIC_ITEMS)
    judge.responder = lambda body: "not JSON" if answer_of(body) == "No idea." else labelling(labels)(body)
    document = calibrate(evalkit_cli, "--json").json()
    assert document["n"] == 5 and document["unjudged"] == ["a6"]
    judge.responder = lambda body: "not JSON"
    failed = calibrate(evalkit_cli)
    assert failed.code == 3 and "the judge labelled none of the 6 items" in failed.stderr


def test_no_judge_a_wrong_scale_or_an_unknown_set_is_refused_before_asking(
    chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_project(project, chat_server.base_url, rubric_set(), judge=False)
    no_judge = calibrate(evalkit_cli)
    assert no_judge.code == 2 and "--judge NAME" in no_judge.stderr
    write_project(project, chat_server.base_url, rubric_set().replace("[fail, pass]", "[bad, good]").replace("label: fail", "label: bad").replace("label: pass", "label: good"))
    scale = calibrate(evalkit_cli)
    assert scale.code == 2 and "but the rubric judge answers ['fail', 'pass']" in scale.stderr
    unknown = evalkit_cli("judge", "calibrate", "--set", "shop.nothing")
    assert unknown.code == 2
    assert chat_server.requests == []


def test_a_decision_calibration_set_uses_quadratic_weights(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    chat_server.model = JUDGE_MODEL
    people = [0, 1, 2, 3, 4, 4, 2]
    judged = [0, 2, 2, 3, 3, 4, 1]
    lines = ["kind: calibration", "identifier: shop.levels", "name: Levels", "grader: decision", "labels: [0, 1, 2, 3, 4]", "items:"]
    for number, label in enumerate(people):
        lines += [f"  - id: i{number}", "    prompt: Say something.", f"    answer: answer {number}", f"    label: {label}"]
    write_project(project, chat_server.base_url, "\n".join(lines) + "\n")
    chat_server.responder = lambda body: json.dumps({"level": judged[int(answer_of(body).split()[-1])], "reason": "So."})
    result = evalkit_cli("judge", "calibrate", "--set", "shop.levels", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["kappa_weights"] == "quadratic"
    assert document["kappa"] == pytest.approx(cohen_kappa_score(people, judged, labels=[0, 1, 2, 3, 4], weights="quadratic"))
    assert document["judge"]["yardstick"] == f"decision:judge:{JUDGE_MODEL}:v1"


def test_schema_and_validate_know_calibration_sets(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    schema = evalkit_cli("schema", "calibration-set")
    assert schema.code == 0 and json.loads(schema.stdout)["$defs"]["set"]["properties"]["kind"] == {
        "const": "calibration", "description": "marks a calibration set file"}
    ok = evalkit_cli("validate", "labels.yaml")
    assert ok.code == 0 and "calibration set shop.refund_labels (6 labelled items, rubric judge)" in ok.stdout
    (project / "bad.yaml").write_text(rubric_set().replace("label: pass", "label: maybe", 1).replace(f"    criterion: {CRITERION}\n", "", 1))
    bad = evalkit_cli("validate", "bad.yaml")
    assert bad.code == 2
    assert 'items[0].label: "maybe" is not on the scale ["fail", "pass"]' in bad.stderr
    assert "items[0]: the rubric judge needs criterion" in bad.stderr
    installed = evalkit_cli("validate", "shop.refund_labels")
    assert installed.code == 0 and 'from "evalkit.files"' in installed.stdout


def test_a_calibration_is_stored_by_the_judges_identity_and_listed(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    nothing = evalkit_cli("judge", "show")
    assert nothing.code == 2  # no store yet: nothing to read
    judge.responder = labelling(dict(RUBRIC_ITEMS))
    first = calibrate(evalkit_cli, "--json")
    assert first.code == 0 and first.json()["stored"] is True
    judge.model = "judge-model-2026-01-01"  # the judge's model changed: a new identity, calibrated apart
    judge.responder = lambda body: json.dumps({"verdict": "pass", "reason": "Fine."})
    assert calibrate(evalkit_cli, "--judge-temperature", "0.5").code == 0
    listed = evalkit_cli("judge", "show", "--json")
    assert listed.code == 0, listed.stderr
    records = listed.json()
    assert [(r["yardstick"], r["temperature"], r["kappa"]) for r in records] == [
        ("deterministic:rubric:judge:judge-model-2026-01-01:v1", 0.5, 0.0),
        (f"deterministic:rubric:judge:{JUDGE_MODEL}:v1", 0.0, 1.0),
    ]
    assert records[1]["n"] == 6 and records[1]["set"] == "shop.refund_labels" and records[1]["kappa_ci95"] == [1.0, 1.0]
    table = evalkit_cli("judge", "show")
    assert table.code == 0 and f"deterministic:rubric:judge:{JUDGE_MODEL}:v1" in table.stdout
    # a record another program changed: its figures went on to the gate and the table as they were
    # ('x' >= 0.6 is a TypeError; a date of 9e999 no calendar holds)
    database = project / ".evalkit" / "results.db"
    for tampered, message in (("kappa = 'x'", "has kappa 'x', not a number"), ("calibrated_at = 9e999", "has calibrated_at inf, not a finite number")):
        with sqlite3.connect(database) as conn:
            conn.execute(f"update evalkit_judge_calibration set {tampered} where temperature = 0.5")
        for args in (("judge", "show"), ("judge", "show", "--json")):
            refused = evalkit_cli(*args)
            assert refused.code == 2 and "judge calibration" in refused.stderr and message in refused.stderr, refused.stderr
            assert "internal error" not in refused.stderr
        with sqlite3.connect(database) as conn:
            conn.execute("update evalkit_judge_calibration set kappa = 0.0, calibrated_at = 1.7e9 where temperature = 0.5")


def test_a_failed_calibration_stores_nothing(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = lambda body: "not JSON"
    assert calibrate(evalkit_cli).code == 3
    assert not (project / ".evalkit").exists()


PACKAGED_SET = '''
from evalkit.calibration import CalibrationItem, CalibrationSet


class Provider:
    def calibration_sets(self):
        return [CalibrationSet("acme.refund_labels", "Refund labels", "rubric", ["fail", "pass"], [
            CalibrationItem("p1", "pass", prompt="How long?", answer="Within 30 days, refunded to the card.",
                            criterion="Names the window."),
            CalibrationItem("p2", "fail", prompt="How long?", answer="Any time, cash at the till.", criterion="Names the window."),
        ])]


class Broken:
    def calibration_sets(self):
        return [CalibrationSet("acme.broken", "Broken", "rubric", ["fail", "pass"], [CalibrationItem("b1", "maybe")])]
'''


def test_a_package_ships_calibration_sets_through_its_entry_point_group(
    judge: ChatServer, evalkit_cli: Callable[..., Any], tmp_path: Path
) -> None:
    from tests.support.distributions import write_distribution

    site = write_distribution(
        tmp_path / "site", "acme-labels", "1.0",
        {"evalkit.calibration_sets": {"acme": "acme_labels:Provider", "acme.broken": "acme_labels:Broken"}},
        {"acme_labels.py": PACKAGED_SET},
    )  # fmt: skip
    env = {"PYTHONPATH": str(site)}
    judge.responder = labelling(dict(RUBRIC_ITEMS))
    result = evalkit_cli("judge", "calibrate", "--set", "acme.refund_labels", "--json", env=env)
    assert result.code == 0, result.stderr
    assert (result.json()["n"], result.json()["kappa"]) == (2, 1.0)
    checked = evalkit_cli("validate", "acme.refund_labels", "acme.broken", env=env)
    assert checked.code == 2
    assert "ok  calibration set acme.refund_labels (2 labelled items, rubric judge) from \"acme\" (acme-labels 1.0)" in checked.stdout
    assert "acme.broken: item 'b1': label 'maybe' is not on the scale ('fail', 'pass')" in checked.stderr
    assert "acme.broken: item 'b1': the rubric judge needs prompt" in checked.stderr
    asked = len(judge.requests)
    refused = evalkit_cli("judge", "calibrate", "--set", "acme.broken", env=env)
    assert refused.code == 2 and 'calibration set "acme.broken" cannot be used: item \'b1\': label' in refused.stderr
    assert len(judge.requests) == asked


def test_a_judge_that_cannot_be_reached_is_refused_before_asking(project: Path, evalkit_cli: Callable[..., Any]) -> None:
    # the readiness probe fails: exit 2 and nothing stored, as for a run's or a pairwise judge
    write_project(project, closed_port_url(), rubric_set())
    result = calibrate(evalkit_cli)
    assert result.code == 2 and 'its judge "judge" is not reachable' in result.stderr
    assert result.stdout == "" and not (project / ".evalkit").exists()


def test_a_judge_named_in_rich_markup_is_shown_as_it_is_by_calibrate_and_show(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    """The judge's name (a TOML key the user wrote) in the calibration's bold heading and in the
    table of `judge show`: data at the console's boundary, never rich markup; quoted in the
    heading, as every message names a word the user gave (it was bare there)."""
    name = "[red]x[/] [link=https://evil.invalid]l[/link] [ [bold]"
    chat_server.model = JUDGE_MODEL
    (project / "labels.yaml").write_text(rubric_set(), encoding="utf-8")
    judge = openai_provider_table(json.dumps(name), chat_server.base_url, "judge-alias")
    (project / "evalkit.toml").write_text(f'judge = {json.dumps(name)}\n[sets]\npaths = ["labels.yaml"]\n\n{judge}', encoding="utf-8")
    chat_server.responder = labelling(dict(RUBRIC_ITEMS))
    calibrated = calibrate(evalkit_cli)
    assert calibrated.code == 0, calibrated.stderr
    assert f'Judge "{name}" ({JUDGE_MODEL}, prompt v1) on calibration set shop.refund_labels' in calibrated.stdout, calibrated.stdout
    shown = evalkit_cli("judge", "show")
    assert shown.code == 0 and f"deterministic:rubric:{name}:{JUDGE_MODEL}:v1" in shown.stdout, shown.stdout


def test_a_golden_set_named_for_calibration_is_told_no_calibration_set_is_installed(
    project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    # `evalkit judge calibrate --set evalkit.smoke` (a golden prompt set, installed) said "No sets are
    # installed.", denying the set a run had just answered; what is missing is a calibration set
    result = evalkit_cli("judge", "calibrate", "--set", "evalkit.smoke")
    assert result.code == 2
    assert 'Unknown calibration set "evalkit.smoke". No calibration sets are installed.' in result.stderr, result.stderr
