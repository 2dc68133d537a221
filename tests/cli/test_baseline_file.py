"""Baselines without a shared database: ``evalkit baseline export`` writes a scope's baseline to a
file committed with the code, and ``--baseline-file`` gates a CI job whose store starts empty.

The replay provider ``app`` answers ``reportkit.hostile`` (tests/support/reports.py); each test
chooses which cases fail.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path

import pytest
from evalkit.errors import UsageError

from tests.support.reports import HOSTILE_IDS, REPORT_PLUGINS, answer_hostile

SET = "reportkit.hostile"
FILE = "evals/baselines/hostile.json"


@pytest.fixture
def cli(evalkit_cli, plugin_dists):  # noqa: ANN001, ANN201
    env = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS), "EVALKIT_DATABASE_URL": None}

    def run(*args: str, **extra: str):  # noqa: ANN202
        return evalkit_cli(*args, env={**env, **extra})

    return run


def fresh_job(project: Path) -> None:
    """A new CI job: the checkout holds the committed baseline file, the store is empty."""
    shutil.rmtree(project / ".evalkit", ignore_errors=True)


def redigested(document: dict) -> dict:
    """``document`` with its digest made to match again (what a forger would do)."""
    body = {k: v for k, v in document.items() if k != "digest"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {**body, "digest": "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()}


def exported(cli, project: Path, *extra: str) -> dict:  # noqa: ANN001
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    result = cli("baseline", "export", SET, "--provider", "app", "-o", FILE, *extra)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("Baseline run ") and f"written to {FILE} (6 cases, answers at the" in result.stdout
    return json.loads((project / FILE).read_text())


def test_a_fresh_job_with_the_committed_baseline_file_and_a_regressed_model_exits_1(cli, project) -> None:
    document = exported(cli, project)
    assert document["format"] == "evalkit-baseline" and document["privacy"] == "metadata"
    run = document["run"]
    assert run["identity"]["provider_instance"] == "app" and run["set_fingerprint"]
    assert all(case["fingerprint"] and case["answer_text"] is None for case in run["cases"]), "metadata: no answer text"
    assert document["acceptance"]["how"] == "first"

    fresh_job(project)
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    # Without the file the empty store makes every run "the baseline": the gate never fires.
    fresh_job(project)
    blind = cli("run", SET, "--provider", "app", "--fail-on-regression")
    assert blind.code == 0 and "recorded as the baseline" in blind.stdout

    fresh_job(project)
    gated = cli("run", SET, "--provider", "app", "--fail-on-regression", "--baseline-file", FILE)
    assert gated.code == 1, gated.stdout + gated.stderr
    assert "Regressed (passed in the baseline, fail now): 2" in gated.stdout
    assert f"versus run {run['id']}" in gated.stdout or f"(baseline run {run['id']})" in gated.stdout, gated.stdout

    fresh_job(project)
    answer_hostile(project)
    passing = cli("run", SET, "--provider", "app", "--fail-on-regression", "--baseline-file", FILE, "--json")
    assert passing.code == 0, passing.stderr
    assert passing.json()["verdict"]["baseline_id"] == run["id"] and passing.json()["verdict"]["regressed"] is False


def test_answers_go_into_the_file_only_as_the_privacy_level_allows(cli, project) -> None:
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app", "--privacy", "full").code == 0
    full = cli("baseline", "export", SET, "-o", "full.json")
    assert full.code == 0, full.stderr
    assert {c["answer_text"] for c in json.loads((project / "full.json").read_text())["run"]["cases"]} == {"yes"}
    lowered = cli("baseline", "export", SET, "-o", "meta.json", "--privacy", "metadata")
    assert lowered.code == 0 and {c["answer_text"] for c in json.loads((project / "meta.json").read_text())["run"]["cases"]} == {None}
    fresh_job(project)
    assert cli("run", SET, "--provider", "app").code == 0  # stored at metadata
    more = cli("baseline", "export", SET, "-o", "more.json", "--privacy", "full")
    assert more.code == 2 and "keeps answers at the metadata level; a baseline file cannot hold more" in more.stderr
    assert not (project / "more.json").exists()


def test_a_baseline_file_that_cannot_be_written_is_named_quoted(cli, project) -> None:
    # named escaped but bare: "baseline file a b\x0ax/b.json: cannot be written" did not say where the path ends
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    (project / "a b\nx").write_text("a file where the folder goes")
    refused = cli("baseline", "export", SET, "-o", "a b\nx/b.json")
    assert refused.code == 2 and 'baseline file "a b\\x0ax/b.json": cannot be written' in refused.stderr, refused.stderr


def test_export_needs_exactly_one_scope(cli, project) -> None:
    none = cli("baseline", "export", SET, "-o", "x.json")
    assert none.code == 2
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    assert cli("run", SET, "--provider", "app", "--model", "other-alias").code == 0
    two = cli("baseline", "export", SET, "-o", "x.json")
    assert two.code == 2 and "2 scopes of set" in two.stderr and "narrow them with --provider, --model" in two.stderr
    assert not (project / "x.json").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["run"]["cases"][0].update(passed=False), "its content does not match its digest"),
        (lambda d: d.update(digest="sha256:" + "0" * 64), "its content does not match its digest"),
        (lambda d: d["run"].update(status="running"), "is not a valid baseline file: .run.status: breaks the rule const"),
        (lambda d: d["run"]["cases"][0].update(score="high"), "is not a valid baseline file: .run.cases[0].score: breaks the rule type"),
        (lambda d: d.pop("run"), "is not a valid baseline file: (the top level): breaks the rule required"),
        (lambda d: d.update(format="other"), "is not an evalkit baseline file"),
    ],
    ids=["edited-case", "digest", "running", "score-type", "no-run", "format"],
)
def test_a_tampered_baseline_file_exits_2_naming_it_before_anything_is_called(cli, project, change, message) -> None:
    document = exported(cli, project)
    change(document)
    (project / FILE).write_text(json.dumps(document))
    fresh_job(project)
    result = cli("run", SET, "--provider", "app", "--baseline-file", FILE, "--fail-on-regression")
    assert result.code == 2 and f"baseline file {FILE}: " in result.stderr and message in result.stderr, result.stderr
    assert not (project / ".evalkit" / "results.db").exists(), "nothing was stored"


def test_a_foreign_baseline_file_exits_2_naming_it(cli, project) -> None:
    document = exported(cli, project)
    other = redigested({**document, "run": {**document["run"], "set_identifier": "arith.basic"}})
    (project / "foreign.json").write_text(json.dumps(other))
    fresh_job(project)
    result = cli("run", SET, "--provider", "app", "--baseline-file", "foreign.json")
    assert result.code == 2, result.stderr
    assert 'baseline file foreign.json holds run' in result.stderr and 'it is a run of set "arith.basic"' in result.stderr
    (project / "a b\nevalkit: ok.json").write_text(json.dumps(other))  # named escaped but bare: where did the path end?
    spaced = cli("run", SET, "--provider", "app", "--baseline-file", "a b\nevalkit: ok.json")
    assert spaced.code == 2 and 'baseline file "a b\\x0aevalkit: ok.json" holds run' in spaced.stderr, spaced.stderr
    other_model = cli("run", SET, "--provider", "app", "--model", "other-alias", "--baseline-file", FILE)
    assert other_model.code == 2 and f"baseline file {FILE} holds run" in other_model.stderr
    both = cli("run", SET, "--provider", "app", "--baseline-file", FILE, "--baseline", "x")
    assert both.code == 2 and "--baseline and --baseline-file name two baselines" in both.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_the_verdict_job_of_a_sharded_run_compares_with_the_baseline_file(cli, project) -> None:
    exported(cli, project)
    fresh_job(project)
    answer_hostile(project, failing=HOSTILE_IDS[:1])
    store = ("--database", "sqlite:///shared.db")
    for index in (1, 2):
        shard = cli("run", SET, "--provider", "app", *store, "--shard", f"{index}/2", "--run-id", "ci-9", "--baseline-file", FILE)
        assert shard.code == 0, shard.stderr
    verdict = cli(
        "run", SET, "--provider", "app", *store, "--wait-for-shards", "--run-id", "ci-9", "--timeout", "1m",
        "--fail-on-regression", "--baseline-file", FILE,
    )  # fmt: skip
    assert verdict.code == 1, verdict.stdout + verdict.stderr
    assert "Regressed (passed in the baseline, fail now): 1" in verdict.stdout


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "infinity", "minus-infinity"])
def test_a_baseline_file_holding_nan_or_an_infinity_is_not_json_at_its_line(cli, project, value) -> None:
    """Python's json writes ``NaN`` and reads it back; no other JSON parser does, and a score of NaN
    compared with nothing. The file is refused at the value's line and column, before the digest."""
    document = exported(cli, project)
    document["run"]["cases"][0]["score"] = value
    (project / FILE).write_text(json.dumps(redigested(document), indent=1))
    fresh_job(project)
    text = (project / FILE).read_text()
    constant = json.dumps(value)
    at = text.index(constant)
    line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    result = cli("run", SET, "--provider", "app", "--baseline-file", FILE, "--fail-on-regression")
    assert result.code == 2, result.stdout + result.stderr
    assert f"baseline file {FILE}: is not a JSON document ({constant} is not JSON at line {line}, column {column};" in result.stderr, (
        result.stderr
    )
    assert not (project / ".evalkit" / "results.db").exists(), "nothing was stored"


