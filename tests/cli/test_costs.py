"""Tokens, cost, budget, the answer cache and re-grading, end to end through the CLI against the
chat-completions test server (which reports usage: one token a word)."""

from __future__ import annotations

import re
import shlex
import sqlite3
import time
from decimal import Decimal
from pathlib import Path

import pytest

from tests.cli.test_openai_runs import arithmetic, completions, configure

PRICES = "price_per_million_input = 1000\nprice_per_million_output = 2000\ncurrency = \"EUR\""


def priced(project: Path, server, *, extra: str = "", privacy: str | None = "full", cache: str = "") -> dict[str, str]:
    env = configure(project, server, privacy=privacy, extra=PRICES + ("\n" + extra if extra else ""))
    if cache:
        with (project / "evalkit.toml").open("a") as config:
            config.write(cache)
    return env


def expected_cost(server) -> str:
    """What the server's usage costs at PRICES: one token a word (its own rule)."""
    total = Decimal(0)
    for request in completions(server):
        prompt = sum(len(m["content"].split()) for m in request.body["messages"])
        answer = arithmetic(request.body)
        total += (Decimal(1000) * prompt + Decimal(2000) * len(answer.split())) / Decimal(1_000_000)
    return str(total)


def test_a_run_sums_its_usage_and_cost_in_the_summary_json_show_history_compare_and_reports(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    first = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert first.code == 0, first.stderr
    document = first.json()
    spend = document["spend"]
    assert spend["currency"] == "EUR" and spend["cost"] == expected_cost(chat_server)
    assert spend["generator"]["requests"] == len(completions(chat_server)) == document["case_count"]
    assert spend["generator"]["prompt_tokens"] > 0 and spend["generator"]["completion_tokens"] > 0
    case = document["cases"][0]
    assert case["usage"]["prompt_tokens"] > 0 and case["usage"]["total_tokens"] == case["usage"]["prompt_tokens"] + case["usage"]["completion_tokens"]

    text = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert text.code == 0, text.stderr
    assert "Tokens:     " in text.stdout and f"Cost:       {spend['cost'].rstrip('0')} EUR" in text.stdout
    run_ids = [document["run_id"], None]
    shown = evalkit_cli("show", document["run_id"], env=env)
    assert shown.code == 0 and "Cost:       " in shown.stdout and " EUR" in shown.stdout
    history = evalkit_cli("history", "arith.basic", env=env)
    assert history.code == 0 and "Cost" in history.stdout and "EUR" in history.stdout, history.stdout
    history_json = evalkit_cli("history", "arith.basic", "--json", env=env).json()
    assert all(run["spend"]["currency"] == "EUR" for run in history_json["runs"])
    run_ids[1] = history_json["runs"][0]["run_id"]
    compared = evalkit_cli("compare", run_ids[0], run_ids[1], env=env)
    assert compared.code in (0, 1) and "Cost" in compared.stdout and "+0 EUR" in compared.stdout, compared.stdout
    compared_json = evalkit_cli("compare", run_ids[0], run_ids[1], "--json", env=env).json()
    cost = compared_json["cost"]
    assert (cost["baseline"], cost["run"], cost["currency"]) == (spend["cost"], spend["cost"], "EUR") and Decimal(cost["delta"]) == 0
    for fmt in ("markdown", "html", "junit", "json"):
        out = project / f"report.{fmt}"
        reported = evalkit_cli("report", run_ids[0], "--format", fmt, "--output", str(out), env=env)
        assert reported.code == 0, reported.stderr
        assert "EUR" in out.read_text(), fmt


def test_an_unpriced_instance_reads_unknown_never_zero(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert result.code == 0, result.stderr
    spend = result.json()["spend"]
    assert spend["cost"] is None and spend["currency"] is None and spend["generator"]["prompt_tokens"] > 0
    text = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert "Cost:       unknown" in text.stdout and "0 USD" not in text.stdout
    history = evalkit_cli("history", "arith.basic", env=env)
    assert "unknown" in history.stdout


def resume_words(output: str) -> list[str]:
    """The resume command a stopped run printed, as arguments for the CLI (without ``evalkit``)."""
    line = next(line for line in output.splitlines() if "resume it with: " in line)
    words = shlex.split(line.split("resume it with: ", 1)[1])
    assert words[0] == "evalkit"
    return words[1:]


def test_a_budget_stops_the_run_before_it_is_passed_and_the_printed_command_resumes_it(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    stopped = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "0.03", env=env)
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    asked = len(completions(chat_server))
    assert 0 < asked < 6
    output = stopped.stdout + stopped.stderr
    assert f"budget reached after {asked} of 6 cases" in output
    assert "Status:     incomplete" in stopped.stdout
    words = resume_words(output)
    assert words[:2] == ["run", "arith.basic"] and "--provider" in words and words[-4] == "--resume", words
    assert words[-2] == "--budget" and Decimal(words[-1]) > Decimal("0.03"), words
    shown = evalkit_cli("show", words[-3], "--json", env=env).json()
    assert Decimal(shown["spend"]["cost"]) <= Decimal("0.03"), "the budget is never passed"
    assert shown["status"] == "incomplete" and len(shown["cases"]) == asked

    resumed = evalkit_cli(*words, env=env)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert len(completions(chat_server)) == 6, "the resume asks only for the cases the budget left out"
    whole = evalkit_cli("show", words[words.index("--resume") + 1], "--json", env=env).json()
    assert whole["status"] == "complete" and whole["spend"]["generator"]["requests"] == 6
    assert whole["spend"]["cost"] == expected_cost(chat_server)


def test_a_run_its_budget_stops_before_the_first_answer_is_told_a_budget_that_resumes_it(evalkit_cli, project, chat_server) -> None:
    # No max_tokens and nothing measured: the first request is estimated at 256 completion tokens
    # (0.5 EUR at PRICES). The resume command used to offer twice the old budget, which stopped the
    # resumed run before its first answer again, and again.
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    stopped = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "0.1", env=env)
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    assert "budget reached after 0 of 6 cases" in stopped.stdout and not completions(chat_server)
    resumed = evalkit_cli(*resume_words(stopped.stdout), env=env)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert "Status:     complete" in resumed.stdout and len(completions(chat_server)) == 6


def test_a_budget_estimates_answers_from_the_last_measured_run_as_plan_does(evalkit_cli, project, chat_server) -> None:
    # The set costs about 0.07 EUR a run at PRICES (one-word answers); 256 completion tokens a
    # request, the estimate without a measurement, would stop a 0.1 budget before the first answer.
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    assert evalkit_cli("run", "arith.basic", "--provider", "prod", env=env).code == 0
    whole = Decimal(expected_cost(chat_server))
    assert whole < Decimal("0.1")
    again = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "0.1", env=env)
    assert again.code == 0, again.stdout + again.stderr
    assert "Status:     complete" in again.stdout and len(completions(chat_server)) == 12


