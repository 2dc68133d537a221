"""Prices, amounts, the answer cache's key and the rules of reuse (evalkit.costs, evalkit.answer_cache,
evalkit.run.answering.spending); end to end through the CLI in tests/cli/test_costs.py."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import attrs
import pytest
from evalkit.answer_cache import request_key, serving_side
from evalkit.answers import GenerationRequest, Usage
from evalkit.config import Config
from evalkit.costs import Price, RunSpend, add_costs, cost_of, format_amount, parse_amount, run_spend
from evalkit.errors import UsageError
from evalkit.run.answering.spending import Reservation, SpendGuard, SpendingRequest, cache_allowed, prepare_spending


def test_amounts_are_exact_and_an_unknown_one_is_never_zero() -> None:
    price = Price(0.15, 0.6)
    assert price.input == Decimal("0.15") and price.currency == "USD"
    assert sum((price.request_cost(1000, 1000) for _ in range(1000)), Decimal(0)) == Decimal("0.75")
    assert cost_of(Usage(input_tokens=10, output_tokens=None), price) is None
    assert cost_of(Usage(input_tokens=10, output_tokens=5), None) is None
    assert add_costs([Decimal(1), None]) is None and add_costs([]) == 0
    assert format_amount(None, "USD") == "unknown" and format_amount(Decimal("0.00420"), "EUR") == "0.0042 EUR"
    assert format_amount(Decimal(0), "USD") == "0 USD"
    assert format_amount(Decimal("999999999999999.99"), "USD") == "999999999999999.99 USD"
    assert format_amount(Decimal("1e15"), "USD") == "1E+15 USD"
    assert format_amount(Decimal("18e303"), "USD") == "1.8E+304 USD"
    assert format_amount(Decimal("123456789012345678"), "EUR") == "1.23457E+17 EUR"
    with pytest.raises(ValueError):
        parse_amount("-1")
    with pytest.raises(ValueError):
        parse_amount("NaN")


def test_a_run_with_an_unpriced_judge_has_an_unknown_cost() -> None:
    spend = RunSpend.priced({"generator": Price(1, 2).as_mapping(), "judge": None})
    spend.add_case(Usage(input_tokens=10, output_tokens=5), [Usage(input_tokens=3, output_tokens=1)], None)
    assert spend.generator.cost == Decimal("0.00002") and spend.cost is None and spend.document()["cost"] is None
    cached = RunSpend.priced({"generator": Price(1, 2).as_mapping()})
    cached.add_case(Usage(input_tokens=10, output_tokens=5), (), "cache")
    assert cached.cost == 0 and cached.from_cache == 1 and cached.generator.requests == 0


def test_the_cache_key_changes_with_everything_that_shapes_an_answer_and_nothing_else() -> None:
    serving = serving_side("prod", "openai", "gpt", {"base_url": "http://a/v1", "temperature": 0, "timeout": 5})
    request = GenerationRequest(prompt="What is 2 + 2?", system_prompt=None, model="gpt", case_id="a")
    key = request_key(serving, request)
    assert key == request_key(serving_side("prod", "openai", "gpt", {"base_url": "http://a/v1", "temperature": 0, "timeout": 60}), request)
    changed = [
        request_key(serving_side("other", "openai", "gpt", {"base_url": "http://a/v1", "temperature": 0}), request),
        request_key(serving_side("prod", "openai", "gpt-2", {"base_url": "http://a/v1", "temperature": 0}), request),
        request_key(serving_side("prod", "openai", "gpt", {"base_url": "http://b/v1", "temperature": 0}), request),
        request_key(serving_side("prod", "openai", "gpt", {"base_url": "http://a/v1", "temperature": 0.0}), request),
        request_key(serving, attrs.evolve(request, prompt="What is 2 + 3?")),
        request_key(serving, attrs.evolve(request, system_prompt="Be brief.")),
        request_key(serving, attrs.evolve(request, temperature=0.5)),
        request_key(serving, attrs.evolve(request, max_tokens=5)),
    ]
    assert key not in changed and len(set(changed)) == len(changed)


def test_repeats_neither_read_nor_write_the_cache() -> None:
    assert cache_allowed(True, 1) and not cache_allowed(True, 2) and not cache_allowed(False, 1)
    bound = SimpleNamespace(instance="prod", adapter="openai", alias="gpt", configured=True, generator=SimpleNamespace(max_tokens=None))
    answering = SimpleNamespace(bound=bound, pricing={})
    plan, notes = prepare_spending(answering, Config(), "full", SpendingRequest(cache=True, repeats=3), repository=None)
    assert plan is None and any("repeats must be independent" in note for note in notes)


def test_cache_below_full_privacy_needs_the_config_to_say_so() -> None:
    bound = SimpleNamespace(instance="prod", adapter="openai", alias="gpt", configured=True, generator=SimpleNamespace(max_tokens=None))
    with pytest.raises(UsageError, match='"metadata"'):
        prepare_spending(SimpleNamespace(bound=bound, pricing={}), Config(), "metadata", SpendingRequest(cache=True), repository=None)


def test_a_budget_guard_waits_for_requests_in_flight_and_stops_only_when_nothing_is() -> None:
    prompt = SimpleNamespace(prompt="x" * 40, system_prompt=None)
    guard = SpendGuard(Decimal("0.03"), None, Price(1000, 2000), output_tokens=1)
    first = guard.admit(prompt)
    assert isinstance(first, Reservation) and first.total == Decimal("0.016")
    assert guard.admit(prompt) == "wait", "the first request's estimate is in flight"
    answered = SimpleNamespace(usage=Usage(input_tokens=10, output_tokens=1), judge_usage=())
    guard.settle(first, answered)
    assert guard.spent == Decimal("0.012")
    second = guard.admit(prompt)
    assert second.total == Decimal("0.016") and guard.admit(prompt) == "wait"
    guard.settle(second, answered)
    assert guard.admit(prompt) is None and guard.stopped == "budget reached", "0.024 spent + 0.016 would pass 0.03"
    limited = SpendGuard(None, 1, None)
    assert limited.admit(prompt).total == 0 and limited.admit(prompt) is None and limited.stopped == "the limit of 1 request reached"


def test_the_judge_calls_on_a_reused_answer_are_held_to_the_budget_but_not_to_the_request_limit() -> None:
    """A reused answer takes no request, and its judge calls were counted once paid, never
    admitted: a run of reused answers passed its budget by every judge call. They now reserve
    their estimate as a request's do (waiting while anything is in flight), and ``--max-requests``,
    which counts the generator's requests, neither counts nor stops them."""
    prompt = SimpleNamespace(prompt="x" * 40, system_prompt=None)
    guard = SpendGuard(Decimal("0.7"), None, Price(1000, 2000), Price(1000, 2000), output_tokens=1, judge_calls=1)
    first = guard.admit_judging(prompt)  # (14 + 1 + 300) prompt tokens, 50 completion tokens
    assert isinstance(first, Reservation) and (first.generator, first.judge) == (Decimal(0), Decimal("0.415"))
    assert guard.admit_judging(prompt) == "wait" and guard.in_flight_requests == 0
    judged = SimpleNamespace(usage=None, judge_usage=(Usage(input_tokens=300, output_tokens=10),))
    guard.settle_judging(first, judged)
    assert (guard.spent, guard.requests, guard.in_flight, guard.in_flight_judging) == (Decimal("0.32"), 0, 0, 0)
    second = guard.admit_judging(prompt)  # now at what a judged answer cost: 0.32
    assert second.total == Decimal("0.32")
    guard.settle_judging(second, judged)
    assert guard.admit_judging(prompt) is None and guard.stopped == "budget reached" and guard.refused == Decimal("0.32")
    limited = SpendGuard(None, 1, None, Price(1000, 2000), judge_calls=1)
    assert isinstance(limited.admit(prompt), Reservation) and limited.admit(prompt) is None, "the one request the limit allows"
    assert isinstance(limited.admit_judging(prompt), Reservation), "a reused answer asks the generator nothing"


