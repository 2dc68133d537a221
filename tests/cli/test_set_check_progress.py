"""The check of a set before anything is called — `evalkit run`'s pass that checks, counts and
fingerprints it, `evalkit plan`'s and `evalkit regrade`'s, and `evalkit validate`'s — and `evalkit
list sets`' count of a stream that declares none show how far they have come on a terminal: a set
of a million streamed prompts took seconds to check or count with nothing on screen, and looked hung.

In this process, with standard output and error taken for a terminal (the ``cli`` fixture's
``terminal=True``). The check reports every 10 prompts here and shows itself from its first
report (:func:`quick_check`), so a few hundred prompts stand for a million.
"""

from __future__ import annotations

import json
import re

import pytest

SIZE = 300


@pytest.fixture
def quick_check(monkeypatch) -> None:  # noqa: ANN001
    """The check reports every 10 prompts, and is shown from its first report on."""
    import evalkit.cli.render
    import evalkit.validation

    monkeypatch.setattr(evalkit.validation, "CHECK_PROGRESS_EVERY", 10)
    monkeypatch.setattr(evalkit.cli.render, "CHECK_SHOWN_AFTER_S", 0.0)


@pytest.fixture
def streamed(plugin_dists) -> dict[str, str]:  # noqa: ANN001
    """The environment that installs tests/data/evalkit-streamed-sets with ``SIZE`` prompts a set."""
    return {"PYTHONPATH": plugin_dists("evalkit-streamed-sets"), "EVALKIT_STREAMED_PROMPTS": str(SIZE), "TERM": "xterm"}


def drawn(text: str) -> str:
    """What a terminal showed at some moment, control sequences taken out (rich redraws its bar
    in place: every frame is kept, one after another)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def drawn_on_terminal(cli, streamed, *args: str) -> tuple[object, str]:  # noqa: ANN001
    """``evalkit ARGS`` run on a (forced) terminal, which must succeed: the result and what its
    stderr drew (:func:`drawn`)."""
    result = cli(*args, env=streamed, terminal=True)
    assert result.code == 0, result.stderr
    return result, drawn(result.stderr)


@pytest.mark.usefixtures("quick_check")
def test_a_run_on_a_terminal_shows_the_check_of_a_stream_that_declares_no_count(cli, streamed) -> None:  # noqa: ANN001
    result, shown = drawn_on_terminal(cli, streamed, "run", "streamed.uncounted")
    assert "checking set streamed.uncounted" in shown, shown
    # no total to reach: the count so far, up to the last prompt (rich draws the last state as it stops)
    assert f"{SIZE} prompts…" in shown, shown
    assert "checking set" not in result.stdout
    assert f"Pass rate:  100.0% ({SIZE}/{SIZE})" in drawn(result.stdout)


@pytest.mark.usefixtures("quick_check")
def test_validate_on_a_terminal_shows_a_bar_of_the_count_a_stream_declares(cli, streamed) -> None:  # noqa: ANN001
    result, shown = drawn_on_terminal(cli, streamed, "validate", "streamed.capitals")
    assert "checking set streamed.capitals" in shown, shown
    assert re.search(rf"\b\d+/{SIZE} prompts", shown), shown
    assert f"{SIZE}/{SIZE} prompts" in shown, shown
    assert result.stdout.splitlines() == [f"ok  set streamed.capitals ({SIZE} prompts) from \"streamed\" (evalkit-streamed-sets 0.1.0)"]


@pytest.mark.usefixtures("quick_check")
def test_list_sets_on_a_terminal_shows_the_count_of_a_stream_that_declares_none(cli, streamed) -> None:  # noqa: ANN001
    """`evalkit list sets` reads such a stream to count it (a million prompts: seconds); the sets
    counted without a pass (a declared count, a tuple) show nothing."""
    result, shown = drawn_on_terminal(cli, streamed, "list", "sets")
    assert "counting set streamed.uncounted" in shown, shown
    assert f"{SIZE} prompts…" in shown, shown
    assert "counting set streamed.capitals" not in shown and "counting set tupled.capitals" not in shown, shown
    assert "counting set" not in result.stdout
    assert re.search(rf"streamed\.uncounted\s.*\s{SIZE}\s", drawn(result.stdout)), result.stdout


@pytest.mark.usefixtures("quick_check")
def test_plan_on_a_terminal_shows_the_check_of_the_set(cli, streamed) -> None:  # noqa: ANN001
    result, shown = drawn_on_terminal(cli, streamed, "plan", "streamed.uncounted")
    assert "checking set streamed.uncounted" in shown and f"{SIZE} prompts…" in shown, shown
    # then the estimate's own pass, of the count the check found
    assert "estimating set streamed.uncounted" in shown and f"{SIZE}/{SIZE} prompts" in shown, shown
    assert shown.index("checking set") < shown.index("estimating set"), shown
    assert "checking set" not in result.stdout and "estimating set" not in result.stdout
    assert f"streamed.uncounted ({SIZE} cases)" in drawn(result.stdout)


def stored_run(cli, streamed) -> str:  # noqa: ANN001
    """The id of a run of streamed.uncounted stored with its answers (a re-grade needs them)."""
    source = cli("run", "streamed.uncounted", "--privacy", "full", "--json", env=streamed)
    assert source.code == 0, source.stderr
    return source.json()["run_id"]


@pytest.mark.usefixtures("quick_check")
def test_regrade_on_a_terminal_shows_the_check_of_the_set(cli, streamed) -> None:  # noqa: ANN001
    result, shown = drawn_on_terminal(cli, streamed, "regrade", stored_run(cli, streamed))
    assert "checking set streamed.uncounted" in shown and f"{SIZE} prompts…" in shown, shown
    assert "checking set" not in result.stdout
    assert "Re-grading the stored answers of run" in drawn(result.stdout)


def test_regrade_on_a_terminal_shows_each_case_graded_as_run_shows_each_answered(cli, streamed) -> None:  # noqa: ANN001
    """`evalkit regrade` graded 100,000 cases in ~12 s with nothing on screen after the check: it
    shows the run's own bar (the set, cases graded of the total, their rate), gone when it ends."""
    result, shown = drawn_on_terminal(cli, streamed, "regrade", stored_run(cli, streamed))
    assert re.search(rf"streamed\.uncounted\s.*\b{SIZE}/{SIZE} [\d,]+ cases/s", shown), shown
    assert "cases/s" not in result.stdout
    assert "Re-grading the stored answers of run" in drawn(result.stdout)


