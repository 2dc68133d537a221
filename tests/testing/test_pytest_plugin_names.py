"""The pytest plugin's test names and its ``--evalkit-*`` options, with pytest run in this process
(``pytester``) on sets of real installed distributions from tests/data."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import evalkit
import evalkit.catalog
import evalkit.config
import evalkit.run.library
import evalkit.storage
import evalkit.testing.pytest_fixtures  # noqa: F401 - imported for the reason below
import pytest

pytest_plugins = ["pytester"]

# pytester forgets the modules imported since its fixture began once a test is over: evalkit's are
# imported here, before any, so that every run sees one GoldenPromptSet class (``evalkit``'s cached
# name and the catalog's would otherwise be two classes from the second test on).
for _name in evalkit.__all__:
    getattr(evalkit, _name)

GATE = "evalkit:regression-gate"


@pytest.fixture
def evalkit_pytest(pytester: pytest.Pytester, plugin_dists: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., pytest.RunResult]:
    """``evalkit_pytest(*args)``: ``pytest -p evalkit --evalkit-provider ref ARGS`` in this process, in a
    project whose provider ``ref`` answers each case its reference, with the test distributions
    ``evalkit-pytest-sets`` and ``evalkit-raising-plugins`` installed and a store under the project."""
    from evalkit import registry

    monkeypatch.syspath_prepend(plugin_dists("evalkit-pytest-sets", "evalkit-raising-plugins"))
    registry.forget()
    for name in ("EVALKIT_DATABASE_URL", "EVALKIT_RAISE_IN", "EVALKIT_RAISE"):
        monkeypatch.delenv(name, raising=False)
    pytester.path.joinpath("evalkit.toml").write_text('[providers.ref]\nadapter = "reference"\nmodel = "ref-v1"\n')
    store = f"sqlite:///{pytester.path / 'results.db'}"

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_inprocess("-p", "evalkit", "--evalkit-provider", "ref", "--evalkit-database", store, *args)

    return run


def stored_runs(folder: Path) -> int:
    """How many runs the project's store holds (0 when it was never created)."""
    from evalkit.storage import open_repository

    if not (folder / "results.db").exists():
        return 0
    repository = open_repository(f"sqlite:///{folder / 'results.db'}")
    try:
        return len(repository.recent_runs(None, limit=100))
    finally:
        repository.close()


def test_a_case_named_regression_gate_is_not_taken_for_the_gate(evalkit_pytest: Callable[..., pytest.RunResult]) -> None:
    """The gate's test was ``…::regression-gate``, the node id of a case of that id: two tests of
    one id, which ``-k``, ``--deselect`` and ``--lf`` could not tell apart."""
    first = evalkit_pytest("--evalkit-set", "pytestkit.gate", "-v")
    first.assert_outcomes(passed=3, failed=1)
    first.stdout.fnmatch_lines([
        "*evalkit-set:pytestkit.gate::regression-gate FAILED*",
        "*evalkit-set:pytestkit.gate::evalkit\\x3aregression-gate PASSED*",
        f"*evalkit-set:pytestkit.gate::{GATE} PASSED*",
    ])  # fmt: skip
    # The failed case alone is rerun: the gate (which passed) is not taken for it.
    again = evalkit_pytest("--evalkit-set", "pytestkit.gate", "--lf", "-v")
    again.assert_outcomes(failed=1, deselected=3)
    again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 1 failure*", "*::regression-gate FAILED*"])
    # Deselecting the gate by its node id leaves every case, the one named regression-gate too.
    without_gate = evalkit_pytest("--evalkit-set", "pytestkit.gate", "--deselect", f"evalkit-set:pytestkit.gate::{GATE}", "-v")
    without_gate.assert_outcomes(passed=2, failed=1, deselected=1)
    assert f"::{GATE} " not in without_gate.stdout.str()


