"""Plugins from outside: a third-party distribution (tests/data/evalkit-outsider-plugins) handing
evalkit what its authors had not seen, met through the CLI as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cli(evalkit_cli, plugin_dists):
    """``evalkit`` with the outsider's distribution installed."""
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins")}

    def run(*args: str, env_extra: dict[str, str] | None = None):
        return evalkit_cli(*args, env={**env, **(env_extra or {})})

    return run


def test_a_graders_texts_that_raise_when_printed_are_kept_as_plain_text(cli, project: Path) -> None:
    """A grading's reason, a check's reason, detail or name and the yardstick given as a ``str``
    subclass that raises in ``str()``, ``==`` and ``hash`` were stored as they came, then ended
    ``evalkit run`` in an internal error as it printed the case (exit 3 after storing)."""
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    args = ("run", "outsider.graded", "--grader", "outsider.treacherous_text")
    table = cli(*args)
    assert table.code == 0, table.stderr
    assert "internal error" not in table.stderr and "treacherous" not in table.stderr
    assert "grading (the grader gave up)" in table.stdout and "c (no time)" in table.stdout
    document = cli(*args, "--json")
    assert document.code == 0, document.stderr
    cases = {case["id"]: case for case in document.json()["cases"]}
    assert cases["grading-error"]["checks"] == [{"name": "grading", "passed": False, "error": "the grader gave up", "detail": None}]
    assert cases["check-error"]["checks"] == [{"name": "c", "passed": False, "error": "no time", "detail": None}]
    assert cases["check-detail"]["checks"] == [{"name": "c", "passed": False, "error": None, "detail": "too long"}]
    assert cases["check-name"]["checks"] == [{"name": "named", "passed": False, "error": None, "detail": None}]
    assert (cases["yardstick"]["passed"], cases["yardstick"]["yardstick"]) == (True, "outsider:v1")
    shown = cli("show", document.json()["run_id"])
    assert shown.code == 0 and "internal error" not in shown.stderr, shown.stderr


@pytest.mark.parametrize(
    ("args", "named", "lacking"),
    [
        (("--provider", "outsider.shapeless"), 'generator "outsider.shapeless"', "has none of generate(request), async agenerate(request)"),
        (("--grader", "outsider.shapeless"), 'grader "outsider.shapeless"', "has neither grade(prompt, answer) nor async agrade"),
        (("--database", "outsiderstore:///tmp/never-written.json"), 'repository "outsiderstore"', "lacks begin_run, record_cases"),
    ],
)
def test_a_factory_that_builds_no_component_of_its_kind_is_refused_before_the_run(cli, project: Path, args, named, lacking) -> None:
    """A generator or grader factory that built an object without ``generate``/``grade`` had every
    case errored or failed with ``AttributeError`` (exit 3, the run stored); a repository without
    ``begin_run`` ended ``evalkit run`` in an internal error with a traceback. Each is now the
    plugin's refusal where it is created, as a retriever's was: exit 2, nothing stored."""
    (project / "evalkit.toml").write_text('privacy = "full"\n')
    result = cli("run", "outsider.graded", *args)
    assert result.code == 2, (result.code, result.stderr)
    assert f"evalkit: error: {named} (evalkit-outsider-plugins 0.1.0): its factory returned 'Shapeless', which {lacking}" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "Evaluation:" not in result.stdout and not (project / ".evalkit").exists()


@pytest.mark.parametrize("command", [("show", "r-1"), ("compare", "r-1", "r-2"), ("report", "r-1")])
def test_a_third_party_store_that_fails_outside_a_run_is_said_as_the_stores_failure(cli, project: Path, command) -> None:
    """A third-party store's own ``OSError`` (its disk gone) met while ``show``, ``compare`` or
    ``report`` read it was said as evalkit's internal error with a traceback (exit 2); in a run it
    was already the store's failure. Now it is the same outside a run: exit 3, naming the store's
    class and what it raised, no traceback."""
    result = cli(*command, "--database", "outsiderdisk:///srv/store")
    assert result.code == 3, (result.code, result.stderr)
    said = "evalkit: error: the results store failed: evalkit_outsider_plugins.UnreadableStore raised OSError: [Errno 5] Input/output error: 'outsiderdisk:///srv/store'"
    assert said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_a_third_party_store_failing_as_a_run_reads_it_before_beginning_is_said_as_the_stores_failure(cli, project: Path) -> None:
    """The store ``evalkit run`` opens is the run's (evalkit.evaluate_set), not the command's: its
    own ``OSError`` as the chosen ``--baseline`` is read, before the run begins, is told as its
    failure by the code that opened it, with no process-wide list of opened stores to look in."""
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    result = cli("run", "outsider.graded", "--baseline", "r-1", "--database", "outsiderdisk:///srv/store")
    assert result.code == 3, (result.code, result.stderr)
    said = "evalkit: error: the results store failed: evalkit_outsider_plugins.UnreadableStore raised OSError: [Errno 5] Input/output error: 'outsiderdisk:///srv/store'"
    assert said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("lost", ["cursor", "generator"])
