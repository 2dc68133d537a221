"""The line that continues a run, printed later from the store (`history`, `show`, the viewer), is
the one the command printed as it stopped: a run keeps the options it was given that a continuing
line repeats (``resumed_options`` in its provenance), and both lines are built by one function
(`evalkit.run.placement.continuing_command`).

`evalkit run arith.basic --provider my-app --concurrency 3 --gate paired …` stopped with "continue
it with `evalkit run arith.basic --provider my-app --concurrency 3 --gate paired … --resume ID`";
killed instead, `show` and `history` said "`evalkit run arith.basic --provider my-app --resume
ID`": pasted, it answered 8 at a time under the configured gate. A retrieval run's lost its `--k`
(and the resume was refused: the run measured another k)."""

from __future__ import annotations

import shlex

import pytest

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

#: A report path with a space, quotes and a dollar: shell-quoted in each line, escaped in the page.
HOSTILE_REPORT = "junit:out dir/it's \"$HOME\".xml"


def _finish_fails(monkeypatch, answering: type) -> None:  # noqa: ANN001
    """The run's ``finish`` raises (an evalkit bug): the command prints its live continuing line."""

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in finishing the run")

    monkeypatch.setattr(answering, "finish", broken)


def _live_line(result) -> str:  # noqa: ANN001 - a CliResult
    """The line the command printed: "continue it with `…`"."""
    assert result.code == 3, result.stdout + result.stderr
    return result.stderr.split("continue it with `", 1)[1].split("`", 1)[0]