def test_a_set_named_twice_is_a_usage_error_and_nothing_runs(evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester) -> None:
    """``--evalkit-set X --evalkit-set X`` ran the set twice, stored two runs and reported every
    test twice under one node id."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.gate", "--evalkit-set", "pytestkit.escapes", "--evalkit-set", "pytestkit.gate")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(['*--evalkit-set: "pytestkit.gate" is given twice; name each set once*'])
    assert stored_runs(pytester.path) == 0


def test_ids_that_differ_only_by_an_escape_written_out_are_two_tests(evalkit_pytest: Callable[..., pytest.RunResult]) -> None:
    """A case id ``a:b`` is named ``a\\x3ab``, which is also how the id ``a\\x3ab`` (a backslash, then
    ``x3ab``) was named: one node id for two tests. The backslash is escaped first."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.escapes", "--collect-only", "-q")
    assert done.ret == pytest.ExitCode.OK
    names = [line.split("::")[-1] for line in done.stdout.lines if "evalkit-set:pytestkit.escapes::" in line]
    assert names == ["a\\x3ab", "a\\x5cx3ab", "back\\x5cslash", GATE]


def test_a_set_id_given_with_control_characters_is_refused_escaped(evalkit_pytest: Callable[..., pytest.RunResult]) -> None:
    """The usage error quoted the unknown set id as typed: an OSC sequence reached the terminal."""
    done = evalkit_pytest("--evalkit-set", "evil\x1b]0;pwned\x07")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    output = done.stdout.str() + done.stderr.str()
    assert "\x1b" not in output and "\x07" not in output
    done.stderr.fnmatch_lines(['*--evalkit-set: Unknown golden prompt set "evil\\x1b]0;pwned\\x07"*'])


@pytest.mark.parametrize("raised", ["StopIteration", "Unprintable", "Skipped", "GeneratorExit"])
def test_a_stream_that_fails_while_its_cases_are_listed_is_a_usage_error(
    evalkit_pytest: Callable[..., pytest.RunResult], monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester, raised: str
) -> None:
    """``raising.stream`` raises at its second prompt: listing its cases for pytest ended the
    session with INTERNALERROR and the plugin's traceback (exit 3); ``evalkit run`` refuses the set."""
    monkeypatch.setenv("EVALKIT_RAISE_IN", "stream")
    monkeypatch.setenv("EVALKIT_RAISE", raised)
    done = evalkit_pytest("--evalkit-set", "raising.stream")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in done.stdout.str() + done.stderr.str()
    done.stderr.fnmatch_lines(['*--evalkit-set: set "raising.stream": field prompts: producing prompt #2 raised *'])
    assert stored_runs(pytester.path) == 0


@pytest.mark.parametrize("option", ["--evalkit-database", "--evalkit-provider", "--evalkit-model", "--evalkit-grader", "--evalkit-config"])
def test_a_run_option_given_empty_is_a_usage_error(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester, option: str
) -> None:
    """``--evalkit-database "$URL"`` with the variable unset ran the set into the default store
    (``.evalkit/`` here), where no baseline is: the gate passed as a first run. The last of a
    repeated option wins, as for any pytest option, so the empty value is given last."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.gate", option, "")
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines([f"*{option} is empty; *, or leave the option out*"])
    assert not (pytester.path / ".evalkit").exists() and stored_runs(pytester.path) == 0


def test_a_refusal_of_a_run_option_names_the_plugins_option(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """A refusal the library raises for what ``--evalkit-config``/``--evalkit-model`` gave named the
    library's keyword (``path names the folder``, ``model: the model alias …``), before that the
    command line's ``--config``: neither is an option of pytest's. It names the plugin's option; a
    test's own ``evaluate_set`` call (the ``evalkit_run`` fixture) still names the keyword."""
    folder = pytester.mkdir("settings")
    refused = evalkit_pytest("--evalkit-set", "pytestkit.gate", "--evalkit-config", str(folder))
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*--evalkit-set: --evalkit-config names the folder {folder}; give the file*"])
    long_alias = evalkit_pytest("--evalkit-set", "pytestkit.gate", "--evalkit-model", "m" * 1001)
    long_alias.stdout.fnmatch_lines(["*evalkit could not run pytestkit.gate: --evalkit-model: the model alias is 1,001 characters long*"])
    pytester.makepyfile(
        test_own_call="""
        import pytest
        from evalkit.errors import UsageError

        def test_keyword(evalkit_run):
            with pytest.raises(UsageError, match="^model: the model alias is 1,001 characters long"):
                evalkit_run("pytestkit.gate", "ref", model="m" * 1001)
        """
    )
    own = evalkit_pytest("--evalkit-set", "pytestkit.gate", "test_own_call.py")
    own.assert_outcomes(passed=4, failed=1)  # the set's gate case fails as in the test above; the test's own call passes
    assert stored_runs(pytester.path) == 1


