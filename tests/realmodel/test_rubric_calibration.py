"""A rubric judge calibrated on a small labelled set with a real model, and the judge gate that
follows from it: SmolLM2-135M (llama.cpp) judges six labelled refund answers, the record is stored
and listed, and a run whose set holds rubric checks gates on them only if that κ reaches
``[gate] min_judge_kappa`` — advisory otherwise. It asserts the machinery, not the model's quality;
its κ is printed in the closing note, whatever it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_judge_calibrate import RUBRIC_ITEMS, rubric_set
from tests.cli.test_rubric_checks import SET_FILE
from tests.realmodel.llama_support import ALIAS, KEY_ENV, closing_note, llama_config

pytestmark = pytest.mark.realmodel

TIMEOUT = 900
THRESHOLD = 0.6  # what `evalkit init` writes


def test_smollm2_is_calibrated_as_a_rubric_judge_and_the_gate_follows_its_kappa(llama_server, project: Path, evalkit_cli) -> None:
    (project / "evals.yaml").write_text(SET_FILE, encoding="utf-8")
    (project / "labels.yaml").write_text(rubric_set(), encoding="utf-8")
    # A reason and a verdict need more than the instance's 48 tokens.
    config = llama_config(llama_server).replace("max_tokens = 48", "max_tokens = 200")
    (project / "evalkit.toml").write_text(
        f'judge = "smol"\nprivacy = "full"\n\n[sets]\npaths = ["evals.yaml", "labels.yaml"]\n\n'
        f"[gate]\nmin_judge_kappa = {THRESHOLD}\n\n"
        '[providers.sut]\nadapter = "reference"\nmodel = "ref"\n\n' + config,
        encoding="utf-8",
    )
    calibrated = evalkit_cli("judge", "calibrate", "--set", "shop.refund_labels", "--json", env=KEY_ENV, timeout=TIMEOUT)
    assert "Traceback" not in calibrated.stderr, calibrated.stderr
    assert calibrated.code == 0, calibrated.stderr
    document = calibrated.json()
    assert document["grader"] == "rubric" and document["labels"] == ["fail", "pass"]
    assert document["n"] + len(document["unjudged"]) == len(RUBRIC_ITEMS)
    assert document["judge"]["instance"] == "smol" and document["judge"]["model"] == ALIAS
    kappa = document["kappa"]
    assert kappa is None or -1.0 <= kappa <= 1.0
    shown = evalkit_cli("judge", "show", "--json")
    assert shown.code == 0 and "shop.refund_labels" in shown.stdout, shown.stderr
    yardstick = document["judge"]["yardstick"]
    assert yardstick in json.dumps(json.loads(shown.stdout))

    # The run: the reference answers are graded by the same judge, gated only if its κ licenses it.
    result = evalkit_cli("run", "shop.refunds", "--provider", "sut", "--json", env=KEY_ENV, timeout=TIMEOUT)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == 0, result.stderr  # a first run is the baseline, whatever the judge said
    run = result.json()
    gate = run["metrics"]["judge_gate"]
    licensed = kappa is not None and kappa >= THRESHOLD
    assert gate["min_judge_kappa"] == THRESHOLD
    assert gate["judges"] == [{"yardstick": yardstick, "kappa": kappa, "calibration_set": "shop.refund_labels", "gating": licensed}]
    rubric_checks = [check for case in run["cases"] for check in case["checks"] if check.get("judged")]
    assert len(rubric_checks) == 2  # the two rubric checks of refund-window, judged by the model
    assert all(check.get("advisory", False) is not licensed for check in rubric_checks), rubric_checks
    assert gate["advisory_checks"] == (0 if licensed else 2)
    closing_note(
        f"SmolLM2-135M as a rubric judge on {len(RUBRIC_ITEMS)} labelled refund answers: kappa "
        f"{'undefined' if kappa is None else f'{kappa:.3f}'} over {document['n']} usable; "
        f"min_judge_kappa {THRESHOLD} -> its verdicts {'gate' if licensed else 'are advisory'}"
    )
