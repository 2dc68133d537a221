"""evalkit.testing.check_repository: the repository contract suite, against any URL or object."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest
from evalkit.testing import check_repository

MINIMAL = Path(__file__).resolve().parent.parent / "data" / "evalkit-minimal-repo" / "evalkit_minimal_repo" / "__init__.py"


def minimal_module():
    spec = importlib.util.spec_from_file_location("evalkit_minimal_repo_for_the_kit", MINIMAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_builtin_repository_passes_on_every_engine(database_url: str) -> None:
    check_repository(database_url)
    check_repository(database_url)  # again, on a store that already holds the first suite's runs


def test_a_third_party_repository_with_only_the_base_protocol_passes(tmp_path: Path) -> None:
    check_repository(minimal_module().MinimalRepository(f"minimal://{tmp_path / 'store.json'}"))


def test_a_repository_that_overwrites_answers_and_keeps_private_text_fails_with_every_problem(tmp_path: Path) -> None:
    base = minimal_module().MinimalRepository

    class Careless(base):
        def record_cases(self, run_id: str, cases: Sequence, privacy: str) -> None:
            data = self._load()
            for case in cases:  # overwrites answered cases, and ignores the privacy level
                data[run_id]["cases"][case.case_id] = __import__("evalkit.convert").convert.unstructure(case)
            self._save(data)

        def begin_run(self, run):
            data = self._load()
            data.pop(run.id, None)  # a shard joining wipes the run
            self._save(data)
            return super().begin_run(run)

    with pytest.raises(AssertionError) as error:
        check_repository(Careless(f"minimal://{tmp_path / 'store.json'}"))
    message = str(error.value)
    assert message.startswith("repository Careless breaks the evalkit contract")
    assert "begin_run() with an existing id must return the stored run unchanged" in message
    assert "record_cases() must keep a stored case as it is" in message
    assert 'record_cases(privacy="metadata") must not keep answer text' in message


def test_a_capability_implemented_in_part_is_named_with_what_it_lacks(tmp_path: Path) -> None:
    # A store written against RunLeases before lease_liveness was added to it: evalkit treats it as
    # a store without leases (nothing refuses a second process), so the kit says so.
    base = minimal_module().MinimalRepository

    class OldLeases(base):
        def acquire_lease(self, run_id, part, owner, *, shard_count=None):
            return None

        def renew_lease(self, run_id, part, owner):
            return True

        def release_lease(self, run_id, part, owner, *, done):
            return None

        def release_thread_connection(self):
            return None

        def shard_progress(self, run_id):
            from evalkit.storage.values import ShardProgress

            return ShardProgress(None)

    with pytest.raises(AssertionError) as error:
        check_repository(OldLeases(f"minimal://{tmp_path / 'store.json'}"))
    message = str(error.value)
    assert "it implements RunLeases in part (it has acquire_lease, renew_lease, release_lease, release_thread_connection, shard_progress; it lacks lease_liveness)" in message
    assert "so the store runs without RunLeases" in message
    assert message.count("in part") == 1


def test_a_claimed_capability_is_a_promise(tmp_path: Path, sqlite_url: str) -> None:
    from evalkit.storage import open_repository

    repository = open_repository(sqlite_url)

    class WrongBaselines:
        """Delegates to the real store but reads baselines without the yardstick scope."""

        def __getattr__(self, name):
            return getattr(repository, name)

        def begin_run(self, run):
            return repository.begin_run(run)

        def record_cases(self, run_id, cases, privacy):
            return repository.record_cases(run_id, cases, privacy)

        def finish_run(self, run_id, status, finished_at, **fields):
            return repository.finish_run(run_id, status, finished_at, **fields)

        def get_run(self, run_id, with_cases=True):
            return repository.get_run(run_id, with_cases)

        def baseline_for(self, set_identifier, identity, grader, exclude_run_id=None):
            return repository.baseline_for(set_identifier, identity, "deterministic", exclude_run_id=exclude_run_id)

        def mean_quality_for_provider_model(self, *args, **kwargs):
            return repository.mean_quality_for_provider_model(*args, **kwargs)

    with pytest.raises(AssertionError, match="baseline_for\\(\\) must be scoped to the grading yardstick"):
        check_repository(WrongBaselines())
    repository.close()


def test_an_unknown_scheme_is_reported_not_raised_past_the_kit() -> None:
    with pytest.raises(AssertionError, match="opening the repository raised UnknownPluginError"):
        check_repository("nosuchstore:///tmp/x")


def test_the_kit_keeps_credentials_out_of_its_message() -> None:
    with pytest.raises(AssertionError) as error:
        check_repository("nosuchstore://user:hunter2@host/db")
    assert "hunter2" not in str(error.value)
    assert attrs is not None


def test_a_repository_that_drops_case_fingerprints_fails(tmp_path: Path) -> None:
    base = minimal_module().MinimalRepository

    class Forgetful(base):
        def begin_run(self, run):
            return super().begin_run(attrs.evolve(run, fingerprints_kept=False))

        def record_cases(self, run_id: str, cases: Sequence, privacy: str) -> None:
            super().record_cases(run_id, [attrs.evolve(case, fingerprint=None) for case in cases], privacy)

    with pytest.raises(AssertionError) as error:
        check_repository(Forgetful(f"minimal://{tmp_path / 'store.json'}"))
    message = str(error.value)
    assert "case fingerprints: begin_run() must keep Run.fingerprints_kept" in message
    assert "case fingerprints: record_cases() must keep each case's fingerprint as given" in message


def test_a_store_that_says_its_cases_read_back_as_given_when_they_do_not_fails(sqlite_url: str) -> None:
    """``StoredCaseForms`` is a promise too: a store whose ``record_cases_as_stored`` hands back the
    cases as given (the answer kept at ``privacy="metadata"``) is caught, and one that declines
    (``None``) passes."""
    from evalkit.storage.sql import SqlRepository

    class AsGiven(SqlRepository):
        def record_cases_as_stored(self, run_id, cases, privacy):  # noqa: ANN001, ANN201
            self.record_cases(run_id, cases, privacy)
            return list(cases)

    class Declines(SqlRepository):
        def record_cases_as_stored(self, run_id, cases, privacy):  # noqa: ANN001, ANN201
            self.record_cases(run_id, cases, privacy)

    with pytest.raises(AssertionError) as error:
        check_repository(AsGiven(sqlite_url))
    assert "cases as stored (StreamedCases): record_cases_as_stored() must return the cases exactly as get_run() reads them back" in str(error.value)
    check_repository(Declines(sqlite_url))


def test_a_store_whose_accept_if_first_always_accepts_fails(sqlite_url: str) -> None:
    """``FirstAcceptance`` is a promise: accepting a second "first" of a scope is caught."""
    from evalkit.storage.sql import SqlRepository

    class Credulous(SqlRepository):
        def accept_if_first(self, run_id, scope, acceptance):  # noqa: ANN001, ANN201
            self.accept_run(run_id, acceptance)
            return True

    with pytest.raises(AssertionError) as error:
        check_repository(Credulous(sqlite_url))
    assert "the first of a scope (AcceptedBaselines): accept_if_first() must refuse (return False)" in str(error.value)


def test_a_store_whose_latest_unfinished_run_takes_an_adapter_and_ignores_it_fails(sqlite_url: str) -> None:
    """``latest_unfinished_run(…, adapter=)`` is a promise: a store that takes the keyword and
    still gives another adapter's ad-hoc run is caught; one written before it (no ``adapter``) is
    called without it and passes."""
    from evalkit.storage.sql import SqlRepository

    class Ignores(SqlRepository):
        def latest_unfinished_run(self, set_identifier, provider_instance, model_alias, grader, adapter=None):  # noqa: ANN001, ANN201
            return super().latest_unfinished_run(set_identifier, provider_instance, model_alias, grader)

    class Older(SqlRepository):
        def latest_unfinished_run(self, set_identifier, provider_instance, model_alias, grader):  # noqa: ANN001, ANN201
            return super().latest_unfinished_run(set_identifier, provider_instance, model_alias, grader)

    with pytest.raises(AssertionError) as error:
        check_repository(Ignores(sqlite_url))
    assert "latest_unfinished_run(adapter='kit') must find the newest unfinished ad-hoc run of that adapter" in str(error.value)
    check_repository(Older(sqlite_url))


def test_a_bare_resume_in_a_store_that_cannot_pass_over_another_adapter_names_the_run_and_asks_for_an_id(sqlite_url: str) -> None:
    """A store written before ``adapter`` was asked for gives the newest unfinished run of the alias
    whatever its adapter: a bare ``--resume`` says so and asks for the run's id, where it said "use the
    same --provider and --model" of a run the user never named."""
    from types import SimpleNamespace

    from evalkit.errors import UsageError
    from evalkit.run.answering.prompts import PromptAnswering
    from evalkit.runs import Run
    from evalkit.storage import capabilities
    from evalkit.storage.sql import SqlRepository

    class Older(SqlRepository):
        def latest_unfinished_run(self, set_identifier, provider_instance, model_alias, grader):  # noqa: ANN001, ANN201
            return super().latest_unfinished_run(set_identifier, provider_instance, model_alias, grader)

    store = Older(sqlite_url)
    try:
        store.begin_run(Run(id="llm-1", set_identifier="pkg.set", grader="deterministic", started_at=1.0, model_alias="gpt-4o", adapter="llm"))
        asking = SimpleNamespace(
            golden_set=SimpleNamespace(identifier="pkg.set"), grader_name="deterministic",
            bound=SimpleNamespace(instance=None, adapter="reference", alias="gpt-4o"),
        )  # fmt: skip
        with pytest.raises(UsageError) as refused:
            PromptAnswering.unfinished_run(asking, capabilities(store))
        assert str(refused.value) == (  # as a library caller is told: keywords, not options
            'resume: the newest unfinished run of "pkg.set" the store finds, llm-1, is answered by the ad-hoc "llm" '
            'generator with model "gpt-4o", not the ad-hoc "reference" generator with model "gpt-4o", and the store '
            "cannot look past it; pass the id of the run to resume: run_id=RUN_ID"
        )
        asking.bound.adapter = "llm"
        assert PromptAnswering.unfinished_run(asking, capabilities(store)) == "llm-1"
    finally:
        store.close()