def test_several_providers_and_none_chosen_names_the_evalkit_provider_option(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """The refusal said "choose one with provider", a keyword the pytest user has no way to give;
    it says "choose one with --evalkit-provider"."""
    pytester.path.joinpath("evalkit.toml").write_text(
        '[providers.a]\nadapter = "reference"\nmodel = "m"\n[providers.b]\nadapter = "reference"\nmodel = "m"\n'
    )
    done = pytester.runpytest_inprocess("-p", "evalkit", "--evalkit-set", "pytestkit.gate", "--evalkit-database", f"sqlite:///{pytester.path / 'results.db'}")
    done.stdout.fnmatch_lines(["*evalkit could not run pytestkit.gate: several provider instances are configured (a, b); choose one with --evalkit-provider*"])


#: A stand-in for pytest-xdist (not a test dependency): its ``--dist`` option, and a worker's
#: ``config.workerinput`` where ``$FAKE_XDIST_WORKER`` is set. Checked by hand with pytest-xdist 3.8:
#: ``-n 2`` ran the set once in each worker, two runs stored, each gate judging its own.
FAKE_XDIST = """
import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--dist", default="no")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if os.environ.get("FAKE_XDIST_WORKER"):
        config.workerinput = {"workerid": "gw0"}
"""


@pytest.mark.parametrize(
    "spread", [("--dist", "load"), ("--dist", "each"), ("worker",), ("-n", "2")], ids=["dist-load", "dist-each", "worker", "real-xdist"]
)
def test_sets_spread_over_xdist_workers_are_refused(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, spread: tuple[str, ...]
) -> None:
    """Under pytest-xdist each worker given one of a set's tests ran the whole set: one run stored
    per worker, and each worker's gate compared its run with whatever the others had stored.

    The real pytest-xdist (a test requirement: the suite itself runs under it) is refused by its
    controller before a worker starts; a fake stands in for its options and for a worker's config,
    with the real one switched off (``-p no:xdist``) so the two never both declare ``--dist``."""
    if spread == ("-n", "2"):
        serial = ("-n", "0")
    else:
        pytester.makeconftest(FAKE_XDIST)
        if spread == ("worker",):
            monkeypatch.setenv("FAKE_XDIST_WORKER", "1")
            spread = ()
        spread = ("-p", "no:xdist", *spread)
        serial = ("-p", "no:xdist", "--dist", "no")
    done = evalkit_pytest("--evalkit-set", "pytestkit.gate", *spread)
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(["*--evalkit-set runs each set once, in one process, and pytest-xdist* -p no:xdist (or -n 0)*"])
    # a set named by a test's node id alone runs as one named by --evalkit-set does: refused alike
    by_node_id = evalkit_pytest("evalkit-set:pytestkit.gate::fine", *spread)
    assert by_node_id.ret == pytest.ExitCode.USAGE_ERROR, by_node_id.stdout.str()
    assert stored_runs(pytester.path) == 0
    if spread[-1] != "no:xdist":  # not spread, the same session runs the set (its case regression-gate fails)
        assert evalkit_pytest("--evalkit-set", "pytestkit.gate", *serial).ret == pytest.ExitCode.TESTS_FAILED


def test_the_documented_ids_are_the_node_ids(evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester) -> None:
    """The tests' node ids began with ``::`` (made from the session's empty id): ``--deselect
    evalkit-set:SET::CASE``, the id the docs give, deselected nothing, the short summary said
    ``FAILED ::evalkit-set:…``, and JUnit XML's classname was ``.evalkit-set:…``."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.gate", "--deselect", "evalkit-set:pytestkit.gate::fine", "--junitxml", "out.xml", "-rf")
    done.assert_outcomes(passed=2, failed=1, deselected=1)
    done.stdout.fnmatch_lines(["FAILED evalkit-set:pytestkit.gate::regression-gate - *"])
    import xml.etree.ElementTree as ElementTree

    cases = ElementTree.parse(pytester.path / "out.xml").getroot().iter("testcase")
    assert {(case.get("classname"), case.get("name")) for case in cases} == {
        ("evalkit-set:pytestkit.gate", "regression-gate"),
        ("evalkit-set:pytestkit.gate", "evalkit\\x3aregression-gate"),
        ("evalkit-set:pytestkit.gate", GATE),
    }


def test_an_ini_switch_that_is_no_boolean_is_named(pytester: pytest.Pytester) -> None:
    """``evalkit = maybe`` ended every pytest run with ``ERROR: invalid truth value 'maybe'``,
    naming neither the option nor the plugin."""
    pytester.makeini("[pytest]\nevalkit = maybe\n")
    pytester.makepyfile("def test_nothing(): pass\n")
    done = pytester.runpytest_inprocess()
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["*the pytest ini option evalkit: invalid truth value 'maybe'; give true or false*"])


def test_a_node_id_given_as_an_argument_runs_that_test_alone(evalkit_pytest: Callable[..., pytest.RunResult]) -> None:
    """``pytest 'evalkit-set:SET::CASE' --evalkit-set SET`` (the id ``-v`` prints) ended with
    ``ERROR: file or directory not found``: pytest reads every argument as a path."""
    done = evalkit_pytest("evalkit-set:pytestkit.gate::fine", "--evalkit-set", "pytestkit.gate", "-v")
    done.assert_outcomes(passed=1)
    assert [line.split()[0] for line in done.stdout.lines if " PASSED " in line] == ["evalkit-set:pytestkit.gate::fine"]


def test_an_id_copied_from_the_verbose_output_names_its_set_without_evalkit_set(evalkit_pytest: Callable[..., pytest.RunResult]) -> None:
    """The id of a failed test, escapes and all, copied back from ``-v`` with the gate's: the set
    it names is run (no ``--evalkit-set`` needed), and only the tests named are collected."""
    first = evalkit_pytest("--evalkit-set", "pytestkit.escapes", "-v")
    failed = [line.split()[0] for line in first.stdout.lines if line.endswith("%]") and " FAILED " in line]
    assert failed == ["evalkit-set:pytestkit.escapes::a\\x3ab"]
    again = evalkit_pytest(failed[0], f"evalkit-set:pytestkit.escapes::{GATE}", "-v")
    again.assert_outcomes(failed=1, passed=1)
    again.stdout.fnmatch_lines(["*collected 2 items", "*::a\\x3ab FAILED*", f"*::{GATE} PASSED*"])


def test_a_whole_set_by_node_id_with_a_test_file_and_another_set_whole(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """``evalkit-set:SET`` names every test of a set; a path argument is still collected, and a
    set given with ``--evalkit-set`` and named by no node id runs whole."""
    pytester.makepyfile(test_plain="def test_plain(): pass\n")
    done = evalkit_pytest("test_plain.py", "evalkit-set:pytestkit.escapes", "--evalkit-set", "pytestkit.gate", "-v")
    done.assert_outcomes(passed=7, failed=2)


def test_a_node_id_that_names_no_test_is_a_usage_error_and_nothing_runs(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """As pytest says for ``test_x.py::test_missing``; a set no one has is refused as for ``--evalkit-set``."""
    done = evalkit_pytest("evalkit-set:pytestkit.gate::fine", "evalkit-set:pytestkit.gate::missing")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["*not found: evalkit-set:pytestkit.gate::missing*"])
    unknown = evalkit_pytest("evalkit-set:pytestkit.nowhere::fine")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(['*evalkit-set:pytestkit.nowhere::fine: Unknown golden prompt set "pytestkit.nowhere"*'])
    # longer than a file name may be: looking it up as a path raised OSError, pytest's INTERNALERROR
    too_long = evalkit_pytest("evalkit-set:" + "x" * 300 + "::fine")
    assert too_long.ret == pytest.ExitCode.USAGE_ERROR and "INTERNALERROR" not in too_long.stdout.str() + too_long.stderr.str()
    too_long.stderr.fnmatch_lines(["*: Unknown golden prompt set*"])
    assert stored_runs(pytester.path) == 0


#: What follows the backslash in the secret the test generator ``pytestkit.keyed`` declares,
#: ``pytestkit-key\\5e1f0c9a`` (tests/data/evalkit-pytest-sets): shown neither as it is nor with
#: its backslash written ``\\x5c``, as the plugin writes one in a test's name.
KEYED_SECRET_TAIL = "5e1f0c9a"


def with_keyed_provider(pytester: pytest.Pytester) -> tuple[str, ...]:
    """Configure the provider instance ``keyed`` (the generator declaring the secret of :data:`KEYED_SECRET_TAIL`); the options choosing it."""
    pytester.path.joinpath("evalkit.toml").write_text(
        '[providers.ref]\nadapter = "reference"\nmodel = "ref-v1"\n\n[providers.keyed]\nadapter = "pytestkit.keyed"\nmodel = "keyed-v1"\n'
    )
    return ("--evalkit-provider", "keyed")


def test_a_case_id_holding_the_generators_key_is_named_with_it_hidden(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """The tests were named before the generator was bound, so its key was not yet a secret to hide:
    ``-v``, the short summary and JUnit XML showed the case id with the key in it."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.secret", *with_keyed_provider(pytester), "-v", "-rA", "--junitxml", "out.xml")
    done.assert_outcomes(passed=3)
    output = done.stdout.str() + done.stderr.str() + (pytester.path / "out.xml").read_text()
    assert KEYED_SECRET_TAIL not in output
    done.stdout.fnmatch_lines(["evalkit-set:pytestkit.secret::key-[*][*][*] PASSED*"])
    # the name as shown selects the case
    again = evalkit_pytest("evalkit-set:pytestkit.secret::key-***", *with_keyed_provider(pytester), "-v")
    again.assert_outcomes(passed=1)


