"""The one converter's generated unstructure functions: made when first used, the same data."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

from evalkit.answers import Answer, Passage, ServingIdentity, Usage
from evalkit.convert import converter, unstructure
from evalkit.grading import Check
from evalkit.prompts import Assertion, GoldenPrompt
from evalkit.runs import CaseResult


def test_importing_the_converter_generates_no_unstructure_function() -> None:
    """Generating and compiling cattrs' functions for the prompt, answer, identity and case classes
    (and the classes their fields hold) cost every run ~1 % of its start-up; a prompt run uses
    only the serving identity's. They are made when first used (fresh interpreter: cattrs names
    each function it compiles in ``linecache``)."""
    probe = (
        "import linecache, evalkit.convert\n"
        "print(sorted(name for name in linecache.cache if 'cattrs generated unstructure' in name))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


IDENTITY = ServingIdentity("prod", "m", "m-1", 2)
USAGE = {"input_tokens": 3, "output_tokens": 4, "total_tokens": None, "cached_input_tokens": None}
NO_ANSWER = {"model": None, "usage": None, "abstained": None, "citations": [], "passages": [], "finish_reason": None}
IDENTITY_DATA = {"provider_instance": "prod", "model_alias": "m", "reported_model": "m-1", "version": 2}

#: (value, its data): what the converter gave when it generated the functions at import.
SAMPLES = [
    (Assertion("contains", "Paris"), {"kind": "contains", "value": "Paris", "name": None}),
    (Assertion("regex", r"\bx\b", name="n", turn=1), {"kind": "regex", "value": r"\bx\b", "name": "n", "turn": 1}),
    (
        Answer("text", model="m", usage=Usage(3, 4), passages=(Passage("p"),)),
        {**NO_ANSWER, "text": "text", "model": "m", "usage": USAGE, "passages": [{"text": "p", "source_id": None}]},
    ),
    (IDENTITY, IDENTITY_DATA),
    (ServingIdentity("prod", "m", "m-1", 2, base_prompt="be brief"), {**IDENTITY_DATA, "base_prompt": "be brief"}),
    (
        GoldenPrompt("p1", "What?", (Assertion("contains", "x"),), reference=Answer("ref"), tags=("a",)),
        {
            "id": "p1", "prompt": "What?", "assertions": [{"kind": "contains", "value": "x", "name": None}],
            "reference": {"text": "ref", **NO_ANSWER}, "system_prompt": None, "tags": ["a"],
        },
    ),
    (
        GoldenPrompt("p2", "Q", reference="plain"),
        {"id": "p2", "prompt": "Q", "assertions": [], "reference": "plain", "system_prompt": None, "tags": []},
    ),
    (
        CaseResult("c1", True, 1.0, (Check("contains", True, Fraction(1, 2)),), 0.5, identity=IDENTITY, usage=Usage(3, 4), finished_at=1.5),
        {
            "case_id": "c1", "passed": True, "score": 1.0, "checks": [{"name": "contains", "passed": True, "error": Fraction(1, 2), "detail": None}],
            "latency_s": 0.5, "error": None, "identity": IDENTITY_DATA, "adapter": None, "yardstick": None, "answer_text": None,
            "usage": USAGE, "detail": None, "finished_at": 1.5, "measures": None, "fingerprint": None, "judge_usage": [],
            "answer_source": None, "prompt_digest": None, "requests": None, "requests_sent": None,
        },
    ),
]  # fmt: skip


def test_a_function_made_on_first_use_gives_the_data_the_one_made_at_import_gave() -> None:
    """Made after every hook is registered, each function is the one generated at import before
    (the fields left out while default, nested classes through their own hooks); a hook fetched
    before its first use keeps working, without generating its function again."""
    fetched = converter.get_unstructure_hook(ServingIdentity)
    for _ in range(2):  # the first use, then the registered function
        for value, data in SAMPLES:
            assert unstructure(value) == data, type(value).__name__
        assert fetched(IDENTITY) == IDENTITY_DATA
