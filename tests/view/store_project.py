"""The project the viewer tests browse: a real store written by real ``evalkit run`` and
``evalkit retrieval`` invocations.

``viewkit.review`` (a set file) is answered by the ``app`` replay instance three times:

- ``v1`` (privacy full, the first run: accepted baseline): every case passes but ``flaky-fact``
  and ``always-wrong``;
- ``v2`` (privacy full, a hostile run id): ``greeting`` and the ``<script>`` case regress with
  hostile answers, ``flaky-fact`` is fixed, ``always-wrong`` still fails, ``edited`` changed its
  prompt in the set file, ``added`` is new — every filter has a case; answers carry markup,
  control characters, an RTL override, a secret, an e-mail address and a megabyte of text;
- ``v3`` (privacy metadata): no answer text is stored.

``viewkit.docs`` (a question-set file) is asked twice of a scripted retriever
(``fixtures.declaring`` from tests/data/evalkit-retrieval-fixtures), the second time worse.
``viewkit.live`` is left running: its first shard is in, its second is not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import attrs

#: The hostile case ids (markup, an attribute break-out, an RTL override, an escape sequence).
SCRIPT_ID = "<script>window.__evalkitInjected=1</script>"
IMG_ID = '"><img src=x onerror="window.__evalkitImg=1">'
RTL_ID = "rtl-\u202eevil.exe"
#: The id of a run written into the store by something else than the CLI (which refuses such
#: ids): it breaks out of an attribute if anything prints it unescaped.
HOSTILE_RUN_ID = 'run-"><svg onload=window.__evalkitRun=1>\u202e\x1b[31m'
#: The set of that run.
HOSTILE_SET = "<b>set</b>.x"
#: The case of that run whose judge disagreed with itself.
WAVERING_ID = "wavering"
SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"
EMAIL = "alice.private@example.com"
BIG_CHARS = 1_000_000

PROMPTS_V1 = [
    ("greeting", "Say hello to the user.", "hello"),
    (SCRIPT_ID, "Answer yes.", "yes"),
    (IMG_ID, "Answer yes again.", "yes"),
    (RTL_ID, "Answer ok.", "ok"),
    ("flaky-fact", "What is the capital of France?", "Paris"),
    ("always-wrong", "What is 6 times 7?", "42"),
    ("edited", "Name a colour.", "blue"),
    ("secret", "Repeat the configuration.", "configured"),
    ("big", "Write a lot.", "lorem"),
]

ANSWERS_V1 = {
    "greeting": "hello there",
    SCRIPT_ID: "yes",
    IMG_ID: "yes",
    RTL_ID: "ok \u202eevil",
    "flaky-fact": "Lyon",
    "always-wrong": "41",
    "edited": "blue",
    "secret": "configured",
    "big": "lorem ipsum",
}
HOSTILE_ANSWER = 'goodbye <script>window.__evalkitAnswer=1</script><img src=x onerror="window.__evalkitImg=1"> \x1b[31mred\x00'
ANSWERS_V2 = {
    **ANSWERS_V1,
    "greeting": "goodbye there, see you",
    SCRIPT_ID: HOSTILE_ANSWER,
    "flaky-fact": "Paris",
    "edited": "green, and blue",
    "secret": f"configured with key {SECRET} for {EMAIL}",
    "big": "lorem " + "x" * BIG_CHARS,
    "added": "brand new",
}


def set_file(version: int) -> str:
    """The YAML of ``viewkit.review`` as it was for run ``version`` (2: ``edited`` asks another
    question and ``added`` is new)."""
    prompts = list(PROMPTS_V1)
    if version >= 2:
        prompts = [("edited", "Name two colours.", "blue") if p[0] == "edited" else p for p in prompts]
        prompts.append(("added", "Anything new?", "new"))
    lines = ["identifier: viewkit.review", "name: Viewer review set", "description: Every case a viewer filter needs.", "prompts:"]
    for case_id, prompt, expected in prompts:
        lines += [f"  - id: {json.dumps(case_id)}", f"    prompt: {json.dumps(prompt)}", f"    reference: {json.dumps(expected)}",
                  "    assertions:", f"      - contains: {json.dumps(expected)}"]  # fmt: skip
    return "\n".join(lines) + "\n"


QUESTIONS = """identifier: viewkit.docs
name: Viewer retrieval set
questions:
  - id: json
    question: deserialize a JSON document
    expected_document_ids: [doc-json]
  - id: csv
    question: read rows of a comma separated values file
    expected_document_ids: [doc-csv]
  - id: nothing
    question: quantum chromodynamics lattice
    expected_document_ids: []
"""
RANKINGS_V1 = {"deserialize a JSON document": ["doc-json"], "read rows of a comma separated values file": ["doc-csv", "doc-zip"]}
RANKINGS_V2 = {**RANKINGS_V1, "read rows of a comma separated values file": ["doc-zip", "doc-copy", "doc-csv"]}

LIVE_SET = """identifier: viewkit.live
name: A run left running
prompts:
""" + "".join(f'  - id: "live-{n}"\n    prompt: "Answer yes {n}."\n    assertions:\n      - contains: "yes"\n' for n in range(8))
LIVE_RUN_ID = "live-run"

CONFIG = """[sets]
paths = ["evals/*.yaml"]

[providers.app]
adapter = "replay"
model = "app"
path = "answers.jsonl"