def test_a_repository_that_drops_a_runs_provenance_fails(tmp_path: Path) -> None:
    """A store that loses ``Run.provenance`` runs, but ``evalkit regrade`` of a plugin grader's run
    then needs ``--grader`` (the plugin is read from the provenance): the kit says so, whether the
    store drops it at ``begin_run`` or overwrites it when ``finish_run`` is given none."""
    base = minimal_module().MinimalRepository

    class DropsAtBegin(base):
        def begin_run(self, run):
            return super().begin_run(attrs.evolve(run, provenance=None))

    class ClearsAtFinish(base):
        def finish_run(self, run_id, status, finished_at, **fields):
            finished = super().finish_run(run_id, status, finished_at, **fields)
            data = self._load()
            data[run_id]["run"]["provenance"] = fields.get("provenance")
            self._save(data)
            return attrs.evolve(finished, provenance=fields.get("provenance"))

    with pytest.raises(AssertionError) as error:
        check_repository(DropsAtBegin(f"minimal://{tmp_path / 'begin.json'}"))
    assert "the run's provenance: begin_run() must keep Run.provenance as given; got None" in str(error.value)
    with pytest.raises(AssertionError) as error:
        check_repository(ClearsAtFinish(f"minimal://{tmp_path / 'finish.json'}"))
    problems = str(error.value)
    assert "the run's provenance: finish_run() must keep the provenance given to begin_run()" in problems
    assert "begin_run() must keep Run.provenance" not in problems


def test_a_resumable_store_that_resumes_a_regrade_run_fails(sqlite_url: str) -> None:
    """``ResumableRuns.latest_unfinished_run`` passes over re-grade runs (a bare ``--resume`` would
    otherwise continue a re-grade as if it were the answered run): a store that does not keep
    ``answers_reused`` hands the re-grade back, and the kit says so."""
    from evalkit.storage.sql import SqlRepository

    class ForgetsReuse(SqlRepository):
        def begin_run(self, run):  # noqa: ANN001, ANN201
            return super().begin_run(attrs.evolve(run, answers_reused=None, source_run_id=None))

    with pytest.raises(AssertionError) as error:
        check_repository(ForgetsReuse(sqlite_url))
    assert "resume (ResumableRuns): latest_unfinished_run() must pass over a re-grade run" in str(error.value)