def test_astronomical_prices_print_in_scientific_notation_and_their_budget_still_resumes(evalkit_cli, project, chat_server) -> None:
    # Prices are any finite number: at 1e30 a budget rounded to cents has more digits than
    # Decimal's context keeps, and rounding it for the resume command was an internal error.
    chat_server.responder = arithmetic
    huge = "price_per_million_input = 1e30\nprice_per_million_output = 1e30\nmax_tokens = 4"
    env = configure(project, chat_server, privacy="full", extra=huge)
    stopped = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "3e25", env=env)
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    output = stopped.stdout + stopped.stderr
    assert "of a budget of 3E+25 USD" in output and 0 < len(completions(chat_server)) < 6
    words = resume_words(output)
    budget = words[words.index("--budget") + 1]
    assert re.fullmatch(r"[1-9](\.[0-9]{1,5})?E\+2[5-9]", budget) and Decimal(budget) >= Decimal("6e25"), budget
    resumed = evalkit_cli(*words, env=env)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    cost = next(line for line in resumed.stdout.splitlines() if line.startswith("Cost:"))
    assert re.fullmatch(r"Cost: +[1-9](\.[0-9]{1,5})?E\+[0-9]+ USD", cost), cost
    whole = evalkit_cli("show", words[words.index("--resume") + 1], "--json", env=env).json()
    assert whole["status"] == "complete" and Decimal(whole["spend"]["cost"]) > Decimal("1e24")
    planned = evalkit_cli("plan", "arith.basic", "--provider", "prod", env=env)
    assert planned.code == 0 and re.search(r"Cost: +[1-9](\.[0-9]{1,5})?E\+[0-9]+ USD", planned.stdout), planned.stdout


def test_max_requests_stops_after_n_requests_with_exit_3(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    stopped = evalkit_cli("run", "arith.basic", "--provider", "prod", "--max-requests", "2", "--json", env=env)
    assert stopped.code == 3, stopped.stderr
    assert len(completions(chat_server)) == 2
    document = stopped.json()
    assert document["status"] == "incomplete"
    words = resume_words("\n".join(document.get("notes", [])) + stopped.stderr)
    assert words[words.index("--max-requests") + 1] == "6"
    assert evalkit_cli(*words, env=env).code == 0 and len(completions(chat_server)) == 6


def test_the_verdict_of_a_run_a_spending_limit_stopped_names_the_limit(evalkit_cli, project, chat_server) -> None:
    """The verdict of a run --max-requests or --budget stopped read "not compared: the run is
    incomplete (0 errored cases)": no case errored; a spending limit stopped it, and it says which."""
    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    limited = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--max-requests", "2", "--json", env=env)
    assert limited.code == 3, limited.stderr
    reason = limited.json()["verdict"]["reason"]
    assert reason == (
        "not compared: the run is incomplete (a spending limit stopped it: the limit of 2 requests reached), "
        "so it is never a baseline and is not compared"
    )
    shown = evalkit_cli("show", limited.json()["run_id"], env=env)
    assert "a spending limit stopped it: the limit of 2 requests reached" in shown.stdout, shown.stdout
    budgeted = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "0.03", env=env)
    assert budgeted.code == 3, budgeted.stderr
    assert "not compared: the run is incomplete (a spending limit stopped it: the budget of 0.03 EUR reached)" in budgeted.stdout
    assert "0 errored" not in budgeted.stdout


def test_the_limit_that_stopped_a_run_is_a_field_of_its_json_until_it_finishes(evalkit_cli, project, chat_server) -> None:
    """The limit that stopped a run was only in its verdict's words: `run`, `show` and `history
    --json` now give it as data (``limit_stops``, by part), the budget with its currency and the
    higher limits that continue it; a resume that finishes the run clears it."""
    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    budgeted = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "0.03", "--json", env=env)
    assert budgeted.code == 3, budgeted.stderr
    document = budgeted.json()
    words = resume_words("\n".join(document.get("notes", [])) + budgeted.stderr)
    stop = {"limit": "budget", "value": "0.03", "currency": "EUR", "resume_limits": ["--budget", words[words.index("--budget") + 1]]}
    assert document["limit_stops"] == {"*": stop}, document["limit_stops"]
    shown = evalkit_cli("show", document["run_id"], "--json", env=env).json()
    listed = evalkit_cli("history", "arith.basic", "--json", env=env).json()["runs"][0]
    assert shown["limit_stops"] == listed["limit_stops"] == {"*": stop}
    assert evalkit_cli(*words, env=env).code == 0
    assert evalkit_cli("show", document["run_id"], "--json", env=env).json()["limit_stops"] == {}


def test_the_stored_stop_reason_names_no_option_of_either_caller(project, chat_server, monkeypatch, tmp_path) -> None:
    """The verdict's reason is stored and shown later by `evalkit show` to whoever asks, so it says
    "the limit of 2 requests": it said `--max-requests 2` to a Python caller who gave
    ``max_requests=2`` as well (and, stored, a command-line run's reason to a Python reader)."""
    from evalkit.config import load_config
    from evalkit.evaluation import evaluate_set

    chat_server.responder = arithmetic
    monkeypatch.setenv("EVALKIT_TEST_KEY", priced(project, chat_server, extra="max_tokens = 4")["EVALKIT_TEST_KEY"])
    config = load_config(project / "evalkit.toml")
    url = f"sqlite:///{tmp_path / 'library.db'}"
    limited = evaluate_set("arith.basic", provider="prod", concurrency=1, max_requests=2, config=config, database=url)
    assert "a spending limit stopped it: the limit of 2 requests reached" in limited.verdict.reason
    budgeted = evaluate_set("arith.basic", provider="prod", concurrency=1, budget="0.03", config=config, database=url)
    assert "a spending limit stopped it: the budget of 0.03 EUR reached" in budgeted.verdict.reason
    assert "--" not in limited.verdict.reason + budgeted.verdict.reason


def test_a_resumed_budget_never_forgets_what_was_spent_because_one_reply_reported_no_usage(evalkit_cli, project, chat_server) -> None:
    """One reply without usage made the run's stored cost unknown, and a resumed run's budget read
    unknown as nothing spent: resumed with the budget that had stopped it, it spent it again. A
    reply of unknown cost now counts the mean of the known ones (the running process counts its
    estimate), and what is known is never dropped."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    body = {"model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "12"}, "finish_reason": "stop"}]}
    chat_server.fail_at(3, Fault.garbage(json.dumps(body)))  # the second case's reply reports no usage
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1")
    stopped = evalkit_cli(*base, "--budget", "0.06", "--json", env=env)
    assert stopped.code == 3, stopped.stderr
    document = stopped.json()
    assert document["spend"]["cost"] is None and document["spend"]["generator"]["usage_unreported"] == 1
    sent = len(completions(chat_server))
    assert 3 <= sent < 6, sent
    again = evalkit_cli(*base, "--resume", document["run_id"], "--budget", "0.06", "--json", env=env)
    assert again.code == 3, again.stderr
    # the unknown reply counted the mean of the known ones, not the estimate the running process
    # reserved for it: the resume may send the one request that difference leaves room for
    assert len(completions(chat_server)) - sent <= 1, "the budget that stopped the run stops its resume"


def test_a_resumed_budget_counts_replies_of_an_endpoint_that_never_reports_usage(evalkit_cli, project, chat_server) -> None:
    """With no reply's cost known, a stored reply of unknown cost counted nothing: resumed with the
    budget that had stopped it, the run started from nothing spent and spent that budget again. It
    now counts the mean estimate of the set's requests, as the running process counted each."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    body = {"model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "12"}, "finish_reason": "stop"}]}
    for request in range(1, 13):
        chat_server.fail_at(request, Fault.garbage(json.dumps(body)))  # no reply reports usage
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1")
    stopped = evalkit_cli(*base, "--budget", "0.07", "--json", env=env)
    assert stopped.code == 3, stopped.stderr
    sent = len(completions(chat_server))
    assert 2 <= sent < 6, sent
    again = evalkit_cli(*base, "--resume", stopped.json()["run_id"], "--budget", "0.07", "--json", env=env)
    assert again.code == 3, again.stderr
    # the set's mean estimate, not each reply's own: the resume may send the one request that leaves room for
    assert len(completions(chat_server)) - sent <= 1, "the budget that stopped the run stops its resume"