@pytest.mark.parametrize("command", [("show", "r-1", "--json"), ("show", "r-1", "--show-all")])
def test_a_third_party_store_whose_case_iterator_fails_while_read_is_said_as_the_stores_failure(
    evalkit_cli, plugin_dists, project: Path, lost, command
) -> None:
    """A store's ``iter_cases`` returned an iterator (its client's cursor) that yielded a case, then
    raised its lost connection: raised after the method had returned, it passed through no frame
    of the store, and was said as evalkit's internal error with a traceback (exit 2, "no run was
    stored"). It is the store's failure, as what its methods raise is: exit 3, naming the store's
    class and what it raised. A generator of the store's own was told so already."""
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins")}
    store = ("--database", f"outsiderpaged://{project / 'store.db'}")
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    ran = evalkit_cli("run", "outsider.graded", "--provider", "self", "--run-id", "r-1", *store, env=env)
    assert ran.code == 0, ran.stderr
    result = evalkit_cli(*command, *store, env={**env, "OUTSIDER_PAGED_LOST": lost})
    assert result.code == 3, (result.code, result.stderr)
    said = (
        "evalkit: error: the results store failed: evalkit_outsider_plugins.PagingStore raised ConnectionResetError: "
        "[Errno 104] Connection reset by peer: 'outsiderpaged'"
    )
    assert said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("scheme", ["outsidermisshapen", "outsiderslotted"])