def test_a_baseline_file_with_a_key_written_twice_is_refused_at_the_repeat(cli, project) -> None:
    """A merge that kept both sides wrote a case's "passed" twice: the last value won, so the digest
    still matched and the gate compared with a value the reader of the file did not see first.
    Nothing evalkit exports writes a key twice; the file is refused at the repeat's line and column."""
    document = exported(cli, project)
    text = (project / FILE).read_text()
    first_case = text.index('"case_id"')
    passed = text.index('"passed"', first_case)
    line_start = text.rfind("\n", 0, passed) + 1
    indent = text[line_start:passed]
    edited = text[:line_start] + f'{indent}"passed": false,\n' + text[line_start:]
    (project / FILE).write_text(edited)
    assert json.loads(edited) == document, "the last value wins: the digest still matches"
    at = edited.index('"passed"', edited.index('"passed": false') + 1)
    line, column = edited.count("\n", 0, at) + 1, at - edited.rfind("\n", 0, at)
    fresh_job(project)
    result = cli("run", SET, "--provider", "app", "--baseline-file", FILE, "--fail-on-regression")
    assert result.code == 2, result.stdout + result.stderr
    assert f"baseline file {FILE}: is not a JSON document (key \"passed\" appears more than once at line {line}, column {column};" in (
        result.stderr
    ), result.stderr
    assert not (project / ".evalkit" / "results.db").exists(), "nothing was stored"