def test_a_budget_without_prices_is_refused_before_anything_is_sent(evalkit_cli, project, chat_server) -> None:
    env = configure(project, chat_server)
    refused = evalkit_cli("run", "arith.basic", "--provider", "prod", "--budget", "1", env=env)
    assert refused.code == 2 and "price_per_million_input" in refused.stderr and "[providers.prod]" in refused.stderr
    assert completions(chat_server) == []
    bad = evalkit_cli("run", "arith.basic", "--provider", "prod", "--budget", "-1", env=env)
    assert bad.code == 2 and "--budget" in bad.stderr


@pytest.mark.parametrize("option", [("--budget", "1"), ("--cache",)], ids=["budget-without-prices", "cache-below-full"])
def test_a_spending_option_refused_leaves_no_store_behind(evalkit_cli, project: Path, option: tuple[str, ...]) -> None:
    # the refusal came after the store was opened: exit 2, and a new .evalkit/results.db in the project
    refused = evalkit_cli("run", "evalkit.smoke", *option)
    assert refused.code == 2 and option[0] in refused.stderr, refused.stdout + refused.stderr
    assert not (project / ".evalkit").exists(), "nothing was made"


def test_the_cache_answers_only_an_identical_request_and_a_cached_run_is_marked_and_never_a_baseline(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    first = evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", "--json", env=env)
    assert first.code == 0, first.stderr
    assert len(completions(chat_server)) == 6 and first.json()["spend"]["answers_from_cache"] == 0
    again = evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", env=env)
    assert again.code == 0, again.stderr
    assert len(completions(chat_server)) == 6, "an identical request is answered from the cache"
    assert "All 6 answers came from the answer cache" in again.stdout and "Reused:     6 from the answer cache" in again.stdout
    assert "recorded as the baseline" not in again.stdout
    runs = evalkit_cli("history", "arith.basic", "--json", env=env).json()["runs"]
    cached = runs[0]
    assert cached["answers_reused"] == "cache:all" and not cached["accepted"], "a run made from the cache is never accepted by itself"
    assert all(case["answer_source"] == "cache" for case in evalkit_cli("show", cached["run_id"], "--json", env=env).json()["cases"])
    assert cached["spend"]["cost"] == "0", "no request, no cost"
    stats = evalkit_cli("cache", "stats", "--json", env=env).json()
    assert stats["entries"] == 6 and stats["per_instance"] == {"prod": 6}
    # an entry another program dated with text or an infinity: cache stats printed its date, an internal error
    database = project / ".evalkit" / "results.db"
    with sqlite3.connect(database) as conn:
        conn.execute("update evalkit_answer_cache set created_at = 9e999 where rowid = (select min(rowid) from evalkit_answer_cache)")
    odd = evalkit_cli("cache", "stats", env=env)
    assert odd.code == 2 and "of the answer cache in the store has created_at inf, not a finite number" in odd.stderr, odd.stderr
    with sqlite3.connect(database) as conn:
        conn.execute("update evalkit_answer_cache set created_at = ? where created_at > 1e300", (time.time(),))
    # without --cache nothing is read from it
    plain = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert plain.code == 0 and len(completions(chat_server)) == 12
    cleared = evalkit_cli("cache", "clear", env=env)
    assert cleared.code == 0 and "Removed 6 cached answers" in cleared.stdout
    assert evalkit_cli("cache", "stats", "--json", env=env).json()["entries"] == 0


@pytest.mark.parametrize(
    ("change", "config_extra", "args"),
    [
        ("the model alias", "", ("--model", "gpt-other")),
        ("the temperature", "temperature = 0.5", ()),
        ("the temperature written as a float", "temperature = 0.0", ()),
        ("max_tokens", "max_tokens = 7", ()),
        ("a header", 'extra_headers = { "X-Tenant" = "b" }', ()),
        ("the endpoint", None, ()),
    ],
)
def test_a_changed_request_never_hits_an_old_cache_entry(evalkit_cli, project, chat_server, change, config_extra, args) -> None:
    from tests.support.chat_server import ChatServer

    chat_server.responder = arithmetic
    base = "temperature = 0"
    env = priced(project, chat_server, extra=base)
    assert evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", env=env).code == 0
    assert len(completions(chat_server)) == 6
    if config_extra is None:  # another endpoint behind the same instance name
        with ChatServer(responder=arithmetic) as other:
            env = priced(project, other, extra=base)
            changed = evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", *args, env=env)
            assert changed.code == 0, changed.stderr
            assert len(completions(other)) == 6, f"{change}: every request is asked again"
        return
    text = (project / "evalkit.toml").read_text()
    if config_extra.startswith("extra_headers"):
        text = text.replace('extra_headers = { "X-Gateway-Token"', 'extra_headers = { "X-Tenant" = "b", "X-Gateway-Token"')
    else:
        text = text.replace(base, config_extra)
    (project / "evalkit.toml").write_text(text)
    changed = evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", *args, env=env)
    assert changed.code == 0, changed.stderr
    assert len(completions(chat_server)) == 12, f"{change}: every request is asked again"


def test_cache_below_full_privacy_is_refused_unless_the_config_allows_it(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server, privacy="redacted")
    refused = evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", env=env)
    assert refused.code == 2 and '"redacted"' in refused.stderr and "[cache] enabled = true" in refused.stderr
    assert completions(chat_server) == []
    env = priced(project, chat_server, privacy="redacted", cache="[cache]\nenabled = true\n")
    allowed = evalkit_cli("run", "arith.basic", "--provider", "prod", env=env)
    assert allowed.code == 0, allowed.stderr
    assert evalkit_cli("cache", "stats", "--json", env=env).json()["entries"] == 6, "[cache] enabled = true turns it on"
    assert evalkit_cli("run", "arith.basic", "--provider", "prod", "--no-cache", env=env).code == 0
    assert len(completions(chat_server)) == 12, "--no-cache neither reads nor writes it"


CAPITALS = """\
identifier: myapp.capitals
name: Capitals
prompts:
  - id: france
    prompt: What is the capital of France?
    assertions:
      - contains: {france}
  - id: spain
    prompt: What is the capital of Spain?
    assertions:
      - contains: Madrid
"""


def capitals(project: Path, server, *, france: str = "Paris", spain_prompt: str | None = None, privacy: str = "full") -> dict[str, str]:
    env = configure(project, server, privacy=privacy, extra=PRICES)
    with (project / "evalkit.toml").open("a") as config:
        config.write('[sets]\npaths = ["evals/*.yaml"]\n')
    text = CAPITALS.format(france=france)
    if spain_prompt is not None:
        text = text.replace("What is the capital of Spain?", spain_prompt)
    (project / "evals").mkdir(exist_ok=True)
    (project / "evals" / "capitals.yaml").write_text(text)
    return env


def answer_capitals(body) -> str:
    question = body["messages"][-1]["content"]
    return "Paris" if "France" in question else "Madrid" if "Spain" in question else "no idea"


def test_regrade_gives_the_new_verdict_of_a_changed_check_without_a_single_request(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = answer_capitals
    env = capitals(project, chat_server)
    first = evalkit_cli("run", "myapp.capitals", "--provider", "prod", "--json", env=env)
    assert first.code == 0, first.stderr
    source = first.json()["run_id"]
    requests = len(chat_server.requests)
    assert first.json()["pass_rate"] == 1.0

    capitals(project, chat_server, france="Lyon")  # the check changed; the prompt did not
    regraded = evalkit_cli("regrade", source, "--json", env=env)
    assert regraded.code == 0, regraded.stderr
    assert len(chat_server.requests) == requests, "not a single request reaches the server"
    document = regraded.json()
    assert document["run_id"] != source and document["source_run_id"] == source and document["answers_reused"] == "regrade"
    cases = {case["id"]: case for case in document["cases"]}
    assert not cases["france"]["passed"] and cases["spain"]["passed"]
    assert {case["answer_source"] for case in cases.values()} == {f"run:{source}"}
    assert document["spend"]["generator"]["requests"] == 0 and document["spend"]["cost"] == "0"
    assert document["verdict"]["state"] != "baseline" or not document.get("accepted")
    text = evalkit_cli("regrade", source, "--fail-on-new-failures", env=env)
    assert text.code == 1 and "Re-grading the stored answers of run" in text.stdout
    assert "france: pass → FAIL" in text.stdout and f"run {source} stays the baseline" in text.stdout
    assert len(chat_server.requests) == requests


def test_regrade_reuses_no_answer_to_an_edited_prompt_and_refuses_a_run_not_stored_in_full(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = answer_capitals
    env = capitals(project, chat_server)
    source = evalkit_cli("run", "myapp.capitals", "--provider", "prod", "--json", env=env).json()["run_id"]
    requests = len(chat_server.requests)
    capitals(project, chat_server, spain_prompt="Name the capital city of Spain.")
    regraded = evalkit_cli("regrade", source, "--json", env=env)
    assert regraded.code == 3, regraded.stderr
    cases = {case["id"]: case for case in regraded.json()["cases"]}
    assert cases["france"]["passed"] and "the prompt changed" in cases["spain"]["error"]
    assert len(chat_server.requests) == requests

    env = capitals(project, chat_server, privacy="redacted")
    redacted = evalkit_cli("run", "myapp.capitals", "--provider", "prod", "--json", env=env).json()["run_id"]
    refused = evalkit_cli("regrade", redacted, env=env)
    assert refused.code == 2 and '"redacted"' in refused.stderr and "--privacy full" in refused.stderr
    missing = evalkit_cli("regrade", "no-such-run", env=env)
    assert missing.code == 2 and "no-such-run" in missing.stderr


def test_answers_from_reuses_a_stored_runs_answers_and_asks_only_for_the_rest(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = answer_capitals
    env = capitals(project, chat_server)
    source = evalkit_cli("run", "myapp.capitals", "--provider", "prod", "--json", env=env).json()["run_id"]
    before = len(completions(chat_server))
    capitals(project, chat_server, spain_prompt="Name the capital city of Spain.")
    mixed = evalkit_cli("run", "myapp.capitals", "--provider", "prod", "--answers-from", source, "--json", env=env)
    assert mixed.code == 0, mixed.stderr
    assert len(completions(chat_server)) == before + 1, "only the edited prompt is asked again"
    cases = {case["id"]: case for case in mixed.json()["cases"]}
    assert cases["france"]["answer_source"] == f"run:{source}" and cases["spain"]["answer_source"] is None


def test_a_429_storm_ends_with_every_case_answered_and_the_back_off_in_the_notes(evalkit_cli, project, chat_server) -> None:
    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    for number in range(2, 8):  # request 1 is the free readiness probe; the first six completions get a 429
        chat_server.fail_at(number, Fault.rate_limited(retry_after="0"))
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "6", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["status"] == "complete" and document["pass_rate"] == 1.0
    assert len(completions(chat_server)) == 12
    noted = [note for note in document["notes"] if note.startswith("concurrency lowered to ")]
    assert noted and "after 6 429s" in noted[0], document["notes"]
    assert document["metrics"]["rate_limits"] == noted


def test_a_retry_after_past_retry_after_max_is_cut_and_the_run_says_so(evalkit_cli, project, chat_server) -> None:
    """A 429 asking for an hour, from an instance whose retry_after_max is 0.01 s: the wait is cut
    to it (the run ends, every case answered), and the run's notes say the endpoint's wait was not
    honoured, and how long it asked for (it was capped at backoff_max, silently)."""
    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = configure(project, chat_server, extra="retry_after_max = 0.01")
    chat_server.fail_at(2, Fault.rate_limited(retry_after="3600"))  # request 1 is the free readiness probe
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["status"] == "complete" and len(completions(chat_server)) == 7
    (note,) = [note for note in document["notes"] if "Retry-After" in note]
    assert "cut to retry_after_max = 0.01 s (the longest asked for 3,600 s)" in note, note


def test_shards_of_one_run_share_its_budget_through_the_store(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    # each request costs about 0.012 EUR (10 prompt tokens, 1 completion token)
    first = evalkit_cli(
        "run", "arith.basic", "--provider", "prod", "--shard", "1/2", "--run-id", "shared", "--concurrency", "1", "--budget", "0.05",
        "--database", f"sqlite:///{project / '.evalkit' / 'results.db'}", env=env,
    )  # fmt: skip
    first_asked = len(completions(chat_server))
    assert first_asked == 3, first.stdout + first.stderr
    second = evalkit_cli(
        "run", "arith.basic", "--provider", "prod", "--shard", "2/2", "--run-id", "shared", "--concurrency", "1", "--budget", "0.05",
        "--database", f"sqlite:///{project / '.evalkit' / 'results.db'}", env=env,
    )  # fmt: skip
    assert second.code == 3, second.stdout + second.stderr
    asked = len(completions(chat_server))
    # alone, the second shard's three cases (about 0.036 EUR) would fit in 0.05
    assert asked - first_asked < 3, "the second shard starts from what the first one spent"
    assert "budget reached after" in second.stdout
    spend = evalkit_cli("show", "shared", "--json", env=env).json()["spend"]
    assert Decimal(spend["cost"]) <= Decimal("0.05") and spend["generator"]["requests"] == asked


def test_plan_estimates_requests_tokens_and_cost_from_the_last_run_before_anything_is_sent(evalkit_cli, project, chat_server) -> None:
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    fresh = evalkit_cli("plan", "arith.basic", "--provider", "prod", "--json", env=env)
    assert fresh.code == 0, fresh.stderr
    guessed = fresh.json()["estimate"]
    assert guessed["generator_requests"] == 6 and guessed["from_run"] is None and guessed["measured_cases"] == 0
    assert guessed["cost"] is not None and guessed["currency"] == "EUR"
    assert chat_server.request_count == 0 and not (project / ".evalkit").exists(), "a plan sends nothing and stores nothing"
    run = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env).json()
    planned = evalkit_cli("plan", "arith.basic", "--provider", "prod", env=env)
    assert f"(estimated from the stored usage of run {run['run_id']} for 6 cases)" in planned.stdout, planned.stdout
    # one Requests line, the plan's (the estimate's count is the same), and every figure in one column
    assert planned.stdout.count("Requests:") == 1 and "Requests:         6 answers (1 per case)" in planned.stdout
    assert "Requests sent:" not in planned.stdout and "Cost:             unknown" not in planned.stdout
    figures = planned.stdout.split("\nwarning:")[0].splitlines()
    assert [line[:18].rstrip() for line in figures] == [
        "Set:", "Requests:", "Gate:", "Pass rate:", "Detectable drop:", "Target drop:", "Tokens:", "Cost:", "Time:"
    ] and all(line[18] != " " for line in figures)
    measured = evalkit_cli("plan", "arith.basic", "--provider", "prod", "--json", env=env).json()["estimate"]
    assert measured["cost"] == run["spend"]["cost"], "the last run's usage, priced the same, costs what it cost"


def test_repeats_never_read_or_write_the_cache(evalkit_cli, project, chat_server) -> None:
    """Repeats must be independent answers: with --repeats the cache is neither read nor written,
    even when it holds every answer, and the run says so."""
    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    assert evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", env=env).code == 0
    assert len(completions(chat_server)) == 6 and evalkit_cli("cache", "stats", "--json", env=env).json()["entries"] == 6
    repeated = evalkit_cli("run", "arith.basic", "--provider", "prod", "--cache", "--repeats", "3", "--json", env=env)
    assert repeated.code == 0, repeated.stderr
    assert len(completions(chat_server)) == 6 + 18, "every repeat asked the model, none came from the cache"
    document = repeated.json()
    assert document["spend"]["answers_from_cache"] == 0
    assert any("neither read nor written" in note for note in document["notes"]), document["notes"]
    assert evalkit_cli("cache", "stats", "--json", env=env).json()["entries"] == 6, "nothing written either"


def test_a_token_count_past_what_can_be_counted_sets_the_replys_whole_usage_aside_and_says_so(evalkit_cli, project, chat_server) -> None:
    """An endpoint's ``usage`` of 10**400 prompt tokens: that count was dropped, so the reply was
    counted as reporting no usage (its cost unknown), while its 7 completion tokens were counted
    and nothing said why. Now one rule: the reply's whole usage is unreported, and the notes say so."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    body = {
        "model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10**400, "completion_tokens": 7, "total_tokens": 10**400 + 7},
    }  # fmt: skip
    chat_server.fail_at(2, Fault.garbage(json.dumps(body)))  # the first request is the readiness probe
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    generator = document["spend"]["generator"]
    counted = [case["usage"] for case in document["cases"] if case["usage"] is not None]
    assert generator["usage_unreported"] == 1 and len(counted) == document["case_count"] - 1
    assert generator["completion_tokens"] == sum(usage["completion_tokens"] for usage in counted)
    assert generator["prompt_tokens"] == sum(usage["prompt_tokens"] for usage in counted)
    assert document["spend"]["cost"] is None
    note = (
        f"1 reply from {chat_server.base_url} reported a usage evalkit cannot count (the first: prompt_tokens of about 1e400, "
        "not a whole number from 0 below 2**63): each such reply's usage is counted as unreported, its prompt and completion "
        "tokens alike, and its cost is unknown"
    )
    assert note in document["notes"], document["notes"]


def test_a_repeat_that_reported_no_usage_leaves_the_cost_unknown_not_the_sum_of_the_others(evalkit_cli, project, chat_server) -> None:
    """Under --repeats a case's usage was the sum of the answers that reported one: a reply
    without usage was left out, so the run's cost was known and too low ("an unknown cost is
    never 0" — nor a part of it)."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    body = {"model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}]}
    chat_server.fail_at(2, Fault.garbage(json.dumps(body)))  # the first request is the readiness probe
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", "3", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["spend"]["generator"]["usage_unreported"] == 3  # the case's 3 requests: its usage is unknown
    assert document["spend"]["cost"] is None
    assert sum(1 for case in document["cases"] if case["usage"] is None or case["usage"]["prompt_tokens"] is None) == 1



def test_a_repeated_prompt_with_an_answer_whose_usage_is_unknown_has_an_unknown_usage_and_cost(evalkit_cli, project, chat_server) -> None:
    """--repeats 2: the case's usage was the sum of the answers that reported one, so an answer
    whose usage was set aside counted as 0 tokens and the run's cost was below what was spent."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    body = {
        "model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": True, "completion_tokens": 7},
    }  # fmt: skip
    chat_server.fail_at(2, Fault.garbage(json.dumps(body)))  # the first request is the readiness probe
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", "2", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    assert [case["usage"] is None for case in document["cases"]].count(True) == 1
    assert document["spend"]["generator"]["usage_unreported"] == 2 and document["spend"]["cost"] is None  # the case's 2 requests
    assert any("prompt_tokens True, not a whole number" in note for note in document["notes"]), document["notes"]


def test_a_usage_echoing_the_api_key_never_shows_a_piece_of_it_in_the_notes(evalkit_cli, project, chat_server) -> None:
    """A proxy echoing the request's key as a token count: the note showed its first 37
    characters (``short_repr`` cut it before the output's secret removal, which finds a key only
    whole). A count that is a long text is now described by its length."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    key = "sk-proj-" + "Q7f2" * 12  # 56 characters, as a real project key is long
    env["EVALKIT_TEST_KEY"] = key
    body = {
        "model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": key, "completion_tokens": 7},
    }  # fmt: skip
    chat_server.fail_at(2, Fault.garbage(json.dumps(body)))
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", env=env)
    assert result.code == 0, result.stderr
    assert "(the first: prompt_tokens a text of 56 characters, not a whole number from 0 below 2**63)" in result.stdout, result.stdout
    assert key[8:20] not in result.stdout + result.stderr


def test_plan_time_honours_the_providers_per_minute_limits_and_prints_huge_counts_one_bounded_way(evalkit_cli, project, chat_server) -> None:
    """``max_tokens_per_minute = 1000`` and ~5.5e19 tokens said "Time: 0 s" (the latencies alone);
    the token line had no thousands separators, and ``max_tokens = 10**400`` printed a 401-digit
    count beside a cost in scientific notation. Now the time is bounded by the limits the provider
    declares (and says which), and every figure reads as the cost does."""
    chat_server.responder = arithmetic
    assert evalkit_cli("run", "arith.basic", "--provider", "prod", env=priced(project, chat_server)).code == 0  # latencies measured
    env = priced(project, chat_server, extra="max_requests_per_minute = 2")
    planned = evalkit_cli("plan", "arith.basic", "--provider", "prod", env=env)
    assert planned.code == 0, planned.stderr
    time_line = next(line for line in planned.stdout.splitlines() if line.startswith("Time:"))
    # 6 requests at 2 a minute: the first 2 at once, the other 4 two minutes later at the earliest
    assert re.search(r"Time: +1?[0-9]{2,3} s", time_line) and "max_requests_per_minute = 2" in time_line, time_line
    assert evalkit_cli("plan", "arith.basic", "--provider", "prod", "--json", env=env).json()["estimate"]["time_limit"] == (
        'max_requests_per_minute = 2 of "prod"'
    )

    env = priced(project, chat_server, extra="max_tokens_per_minute = 1000\nmax_tokens = 9_000_000_000_000_000_000")
    planned = evalkit_cli("plan", "arith.basic", "--provider", "prod", env=env)
    assert planned.code == 0, planned.stderr
    lines = {line.split(":")[0]: line for line in planned.stdout.splitlines()}
    # each request holds its max_tokens, at most a minute's 1,000: 6,000 tokens, the first 1,000 at once
    assert re.search(r"Time: +300 s, bounded by max_tokens_per_minute = 1,000 of \"prod\"", lines["Time"]), lines["Time"]
    fresh = evalkit_cli("plan", "arith.basic", "--provider", "prod", "--model", "unmeasured", env=env)
    lines = {line.split(":")[0]: line for line in fresh.stdout.splitlines()}
    assert re.search(r"Tokens: +about [0-9,]+ in, 5\.4E\+19 out", lines["Tokens"]), lines["Tokens"]
    assert "Time:             at least 300 s, bounded by max_tokens_per_minute" in lines["Time"], lines["Time"]


def test_a_runs_summary_prints_a_huge_token_count_as_the_plan_does(evalkit_cli, project, chat_server) -> None:
    """A reply reporting 9e18 prompt tokens (a count evalkit keeps: below 2**63) printed as 19 digits
    in the run's summary while `evalkit plan` and the cost read 9E+18: one bounded way for both."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    body = _nine_e18_prompt_tokens_reply()
    chat_server.fail_at(2, Fault.garbage(json.dumps(body)))  # the first request is the readiness probe
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", env=env)
    tokens = next(line for line in result.stdout.splitlines() if line.startswith("Tokens:"))
    assert re.match(r"Tokens: +9E\+18 prompt \+ [0-9,]+ completion tokens in 6 replies", tokens), tokens


def test_a_runs_token_total_past_2_63_is_kept_whole_and_read_back_everywhere(evalkit_cli, project, chat_server) -> None:
    """Each reply below 2**63 tokens (what one reply may report), six of them past it: the run's
    total is kept as JSON text (no INTEGER or BIGINT column holds it), so the store, show, history
    and the verdict take it whole. A pin: a total moved into an integer column would overflow."""
    import json

    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server)
    body = _nine_e18_prompt_tokens_reply()
    for number in range(2, 8):  # the first request is the readiness probe
        chat_server.fail_at(number, Fault.garbage(json.dumps(body)))
    result = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["spend"]["generator"]["prompt_tokens"] == 6 * 9 * 10**18 > 2**63
    assert document["verdict"]["state"] == "baseline"
    shown = evalkit_cli("show", document["run_id"], "--json", env=env)
    assert shown.code == 0 and shown.json()["spend"] == document["spend"]
    listed = evalkit_cli("history", "arith.basic", "--json", env=env)
    assert listed.code == 0 and listed.json()["runs"][0]["spend"] == document["spend"]
    again = evalkit_cli("run", "arith.basic", "--provider", "prod", "--json", env=env)
    assert again.code == 0 and again.json()["verdict"]["state"] == "no_regression", again.stderr


def test_a_budget_stopped_shard_is_told_its_own_slice_and_a_budget_its_run_needs(evalkit_cli, project, chat_server) -> None:
    # The note of a stopped shard counted the whole run ("after 1 of 6 cases") though the shard
    # answers its slice, and did not say the limit it suggests is the run's, which shards share
    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    database = f"sqlite:///{project / '.evalkit' / 'results.db'}"
    common = ("--provider", "prod", "--run-id", "sliced", "--concurrency", "1", "--database", database)
    # each request costs about 0.012 EUR: 0.03 lets shard 1/2 answer one of its four cases
    first = evalkit_cli("run", "arith.basic", *common, "--shard", "1/2", "--budget", "0.03", env=env)
    assert first.code == 3, first.stdout + first.stderr
    output = first.stdout + first.stderr
    assert "budget reached after 1 of the 4 cases of shard 1/2 (1 of the run's 6; spent 0.012 EUR of the run's " in output
    assert "budget of 0.03 EUR, which its shards share); resume it with: " in output, output
    second = evalkit_cli("run", "arith.basic", *common, "--shard", "2/2", "--budget", "1", env=env)
    assert second.code == 0, second.stdout + second.stderr
    words = resume_words(output)
    assert words[-6:-2] == ["--shard", "1/2", "--run-id", "sliced"] and words[-2] == "--budget", words
    resumed = evalkit_cli(*words, env=env)  # the run's budget it was told lets the slice finish, the other shard's spend included
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert evalkit_cli("show", "sliced", "--json", env=env).json()["status"] == "complete"
    assert len(completions(chat_server)) == 6


def _nine_e18_prompt_tokens_reply() -> dict:
    """A chat reply answering "4" that reports 9e18 prompt tokens: below 2**63, what one reply may report."""
    return {
        "model": "gpt-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9 * 10**18, "completion_tokens": 7, "total_tokens": 9 * 10**18 + 7},
    }  # fmt: skip


@pytest.mark.parametrize(("repeats", "budget"), [("2", "0.1"), ("3", "0.2"), ("3", "0.3")])
def test_the_budget_a_repeated_run_stopped_by_its_budget_is_told_finishes_it(
    evalkit_cli, project, chat_server, monkeypatch, repeats: str, budget: str
) -> None:
    """``--repeats 2 --budget 0.1``, each reply dearer than estimated: the budget refused a case's
    second answer, and the case was stored errored with its first answer's cost. The resume line's
    budget was the cost so far per case asked times the cases — the cut case counted as one whole —
    while the resume starts from all that was spent and pays that case again whole: pasted, it
    stopped one case short, incomplete. The budget it says finishes the run, the CLI's line and a
    library caller's alike (one rule: :func:`evalkit.run.answering.spending.budget_args`)."""
    from evalkit import evaluate_set

    chat_server.responder = lambda body: arithmetic(body) + " more" * 40
    env = priced(project, chat_server, extra="max_tokens = 4")
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", repeats)
    stopped = evalkit_cli(*base, "--budget", budget, env=env)
    assert stopped.code == 3 and "budget reached after" in stopped.stdout, stopped.stdout + stopped.stderr
    words = resume_words(stopped.stdout)
    resumed = evalkit_cli(*words, env=env)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert "Status:     complete" in resumed.stdout

    monkeypatch.setenv(*next(iter(env.items())))
    cut = evaluate_set(
        "arith.basic", provider="prod", cwd=project, concurrency=1, repeats=int(repeats), budget=budget, run_id="lib-b"
    )
    (note,) = [n for n in cut.notes if "budget reached after" in n]
    again = shlex.split(note.split("resume it with: ", 1)[1])
    more = again[again.index("--budget") + 1]
    done = evaluate_set("arith.basic", provider="prod", cwd=project, concurrency=1, budget=more, run_id="lib-b", resume=True)
    assert done.run.status.value == "complete", done.notes


def dearer_than_estimated(body) -> str:
    """An answer of 41 more words than ``max_tokens = 4`` lets the budget expect: each reply costs
    about 0.092 EUR at PRICES where it was estimated at 0.018."""
    return arithmetic(body) + " more" * 40


@pytest.mark.parametrize("repeats", ["1", "2", "3"])
def test_a_budget_is_not_passed_by_replies_dearer_than_their_estimate(evalkit_cli, project, chat_server, repeats: str) -> None:
    """``--budget 0.3 --repeats 2 --concurrency 1`` spent 0.368 EUR: each request was admitted at
    the estimate ``max_tokens`` gave, and a reply dearer than that never raised the next one's. The
    estimate is now never below what the run's replies cost a request so far."""
    chat_server.responder = dearer_than_estimated
    env = priced(project, chat_server, extra="max_tokens = 4")
    base = ("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--repeats", repeats, "--json")
    stopped = evalkit_cli(*base, "--budget", "0.3", env=env)
    assert stopped.code == 3, stopped.stderr
    document = stopped.json()
    assert Decimal(document["spend"]["cost"]) <= Decimal("0.3"), document["spend"]
    assert "passed by" not in " ".join(document["notes"]) and "spent" not in document["limit_stops"]["*"]
    # the resumed process counts what the stored replies cost a request, as the running one did
    resumed = evalkit_cli(*base, "--resume", document["run_id"], "--budget", "0.35", env=env)
    assert resumed.code == 3, resumed.stderr
    assert Decimal(resumed.json()["spend"]["cost"]) <= Decimal("0.35"), resumed.json()["spend"]


def test_a_budget_passed_by_the_requests_in_flight_says_by_how_much(evalkit_cli, project, chat_server) -> None:
    """At ``--concurrency 4`` the first four requests go out together at an estimate that proves
    low: what was spent passes the budget, and the run said it spent 0.552 EUR "of a budget of 0.3
    EUR" as if that were within it. It now stops once the first replies say what a request costs,
    and the line, the verdict and the stored limit stop say the budget was passed, and by how much."""
    chat_server.responder = dearer_than_estimated
    env = priced(project, chat_server, extra="max_tokens = 4")
    stopped = evalkit_cli(
        "run", "arith.basic", "--provider", "prod", "--concurrency", "4", "--repeats", "2", "--budget", "0.3", "--json", env=env
    )  # fmt: skip
    assert stopped.code == 3, stopped.stderr
    document = stopped.json()
    spent = Decimal(document["spend"]["cost"])
    assert spent > Decimal("0.3") and len(completions(chat_server)) == 4, "only the first wave, sent at once, passes it"
    (note,) = [n for n in document["notes"] if "budget reached" in n]
    assert f"spent {spent.normalize():f} EUR of a budget of 0.3 EUR, passed by {(spent - Decimal('0.3')).normalize():f} EUR" in note
    assert document["limit_stops"]["*"]["spent"] == str(spent)
    shown = evalkit_cli("show", document["run_id"], env=env)
    assert f"the budget of 0.3 EUR reached, and passed by {(spent - Decimal('0.3')).normalize():f} EUR" in shown.stdout


def test_a_budget_reserves_the_judge_calls_of_each_answer(evalkit_cli, project, chat_server) -> None:
    """A judge grader's calls were counted only once paid: each request was admitted at the
    generator's estimate alone, and a case's judge calls (0.157 EUR here, the generator's request
    0.012) took the run past its budget. A request now reserves its answer's judge calls too."""
    from tests.plugins.judge_support import decision_reply, user_message
    from tests.support.providers import openai_provider_table

    chat_server.responder = lambda body: decision_reply(4) if "<<<" in user_message(body) else arithmetic(body)
    env = priced(project, chat_server, extra="max_tokens = 4")
    with (project / "evalkit.toml").open("a") as config:
        config.write("\n" + openai_provider_table("judge", chat_server.base_url, "judge-alias") + PRICES + "\n")
    judged = ("run", "arith.basic", "--provider", "prod", "--grader", "decision", "--judge", "judge", "--json")
    for concurrency in ("1", "3"):
        stopped = evalkit_cli(*judged, "--concurrency", concurrency, "--budget", "0.5", env=env)
        assert stopped.code == 3, stopped.stderr
        spend = stopped.json()["spend"]
        assert spend["judge"]["requests"] >= 1 and Decimal(spend["cost"]) <= Decimal("0.5"), (concurrency, spend)


def test_a_run_that_answered_every_case_past_its_budget_says_so(evalkit_cli, project, chat_server) -> None:
    """Six requests sent at once at an estimate that proves low: every case is answered, the run is
    complete (exit 0), and it spent past its budget — which it used to keep to itself."""
    chat_server.responder = dearer_than_estimated
    env = priced(project, chat_server, extra="max_tokens = 4")
    done = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "6", "--budget", "0.3", "--json", env=env)
    assert done.code == 0, done.stderr
    document = done.json()
    spent = Decimal(document["spend"]["cost"])
    assert document["status"] == "complete" and spent > Decimal("0.3")
    over = (spent - Decimal("0.3")).normalize()
    assert f"spent {spent.normalize():f} EUR, {over:f} EUR past the budget of 0.3 EUR: " in " ".join(document["notes"])


def test_a_budget_with_a_judge_priced_in_another_currency_is_refused_before_anything_is_sent(evalkit_cli, project, chat_server) -> None:
    """The budget is in the generator's currency, and a judge priced in USD had its calls added to
    a EUR budget as they were: 1 USD counted as 1 EUR. No rate is assumed: refused, exit 2."""
    from tests.support.providers import openai_provider_table

    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    with (project / "evalkit.toml").open("a") as config:
        config.write(
            "\n" + openai_provider_table("judge", chat_server.base_url, "judge-alias")
            + "price_per_million_input = 1000\nprice_per_million_output = 2000\ncurrency = \"USD\"\n"
        )  # fmt: skip
    refused = evalkit_cli(
        "run", "arith.basic", "--provider", "prod", "--grader", "decision", "--judge", "judge", "--budget", "0.5", env=env
    )  # fmt: skip
    assert refused.code == 2, refused.stdout + refused.stderr
    assert '--budget is an amount in "EUR"' in refused.stderr and 'judge "judge" is priced in "USD"' in refused.stderr
    assert completions(chat_server) == []


def test_a_budget_stops_the_judge_calls_of_reused_answers(evalkit_cli, project, chat_server) -> None:
    """An answer reused from a stored run (``--answers-from``, ``--cache``) takes no request, but a
    judge grader's calls on it are paid: they were counted once made, never held to the budget, so
    six reused answers judged at about 0.157 EUR each took a run with ``--budget 0.5`` to 0.94 EUR,
    complete, exit 0. They now reserve their judge calls' estimate as a request does, and the run
    stops before passing the budget, saying so."""
    from tests.plugins.judge_support import decision_reply, user_message
    from tests.support.providers import openai_provider_table

    chat_server.responder = lambda body: decision_reply(4) if "<<<" in user_message(body) else arithmetic(body)
    env = priced(project, chat_server, extra="max_tokens = 4")
    with (project / "evalkit.toml").open("a") as config:
        config.write("\n" + openai_provider_table("judge", chat_server.base_url, "judge-alias") + PRICES + "\n")
    judged = ("run", "arith.basic", "--provider", "prod", "--grader", "decision", "--judge", "judge", "--json")
    source = evalkit_cli(*judged, env=env)
    assert source.code == 0, source.stderr
    judge_cost = Decimal(source.json()["spend"]["judge"]["cost"])
    assert judge_cost > Decimal("0.9"), "six judge calls cost more than the budget below"
    asked = len(completions(chat_server))
    reused = evalkit_cli(*judged, "--answers-from", source.json()["run_id"], "--budget", "0.5", env=env)
    assert reused.code == 3, reused.stdout + reused.stderr
    document = reused.json()
    spend = document["spend"]
    assert spend["answers_reused"] >= 1 and spend["generator"]["requests"] == 0
    assert 1 <= spend["judge"]["requests"] < 6 and Decimal(spend["cost"]) <= Decimal("0.5"), spend
    assert len(completions(chat_server)) - asked == spend["judge"]["requests"], "only the judge was asked"
    assert document["status"] == "incomplete"
    assert "a spending limit stopped it: the budget of 0.5 EUR reached" in document["verdict"]["reason"], document["verdict"]
    assert document["limit_stops"]["*"]["limit"] == "budget"
    resumed = evalkit_cli(*resume_words(" ".join(document["notes"])), "--json", env=env)  # the budget it is told finishes it
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert resumed.json()["status"] == "complete" and resumed.json()["spend"]["judge"]["requests"] == 6


def test_a_request_that_failed_without_a_reply_costs_the_budget_nothing(evalkit_cli, project, chat_server) -> None:
    """A request that got no reply (HTTP 500 on every attempt) was charged its estimate by the
    running process, though the run's cost and a resume count it as nothing (no tokens were
    reported): ``--budget 0.05`` stopped after 1 of 6 cases saying ``spent 0.012 EUR of a budget of
    0.05 EUR`` — 0.038 left, the next request estimated at 0.022. It now costs the budget nothing
    (``--max-requests`` still counts it, as one)."""
    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = priced(project, chat_server, extra="max_tokens = 4")
    for number in range(2, 5):  # request 1 is the free readiness probe; the first case's 3 attempts fail
        chat_server.fail_at(number, Fault.http_error(500))
    stopped = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--budget", "0.05", "--json", env=env)
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    document = stopped.json()
    (note,) = [note for note in document["notes"] if "budget reached" in note]
    # each reply costs 0.012 EUR and each request is estimated at 0.022: three fit in 0.05, a fourth does not
    assert "budget reached after 3 of 6 cases (spent 0.036 EUR of a budget of 0.05 EUR)" in note, note
    assert document["spend"]["generator"]["requests"] == 3 and document["errored"] == 1


def test_a_failed_request_counts_toward_the_shared_request_limit_in_every_shard(evalkit_cli, project, chat_server) -> None:
    # A request that failed without a reply counted one toward --max-requests in its own shard,
    # but was read back from the store as none: the other shard sent one request past the limit.
    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    for number in (2, 3, 4):  # request 1 is the free readiness probe; the first case's 3 attempts get a 500
        chat_server.fail_at(number, Fault.http_error(500))
    common = ("run", "arith.basic", "--provider", "prod", "--run-id", "limited", "--concurrency", "1", "--max-requests", "4")
    common += ("--database", f"sqlite:///{project / '.evalkit' / 'results.db'}")
    first = evalkit_cli(*common, "--shard", "1/2", env=env)
    sent = len(completions(chat_server))
    # its four cases, four requests (a transport retry is not counted): the first failed, three answered
    assert sent == 6, first.stdout + first.stderr
    second = evalkit_cli(*common, "--shard", "2/2", env=env)
    assert second.code == 3, second.stdout + second.stderr
    assert len(completions(chat_server)) == sent, "the limit of 4 requests was reached by shard 1/2"
    assert "the limit of 4 requests reached" in second.stdout + second.stderr


def test_a_repeated_answer_that_failed_counts_toward_the_shared_request_limit_in_every_shard(evalkit_cli, project, chat_server) -> None:
    # With --repeats 2, a case whose second answer failed (HTTP 500 on every attempt) was counted 2
    # requests by the shard that sent them and 1 read back from the store (its one reply): the other
    # shard sent a request past the run's limit. Each case now stores the requests it sent.
    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    for number in (3, 4, 5):  # 1 is the free readiness probe, 2 the first answer; the second's 3 attempts fail
        chat_server.fail_at(number, Fault.http_error(500))
    common = ("run", "arith.basic", "--provider", "prod", "--run-id", "repeated", "--concurrency", "1", "--repeats", "2")
    common += ("--max-requests", "8", "--database", f"sqlite:///{project / '.evalkit' / 'results.db'}")
    first = evalkit_cli(*common, "--shard", "1/2", env=env)
    sent = len(completions(chat_server))
    # its four cases, eight requests: the first case's answer and its failed second (3 attempts), 3 × 2 answered
    assert sent == 10, first.stdout + first.stderr
    second = evalkit_cli(*common, "--shard", "2/2", env=env)
    assert second.code == 3, second.stdout + second.stderr
    assert len(completions(chat_server)) == sent, "the limit of 8 requests was reached by shard 1/2"
    assert "the limit of 8 requests reached" in second.stdout + second.stderr


def test_a_resume_counts_a_failed_request_and_is_told_a_limit_that_finishes_the_run(evalkit_cli, project, chat_server) -> None:
    # A resume counts the run's failed requests toward --max-requests (each as one, as the running
    # process did): the limit it is told must leave room for them and for every case asked again.
    from tests.support.chat_server import Fault

    chat_server.responder = arithmetic
    env = configure(project, chat_server)
    for number in (2, 3, 4):  # request 1 is the free readiness probe; the first case's 3 attempts get a 500
        chat_server.fail_at(number, Fault.http_error(500))
    first = evalkit_cli("run", "arith.basic", "--provider", "prod", "--concurrency", "1", "--max-requests", "2", env=env)
    output = first.stdout + first.stderr
    assert first.code == 3 and "the limit of 2 requests reached" in output, output
    words = resume_words(output)
    # 2 counted (one failed, one answered) and 5 cases asked again: 6 stopped the resume one short
    assert words[words.index("--max-requests") + 1] == "7", words
    resumed = evalkit_cli(*words, env=env)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
