"""The requests a run made, counted as the server counts them: a prompt answered ``--repeats N``
times is N requests, a scripted conversation one request a model turn. The run's summary, its
``--json`` spend, ``show`` and ``history`` said one request a case (a run of 6 prompts repeated 3
times: "in 6 requests" after 18), and ``--max-requests`` on ``--resume`` started from that count."""

from __future__ import annotations

from tests.cli.test_conversations_cmd import write_project
from tests.cli.test_costs import priced, resume_words
from tests.cli.test_judges import judge  # noqa: F401 - the judge server fixture
from tests.cli.test_openai_runs import arithmetic, completions, configure
from tests.support.chat_server import Script


def test_repeats_count_every_request_in_the_summary_json_show_and_history(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--repeats", "3", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    made = len(completions(chat_server))
    assert made == 18
    assert document["spend"]["generator"]["requests"] == made
    assert [case["requests"] for case in document["cases"]] == [3] * 6

    shown = evalkit_cli("show", document["run_id"], env=env)
    assert shown.code == 0 and "in 18 replies" in shown.stdout, shown.stdout
    history = evalkit_cli("history", "arith.basic", "--json", env=env).json()
    assert history["runs"][0]["spend"]["generator"]["requests"] == 18
    text = evalkit_cli("run", "arith.basic", "--provider", "prod", "--repeats", "2", env=env)
    assert text.code == 0 and "in 12 replies" in text.stdout, text.stdout


def test_max_requests_on_resume_counts_the_stored_repeats_requests(evalkit_cli, project, chat_server) -> None:
    """6 requests made (2 prompts x 3) were read back as 2, so a resume with --max-requests 9 sent
    7 more instead of 3; and the printed resume command's limit (the set's size, 6) stopped a
    repeated run before it could finish."""
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", "3")
    stopped = evalkit_cli(*base, "--max-requests", "6", "--json", env=env)
    assert stopped.code == 3, stopped.stderr
    assert len(completions(chat_server)) == 6
    document = stopped.json()
    assert document["spend"]["generator"]["requests"] == 6
    words = resume_words("\n".join(document.get("notes", [])) + stopped.stderr)
    assert int(words[words.index("--max-requests") + 1]) >= 18, words
    run_id = document["run_id"]

    resumed = evalkit_cli(*base, "--resume", run_id, "--max-requests", "9", "--json", env=env)
    assert resumed.code == 3, resumed.stderr
    assert len(completions(chat_server)) == 9, "the limit counts the requests the stored cases made"
    assert resumed.json()["spend"]["generator"]["requests"] == 9



def test_the_resume_command_of_a_repeated_run_repeats_its_repeats(evalkit_cli, project, chat_server) -> None:
    """A repeated run stopped by --max-requests printed a resume command without --repeats: the
    rest of its cases were answered once each, in a run whose first cases were answered 3 times."""
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    stopped = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", "3", "--max-requests", "6", env=env)
    assert stopped.code == 3, stopped.stderr
    words = resume_words(stopped.stdout + stopped.stderr)
    assert words[words.index("--repeats") + 1] == "3", words
    finished = evalkit_cli(*words, "--json", env=env)
    assert finished.code == 0, finished.stdout + finished.stderr
    assert len(completions(chat_server)) == 18
    assert [case["answers"] for case in finished.json()["cases"]] == [3] * 6


def test_a_scripted_conversation_counts_one_request_a_model_turn(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = Script("Hello! How can I help?", "Paris is in France.", "Goodbye!")
    write_project(project, chat_server, """\
identifier: chat.script
name: Scripted
prompts:
  - id: three-turns
    mode: scripted
    messages:
      - {role: user, content: Hi.}
      - {role: user, content: Where is Paris?}
      - {role: user, content: "Thanks, bye."}
    assertions:
      - {contains_any: [bye, Goodbye]}
""")
    run = evalkit_cli("run", "chat.script", "--json")
    assert run.code == 0, run.stdout + run.stderr
    document = run.json()
    assert len(completions(chat_server)) == 3
    assert document["spend"]["generator"]["requests"] == 3
    assert document["cases"][0]["requests"] == 3
    shown = evalkit_cli("show", document["run_id"])
    assert "in 3 replies" in shown.stdout, shown.stdout


def test_plan_after_a_repeated_run_measures_one_answer_not_the_sum_of_its_repeats(evalkit_cli, project, chat_server) -> None:
    """A case's stored usage sums its answers under --repeats; plan took that sum for one answer,
    so after a `--repeats 3` run it estimated a run answered once at three times its cost (and
    `plan --repeats 3` at nine times)."""
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    once = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env).json()
    assert evalkit_cli("run", "arith.basic", "--provider", "prod", "--repeats", "3", env=env).code == 0
    planned = evalkit_cli("plan", "arith.basic", "--provider", "prod", "--json", env=env).json()["estimate"]
    assert planned["cost"] == once["spend"]["cost"]
    assert planned["prompt_tokens"] == once["spend"]["generator"]["prompt_tokens"]
    repeated = evalkit_cli("plan", "arith.basic", "--provider", "prod", "--repeats", "3", "--json", env=env).json()["estimate"]
    assert repeated["prompt_tokens"] == 3 * once["spend"]["generator"]["prompt_tokens"]


def test_every_answers_judge_calls_are_counted_under_repeats(judge, evalkit_cli) -> None:  # noqa: F811
    """A repeated case kept only its first answer's judge calls: `--repeats 3` with a judge
    counted 7 judge requests after 21, and their tokens and cost a third of what was paid."""
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--repeats", "3", "--json")
    assert result.code == 0, result.stdout + result.stderr
    asked = len([r for r in judge.requests if r.method == "POST"])
    assert asked == 21
    document = result.json()
    assert document["spend"]["judge"]["requests"] == asked
    assert [len(case["judge_usage"]) for case in document["cases"]] == [3] * 7


def test_a_case_the_limit_stops_between_its_repeats_is_answered_whole_on_resume(evalkit_cli, project, chat_server) -> None:
    """--repeats 3 --max-requests 4: the second case got one answer of three and was stored as
    answered; the resume never asked for the other two, and the completed run held a case
    answered once beside cases answered three times."""
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", "3")
    stopped = evalkit_cli(*base, "--max-requests", "4", "--json", env=env)
    assert stopped.code == 3, stopped.stderr
    document = stopped.json()
    cut = document["cases"][1]
    assert cut["errored"] and "the limit of 4 requests reached after 1 of 3 answers" in cut["error"], cut
    assert document["spend"]["generator"]["requests"] == 4 == len(completions(chat_server))
    finished = evalkit_cli(*base, "--resume", document["run_id"], "--json", env=env)
    assert finished.code == 0, finished.stdout + finished.stderr
    assert [case["answers"] for case in finished.json()["cases"]] == [3] * 6
    assert len(completions(chat_server)) == 4 + 3 * 5


def test_a_store_from_before_the_count_upgrades_and_its_cases_count_one_request_each(evalkit_cli, project, chat_server) -> None:
    """A store at schema version 10 (no `requests` column) is upgraded by `evalkit db upgrade`; its
    runs still show, and a stopped run's stored cases count one request each on resume, as they
    did when they were stored."""
    import sqlite3

    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1")
    stopped = evalkit_cli(*base, "--max-requests", "2", "--json", env=env)
    assert stopped.code == 3, stopped.stderr
    run_id = stopped.json()["run_id"]
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:  # as evalkit before the count left it
        conn.execute("alter table evalkit_case drop column requests")
        conn.execute("alter table evalkit_case drop column requests_sent")
        conn.execute("delete from evalkit_schema_migration where version >= 11")
    refused = evalkit_cli("show", run_id, env=env)
    assert refused.code != 0 and "evalkit db upgrade" in refused.stdout + refused.stderr
    assert evalkit_cli("db", "upgrade", env=env).code == 0
    shown = evalkit_cli("show", run_id, "--json", env=env)
    assert shown.code == 0, shown.stderr
    assert [case["requests"] for case in shown.json()["cases"]] == [None, None]
    resumed = evalkit_cli(*base, "--resume", run_id, "--max-requests", "4", "--json", env=env)
    assert resumed.code == 3, resumed.stderr
    assert len(completions(chat_server)) == 4
    assert resumed.json()["spend"]["generator"]["requests"] == 4


TWO_CONVERSATIONS = """\
identifier: chat.script
name: Scripted
prompts:
""" + "".join(
    f"""\
  - id: {name}
    mode: scripted
    messages:
      - {{role: user, content: Hi.}}
      - {{role: user, content: Where is Paris?}}
      - {{role: user, content: "Thanks, bye."}}
    assertions:
      - {{contains_any: [bye, Goodbye]}}
"""
    for name in ("first", "second")
)


def test_a_conversation_that_failed_midway_counts_its_failed_turn_toward_max_requests(evalkit_cli, project, chat_server) -> None:
    """A conversation whose second model turn failed sent two requests, and was counted one toward
    ``--max-requests`` (its one reply): ``--resume --max-requests 5`` after 5 requests sent (2 + 3)
    counted 4 and sent the failed conversation's 3 turns again. The failed turn now counts."""
    from tests.support.chat_server import Fault

    chat_server.responder = lambda body: "Goodbye!"
    write_project(project, chat_server, TWO_CONVERSATIONS)
    chat_server.fail_at(3, Fault.http_error(500))  # request 1 is the readiness probe, 2 the first turn
    first = evalkit_cli("run", "chat.script", "--concurrency", "1", "--json")
    document = first.json()
    assert [case["errored"] for case in document["cases"]] == [True, False], first.stdout + first.stderr
    assert [(case["requests"], case["requests_sent"]) for case in document["cases"]] == [(1, 2), (3, 3)]
    assert len(completions(chat_server)) == 5
    resumed = evalkit_cli("run", "chat.script", "--concurrency", "1", "--resume", document["run_id"], "--max-requests", "5")
    assert resumed.code == 3, resumed.stdout + resumed.stderr
    assert len(completions(chat_server)) == 5, "the run had sent its 5 requests, the failed turn included"


def test_a_resume_the_limit_stops_before_it_asks_an_errored_case_again_says_so(evalkit_cli, project, chat_server) -> None:
    """A resume whose ``--max-requests`` stopped it before it asked the stored errored case again
    left every case stored, one errored: ``incomplete``, and the limit's note and resume line were
    left out — "incomplete (1 errored case)" alone, no word of the limit or of how to go on."""
    from tests.support.chat_server import Fault

    chat_server.responder = lambda body: "Goodbye!"
    write_project(project, chat_server, TWO_CONVERSATIONS)
    chat_server.fail_at(3, Fault.http_error(500))  # request 1 is the readiness probe, 2 the first turn
    first = evalkit_cli("run", "chat.script", "--concurrency", "1", "--json")
    run_id = first.json()["run_id"]
    resumed = evalkit_cli("run", "chat.script", "--concurrency", "1", "--resume", run_id, "--max-requests", "5")
    assert resumed.code == 3, resumed.stdout + resumed.stderr
    assert "the limit of 5 requests reached after 1 of 2 cases (spent unknown); resume it with: " in resumed.stdout, (
        resumed.stdout
    )
    assert "(a spending limit stopped it: the limit of 5 requests reached; 1 errored case)" in resumed.stdout
    words = resume_words(resumed.stdout)
    assert words[-4:-1] == ["--resume", run_id, "--max-requests"] and int(words[-1]) > 5, words
    shown = evalkit_cli("show", run_id, "--json")
    assert shown.json()["limit_stops"]["*"]["resume_limits"] == words[-2:]
    assert len(completions(chat_server)) == 5
    finished = evalkit_cli(*words)  # the line printed finishes the run
    assert finished.code == 0 and "Status:     complete" in finished.stdout, finished.stdout + finished.stderr


BYE_SET = "identifier: chat.bye\nname: Bye\nprompts:\n" + "".join(
    f"  - id: p{i}\n    prompt: Say bye {i}.\n    assertions: [{{contains: bye}}]\n" for i in range(1, 5)
)


def test_a_shard_the_limit_stops_before_it_asks_its_errored_case_again_says_so(evalkit_cli, project, chat_server) -> None:
    """The same for ``--shard``: the run's other shard in, a re-run of a shard whose slice holds an
    errored case stopped by ``--max-requests`` before asking it again said nothing of the limit,
    gave its slice in, and kept no stop for the verdict job and ``show`` to read."""
    down = {"now": True}

    def responder(body) -> str:  # noqa: ANN001
        if down["now"]:
            raise RuntimeError("down")
        return "bye"

    chat_server.responder = responder
    write_project(project, chat_server, BYE_SET)
    database = f"sqlite:///{project / '.evalkit' / 'results.db'}"
    common = ("run", "chat.bye", "--run-id", "sliced", "--database", database)
    first = evalkit_cli(*common, "--shard", "1/2")  # every case of shard 1/2 errors
    assert first.code == 3 and "ERROR" in first.stdout, first.stdout + first.stderr
    down["now"] = False
    assert evalkit_cli(*common, "--shard", "2/2").code == 0
    sent = len(completions(chat_server))
    again = evalkit_cli(*common, "--shard", "1/2", "--max-requests", str(sent))
    assert again.code == 3, again.stdout + again.stderr
    assert len(completions(chat_server)) == sent
    # the shard's one case is errored, asked again on resume: not counted as done, as a whole run's note does not
    assert (
        f"the limit of {sent} requests reached after 0 of the 1 case of shard 1/2 (3 of the run's 4; spent unknown; "
        "the run's request limit is shared by its shards); resume it with: "
    ) in again.stdout, again.stdout
    words = resume_words(again.stdout)
    assert words[-6:-2] == ["--shard", "1/2", "--run-id", "sliced"] and words[-2] == "--max-requests", words
    assert evalkit_cli("show", "sliced", "--database", database, "--json").json()["limit_stops"]["1/2"]["resume_limits"] == words[-2:]
    verdict = evalkit_cli(*common, "--wait-for-shards", "--timeout", "5s", "--poll", "0.2s")
    assert verdict.code == 3 and f"a spending limit stopped it: the limit of {sent} requests reached" in verdict.stdout, (
        verdict.stdout + verdict.stderr
    )
    finished = evalkit_cli(*words)
    assert finished.code == 0 and "Status:     complete" in finished.stdout, finished.stdout + finished.stderr