def test_an_errored_answers_spend_counts_but_never_its_size_in_the_budgets_estimate() -> None:
    """The budget's running mean of an answer's size took in an errored case's usage (what its
    replies before the failure reported): a conversation cut after one long turn, a case a limit
    stopped between its repeats, made the next requests' estimates wrong. Its spend still counts."""
    prompt = SimpleNamespace(prompt="x" * 40, system_prompt=None)
    guard = SpendGuard(Decimal(100), None, Price(1000, 2000))
    reserved = guard.admit(prompt)
    guard.settle(reserved, SimpleNamespace(usage=Usage(input_tokens=10, output_tokens=4), judge_usage=(), errored=False))
    before = guard.estimate(prompt)
    reserved = guard.admit(prompt)
    guard.settle(reserved, SimpleNamespace(usage=Usage(input_tokens=10, output_tokens=4000), judge_usage=(), errored=True))
    assert guard.estimate(prompt) == before, "an errored answer is no measure of an answer's size"
    assert guard.spent == Decimal("0.018") + Decimal("8.01"), "what it spent is spent"
    stored = SpendGuard(Decimal(100), None, Price(1000, 2000))
    stored.measure(Usage(input_tokens=30, output_tokens=12), answers=3)
    assert stored.estimate(prompt) == before, "a stored case of a run answered 3 times is 3 answers"