[deployments.local.retrievers."fixtures.declaring"]
answers = "rankings.json"
"""


def write_answers(project: Path, answers: dict[str, str]) -> None:
    """The replay file the ``app`` instance answers from."""
    lines = [json.dumps({"id": case_id, "text": text, "model": "app-2025-01"}) for case_id, text in answers.items()]
    lines += [json.dumps({"id": f"live-{n}", "text": "yes", "model": "app-2025-01"}) for n in range(8)]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")


@attrs.frozen
class StoredRuns:
    """The ids of the runs the project's store holds."""

    v1: str
    v2: str
    v3: str
    retrieval_v1: str
    retrieval_v2: str
    live: str = LIVE_RUN_ID
    hostile: str = HOSTILE_RUN_ID


def build(project: Path, cli: Callable[..., object]) -> StoredRuns:
    """Write the project and fill its store through the CLI (``cli(*args)`` returns a CliResult)."""
    (project / "evals").mkdir()
    (project / "evalkit.toml").write_text(CONFIG)
    (project / "evals" / "review.yaml").write_text(set_file(1))
    (project / "evals" / "docs.yaml").write_text(QUESTIONS)
    (project / "evals" / "live.yaml").write_text(LIVE_SET)

    def run(*args: str, codes: tuple[int, ...] = (0,)) -> str:
        result = cli(*args, "--json")
        assert result.code in codes, (args, result.code, result.stderr[-3000:])
        return result.json()["run_id"]

    write_answers(project, ANSWERS_V1)
    v1 = run("run", "viewkit.review", "--provider", "app", "--privacy", "full", "--label", "v1")
    (project / "evals" / "review.yaml").write_text(set_file(2))
    write_answers(project, ANSWERS_V2)
    v2 = run("run", "viewkit.review", "--provider", "app", "--privacy", "full", "--label", "v2 <b>bold</b>",
             "--run-id", "v2", codes=(0, 1))  # fmt: skip
    v3 = run("run", "viewkit.review", "--provider", "app", "--privacy", "metadata", "--label", "v3", codes=(0, 1))
    (project / "rankings.json").write_text(json.dumps(RANKINGS_V1))
    retrieval = ("retrieval", "viewkit.docs", "fixtures.declaring", "--deployment", "local", "--privacy", "full")
    r1 = run(*retrieval)
    (project / "rankings.json").write_text(json.dumps(RANKINGS_V2))
    r2 = run(*retrieval, codes=(0, 1))
    write_hostile_run(project / ".evalkit" / "results.db")
    shard = cli("run", "viewkit.live", "--provider", "app", "--privacy", "full", "--run-id", LIVE_RUN_ID, "--shard", "1/2", "--database", SHARED)
    assert shard.code == 0, shard.stderr[-3000:]
    return StoredRuns(v1, v2, v3, r1, r2)


#: The project's store, named as the shards of the running run must name it (a shard refuses a
#: store local to its job unless --database names it).
SHARED = "sqlite:///.evalkit/results.db"


def finish_live_run(cli: Callable[..., object]) -> None:
    """Answer the second shard of the running run: it completes."""
    result = cli("run", "viewkit.live", "--provider", "app", "--privacy", "full", "--run-id", LIVE_RUN_ID, "--shard", "2/2", "--database", SHARED)
    assert result.code == 0, result.stderr[-3000:]


def write_hostile_run(path: Path) -> None:
    """A run another program wrote into the store: a hostile run id, set, label and case ids,
    written through the repository (the CLI refuses such ids), and a case whose judge, asked three
    times, disagreed with itself (``wavering``: the flaky filter's)."""
    import time

    from evalkit.answers import ServingIdentity
    from evalkit.grading import AGREEMENT_CHECK, Check
    from evalkit.runs import CaseResult, Run, RunStatus
    from evalkit.storage import StoredVerdict, close_repository, open_repository

    repository = open_repository(f"sqlite:///{path}")
    try:
        who = ServingIdentity("app<i>", "alias\u202e", "model\x00x")
        repository.begin_run(Run(id=HOSTILE_RUN_ID, set_identifier=HOSTILE_SET, grader="g<u>", case_count=3, privacy="full",
                                 label='"><img src=x onerror=window.__evalkitLabel=1>', started_at=time.time()))  # fmt: skip
        cases = [
            CaseResult(case_id=SCRIPT_ID, passed=False, score=0.0, checks=(Check("c<b>", False, None, "why <script>x</script>"),),
                       answer_text=HOSTILE_ANSWER, identity=who, finished_at=time.time()),  # fmt: skip
            CaseResult(case_id="\u202e" + "y" * 5000, passed=True, score=1.0, answer_text="fine", identity=who, finished_at=time.time()),
            CaseResult(case_id=WAVERING_ID, passed=True, score=1.0, answer_text="maybe",
                       checks=(Check(AGREEMENT_CHECK, False, None, "2 of 3 judgements agreed <b>"),), identity=who, finished_at=time.time()),  # fmt: skip
        ]
        repository.record_cases(HOSTILE_RUN_ID, cases, "full")
        repository.finish_run(HOSTILE_RUN_ID, RunStatus.COMPLETE.value, time.time(), grader="g<u>", identity=who)
        repository.record_verdict(HOSTILE_RUN_ID, StoredVerdict("not_compared", None, "note <script>window.__evalkitNote=1</script>"))
    finally:
        close_repository(repository)
