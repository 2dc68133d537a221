"""``[gate] min_judge_kappa`` end to end: a rubric check by a judge without a calibration reaching
the threshold is advisory (graded, stored, shown, never failing the run); once ``evalkit judge
calibrate`` has recorded a κ at or above it, the same verdict fails the run. The judge is an
``openai`` instance pointed at the local chat-completions server (scripted verdicts)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.cli import test_judges
from tests.cli.test_judge_calibrate import RUBRIC_ITEMS, answer_of, rubric_set
from tests.cli.test_rubric_checks import SET_FILE
from tests.plugins.judge_support import JUDGE_MODEL, decision_reply, user_message
from tests.support.chat_server import ChatServer
from tests.support.providers import openai_provider_table

YARDSTICK = f"deterministic:rubric:judge:{JUDGE_MODEL}:v1"
PEOPLE = dict(RUBRIC_ITEMS)


def write_project(project: Path, judge_url: str, gate: str | None) -> None:
    """The refunds set (rubric checks), the calibration set of its judge, and evalkit.toml."""
    (project / "evals.yaml").write_text(SET_FILE, encoding="utf-8")
    (project / "labels.yaml").write_text(rubric_set(), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        f"""judge = "judge"
privacy = "full"

[sets]
paths = ["evals.yaml", "labels.yaml"]
{gate or ""}
[providers.sut]
adapter = "reference"
model = "ref"