def test_a_resumed_runs_stored_cases_measure_its_answers_by_the_same_rule() -> None:
    """Resumed, the guard measured every stored case's usage as one answer: an errored one's
    partial usage, a reused one's, and a repeated case's sum of N answers as one answer."""
    from evalkit.run.answering.spending import SpendingPlan

    rows = [
        (Usage(input_tokens=30, output_tokens=12), (), None, False, 3),  # 3 answers of 4 tokens
        (Usage(input_tokens=10, output_tokens=4000), (), None, True, 1),  # errored
        (Usage(input_tokens=10, output_tokens=900), (), "cache", False, 0),  # reused
    ]
    spending = SimpleNamespace(case_usage=lambda run_id: iter(rows))
    store = SimpleNamespace(cache=None, spending=spending)
    part = SimpleNamespace(store=store, run_id="r", shard=None)
    pricing = {"generator": Price(1000, 2000).as_mapping()}
    guard = SpendingPlan(budget=Decimal(100), repeats=3).extras_for(part, pricing, None).guard
    prompt = SimpleNamespace(prompt="x" * 40, system_prompt=None)
    assert guard.estimate(prompt) == Price(1000, 2000).request_cost(14, 4)


def test_usage_keeps_total_and_cached_prompt_tokens_where_the_endpoint_reports_them() -> None:
    reported = {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128, "prompt_tokens_details": {"cached_tokens": 100}}
    assert Usage.coerce(reported) == Usage(input_tokens=120, output_tokens=8, total_tokens=128, cached_input_tokens=100)
    assert Usage.coerce({"prompt_tokens": 3, "completion_tokens": 1}).cached_input_tokens is None, "not reported is None, never 0"
    spend = RunSpend.priced({"generator": Price(1, 1).as_mapping()})
    spend.add_case(Usage.coerce(reported), (), None)
    assert spend.document()["generator"]["cached_prompt_tokens"] == 100 and spend.generator.total_tokens == 128