@pytest.mark.usefixtures("quick_check")
@pytest.mark.parametrize(
    ("args", "terminal"),
    [
        (("run", "streamed.uncounted", "--json"), True),
        (("validate", "streamed.capitals", "--json"), True),
        (("list", "sets", "--json"), True),
        (("plan", "streamed.uncounted", "--json"), True),
        (("regrade", "RUN", "--json"), True),
        (("run", "streamed.uncounted"), False),
        (("validate", "streamed.capitals"), False),
        (("list", "sets"), False),
        (("plan", "streamed.uncounted"), False),
        (("regrade", "RUN"), False),
    ],
    ids=[
        "run-json", "validate-json", "list-json", "plan-json", "regrade-json",
        "run-piped", "validate-piped", "list-piped", "plan-piped", "regrade-piped",
    ],
)  # fmt: skip
def test_nothing_is_added_with_json_or_off_a_terminal(cli, streamed, args, terminal) -> None:  # noqa: ANN001
    if "RUN" in args:
        args = tuple(stored_run(cli, streamed) if arg == "RUN" else arg for arg in args)
    result = cli(*args, env=streamed, terminal=terminal)
    assert result.code == 0, result.stderr
    assert "checking set" not in result.stdout + result.stderr
    assert "counting set" not in result.stdout + result.stderr
    assert "estimating set" not in result.stdout + result.stderr
    assert "cases/s" not in result.stdout + result.stderr  # nor a run's or a re-grade's bar of its cases
    assert "\x1b[" not in result.stdout
    if not terminal:
        assert "\x1b[" not in result.stderr
    if "--json" in args:
        json.loads(result.stdout)  # one document, nothing before or after it


def test_a_check_that_ends_before_its_time_to_show_draws_nothing(cli, streamed, monkeypatch) -> None:  # noqa: ANN001
    """A check shows itself only once it has taken a while (a second; an hour here): the sets of a
    few thousand prompts most projects have check in a blink, and draw nothing, as before."""
    import evalkit.cli.render
    import evalkit.validation

    monkeypatch.setattr(evalkit.validation, "CHECK_PROGRESS_EVERY", 10)
    monkeypatch.setattr(evalkit.cli.render, "CHECK_SHOWN_AFTER_S", 3600.0)
    result = cli("validate", "streamed.capitals", env=streamed, terminal=True)
    assert result.code == 0, result.stderr
    assert "checking set" not in drawn(result.stdout + result.stderr)
    assert result.stderr == ""


@pytest.mark.usefixtures("quick_check")
def test_an_invalid_set_shows_its_check_then_its_problems_alone(cli, streamed) -> None:  # noqa: ANN001
    """The bar is gone when the problems are printed (rich erases it): each problem is a line of its own."""
    result = cli("validate", "streamed.blank", env={**streamed, "EVALKIT_STREAMED_BLANK": "1"}, terminal=True)
    assert result.code == 2
    assert "checking set streamed.blank" in drawn(result.stderr)
    problems = [line for line in drawn(result.stderr).splitlines() if "field prompt must not be empty" in line]
    assert len(problems) == SIZE and all(line.startswith("streamed.blank: set ") for line in problems), problems[:3]


def test_plan_looks_the_set_up_once(cli, streamed, monkeypatch) -> None:  # noqa: ANN001
    """`evalkit plan` looked its set up, then had the estimate look it up again: every set provider
    ran twice (this distribution builds its tuple twin of a million prompts each time: ~12 s)."""
    import evalkit.catalog

    loads: list[object] = []
    real = evalkit.catalog.load_catalog

    def counted(*args: object, **kwargs: object) -> object:
        loads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(evalkit.catalog, "load_catalog", counted)
    result = cli("plan", "streamed.uncounted", "--json", env=streamed)
    assert result.code == 0, result.stderr
    assert result.json()["estimate"]["cases"] == SIZE
    assert len(loads) == 1, loads