def _killed(project, run_id: str) -> None:  # noqa: ANN001
    """What a `kill -9` of the process answering the run on machine ci-7 leaves (a stale lease)."""
    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.storage import open_repository

    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repo.mark_status(run_id, "running")
        repo.acquire_lease(run_id, "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        L = repo.Lease
        L.update({L.heartbeat_at: then, L.acquired_at: then}).where(L.run == run_id).execute()
    finally:
        repo.close()


def _stored_lines(evalkit_cli, set_id: str, run_id: str) -> list[str]:  # noqa: ANN001
    """The continuing line `show RUN` and `history SET` print for the killed run."""
    lines = []
    for result in (evalkit_cli("show", run_id), evalkit_cli("history", set_id)):
        assert result.code == 0, result.stderr
        said = " ".join(result.stdout.split())  # a table may wrap it
        lines.append(said.split("continue it with `", 1)[1].split("`", 1)[0])
    return lines


def test_a_killed_prompt_runs_stored_line_is_the_line_its_command_printed(evalkit_cli, project, monkeypatch) -> None:
    from evalkit.run.answering.prompts import PromptAnswering

    answer_with(project, ARITH_GOOD)
    with monkeypatch.context() as patched:
        _finish_fails(patched, PromptAnswering)
        crashed = evalkit_cli(
            "run", "arith.basic", "--provider", "my-app", "--concurrency", "3", "--max-pass-rate-drop", "0.2",
            "--gate", "paired", "--alpha", "0.01", "--fail-on-regression", "--report", HOSTILE_REPORT,
            "--label", "not repeated", "--run-id", "p-1",
        )  # fmt: skip
    live = _live_line(crashed)
    words = shlex.split(live)
    assert words[words.index("--concurrency") + 1] == "3" and words[words.index("--gate") + 1] == "paired", live
    assert words[words.index("--report") + 1] == HOSTILE_REPORT, live
    _killed(project, "p-1")
    assert _stored_lines(evalkit_cli, "arith.basic", "p-1") == [live, live]

    resumed = evalkit_cli(*words[1:], "--json")  # pasted as printed, it continues the run
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


def test_a_killed_retrieval_runs_stored_line_keeps_its_k_and_concurrency(evalkit_cli, project, monkeypatch) -> None:
    from evalkit.run.answering.questions import QuestionAnswering

    with monkeypatch.context() as patched:
        _finish_fails(patched, QuestionAnswering)
        crashed = evalkit_cli(
            "retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", "--k", "5",
            "--concurrency", "2", "--max-mrr-drop", "0.3", "--run-id", "r-1",
        )  # fmt: skip
    live = _live_line(crashed)
    assert " --k 5 " in live and " --concurrency 2 " in live and " --max-mrr-drop 0.3 " in live, live
    _killed(project, "r-1")
    assert _stored_lines(evalkit_cli, "evalkit_stdlib.docs", "r-1") == [live, live]

    resumed = evalkit_cli(*shlex.split(live)[1:], "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


def test_a_run_stored_without_its_options_prints_the_line_it_printed_before(evalkit_cli, project) -> None:
    """A run stored before its options were kept (its provenance without ``resumed_options``), or
    whose kept options are not of their shape, is continued by the line made from its columns."""
    import json
    import sqlite3

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    ran = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--concurrency", "3", "--run-id", "old-1")
    assert ran.code == 3, ran.stderr
    _killed(project, "old-1")
    before = "evalkit run arith.basic --provider my-app --resume old-1"
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        (provenance,) = connection.execute("SELECT provenance FROM evalkit_run WHERE id = 'old-1'").fetchone()
        document = json.loads(provenance)
        assert document.pop("resumed_options") == [["--provider", "my-app"], ["--concurrency", "3"]]
        connection.execute("UPDATE evalkit_run SET provenance = ? WHERE id = 'old-1'", (json.dumps(document),))
    assert _stored_lines(evalkit_cli, "arith.basic", "old-1") == [before, before]
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        edited = json.dumps({**document, "resumed_options": [["3", "--concurrency"]]})
        connection.execute("UPDATE evalkit_run SET provenance = ? WHERE id = 'old-1'", (edited,))
    assert _stored_lines(evalkit_cli, "arith.basic", "old-1") == [before, before]


@pytest.mark.parametrize("hostile", ["junit:a\x1b[31mb.xml", "junit:<b>&'x'</b>.xml"])
def test_a_kept_option_with_hidden_or_markup_characters_is_quoted_in_the_line_and_escaped_in_the_page(
    evalkit_cli, project, monkeypatch, hostile: str
) -> None:
    """A kept option value is the user's text: written as ``$'…'`` when it holds a control
    character (never raw to the terminal), quoted for the shell, and escaped in the viewer's page."""
    from evalkit.config import load_config
    from evalkit.run.answering.prompts import PromptAnswering
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    from tests.view.pages import element_text

    answer_with(project, ARITH_GOOD)
    with monkeypatch.context() as patched:
        _finish_fails(patched, PromptAnswering)
        crashed = evalkit_cli(
            "run", "arith.basic", "--provider", "my-app", "--report", hostile, "--concurrency", "2", "--run-id", "h-1"
        )
    live = _live_line(crashed)
    _killed(project, "h-1")
    shown = evalkit_cli("show", "h-1")
    assert "\x1b" not in shown.stdout
    (stored, _) = _stored_lines(evalkit_cli, "arith.basic", "h-1")
    assert stored == live
    if "\x1b" in hostile:
        assert "--report $'junit:a\\x1b[31mb.xml'" in stored, stored
    else:
        assert shlex.split(stored)[shlex.split(stored).index("--report") + 1] == hostile
    app = create_app(
        f"sqlite:///{project / '.evalkit' / 'results.db'}", port=8765, config=load_config(project / "evalkit.toml")
    )
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = client.get("/run", params={"id": "h-1"})
    assert page.status_code == 200
    assert f"continue it with `{stored}`" in element_text(page.text, "live"), element_text(page.text, "live")
    assert "\x1b" not in page.text and "<b>&" not in page.text


def _without(words: list[str], option: str) -> list[str]:
    """``words`` without ``option`` and its value."""
    at = words.index(option)
    return words[:at] + words[at + 2 :]


def test_a_stopped_runs_line_is_the_interrupted_line_with_the_higher_limit(evalkit_cli, project, monkeypatch) -> None:
    """``evalkit run arith.basic --concurrency 2 --max-requests 1`` stopped at its limit said
    ``evalkit run arith.basic --resume ID --provider my-app --concurrency 2 --max-requests 2``, its
    place first, where the line of the same command interrupted ends with it: both are built by
    ``continuing_command`` now, and differ only by the limit (the higher one last)."""
    from evalkit.run.answering.prompts import PromptAnswering

    answer_with(project, ARITH_GOOD)
    given = ("run", "arith.basic", "--provider", "my-app", "--concurrency", "2", "--max-pass-rate-drop", "0.2")
    stopped = evalkit_cli(*given, "--max-requests", "1", "--run-id", "lim-1")
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    said = " ".join(stopped.stdout.split())
    limit_line = shlex.split(said.split("resume it with: ", 1)[1].split(" All ", 1)[0].split(" Case ", 1)[0])
    with monkeypatch.context() as patched:
        _finish_fails(patched, PromptAnswering)
        crashed = evalkit_cli(*given, "--max-requests", "1", "--run-id", "lim-1")
    interrupted = shlex.split(_live_line(crashed))
    assert interrupted[-2:] == ["--resume", "lim-1"], interrupted
    higher = limit_line[limit_line.index("--max-requests") + 1]
    assert limit_line == [*_without(interrupted, "--max-requests"), "--max-requests", higher], (limit_line, interrupted)
    assert int(higher) > 1


def test_the_stored_line_repeats_the_options_of_the_latest_process(evalkit_cli, project, monkeypatch) -> None:
    """``run … --concurrency 3 --run-id x`` interrupted, ``run … --resume x --concurrency 5`` killed:
    `show x` said ``--concurrency 3`` (the options of the first process were the only ones kept);
    the run keeps the options of the latest process that resumed it."""
    from evalkit.run.answering.prompts import PromptAnswering

    answer_with(project, ARITH_GOOD)
    with monkeypatch.context() as patched:
        _finish_fails(patched, PromptAnswering)
        first = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--concurrency", "3", "--run-id", "x-1")
        assert " --concurrency 3 " in _live_line(first)
        again = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--resume", "x-1", "--concurrency", "5")
    live = _live_line(again)
    assert " --concurrency 5 " in live, live
    _killed(project, "x-1")
    assert _stored_lines(evalkit_cli, "arith.basic", "x-1") == [live, live]


def test_a_retrieval_run_whose_deployment_chose_its_retriever_is_continued_by_the_line_it_printed(
    evalkit_cli, project, monkeypatch
) -> None:
    """``evalkit retrieval SET --deployment demo`` (the deployment names the retriever) killed: its
    line said ``evalkit retrieval SET --deployment demo … --resume ID``, and `show` named the
    retriever (``evalkit retrieval SET evalkit.lexical --deployment demo …``): the stored line is the
    live one, the retriever left to the deployment as it was typed."""
    from evalkit.run.answering.questions import QuestionAnswering

    with monkeypatch.context() as patched:
        _finish_fails(patched, QuestionAnswering)
        crashed = evalkit_cli(
            "retrieval", "evalkit_stdlib.docs", "--deployment", "demo", "--k", "5", "--run-id", "d-1"
        )
    live = _live_line(crashed)
    assert shlex.split(live)[:4] == ["evalkit", "retrieval", "evalkit_stdlib.docs", "--deployment"], live
    _killed(project, "d-1")
    assert _stored_lines(evalkit_cli, "evalkit_stdlib.docs", "d-1") == [live, live]


def test_a_killed_regrades_stored_line_is_the_line_its_command_printed(evalkit_cli, project, monkeypatch) -> None:
    """``evalkit regrade SRC --max-pass-rate-drop 0.2 --fail-on-regression`` stopped with "continue it
    with `evalkit regrade SRC --max-pass-rate-drop 0.2 --fail-on-regression`"; killed instead, `show`
    said ``evalkit regrade SRC --grader deterministic``: the re-grade keeps its options, and the
    stored line is built by the function that built the live one (``regrade_command``)."""
    import sqlite3

    from evalkit.run.answering.prompts import PromptAnswering

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--privacy", "full", "--run-id", "src-1").code == 0
    with monkeypatch.context() as patched:
        _finish_fails(patched, PromptAnswering)
        crashed = evalkit_cli("regrade", "src-1", "--max-pass-rate-drop", "0.2", "--fail-on-regression")
    live = _live_line(crashed)
    assert live == "evalkit regrade src-1 --max-pass-rate-drop 0.2 --fail-on-regression", live
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        (regraded,) = connection.execute("SELECT id FROM evalkit_run WHERE source_run_id = 'src-1'").fetchone()
    _killed(project, regraded)
    assert _stored_lines(evalkit_cli, "arith.basic", regraded) == [live, live]


@pytest.mark.parametrize(
    ("first", "then"),
    [((), ("evalkit.lexical",)), (("evalkit.lexical",), ())],
    ids=["deployment-then-typed", "typed-then-deployment"],
)
def test_the_stored_line_names_the_retriever_as_the_latest_process_was_typed(
    evalkit_cli, project, monkeypatch, first, then
) -> None:
    """``evalkit retrieval SET --deployment demo --run-id d`` interrupted, then ``evalkit retrieval
    SET evalkit.lexical --deployment demo --resume d`` killed: its line named the retriever, while
    `show d` and `history SET` left it to the deployment (the run kept what its first process was
    typed, ``retriever_chosen_by_deployment``), and the other way round; the stored line is the
    latest process's, as its options are."""
    from evalkit.run.answering.questions import QuestionAnswering

    with monkeypatch.context() as patched:
        _finish_fails(patched, QuestionAnswering)
        began = evalkit_cli("retrieval", "evalkit_stdlib.docs", *first, "--deployment", "demo", "--run-id", "d-2")
        assert ("evalkit.lexical" in shlex.split(_live_line(began))) == bool(first), _live_line(began)
        again = evalkit_cli("retrieval", "evalkit_stdlib.docs", *then, "--deployment", "demo", "--resume", "d-2")
    live = _live_line(again)
    assert shlex.split(live)[:3 + len(then)] == ["evalkit", "retrieval", "evalkit_stdlib.docs", *then], live
    _killed(project, "d-2")
    assert _stored_lines(evalkit_cli, "evalkit_stdlib.docs", "d-2") == [live, live]