def test_a_third_party_store_that_gives_back_no_run_is_refused_naming_it(cli, project: Path, scheme) -> None:
    """A store whose ``begin_run`` returned ``None`` ended ``evalkit run`` in an internal error
    (``TypeError: exceptions must derive from BaseException``), one whose ``get_run`` returned a
    dict ended ``evalkit show`` in one (``'dict' object has no attribute …``). Each is the store's
    failure, naming the plugin, the method and what it returned; no traceback. A store class with
    ``__slots__`` (``outsiderslotted``) was left unchecked, its instance's methods could not be
    replaced: it is held to the same checks now that evalkit talks to it through an adapter."""
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    store = ("--database", f"{scheme}:///srv/store")
    plugin = f'repository "{scheme}" (evalkit-outsider-plugins 0.1.0)'
    ran = cli("run", "outsider.graded", "--grader", "outsider.treacherous_text", *store)
    assert ran.code == 2, (ran.code, ran.stderr)
    assert f"{plugin}: begin_run() returned NoneType None, not an evalkit Run — nothing was stored" in ran.stderr, ran.stderr
    shown = cli("show", "r-1", *store)
    assert shown.code == 2, (shown.code, shown.stderr)
    assert f"evalkit: error: {plugin}: get_run() returned dict {{'id': 'r-1'}}, not an evalkit Run or None" in shown.stderr
    assert "Traceback" not in ran.stderr + shown.stderr and "internal error" not in ran.stderr + shown.stderr


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (("run", "outsider.graded", "--provider", "outsider.forging"), {}, 'generator "outsider.forging" (evalkit-outsider-plugins 0.1.0) raised RuntimeError when created: '),
        (("run", "outsider.nope"), {"OUTSIDER_FORGE": "1"}, 'golden prompt set provider "outsider.forging" (evalkit-outsider-plugins 0.1.0): RuntimeError in golden_prompt_sets(): '),
    ],
)
def test_a_line_break_in_what_a_plugin_raised_never_forges_a_line_of_evalkit_s(evalkit_cli, plugin_dists, project: Path, args, env, said) -> None:
    """An error message keeps its own line breaks: a plugin's exception quoted in it — raised when
    the plugin was created, or by a set provider named under an unknown set — printed its
    ``\\nevalkit: ok, every case passed`` as a line of its own (and its escape sequence raw). It
    is written with escapes, as a quoted word is; a case's stored error keeps its text."""
    result = evalkit_cli(*args, env={"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), **env})
    assert result.code == 2, (result.code, result.stderr)
    assert said + "the app is down\\x0aevalkit: ok, every case passed\\x1b[32m" in result.stderr, result.stderr
    assert "\nevalkit: ok" not in result.stderr and "\x1b" not in result.stderr

def test_a_generator_declaring_a_concurrency_evalkit_cannot_use_is_refused_naming_it(cli, project: Path) -> None:
    """``concurrency = "4"`` on a generator was passed over, unsaid, for 8 prompts in flight,
    where ``check_generator`` refuses it: now the run refuses it,
    naming the plugin and the value, before anything is called or stored; a concurrency configured
    for the instance is used instead of it."""
    (project / "evalkit.toml").write_text('[providers.app]\nadapter = "outsider.quoted_concurrency"\n')
    refused = cli("run", "outsider.graded", "--provider", "app")
    assert refused.code == 2, (refused.code, refused.stderr)
    said = 'generator "outsider.quoted_concurrency" (evalkit-outsider-plugins 0.1.0) declares concurrency str \'4\', which must be a whole number of at least 1'
    assert said in refused.stderr and "Evaluation:" not in refused.stdout, refused.stderr
    assert not (project / ".evalkit").exists()
    (project / "evalkit.toml").write_text('[providers.app]\nadapter = "outsider.quoted_concurrency"\nconcurrency = 2\n')
    ran = cli("run", "outsider.graded", "--provider", "app")
    assert ran.code == 0 and "Concurrency: 2 requests in flight" in ran.stdout, ran.stderr


@pytest.mark.parametrize(
    ("note", "shown"),
    [("newline", "str 'served by the replay\\nevalkit: ok'"), ("number", "int 5"), ("huge", "str 'nnnnnnnn")],
)
def test_a_generator_declaring_an_echoed_model_note_a_run_cannot_show_is_refused_naming_it(cli, project: Path, note, shown) -> None:
    """An ``echoed_model_note`` holding a line break, ``5`` or 100 KB was passed over, unsaid, for
    the default note; now the run refuses it as it refuses a ``concurrency`` it cannot use: exit 2,
    naming the plugin and the value, before anything is called or stored."""
    (project / "evalkit.toml").write_text(f'[providers.app]\nadapter = "outsider.odd_note"\nmodel = "m"\nnote = "{note}"\n')
    refused = cli("run", "outsider.graded", "--provider", "app")
    assert refused.code == 2, (refused.code, refused.stderr)
    said = f'generator "outsider.odd_note" (evalkit-outsider-plugins 0.1.0) declares echoed_model_note {shown}'
    assert said in refused.stderr and "which must be text of 1 to 300 printable characters" in refused.stderr, refused.stderr
    assert "\nevalkit: ok" not in refused.stderr and "Evaluation:" not in refused.stdout
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize(
    ("shape", "said"),
    [
        ("list", "secret_values() returned a value of type int among its values, where each must be text (str)"),
        ("number", "secret_values() returned int, not an iterable of texts (a tuple of str)"),
        ("text", "secret_values() returned one str, not an iterable of texts (a tuple of str)"),
    ],
)
def test_a_generator_whose_secret_values_are_of_the_wrong_shape_is_refused_naming_it(cli, project: Path, shape, said) -> None:
    """``secret_values()`` returning ``[5]`` was accepted as no secrets, ``5`` refused as if it had
    raised, and a key given as one ``str`` read letter by letter (none long enough to hide, the key
    kept in sight): the privacy boundary's wrong shape is now the plugin's failure, exit 2, naming
    it and the type it returned (never the value: it may be the key), nothing called or stored."""
    (project / "evalkit.toml").write_text(f'[providers.app]\nadapter = "outsider.odd_secrets"\nmodel = "m"\nsecrets = "{shape}"\n')
    refused = cli("run", "outsider.graded", "--provider", "app")
    assert refused.code == 2, (refused.code, refused.stderr)
    assert 'generator "outsider.odd_secrets" (evalkit-outsider-plugins 0.1.0)' in refused.stderr, refused.stderr
    assert said in refused.stderr and "sk-outsider" not in refused.stderr, refused.stderr
    assert not (project / ".evalkit").exists()


def test_a_failure_is_a_third_party_stores_only_when_raised_through_that_store(monkeypatch, plugin_dists) -> None:
    """Which error is a third-party store's failure was decided by a process-wide list of store
    classes opened and the package they came from: in a long-lived process (a library caller, the
    pytest plugin) another plugin of that package failing later was said as the store's failure.
    It is the failure of the store object whose methods it was raised through, of the stores the
    caller names (no list of the stores a process opened is kept), with two stores open in one
    process."""
    import sys

    from evalkit import registry, storage

    monkeypatch.syspath_prepend(plugin_dists("evalkit-outsider-plugins"))
    registry.scan(refresh=True)  # an earlier test's scan did not see it
    try:
        first, second = storage.open_repository("outsiderdisk:///first"), storage.open_repository("outsiderdisk:///second")
        with pytest.raises(OSError) as through_second:
            second.get_run("r")
        failure = storage.plugin_store_failure(through_second.value, (first, second))
        assert failure is not None and str(failure).startswith("evalkit_outsider_plugins.UnreadableStore raised OSError"), failure
        from evalkit_outsider_plugins import ForgingGenerator

        with pytest.raises(RuntimeError) as elsewhere:  # the same package's generator, failing after the stores were opened
            ForgingGenerator()
        assert storage.plugin_store_failure(elsewhere.value, (first, second)) is None
        assert storage.plugin_store_failure(through_second.value, (second,)) is not None
        assert storage.plugin_store_failure(through_second.value, (first,)) is None  # the other store did not fail
    finally:
        sys.modules.pop("evalkit_outsider_plugins", None)
        monkeypatch.undo()
        registry.scan(refresh=True)


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        ("dict", "recent_runs() returned, as its item 0, dict {}, not an evalkit Run"),
        ("typed", "recent_runs() returned, as its item 0, a Run whose started_at is str 'yesterday', not a time from 1970 to the year 9999"),
        ("cases", "recent_runs() returned, as its item 0, a Run whose cases[0] is dict {'case_id': 'c'}, not an evalkit CaseResult"),
    ],
)
def test_a_third_party_store_whose_run_listing_holds_no_run_is_refused_naming_it(evalkit_cli, plugin_dists, project: Path, listing, said) -> None:
    """A store whose ``recent_runs`` returned ``[{}]``, a ``Run`` whose ``started_at`` is text or
    whose case is a dict ended ``evalkit history`` in an internal error (an evalkit bug, with a
    traceback): only ``begin_run``, ``finish_run`` and ``get_run`` were checked, and only for being
    a ``Run``. Every method that gives back runs or cases is now checked field by field against
    what ``Run`` declares, the store's failure naming the plugin, the method and the value."""
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), "OUTSIDER_RECENT": listing}
    result = evalkit_cli("history", "s", "--database", "outsiderhistory:///srv/store", env=env)
    assert result.code == 2, (result.code, result.stderr)
    assert f'evalkit: error: repository "outsiderhistory" (evalkit-outsider-plugins 0.1.0): {said}' in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize(
    ("outcomes", "said"),
    [
        ("dict", "case_history() returned, as its item 0, dict {}, not an evalkit RunOutcomes"),
        ("none", "case_history() returned NoneType None, not a list of evalkit RunOutcomess"),
        ("text", "case_history() returned, as its item 0, a RunOutcomes whose outcomes is dict {7: CaseOutcome(case_id='c', passed=True, "),
        ("typed", "case_history() returned, as its item 0, a RunOutcomes whose outcomes['c'].passed is str 'yes', not true or false"),
    ],
)
def test_a_third_party_store_whose_case_history_holds_no_outcomes_is_refused_naming_it(
    evalkit_cli, plugin_dists, project: Path, outcomes, said
) -> None:
    """``evalkit flaky`` reads a store's ``case_history``, which was not checked as ``recent_runs``
    is: ``[{}]`` ended it in an internal error (an evalkit bug), a case id that is no text too. It
    is checked at the same boundary, the store's failure naming the plugin, exit 2."""
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), "OUTSIDER_CASE_HISTORY": outcomes}
    result = evalkit_cli("flaky", "s", "--database", "outsidercasehistory:///srv/store", env=env)
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    assert f'evalkit: error: repository "outsidercasehistory" (evalkit-outsider-plugins 0.1.0): {said}' in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    flips = evalkit_cli("flaky", "s", "--database", "outsidercasehistory:///srv/store", env={**env, "OUTSIDER_CASE_HISTORY": "ok"})
    assert flips.code == 0 and "1 flaky case of 1" in flips.stdout, flips.stderr
    assert "c\\x1b[2J\\x0aevalkit: ok" in flips.stdout and "\x1b" not in flips.stdout, flips.stdout