def test_case_ids_that_differ_only_in_a_secret_are_a_usage_error(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """``key-<the key>`` and ``key-***`` are both shown ``key-***``: one node id for two tests, which
    pytest reported, selected and deselected as one. Refused naming both cases by their place,
    the key still hidden, nothing run or stored."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.collide", *with_keyed_provider(pytester))
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(['*set "pytestkit.collide": cases #1 and #2 are both named "key-[*][*][*]" once secrets are hidden*'])
    assert KEYED_SECRET_TAIL not in done.stdout.str() + done.stderr.str()
    assert stored_runs(pytester.path) == 0


def test_two_cases_of_one_id_are_a_usage_error_saying_so(evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester) -> None:
    """Refused as ``evalkit run`` refuses the set, and not said to differ in a secret."""
    done = evalkit_pytest("--evalkit-set", "pytestkit.twice")
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(['*set "pytestkit.twice": cases #1 and #3 have one id, "same"; give each case its own*'])
    assert stored_runs(pytester.path) == 0


def test_a_case_id_holding_the_judges_key_is_named_with_it_hidden(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """A judge grader's judge was bound only when the set ran, after its tests were named: a case
    id holding the judge's key showed in ``--collect-only``, ``-v`` and JUnit XML. The grader is now
    built at collection too, its judge bound, so its secrets are known before the names are made."""
    pytester.path.joinpath("evalkit.toml").write_text(
        'judge = "keyed"\n\n[providers.ref]\nadapter = "reference"\nmodel = "ref-v1"\n\n'
        '[providers.keyed]\nadapter = "pytestkit.keyed"\nmodel = "keyed-v1"\n'
    )
    listed = evalkit_pytest("--evalkit-set", "pytestkit.secret", "--evalkit-grader", "relevance", "--collect-only", "-q")
    assert listed.ret == pytest.ExitCode.OK, listed.stdout.str() + listed.stderr.str()
    assert KEYED_SECRET_TAIL not in listed.stdout.str() + listed.stderr.str()
    listed.stdout.fnmatch_lines(["evalkit-set:pytestkit.secret::key-[*][*][*]"])
    done = evalkit_pytest("--evalkit-set", "pytestkit.secret", "--evalkit-grader", "relevance", "-v", "-rA", "--junitxml", "out.xml")
    output = done.stdout.str() + done.stderr.str() + (pytester.path / "out.xml").read_text()
    assert KEYED_SECRET_TAIL not in output
    done.stdout.fnmatch_lines(["evalkit-set:pytestkit.secret::key-[*][*][*] *"])


def test_last_failed_alone_reruns_the_failures_of_the_sets_the_cache_names(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester
) -> None:
    """``pytest -p evalkit --lf`` with neither ``--evalkit-set`` nor a node id collected no set, so
    the last run's failures in one (``evalkit-set:SET::CASE`` in pytest's lastfailed cache) were
    not rerun: "no tests ran", exit 5. The sets the cache names are collected, and --lf picks."""
    first = evalkit_pytest("--evalkit-set", "pytestkit.gate")
    first.assert_outcomes(passed=3, failed=1)
    again = evalkit_pytest("--lf", "-v")
    again.assert_outcomes(failed=1, deselected=3)
    again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 1 failure*", "*evalkit-set:pytestkit.gate::regression-gate FAILED*"])
    # without --lf nothing is collected from the cache: the sets run only when asked for
    plain = evalkit_pytest()
    assert plain.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    # a set the cache remembers that is gone is passed over, as a deleted test file is
    (pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text(json.dumps({"evalkit-set:gone.set::x": True}))
    gone = evalkit_pytest("--lf")
    assert gone.ret == pytest.ExitCode.NO_TESTS_COLLECTED, gone.stdout.str() + gone.stderr.str()


def test_a_generator_no_test_ran_is_closed_once_at_the_end_of_the_session(
    evalkit_pytest: Callable[..., pytest.RunResult], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generator is bound when the set's tests are named; pytest_sessionfinish closes it when
    the set's run never began (``--collect-only``, every test of it deselected), once, and a
    generator failing to close there does not fail the session. A run closes its own, and the end
    of the session does not close it again. Nothing tested this."""
    from evalkit_raising_plugins import RaisingGenerator

    closed: list[object] = []

    def close(generator: object) -> None:
        closed.append(generator)
        raise RuntimeError("the connection pool is gone")

    monkeypatch.setattr(RaisingGenerator, "close", close)
    pytester.path.joinpath("evalkit.toml").write_text('[providers.raising]\nadapter = "raising.generator"\nmodel = "m"\n')
    chosen = ("--evalkit-set", "pytestkit.gate", "--evalkit-provider", "raising")
    for args, code in ((("--collect-only",), pytest.ExitCode.OK), (("-k", "no_such_case"), pytest.ExitCode.NO_TESTS_COLLECTED)):
        closed.clear()
        done = evalkit_pytest(*chosen, *args)
        assert done.ret == code, done.stdout.str() + done.stderr.str()
        assert len(closed) == 1 and isinstance(closed[0], RaisingGenerator), (args, closed)
    assert stored_runs(pytester.path) == 0
    closed.clear()
    ran = evalkit_pytest(*chosen)
    assert stored_runs(pytester.path) == 1, ran.stdout.str() + ran.stderr.str()
    assert len(closed) == 1  # by the run, not again at the end of the session
