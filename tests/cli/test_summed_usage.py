"""The usage a case sums over its requests (a conversation's turns, a prompt's repeated answers)
held to the rule of one reply's (:func:`evalkit.answers.reported_usage`), through the CLI against
the chat-completions test server, whose replies here carry the usage a test gives them."""

from __future__ import annotations

import json
import sqlite3

from tests.cli.test_conversations_cmd import write_project
from tests.cli.test_openai_runs import completions
from tests.support.chat_server import Fault

TWO_TURNS = """\
identifier: chat.script
name: Scripted
prompts:
  - id: two-turns
    mode: scripted
    messages:
      - {role: user, content: Hi.}
      - {role: user, content: Bye.}
    assertions:
      - {contains: Goodbye}
"""

ONE_PROMPT = """\
identifier: chat.plain
name: Plain
prompts:
  - id: plain
    prompt: Say goodbye.
    assertions:
      - {contains: Goodbye}
"""


def replies_reporting(server, usage: dict | None, count: int = 10) -> None:
    """The server's next ``count`` chat replies say "Goodbye" and report ``usage`` (``None``: none)."""
    body = {"model": "bot-1", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Goodbye"}, "finish_reason": "stop"}]}
    if usage is not None:
        body["usage"] = usage
    server.fail_next(Fault.garbage(json.dumps(body)), count=count)


def stored_usage(project) -> list:
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        return [row[0] for row in conn.execute("select usage from evalkit_case")]


BIG = 6 * 10**18  # each reply's count is one evalkit keeps (below 2**63); two of them are not


def test_a_conversations_summed_usage_past_what_can_be_counted_is_set_aside_with_a_note(evalkit_cli, project, chat_server) -> None:
    """Two turns of 6e18 prompt tokens each: the case stored 12000000000000000000 prompt tokens
    (past 2**63 - 1, what an integer column or a reader of the store holds), while one reply
    reporting that many had its usage set aside. The sum is held to the same rule."""
    replies_reporting(chat_server, {"prompt_tokens": BIG, "completion_tokens": 1, "total_tokens": BIG + 1})
    write_project(project, chat_server, TWO_TURNS)
    run = evalkit_cli("run", "chat.script", "--json")
    assert run.code == 0, run.stdout + run.stderr
    assert len(completions(chat_server)) == 2
    document = run.json()
    (case,) = document["cases"]
    assert case["usage"] is None and case["requests"] == 2
    assert stored_usage(project) == [None]
    note = (
        "1 usage summed over a case's requests (a conversation's turns, a prompt's repeated answers) is past what evalkit "
        "can count (the first: prompt_tokens 12000000000000000000 summed over 2 requests, not a whole number from 0 "
        "below 2**63): the case's usage is counted as unreported, its prompt and completion tokens alike, and its cost is unknown"
    )
    assert note in document["notes"], document["notes"]
    assert document["spend"]["generator"]["prompt_tokens"] == 0
    shown = evalkit_cli("show", document["run_id"])
    assert shown.code == 0 and "E+19" not in shown.stdout, shown.stdout


def test_repeated_answers_whose_summed_usage_is_past_what_can_be_counted_are_set_aside(evalkit_cli, project, chat_server) -> None:
    """--repeats 2 of a reply reporting 6e18 completion tokens: the same sum, the same rule."""
    replies_reporting(chat_server, {"prompt_tokens": 3, "completion_tokens": BIG})
    write_project(project, chat_server, ONE_PROMPT)
    run = evalkit_cli("run", "chat.plain", "--repeats", "2", "--json")
    assert run.code == 0, run.stdout + run.stderr
    document = run.json()
    assert [case["usage"] for case in document["cases"]] == [None]
    assert stored_usage(project) == [None]
    assert any("(the first: completion_tokens 12000000000000000000 summed over 2 requests" in n for n in document["notes"]), document["notes"]


def test_a_summed_usage_just_within_what_can_be_counted_is_kept(evalkit_cli, project, chat_server) -> None:
    """The limit is the store's: 2**63 - 1 summed is kept as it is."""
    half = (2**63 - 1) // 2
    replies_reporting(chat_server, {"prompt_tokens": half, "completion_tokens": 0})
    write_project(project, chat_server, ONE_PROMPT)
    run = evalkit_cli("run", "chat.plain", "--repeats", "2", "--json")
    assert run.code == 0, run.stdout + run.stderr
    (case,) = run.json()["cases"]
    assert case["usage"]["prompt_tokens"] == 2 * half and not run.json()["notes"]


def test_more_cached_prompt_tokens_than_prompt_tokens_sets_the_replys_usage_aside(evalkit_cli, project, chat_server) -> None:
    """A reply reporting 500 of its 5 prompt tokens served from the endpoint's cache: it was
    stored and shown as reported ("500 prompt tokens cached by the endpoint" beside 5 prompt
    tokens). An impossible usage is set aside whole, as an out-of-range count is, with the note."""
    replies_reporting(chat_server, {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6, "prompt_tokens_details": {"cached_tokens": 500}})
    write_project(project, chat_server, ONE_PROMPT)
    run = evalkit_cli("run", "chat.plain", "--json")
    assert run.code == 0, run.stdout + run.stderr
    document = run.json()
    assert [case["usage"] for case in document["cases"]] == [None]
    assert document["spend"]["generator"]["cached_prompt_tokens"] == 0
    note = (
        f"1 reply from {chat_server.base_url} reported a usage evalkit cannot count (the first: "
        "prompt_tokens_details.cached_tokens 500, more than its prompt_tokens 5): each such reply's usage is counted as "
        "unreported, its prompt and completion tokens alike, and its cost is unknown"
    )
    assert note in document["notes"], document["notes"]
    shown = evalkit_cli("show", document["run_id"])
    assert "cached by the endpoint" not in shown.stdout, shown.stdout


def test_cached_prompt_tokens_up_to_the_prompt_tokens_are_kept(evalkit_cli, project, chat_server) -> None:
    """Every prompt token served from the cache is possible, and kept."""
    replies_reporting(chat_server, {"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 5}})
    write_project(project, chat_server, ONE_PROMPT)
    run = evalkit_cli("run", "chat.plain", "--json")
    (case,) = run.json()["cases"]
    assert case["usage"]["cached_prompt_tokens"] == 5 and not run.json()["notes"]


def test_requests_of_unknown_usage_are_counted_per_request_as_requests_are(evalkit_cli, project, chat_server) -> None:
    """A scripted conversation of two turns whose replies report no usage: the summary said
    "0 prompt + 0 completion tokens in 2 requests; 1 reported no usage" (one a case, beside
    requests counted one a request). Both counts are now of requests."""
    replies_reporting(chat_server, None)
    write_project(project, chat_server, TWO_TURNS)
    run = evalkit_cli("run", "chat.script", "--json")
    assert run.code == 0, run.stdout + run.stderr
    generator = run.json()["spend"]["generator"]
    assert generator["requests"] == 2 and generator["usage_unreported"] == 2, generator
    shown = evalkit_cli("show", run.json()["run_id"])
    assert "Tokens:     0 prompt + 0 completion tokens in 2 replies; usage unknown for 2\n" in shown.stdout, shown.stdout


def test_a_conversation_that_fails_after_a_reply_counts_the_reply_and_its_tokens(evalkit_cli, project, chat_server) -> None:
    """A scripted conversation whose second request failed (HTTP 500): the case stored 0 requests
    and no usage, so the run said "0 requests" and a known cost below what was spent — its first
    turn was answered and paid. ``requests`` counts the requests that got a reply: that one."""
    replies_reporting(chat_server, {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}, count=1)
    chat_server.fail_next(Fault.http_error(500))
    write_project(project, chat_server, TWO_TURNS)
    run = evalkit_cli("run", "chat.script", "--json")
    assert run.code == 3, run.stdout + run.stderr
    assert len(completions(chat_server)) == 2
    document = run.json()
    (case,) = document["cases"]
    assert case["errored"] and case["requests"] == 1, case
    assert case["usage"] == {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5, "cached_prompt_tokens": None}
    generator = document["spend"]["generator"]
    assert (generator["requests"], generator["prompt_tokens"], generator["usage_unreported"]) == (1, 4, 0), generator


def test_a_repeated_conversation_that_fails_counts_the_tokens_of_every_answer_before(evalkit_cli, project, chat_server) -> None:
    """--repeats 2 of a two-turn conversation whose last request fails: the case counts 3 requests
    answered, and their tokens all (it kept the failed answer's alone: a known cost below what was
    spent)."""
    replies_reporting(chat_server, {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}, count=3)
    chat_server.fail_next(Fault.http_error(500))
    write_project(project, chat_server, TWO_TURNS)
    run = evalkit_cli("run", "chat.script", "--repeats", "2", "--json")
    assert run.code == 3, run.stdout + run.stderr
    (case,) = run.json()["cases"]
    assert case["errored"] and case["requests"] == 3, case
    assert case["usage"]["prompt_tokens"] == 12 and case["usage"]["completion_tokens"] == 3, case["usage"]


def test_plan_never_measures_an_answer_by_a_conversation_that_failed_midway(evalkit_cli, project, chat_server) -> None:
    """The errored case's usage is of the one turn answered before the failure: `evalkit plan`
    estimates the prompt from its length instead of taking that for a whole answer."""
    replies_reporting(chat_server, {"prompt_tokens": 4000, "completion_tokens": 1, "total_tokens": 4001}, count=1)
    chat_server.fail_next(Fault.http_error(500))
    write_project(project, chat_server, TWO_TURNS)
    assert evalkit_cli("run", "chat.script").code == 3
    planned = evalkit_cli("plan", "chat.script", "--json")
    assert planned.code == 0, planned.stdout + planned.stderr
    estimate = planned.json()["estimate"]
    assert estimate["prompt_tokens"] < 4000 and estimate.get("measured_cases", 0) == 0, estimate