def test_a_third_party_store_s_hostile_run_id_is_listed_escaped(evalkit_cli, plugin_dists, project: Path) -> None:
    """A run id holding an escape sequence and a line break is a run id of the store's: listed, with
    the escapes written out (never a cleared screen or a forged line)."""
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), "OUTSIDER_RECENT": "hostile"}
    result = evalkit_cli("history", "s", "--database", "outsiderhistory:///srv/store", env=env)
    assert result.code == 0, result.stderr
    assert "r\\x1b[2J\\x0aevalkit: ok" in result.stdout and "\x1b" not in result.stdout


@pytest.mark.parametrize("grader", ["outsider.decimal_score", "outsider.fraction_score"])
def test_a_grader_scoring_with_exact_numbers_is_taken_at_their_worth(cli, project: Path, grader) -> None:
    """A grader whose score is a ``decimal.Decimal`` or a ``fractions.Fraction`` (exact weights
    summed) had every grading refused — ``score must be a finite number in 0..1, got
    Decimal('0.75')`` — and every case failed. Each is a real number: it is kept as the float it is
    worth, and the cases pass with that score."""
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    result = cli("run", "outsider.graded", "--grader", grader, "--json")
    assert result.code == 0, result.stderr
    cases = result.json()["cases"]
    assert cases and all(case["passed"] and case["score"] == 0.75 for case in cases), cases[0]
    assert "cannot use" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ("short", "tuple (None, (), None), not a CaseUsage or a tuple of 4 to 6 values"),
        ("long", "tuple (None, (), None, False, 1, 1, 'extra'), not a CaseUsage or a tuple of 4 to 6 values"),
        ("dict", "dict {'usage': None}, not a CaseUsage or a tuple of 4 to 6 values"),
        ("text_count", "requests '3', not a whole number from 0 below 2**63"),
        ("bool_count", "requests_sent True, not a whole number from 0 below 2**63"),
        ("negative_count", "requests -1, not a whole number from 0 below 2**63"),
        ("huge_count", "requests_sent 1000000000000000000000000000000, not a whole number from 0 below 2**63"),
        ("nan_tokens", "usage.input_tokens nan, not a whole number from 0 below 2**63"),
        ("negative_tokens", "usage.input_tokens -5, not a whole number from 0 below 2**63"),
        ("huge_tokens", "usage.input_tokens of about 1e40, not a whole number from 0 below 2**63"),
        ("usage_dict", "usage is dict {'prompt_tokens': 3}, not an evalkit Usage"),
        ("judge_usage", "judge_usage[0] is str 'x\\x1b[2J\\nevalkit: ok', not an evalkit Usage"),
        ("errored_text", "errored is str 'no', not true or false"),
        ("source", "answer_source is int 7, not text or None"),
    ],
)
def test_a_third_party_store_whose_case_usage_rows_evalkit_cannot_sum_is_said_as_the_stores_failure(
    cli, project: Path, rows, said
) -> None:
    """A store's ``case_usage`` (``RunSpending``: what a run's spend and its limits are summed from)
    was read unchecked: a row of 3 or 7 values, a count that is text or a ``Usage`` that is a dict
    ended ``evalkit run`` in an internal error (exit 3, "an evalkit bug", a traceback); a negative,
    huge or NaN count, a bool, were summed into the run's spend. Each row is checked where the
    store's values enter evalkit (the adapter, ``PluginStore``): the store's failure, naming the
    plugin, the method and the value (escapes written out), exit 3 as a store failing mid-run —
    the cases kept, the run marked interrupted with no spend written, and continued once the store
    gives rows evalkit can sum."""
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    store = ("--database", f"outsiderspending://{project / 'store.db'}")
    ran = cli("run", "outsider.graded", "--provider", "self", "--run-id", "r-1", *store, env_extra={"OUTSIDER_USAGE": rows})
    assert ran.code == 3, (ran.code, ran.stderr)
    plugin = 'repository "outsiderspending" (evalkit-outsider-plugins 0.1.0)'
    assert f"evalkit: error: the results store failed during run r-1: {plugin}: case_usage() gave, as its row 1, {said} — " in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr and "\x1b" not in ran.stderr
    shown = cli("show", "r-1", "--json", *store).json()
    assert (shown["status"], shown["answered"], shown["spend"]) == ("interrupted", 5, None)
    resumed = cli("run", "outsider.graded", "--provider", "self", "--resume", "r-1", *store)
    assert resumed.code == 0 and "Status:     complete" in resumed.stdout, resumed.stdout + resumed.stderr