{openai_provider_table('judge', judge_url, 'judge-alias')}""",
        encoding="utf-8",
    )


class Verdicts:
    """The judge's replies: a calibration item is labelled by ``calibration`` (``agree``: as the
    people labelled it, ``invert``: the other label); the run's refund criterion gets ``refund``,
    every other criterion passes."""

    def __init__(self) -> None:
        self.refund = "pass"
        self.calibration = "agree"

    def __call__(self, body: Mapping[str, Any]) -> str:
        answer = answer_of(body)
        if not self._run(body) and answer in PEOPLE:
            label = PEOPLE[answer]
            if self.calibration == "invert":
                label = "fail" if label == "pass" else "pass"
            return json.dumps({"verdict": label, "reason": "As labelled."})
        criterion = user_message(body).split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        verdict = self.refund if "refund" in criterion else "pass"
        return json.dumps({"verdict": verdict, "reason": "Promises cash." if verdict == "fail" else "Fine."})

    @staticmethod
    def _run(body: Mapping[str, Any]) -> bool:
        # The run's prompt carries its system prompt; a calibration item has none.
        return "Instructions the response had to follow" in user_message(body)


@pytest.fixture
def verdicts(chat_server: ChatServer) -> Verdicts:
    chat_server.model = JUDGE_MODEL
    replies = Verdicts()
    chat_server.responder = replies
    return replies


def run(evalkit_cli: Callable[..., Any], *args: str) -> tuple[int, Any]:
    """``evalkit run shop.refunds --provider sut --fail-on-regression ARGS``: the CI gate."""
    result = evalkit_cli("run", "shop.refunds", "--provider", "sut", "--fail-on-regression", *args)
    assert result.code in (0, 1), result.stderr
    return result.code, result


def refund_case(document: Mapping[str, Any]) -> dict[str, Any]:
    return next(c for c in document["cases"] if c["id"] == "refund-window")


GATE = "\n[gate]\nmin_judge_kappa = 0.6\n"


def test_an_uncalibrated_judges_failure_is_advisory_until_calibration_licenses_it(
    verdicts: Verdicts, chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_project(project, chat_server.base_url, GATE)
    code, first = run(evalkit_cli, "--json")
    assert code == 0 and first.json()["verdict"]["state"] == "baseline"

    verdicts.refund = "fail"
    code, second = run(evalkit_cli, "--json")
    document = second.json()
    assert code == 0, "an uncalibrated judge's verdict must not fail the run"
    assert document["verdict"]["state"] == "no_regression"
    case = refund_case(document)
    assert case["passed"] is True and case["score"] == 1.0  # the one deterministic check held
    policy = next(c for c in case["checks"] if c["name"] == "refund_policy")
    assert policy == {"name": "refund_policy", "passed": False, "error": None, "detail": "Promises cash.", "judged": True, "advisory": True}
    contains = next(c for c in case["checks"] if c["name"] == "contains")
    assert contains == {"name": "contains", "passed": True, "error": None, "detail": None}
    gate = document["metrics"]["judge_gate"]
    assert gate == {
        "min_judge_kappa": 0.6, "advisory_checks": 2,
        "judges": [{"yardstick": YARDSTICK, "kappa": None, "calibration_set": None, "gating": False}],
    }  # fmt: skip

    # The terminal output says so beside the verdict, and the stored run keeps the advisory mark.
    code, table = run(evalkit_cli)
    assert code == 0
    assert "refund_policy (advisory: Promises cash.)" in table.stdout
    assert f"Judge {YARDSTICK}: uncalibrated; its verdicts are advisory" in " ".join(table.stdout.split())
    shown = evalkit_cli("show", document["run_id"])
    assert shown.code == 0, shown.stderr
    assert "✗ refund_policy (advisory: Promises cash.)" in shown.stdout
    assert "uncalibrated" in shown.stdout
    report = evalkit_cli("report", document["run_id"], "--format", "markdown", "-o", "-")
    assert report.code == 0, report.stderr
    unescaped = " ".join(report.stdout.replace("\\", "").split())  # Markdown escapes punctuation
    assert "refund_policy (advisory: Promises cash.)" in unescaped
    assert f"Judge {YARDSTICK}: uncalibrated; its verdicts are advisory" in unescaped
    stored = refund_case(evalkit_cli("show", document["run_id"], "--json").json())
    assert next(c for c in stored["checks"] if c["name"] == "refund_policy")["advisory"] is True

    # People's labels license the judge: the same failure now fails the run.
    calibrated = evalkit_cli("judge", "calibrate", "--set", "shop.refund_labels", "--json")
    assert calibrated.code == 0, calibrated.stderr
    assert calibrated.json()["kappa"] == 1.0 and calibrated.json()["judge"]["yardstick"] == YARDSTICK
    code, licensed = run(evalkit_cli, "--json")
    document = licensed.json()
    assert code == 1, "a calibrated judge's failing verdict fails the run"
    assert document["verdict"]["state"] == "regressed" and document["verdict"]["regressed_cases"] == ["refund-window"]
    case = refund_case(document)
    assert case["passed"] is False
    policy = next(c for c in case["checks"] if c["name"] == "refund_policy")
    assert policy["judged"] is True and "advisory" not in policy
    assert document["metrics"]["judge_gate"]["judges"] == [
        {"yardstick": YARDSTICK, "kappa": 1.0, "calibration_set": "shop.refund_labels", "gating": True}
    ]


def test_a_calibration_below_the_threshold_leaves_the_judge_advisory_and_the_newest_record_counts(
    verdicts: Verdicts, chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_project(project, chat_server.base_url, GATE)
    assert evalkit_cli("judge", "calibrate", "--set", "shop.refund_labels").code == 0  # κ 1: licensed
    verdicts.calibration = "invert"
    assert evalkit_cli("judge", "calibrate", "--set", "shop.refund_labels").code == 0  # κ -1: withdrawn
    assert run(evalkit_cli)[0] == 0
    verdicts.refund = "fail"
    code, result = run(evalkit_cli)
    assert code == 0
    flat = " ".join(result.stdout.split())
    assert f"Judge {YARDSTICK}: κ -1.00 (calibrated on shop.refund_labels); its verdicts are advisory" in flat


def test_without_min_judge_kappa_every_judge_gates_as_before(
    verdicts: Verdicts, chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_project(project, chat_server.base_url, None)
    assert run(evalkit_cli)[0] == 0
    verdicts.refund = "fail"
    code, result = run(evalkit_cli, "--json")
    assert code == 1
    policy = next(c for c in refund_case(result.json())["checks"] if c["name"] == "refund_policy")
    assert policy["judged"] is True and "advisory" not in policy
    assert result.json()["metrics"]["judge_gate"]["min_judge_kappa"] is None


@pytest.mark.parametrize(
    ("table", "culprit"),
    [("[gate]\nmin_judge_kappa = 2\n", "min_judge_kappa must be a number from -1 to 1"),
     ('[gate]\nmin_judge_kappa = "high"\n', "min_judge_kappa must be a number"),
     ("[gate]\nmin_kappa = 0.6\n", 'Did you mean "min_judge_kappa"')],
)  # fmt: skip
def test_a_bad_gate_table_is_refused_before_anything_is_called(
    table: str, culprit: str, verdicts: Verdicts, chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_project(project, chat_server.base_url, "\n" + table)
    result = evalkit_cli("run", "shop.refunds", "--provider", "sut")
    assert result.code == 2
    assert culprit in result.stderr
    assert not chat_server.requests
    assert not (project / ".evalkit").exists()


def test_an_uncalibrated_decision_judges_verdict_is_advisory_and_its_case_passes(
    chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    chat_server.model = JUDGE_MODEL
    chat_server.responder = test_judges.verdicts(test_judges.decision_reply(4))
    test_judges.write_project(project, chat_server.base_url, extra="[gate]\nmin_judge_kappa = 0.6\n")
    code, first = test_judges.run(evalkit_cli, "--grader", "decision", "--fail-on-regression")
    assert code == 0 and first["verdict"]["state"] == "baseline"
    chat_server.responder = test_judges.verdicts(decision_reply(4), two_plus_two=decision_reply(1, "Wrong."))
    code, second = test_judges.run(evalkit_cli, "--grader", "decision", "--fail-on-regression")
    assert code == 0 and second["verdict"]["state"] == "no_regression"
    case = next(c for c in second["cases"] if c["id"] == "two-plus-two")
    assert case["passed"] is True  # every check of the case is the judge's, and none gates
    assert [(c["name"], c["passed"], c.get("advisory")) for c in case["checks"]] == [("fulfilment", False, True)]
    assert second["metrics"]["judge_gate"]["judges"] == [
        {"yardstick": f"decision:judge:{JUDGE_MODEL}:v1", "kappa": None, "calibration_set": None, "gating": False}
    ]