def _long_answer_project(evalkit_cli, project: Path, length: int, extra_config: str = "") -> None:
    """`evalkit init`'s example with its answers kept in full and one answer ``length`` characters long."""
    assert evalkit_cli("init").code == 0
    config = project / "evalkit.toml"
    config.write_text(config.read_text().replace('privacy = "redacted"', f'privacy = "full"\n{extra_config}'))
    answers = project / tomllib.loads(config.read_text())["providers"]["recorded"]["path"]  # where init put them
    lines = [json.loads(line) for line in answers.read_text().splitlines()]
    lines[1]["text"] = "Paris " * (length // 6)
    answers.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert evalkit_cli("run", "starter.faq", "--provider", "recorded").code == 0


def test_an_exported_long_answer_is_read_back(evalkit_cli, project) -> None:
    # An answer over 1,000,000 characters, stored whole under the default max_answer_bytes (1 MiB),
    # was exported (exit 0) into a file --baseline-file refused (exit 2, answer_text maxLength).
    _long_answer_project(evalkit_cli, project, 1_040_000)
    written = evalkit_cli("baseline", "export", "starter.faq", "-o", "baseline.json")
    assert written.code == 0, written.stderr
    fresh_job(project)
    gated = evalkit_cli("run", "starter.faq", "--provider", "recorded", "--baseline-file", "baseline.json")
    assert gated.code == 0, gated.stderr


def test_an_export_its_reader_would_refuse_is_not_written(evalkit_cli, project) -> None:
    _long_answer_project(evalkit_cli, project, 17_000_000, "max_answer_bytes = 20000000")
    refused = evalkit_cli("baseline", "export", "starter.faq", "-o", "baseline.json")
    assert refused.code == 2, refused.stdout
    assert "cannot be written to a baseline file that `--baseline-file` would read: .run.cases[1].answer_text" in refused.stderr
    assert "--privacy redacted" in refused.stderr and "nothing was written" in refused.stderr
    assert not (project / "baseline.json").exists()
    # a Python caller writing the same run is told its keywords, not the command line's options
    from evalkit.baseline_file import baseline_document
    from evalkit.storage import close_repository, open_repository

    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        (run,) = [repository.get_run(r.id) for r in repository.recent_runs("starter.faq") if r.privacy == "full"][:1]
        with pytest.raises(UsageError) as called:
            baseline_document(run, None)
    finally:
        close_repository(repository)
    message = str(called.value)
    assert "to a baseline file that baseline_file would read: .run.cases[1].answer_text" in message
    assert 'privacy="redacted" keeps each answer cut at 2,000 characters' in message and "--" not in message
    cut = evalkit_cli("baseline", "export", "starter.faq", "-o", "baseline.json", "--privacy", "redacted")
    assert cut.code == 0, cut.stderr


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs Linux's /dev/full")
def test_a_baseline_file_a_full_disk_cannot_take_is_exit_3_not_bad_usage(cli, project) -> None:
    # A full disk is the environment's fault, as `evalkit --help` says of output that cannot be
    # written (exit 3): the export said it as bad usage (exit 2), so a CI step that retries on 3 gave up.
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    refused = cli("baseline", "export", SET, "-o", "/dev/full")
    assert refused.code == 3, refused.stderr
    assert refused.stderr == "evalkit: error: baseline file /dev/full: cannot be written (No space left on device)\n"
    (project / "exports").mkdir()
    folder = cli("baseline", "export", SET, "-o", "exports")  # a path that cannot be a file stays the command's fault
    assert folder.code == 2 and "baseline file exports: cannot be written" in folder.stderr, folder.stderr