def test_a_shard_near_the_budget_reads_what_the_other_shards_spent_before_each_request() -> None:
    """Two shards of one run started at once each read the store every 16 settled requests: each
    spent as if alone before it saw the other's spending (``arith.basic --shard 1/2`` and ``2/2`` at
    once, ``--budget 0.05``: 0.059 EUR between them). Within 16 requests of each shard from the
    limit, a shard now reads the store before each request."""
    prompt = SimpleNamespace(prompt="x" * 40, system_prompt=None)
    reads: list[int] = []

    def stored() -> tuple[Decimal, int]:
        reads.append(1)
        return Decimal("0.99"), 40  # the other shard's spending, and this one's, as stored

    guard = SpendGuard(Decimal(1), None, Price(1000, 2000), output_tokens=1, refresh=stored, parts=2)
    guard.spent = Decimal("0.7")  # what this shard knows of: far enough from 1 for one shard alone
    assert guard.admit(prompt) is None and guard.stopped == "budget reached" and reads == [1]
    limited = SpendGuard(None, 50, None, refresh=lambda: (Decimal(0), 50), parts=2)
    limited.requests = 30
    assert limited.admit(prompt) is None and limited.stopped == "the limit of 50 requests reached"
    far = SpendGuard(Decimal(100), None, Price(1000, 2000), output_tokens=1, refresh=stored, parts=2)
    assert far.admit(prompt) is not None and len(reads) == 1, "far from the limit the store is not read each time"


def test_a_scripted_conversation_reserves_a_request_for_each_of_its_user_turns() -> None:
    """A conversation is started whole, and it reserved one request's estimate for its three model
    turns: three conversations in flight were counted as three requests where nine went out."""
    guard = SpendGuard(Decimal(100), None, Price(1000, 2000), output_tokens=1)
    single = guard.admit(SimpleNamespace(prompt="x" * 40, system_prompt=None))
    talk = guard.admit(SimpleNamespace(prompt="x" * 40, system_prompt=None, user_turns=3))
    assert talk.total == 3 * single.total and guard.in_flight == 4 * single.total


@pytest.mark.parametrize(
    ("errored", "requests", "usage"),
    [
        (True, 0, None),  # a request that failed without a reply: 500 on every attempt
        (False, 1, Usage(input_tokens=10, output_tokens=4)),
        (False, 3, Usage(input_tokens=30, output_tokens=12)),  # a conversation's three model turns
        (True, 2, Usage(input_tokens=20, output_tokens=8)),  # a case cut between its repeats, or a grading that failed
    ],
)
def test_a_settled_request_counts_toward_max_requests_as_its_stored_case_is_read_back(errored, requests, usage) -> None:
    # The shard that sent a failed request counted it; the others, reading the run's count from the
    # store, did not (its case is stored requests=0) and sent one request past the run's limit.
    from evalkit.run.answering.spending import budget_spent

    guard = SpendGuard(None, 10, None)
    reserved = guard.admit(SimpleNamespace(prompt="What is 2+2?", system_prompt=None))
    guard.settle(reserved, SimpleNamespace(usage=usage, judge_usage=(), errored=errored, requests=requests))
    _, read_back = budget_spent(None, [(usage, (), None, errored, requests)])
    assert read_back == guard.own_requests


def test_a_third_party_stores_case_usage_rows_of_four_or_five_values_still_count() -> None:
    """A store's ``case_usage`` gives a row of six values now (the requests sent last); one written
    before yields five, or four (before the replies were counted): the fields it does not give read
    as not stored, and count as they did when that store was written."""
    from evalkit.run.answering.spending import budget_spent
    from evalkit.storage import CaseUsage

    usage = Usage(input_tokens=10, output_tokens=4)
    pricing = {"generator": Price(1000, 2000).as_mapping()}
    old = [(usage, (), None, False), (None, (), None, True), (usage, (), None, False, 3), (usage, (), None, True, 1)]
    assert budget_spent(pricing, old)[1] == 1 + 1 + 3 + 1
    assert run_spend(pricing, old).generator.requests == 1 + 0 + 3 + 1
    # the requests sent, when the store gives them: a failed second answer and a conversation's failed turn count
    sent = [CaseUsage(usage, (), None, True, 1, 2), (usage, (), None, True, 1, 3), (usage, (), "cache", False, 0, 0)]
    assert budget_spent(pricing, sent)[1] == 5
