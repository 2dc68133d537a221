"""The relevance judge calibrated against real human judgments with a real model: SmolLM2-135M
(llama.cpp) grading 100 Cranfield query-document pairs whose labels come from the original graded
``cranqrel``. It asserts the machinery — every pair asked, the record stored and listed, κ
printed — not the model's quality; its κ is printed in the closing note, whatever it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.realmodel.llama_support import ALIAS, KEY_ENV, closing_note, llama_config
from tests.support.datasets import dataset

pytestmark = pytest.mark.realmodel

TIMEOUT = 1800
PAIRS = 100


def test_smollm2_is_calibrated_as_a_relevance_judge_on_cranfield(llama_server, project: Path, evalkit_cli) -> None:
    cranfield = dataset("cranfield", "beir/corpus.jsonl", "original/cranqrel")
    # A reason and a grade need more than the instance's 48 tokens.
    config = llama_config(llama_server).replace("max_tokens = 48", "max_tokens = 200")
    (project / "evalkit.toml").write_text(
        f'judge = "smol"\n\n[sets]\nallow_outside = ["{cranfield}"]\n\n'
        f'[calibration_sets."beir.cranfield"]\npath = "{cranfield / "beir"}"\nqrels = "{cranfield / "original" / "cranqrel"}"\n'
        f'grades = {{ "1" = 3, "2" = 2, "3" = 1, "4" = 1 }}\nexclude_grades = [-1]\nmax_items = {PAIRS}\nseed = 1\n\n' + config
    )
    result = evalkit_cli("judge", "calibrate", "--set", "beir.cranfield", "--json", env=KEY_ENV, timeout=TIMEOUT)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr.lower(), result.stderr
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["grader"] == "relevance" and document["labels"] == [0, 1, 2, 3]
    assert document["n"] + len(document["unjudged"]) == PAIRS
    assert document["judge"]["instance"] == "smol" and document["judge"]["model"] == ALIAS
    assert document["kappa_weights"] == "quadratic"
    assert document["kappa"] is None or -1.0 <= document["kappa"] <= 1.0
    shown = evalkit_cli("judge", "show", "--json")
    assert shown.code == 0, shown.stderr
    records = json.loads(shown.stdout)
    assert "beir.cranfield" in json.dumps(records) and f"relevance:smol:{ALIAS}:v1" in json.dumps(records)
    # The terminal table lists the same record (the calibration's own terminal output is tested
    # without a model; asking the model the 100 pairs again would double the test's time).
    table = evalkit_cli("judge", "show")
    kappa = document["kappa"]
    assert table.code == 0 and "beir.cranfield" in table.stdout and str(document["n"]) in table.stdout
    assert ("undefined" if kappa is None else f"{kappa:.3f}") in table.stdout
    closing_note(
        f"SmolLM2-135M as a relevance judge on {PAIRS} Cranfield pairs: quadratic-weighted kappa "
        f"{'undefined' if kappa is None else f'{kappa:.3f}'} over {document['n']} labelled ({len(document['unjudged'])} unusable)"
    )
