"""`evalkit run` on a set an installed distribution ships as an :class:`evalkit.PromptStream`
(tests/data/evalkit-streamed-sets): the same results as the same prompts in a tuple, a bounded
number of passes over the stream, never all of its prompts alive at once; shards, resume,
``list`` and ``validate`` read it as they read any set."""

from __future__ import annotations

from pathlib import Path

import pytest

SIZE = 3000


@pytest.fixture
def streamed(plugin_dists, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment that installs the streamed sets, and the file their witness writes."""
    log = tmp_path / "witness.log"
    env = {
        "PYTHONPATH": plugin_dists("evalkit-streamed-sets"),
        "EVALKIT_STREAMED_PROMPTS": str(SIZE),
        "EVALKIT_STREAMED_LOG": str(log),
    }
    return env, log


def witnessed(log: Path) -> tuple[list[str], int]:
    """The passes the last process made over the streams, and the most prompts alive at once."""
    lines = log.read_text(encoding="utf-8").splitlines()
    log.unlink()
    passes = [line.removeprefix("pass ") for line in lines if line.startswith("pass ")]
    most = [int(line.removeprefix("most alive ")) for line in lines if line.startswith("most alive ")]
    return passes, most[-1]


def outcome(document: dict) -> list[tuple[str, bool, float]]:  # type: ignore[type-arg]
    return sorted((case["id"], case["passed"], case["score"]) for case in document["cases"])


@pytest.mark.parametrize("identifier", ["streamed.capitals", "streamed.uncounted"])
def test_a_streamed_set_runs_like_its_tuple_twin_in_two_passes_never_held(evalkit_cli, streamed, identifier) -> None:
    env, log = streamed
    tupled = evalkit_cli("run", "tupled.capitals", "--json", env=env)
    assert tupled.code == 0, tupled.stderr
    log.unlink(missing_ok=True)
    run = evalkit_cli("run", identifier, "--json", "--concurrency", "4", env=env)
    assert run.code == 0, run.stderr
    document, twin = run.json(), tupled.json()
    assert (document["case_count"], document["passed"]) == (SIZE, SIZE)
    assert outcome(document) == outcome(twin)
    passes, most_alive = witnessed(log)
    # checked, counted and fingerprinted in one pass, answered in another; the reference
    # generator (this run's generator) reads the references in a third
    assert passes == [identifier] * 3, passes
    assert most_alive < SIZE // 10, most_alive


def test_shards_and_resume_of_a_streamed_set_answer_every_case_once(evalkit_cli, streamed) -> None:
    env, log = streamed
    first = evalkit_cli(
        "run", "streamed.capitals", "--json", "--shard", "1/2", "--run-id", "nightly", "--database", "sqlite:///.evalkit/results.db", env=env
    )
    assert first.code == 0, first.stderr
    ours = {case["id"] for case in first.json()["cases"]}
    assert 0 < len(ours) < SIZE
    resumed = evalkit_cli("run", "streamed.capitals", "--json", "--resume", "nightly", env=env)
    assert resumed.code == 0, resumed.stderr
    document = resumed.json()
    assert (document["status"], document["case_count"], document["passed"]) == ("complete", SIZE, SIZE)
    assert {case["id"] for case in document["cases"]} == {f"c{n:05d}" for n in range(SIZE)}
    _, most_alive = witnessed(log)
    assert most_alive < SIZE // 10


def test_list_and_validate_read_a_stream_and_name_a_stray_prompt(evalkit_cli, streamed) -> None:
    env, log = streamed
    listed = evalkit_cli("list", "sets", "--json", env=env)
    assert listed.code == 0, listed.stderr
    counts = {row["identifier"]: row["count"] for row in listed.json()["sets"]}  # type: ignore[index]
    assert counts["streamed.capitals"] == counts["streamed.uncounted"] == SIZE
    assert witnessed(log)[0] == ["streamed.uncounted"]  # the declared count spares a pass
    broken = evalkit_cli("validate", "streamed.broken", env={**env, "EVALKIT_STREAMED_BROKEN": "1"})
    assert broken.code != 0
    assert "prompt #3: must be an evalkit.GoldenPrompt, got str 'What is the capital of Spain?'" in broken.stdout + broken.stderr
    good = evalkit_cli("validate", "streamed.capitals", env=env)
    assert good.code == 0, good.stdout + good.stderr


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_stream_that_yields_past_its_declared_count_is_refused_not_followed_for_ever(evalkit_cli, streamed, command) -> None:
    """A producer that never ends, declaring 5 prompts, was followed for ever (the ids seen kept
    growing); the check stops at the sixth prompt."""
    env, _ = streamed
    result = evalkit_cli(command, "streamed.endless", env={**env, "EVALKIT_STREAMED_ENDLESS": "1"}, timeout=60)
    assert result.code == 2, result.stderr
    assert 'set "streamed.endless": field prompts: the PromptStream declares 5 prompts but yields more' in result.stdout + result.stderr


@pytest.mark.parametrize("command", ["run", "validate", "list"])
def test_a_stream_that_never_ends_is_stopped_past_the_prompt_limit(evalkit_cli, streamed, command, monkeypatch) -> None:
    """A producer that never ends and declares no count kept `evalkit list`, `validate` and `run`
    busy for ever (list counted it, the others checked it, the ids seen growing). Every pass over
    a stream stops past MAX_PROMPTS (lowered here to 50), and the set is named."""
    import evalkit.prompts

    monkeypatch.setattr(evalkit.prompts, "MAX_PROMPTS", 50)
    env, _ = streamed
    env = {**env, "EVALKIT_STREAMED_PROMPTS": "20", "EVALKIT_STREAMED_UNBOUNDED": "1"}
    args = ("list", "sets", "--json") if command == "list" else (command, "streamed.unbounded")
    result = evalkit_cli(*args, env=env, timeout=60)
    assert result.code == 2, result.stderr
    problem = (
        'set "streamed.unbounded": field prompts: the PromptStream yields more than 50 prompts, the most evalkit '
        "takes in one set (a producer that never ends?)"
    )
    if command == "list":  # the other sets are still listed, the endless one with no count
        counts = {row["identifier"]: row["count"] for row in result.json()["sets"]}  # type: ignore[index]
        assert counts["streamed.unbounded"] is None
        assert counts["streamed.capitals"] == counts["streamed.uncounted"] == 20
        assert result.json()["problems"] == [problem]  # type: ignore[index]
    else:
        assert problem in result.stdout + result.stderr


def test_a_declared_count_past_the_prompt_limit_is_refused_before_a_prompt_is_made(evalkit_cli, streamed, monkeypatch) -> None:
    import evalkit.prompts

    monkeypatch.setattr(evalkit.prompts, "MAX_PROMPTS", 10)
    env, log = streamed
    env = {**env, "EVALKIT_STREAMED_PROMPTS": "20"}
    result = evalkit_cli("validate", "streamed.capitals", env=env)
    assert result.code == 2
    assert (
        'set "streamed.capitals": field prompts: the PromptStream declares 20 prompts, which is more than 10 prompts, '
        "the most evalkit takes in one set"
    ) in result.stdout + result.stderr
    assert "streamed.capitals" not in witnessed(log)[0]  # its producer was never called
    listed = evalkit_cli("list", "sets", "--json", env=env)
    assert listed.code == 2
    assert {row["identifier"]: row["count"] for row in listed.json()["sets"]}["streamed.capitals"] is None  # type: ignore[index]


def test_list_names_a_stream_whose_producer_fails_while_it_is_counted(evalkit_cli, streamed) -> None:
    """`evalkit list sets` counts a stream that declares no count by reading it: a producer that
    raised ended the whole listing with an internal error (a stalled one, with its TimeoutError)."""
    env, _ = streamed
    result = evalkit_cli("list", "sets", env={**env, "EVALKIT_STREAMED_FAILING": "1"})
    assert result.code == 2, result.stderr
    assert "internal error" not in result.stderr
    assert (
        'set "streamed.failing": field prompts: producing prompt #3 raised ConnectionError: the prompt database went away'
    ) in " ".join(result.stderr.split())
    listed = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    assert {"streamed.capitals", "streamed.failing"} <= listed


@pytest.mark.parametrize("command", ["list", "validate", "run"])
def test_a_stream_whose_count_is_no_number_is_named_not_an_internal_error(evalkit_cli, streamed, command) -> None:
    env, _ = streamed
    args = ("list", "sets") if command == "list" else (command, "streamed.badcount")
    result = evalkit_cli(*args, env={**env, "EVALKIT_STREAMED_BADCOUNT": "1"})
    assert result.code == 2, result.stderr
    assert "internal error" not in result.stderr
    assert (
        'set "streamed.badcount": field prompts: the PromptStream\'s count must be a whole number from 0 or None, got \'many\''
    ) in " ".join((result.stdout + result.stderr).split())


def test_the_check_stops_after_a_thousand_problems_and_says_so(evalkit_cli, streamed) -> None:
    """A set of 3,000 prompts, each with a blank text, printed 3,000 problems; a million such
    prompts were 120 MB on stderr. The check keeps the first 1,000 and says where it stopped."""
    env, _ = streamed
    result = evalkit_cli("validate", "streamed.blank", env={**env, "EVALKIT_STREAMED_BLANK": "1"})
    assert result.code == 2
    output = result.stdout + result.stderr
    assert output.count("field prompt must not be empty") == 1000
    assert 'prompt "c00999": field prompt must not be empty' in output
    assert 'set "streamed.blank": the check stopped before prompt #1001, after 1,000 problems: mend these first' in output
    # the line saying where the check stopped is no problem of its own: past it, the count is not known
    assert "evalkit: at least 1,000 problems, 1,000 of them shown; nothing was run" in output


def test_the_kit_checks_a_streamed_set_provider(plugin_dists, monkeypatch) -> None:
    from evalkit.testing import check_prompt_set_provider

    monkeypatch.syspath_prepend(plugin_dists("evalkit-streamed-sets"))
    monkeypatch.setenv("EVALKIT_STREAMED_PROMPTS", "200")
    from evalkit_streamed_sets import StreamedSets

    check_prompt_set_provider(StreamedSets)


@pytest.mark.parametrize(
    ("how", "where"),
    [
        ("first", 'prompt #1 differs (#1 is "moved-0" now, "c00000" when checked)'),
        ("last", "prompts #2,049 to #3,000 differ"),
        ("longer", f"it yielded {SIZE + 1:,} prompts this time, {SIZE:,} when checked"),
    ],
)
def test_a_stream_that_yields_other_prompts_when_answered_stops_the_run_uncompared(evalkit_cli, streamed, project, how, where) -> None:
    env, _ = streamed
    result = evalkit_cli("run", "streamed.shifting", "--json", env={**env, "EVALKIT_STREAMED_SHIFTING": how})
    assert result.code == 3, result.stderr
    assert result.json()["error"] == result.stderr.removeprefix("evalkit: error: ").rstrip("\n"), "--json's error object alone"
    assert result.stderr == (
        'evalkit: error: set "streamed.shifting" changed while it ran: its prompts are not the ones checked before the run '
        f"began ({where}); a PromptStream must yield the same prompts, in the same order, every time\n"
    )
    history = evalkit_cli("history", "streamed.shifting", "--json", env=env).json()
    (run,) = history["runs"]
    assert (run["status"], run["verdict"], run["accepted"]) == ("interrupted", None, None), run
    assert result.json()["runs_kept"] == [run["run_id"]]
    if how == "first":  # caught before the first prompt was answered
        assert run["answered"] == 0


def test_a_stream_whose_producer_fails_on_a_later_pass_is_named_not_a_traceback(evalkit_cli, streamed, project) -> None:
    env, _ = streamed
    env = {**env, "EVALKIT_STREAMED_SHIFTING": "raises", "EVALKIT_STREAMED_PROMPTS": "5"}
    # the reference generator reads the set again before the run: refused there, nothing stored
    before = evalkit_cli("run", "streamed.shifting", env=env)
    assert before.code == 2 and "Traceback" not in before.stderr, before.stderr
    assert before.stderr.startswith(
        "evalkit: error: provider instance \"reference\" could not take in the set, so nothing was run or stored: "
        "ConnectionError: the prompt database went away"
    ), before.stderr
    # a generator that does not read the set meets the failure while answering: the run stops there
    (project / "answers.jsonl").write_text("".join(f'{{"id": "c{n:05d}", "text": "Paris"}}\n' for n in range(5)))
    (project / "evalkit.toml").write_text('[providers.app]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "app"\n')
    during = evalkit_cli("run", "streamed.shifting", env=env)
    assert during.code == 3 and "Traceback" not in during.stderr, during.stderr
    assert "(producing prompt #3 raised ConnectionError: the prompt database went away)" in during.stderr
    (run,) = evalkit_cli("history", "streamed.shifting", "--json", env=env).json()["runs"]
    assert run["status"] == "interrupted"


def test_a_stream_whose_producer_stalls_is_interrupted_at_set_load_timeout_not_waited_for(evalkit_cli, streamed, project) -> None:
    env, _ = streamed
    env = {**env, "EVALKIT_STREAMED_PROMPTS": "5"}
    (project / "answers.jsonl").write_text("".join(f'{{"id": "c{n:05d}", "text": "Paris"}}\n' for n in range(5)))
    (project / "evalkit.toml").write_text(
        'set_load_timeout = 1\n[providers.app]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "app"\n'
    )
    # stalled on the check's pass: the set is refused, nothing is answered or stored
    checked = evalkit_cli("run", "streamed.shifting", env={**env, "EVALKIT_STREAMED_SHIFTING": "stalls-first"}, timeout=60)
    assert checked.code == 2 and "Traceback" not in checked.stderr, checked.stderr
    assert (
        'set "streamed.shifting": field prompts: producing prompt #3 raised TimeoutError: no prompt within 1 s '
        "(set_load_timeout); the producer was interrupted"
    ) in checked.stderr
    assert not (project / ".evalkit" / "results.db").exists()
    # stalled on the answering pass: the run stops there, marked interrupted, never compared
    during = evalkit_cli("run", "streamed.shifting", "--json", env={**env, "EVALKIT_STREAMED_SHIFTING": "stalls"}, timeout=60)
    assert during.code == 3 and "Traceback" not in during.stderr, during.stderr
    assert (
        "(producing prompt #3 raised TimeoutError: no prompt within 1 s (set_load_timeout); the producer was interrupted)"
    ) in during.stderr
    (run,) = evalkit_cli("history", "streamed.shifting", "--json", env=env).json()["runs"]
    assert (run["status"], run["verdict"]) == ("interrupted", None) and run["answered"] <= 2, run
    assert during.json() == {"error": during.stderr.removeprefix("evalkit: error: ").rstrip("\n"), "exit_code": 3, "runs_kept": [run["run_id"]]}


def test_plan_counts_a_stream_in_its_check_and_reads_it_no_more_to_count_it(evalkit_cli, streamed) -> None:
    """`evalkit plan` took the count of its plan by len() of the set it had looked up itself: a
    stream that declares no count was read once more, silently (a million prompts: seconds). The
    count is the estimate's, from the check's own pass."""
    env, log = streamed
    log.unlink(missing_ok=True)
    planned = evalkit_cli("plan", "streamed.uncounted", "--json", env=env)
    assert planned.code == 0, planned.stderr
    assert planned.json()["cases"] == SIZE and planned.json()["estimate"]["cases"] == SIZE
    passes, _ = witnessed(log)
    # checked and counted in one pass, estimated in one more: the reference generator is never
    # asked, so its bind_set no longer reads the references, and the estimate's two loops are one
    assert passes == ["streamed.uncounted"] * 2, passes


@pytest.mark.parametrize(
    ("how", "where"),
    [
        ("raises", "producing prompt #3 raised ConnectionError: the prompt database went away"),
        ("first", 'prompt #1 differs (#1 is "moved-0" now, "c00000" when checked)'),
    ],
)
def test_plan_holds_its_estimate_to_the_checked_stream(evalkit_cli, streamed, how, where) -> None:
    """The estimate's pass over a stream that fails or shifts after its check was a traceback (the
    reference generator's bind_set had caught it before); it is held to the check's pass."""
    env, _ = streamed
    result = evalkit_cli("plan", "streamed.shifting", env={**env, "EVALKIT_STREAMED_SHIFTING": how, "EVALKIT_STREAMED_PROMPTS": "5"})
    assert result.code == 3 and result.stdout == "" and "Traceback" not in result.stderr, result.stderr
    assert f'set "streamed.shifting" changed while it ran: its prompts are not the ones checked before the run began ({where})' in result.stderr
