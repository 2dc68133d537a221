"""A third-party repository that implements only the base protocol still runs and stores; evalkit
says why it does not compare, and refuses politely what needs a capability it lacks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from evalkit.evaluation import NO_SCOPED_READS
from evalkit.storage import (
    GeneratorScopedResults,
    ProviderModelQualityScores,
    ResultRepository,
    ResumableRuns,
    RunHistory,
    RunVerdicts,
)

MINIMAL = Path(__file__).resolve().parent.parent / "data" / "evalkit-minimal-repo" / "evalkit_minimal_repo" / "__init__.py"


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"minimal://{tmp_path / 'third-party' / 'store.json'}"


def test_the_minimal_repository_offers_the_base_protocol_and_no_capability(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("evalkit_minimal_repo_under_test", MINIMAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    repository = module.MinimalRepository(f"minimal://{tmp_path / 'store.json'}")
    assert isinstance(repository, ResultRepository)
    for capability in (GeneratorScopedResults, ProviderModelQualityScores, RunHistory, ResumableRuns, RunVerdicts):
        assert not isinstance(repository, capability), capability.__name__


def test_a_run_is_stored_and_reported_as_not_compared(evalkit_cli, storage_plugins, store_url) -> None:
    env = {"PYTHONPATH": storage_plugins}
    first = evalkit_cli("run", "evalkit.smoke", "--database", store_url, "--json", env=env)
    assert first.code == 0, first.stderr
    document = first.json()
    assert document["verdict"] == {"state": "not_comparable", "regressed": False, "reason": NO_SCOPED_READS,
                                   "baseline_id": None, "metrics": {}, "acceptance_note": None}
    second = evalkit_cli("run", "evalkit.smoke", "--database", store_url, env=env)
    assert second.code == 0, second.stderr
    assert "not compared: the configured repository has no generator-scoped reads" in second.stdout

    shown = evalkit_cli("show", document["run_id"], "--database", store_url, "--json", env=env)
    assert shown.code == 0, shown.stderr
    assert shown.json()["status"] == "complete" and len(shown.json()["cases"]) == 7
    assert shown.json()["verdict"] is None, "the repository keeps no verdicts"

    gated = evalkit_cli("run", "evalkit.smoke", "--database", store_url, "--fail-on-regression", env=env)
    assert gated.code == 1 and NO_SCOPED_READS in gated.stdout


def test_compare_needs_only_the_base_protocol(evalkit_cli, storage_plugins, store_url) -> None:
    env = {"PYTHONPATH": storage_plugins}
    ids = [evalkit_cli("run", "evalkit.smoke", "--database", store_url, "--json", env=env).json()["run_id"] for _ in range(2)]
    compared = evalkit_cli("compare", *ids, "--database", store_url, "--json", env=env)
    assert compared.code == 0, compared.stderr
    assert compared.json()["cases"]["regressed"] == [] and compared.json()["mcnemar_p"] == 1.0


def test_shards_join_a_run_in_a_store_with_only_the_base_protocol(evalkit_cli, storage_plugins, store_url) -> None:
    env = {"PYTHONPATH": storage_plugins}
    first = evalkit_cli("run", "storagekit.echo", "--shard", "1/2", "--run-id", "tp-1", "--database", store_url, "--json", env=env)
    assert first.code == 0 and first.json()["status"] == "running"
    # a store without leases cannot tell a killed run from one being answered: shown running, waited for
    shown = evalkit_cli("show", "tp-1", "--database", store_url, "--json", env=env).json()
    assert (shown["status"], shown["live_process"], shown["last_seen_at"]) == ("running", None, None)
    waited = evalkit_cli("report", "tp-1", "--wait", "--timeout", "0.5s", "--poll", "0.1s", "--database", store_url, env=env)
    assert waited.code == 3 and "after 0.5 s and the run is still running" in waited.stderr, waited.stderr
    second = evalkit_cli("run", "storagekit.echo", "--shard", "2/2", "--run-id", "tp-1", "--database", store_url, "--json", env=env)
    assert second.code == 0, second.stderr
    assert second.json()["status"] == "complete" and second.json()["answered"] == 40


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (("history", "evalkit.smoke"), "cannot list runs: it lacks the RunHistory capability"),
        (("db", "prune", "--older-than", "90d"), "cannot prune: it lacks the RunHistory capability"),
        (("db", "status"), "manages its own storage"),
        (("db", "upgrade"), "manages its own storage"),
        (("run", "evalkit.smoke", "--resume"), "needs a store that can find unfinished runs"),
    ],
)
def test_commands_that_need_a_capability_say_which(evalkit_cli, storage_plugins, store_url, command, message) -> None:
    result = evalkit_cli(*command, "--database", store_url, env={"PYTHONPATH": storage_plugins})
    assert result.code == 2 and message in result.stderr


def test_a_plugin_store_scheme_is_read_case_insensitively(evalkit_cli, storage_plugins, tmp_path: Path) -> None:
    # RFC 3986: MINIMAL:// is minimal://; the plugin was handed the URL as typed and refused it (exit 2)
    store_url = f"MINIMAL://{tmp_path / 'third-party' / 'store.json'}"
    result = evalkit_cli("run", "evalkit.smoke", "--database", store_url, "--json", env={"PYTHONPATH": storage_plugins})
    assert result.code == 0, result.stderr
    assert (tmp_path / "third-party" / "store.json").exists()


def test_an_unknown_scheme_names_the_installed_repositories(evalkit_cli, storage_plugins) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--database", "nosuch:///x", env={"PYTHONPATH": storage_plugins})
    assert result.code == 2
    assert 'Unknown repository "nosuch"' in result.stderr and "minimal" in result.stderr
    assert "sqlite (built in), postgresql (built in)" in result.stderr, "the built-in stores are choices too"
    typo = evalkit_cli("run", "evalkit.smoke", "--database", "sqlit:///x.db")
    assert typo.code == 2 and 'Unknown repository "sqlit". Did you mean "sqlite"?' in typo.stderr, typo.stderr
    assert "(none installed)" not in typo.stderr


def test_a_chosen_baseline_in_a_store_with_only_the_base_protocol_is_compared_case_by_case(tmp_path: Path) -> None:
    """``--baseline RUN_ID`` needs no capability: the chosen run is read with its cases (the store
    cannot pair them itself), so a run whose ten cases all fail against a baseline where all ten
    passed regressed (pass rate 1.0 -> 0.0, every case a regression), and a copy of the baseline
    did not."""
    from evalkit import CaseResult, Run, ServingIdentity
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, decide
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    spec = importlib.util.spec_from_file_location("evalkit_minimal_repo_for_a_chosen_baseline", MINIMAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    repository = module.MinimalRepository(f"minimal://{tmp_path / 'store.json'}")
    identity = ServingIdentity("prod", "gpt", "gpt-2025")

    def stored(run_id: str, passed: bool) -> Run:
        repository.begin_run(Run(id=run_id, set_identifier="pkg.set", grader="deterministic", started_at=1.0, case_count=10,
                                 provider_instance="prod", model_alias="gpt"))  # fmt: skip
        repository.record_cases(run_id, [CaseResult(f"c{i}", passed, float(passed), identity=identity, yardstick="deterministic")
                                         for i in range(10)], "metadata")  # fmt: skip
        return repository.finish_run(run_id, "complete", 2.0, grader="deterministic", identity=identity)

    stored("base", True)
    judging = Judging(capabilities(repository), PromptRules(), Tolerances(), baseline_id="base")
    worse = decide(stored("worse", False), judging)
    assert worse.state == "regressed" and worse.comparison.baseline_id == "base"
    assert worse.comparison.regressed_cases == tuple(f"c{i}" for i in range(10))
    same = decide(stored("same", True), judging)
    assert same.state == "no_regression" and same.comparison.regressed_cases == ()


def test_a_run_read_without_its_cases_is_compared_with_its_cases_on_a_base_protocol_store(tmp_path: Path) -> None:
    """A run read back without its cases (as a later attempt of a complete run is) from a store
    that cannot pair cases itself: its cases are read again before the comparison. That store
    reports ``answered_count`` 0 for such a read, which once skipped the read and compared the
    baseline with nothing: ten regressions then said ``no_regression``."""
    from evalkit import CaseResult, Run, ServingIdentity
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, decide
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    spec = importlib.util.spec_from_file_location("evalkit_minimal_repo_for_a_run_without_cases", MINIMAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    repository = module.MinimalRepository(f"minimal://{tmp_path / 'store.json'}")
    identity = ServingIdentity("prod", "gpt", "gpt-2025")
    for run_id, passed in (("base", True), ("worse", False)):
        repository.begin_run(Run(id=run_id, set_identifier="pkg.set", grader="deterministic", started_at=1.0, case_count=10,
                                 provider_instance="prod", model_alias="gpt"))  # fmt: skip
        repository.record_cases(run_id, [CaseResult(f"c{i}", passed, float(passed), identity=identity, yardstick="deterministic")
                                         for i in range(10)], "metadata")  # fmt: skip
        repository.finish_run(run_id, "complete", 2.0, grader="deterministic", identity=identity)
    bare = repository.get_run("worse", with_cases=False)
    assert bare is not None and not bare.cases
    verdict = decide(bare, Judging(capabilities(repository), PromptRules(), Tolerances(), baseline_id="base"))
    assert verdict.state == "regressed"
    assert verdict.comparison.regressed_cases == tuple(f"c{i}" for i in range(10))


def test_a_third_party_store_failing_as_the_run_is_first_stored_is_named_not_the_output(
    evalkit_cli, storage_plugins, tmp_path
) -> None:
    """The store plugin's own ``OSError`` raised by ``begin_run`` (here: its file cannot be made,
    a file stands where its folder should) was "internal error (an evalkit bug)" with a traceback,
    exit 2, as a mid-run one was before plugin_store_failure: it is the store that failed, named,
    exit 3, and nothing of the run was stored."""
    (tmp_path / "taken").write_text("a file, not a folder")
    store_url = f"minimal://{tmp_path / 'taken' / 'store.json'}"
    began = evalkit_cli("run", "evalkit.smoke", "--run-id", "full-1", "--database", store_url, env={"PYTHONPATH": storage_plugins})
    assert began.code == 3, began.stderr
    assert began.stderr.startswith(
        "evalkit: error: the results store failed before run full-1 was stored: evalkit_minimal_repo.MinimalRepository raised "
        "FileExistsError: "
    ), began.stderr
    assert "— nothing was stored; run the command again once the store is fixed" in began.stderr
    assert "output" not in began.stderr
