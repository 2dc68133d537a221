"""What a prompt run will cost, before anything is sent: :func:`estimate_set`.

For each case of the set the tokens come from the stored usage of the same case (an unchanged
prompt: :func:`evalkit.set_versions.prompt_digest`) in the latest run of the same set, provider
instance and alias; a case without one is estimated from its prompt's length
(:func:`evalkit.run.answering.spending.estimate_tokens`: 4 characters a token, plus 4 a message)
with the instance's ``max_tokens`` completion tokens (else the mean of the measured cases, else
:data:`~evalkit.run.answering.spending.DEFAULT_OUTPUT_TOKENS`). A judge grader asks its judge
``repeats`` times a case; each call is estimated from the stored judge usage of the case, else as
the case's prompt and answer plus :data:`JUDGE_INSTRUCTION_TOKENS` of instructions, answered in
:data:`JUDGE_OUTPUT_TOKENS`. The time is the measured latencies summed over the concurrency
(unknown when no case was measured), or longer when the per-minute limits the generator's or the
judge's provider instance declares (``max_requests_per_minute``, ``max_tokens_per_minute``) cannot
pass the run's requests sooner (:func:`minute_limit_seconds`); ``time_limit`` names that limit. Nothing is called: the generator and the judge are bound,
never asked (nor shown the set), and no readiness probe is made. (The ``evalkit plan`` command prints this.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs

from ..config import Config, load_config
from ..costs import Price, price_from_mapping
from ..prompts import GoldenPromptSet
from ..storage import check_database_url, missing_store, resolve_database_url
from ..validation import CheckProgress
from ..wording import quoted
from .answering.spending import JUDGE_INSTRUCTION_TOKENS, JUDGE_OUTPUT_TOKENS

__all__ = ["JUDGE_INSTRUCTION_TOKENS", "JUDGE_OUTPUT_TOKENS", "RunEstimate", "estimate_set"]



@attrs.frozen
class RunEstimate:
    """What a run of a set is expected to ask and cost (see the module docstring).

    ``measured_cases`` of the ``cases`` were estimated from the stored usage of run ``from_run``;
    ``cost`` is ``None`` (unknown) when a price that would be paid is not configured; ``seconds``
    is ``None`` when no case's latency was measured and no per-minute limit bounds it (with one
    but no latency it is the least the limit allows), ``time_limit`` the per-minute limit that
    bounds it (``None``: the latencies do); ``judge_repeats`` is how many times the
    built grader asks its judge about one answer (0 without a judge), as a run would."""

    cases: int
    generator_requests: int
    judge_requests: int
    prompt_tokens: int
    completion_tokens: int
    judge_prompt_tokens: int
    judge_completion_tokens: int
    cost: Decimal | None
    currency: str | None
    seconds: float | None
    concurrency: int
    from_run: str | None = None
    measured_cases: int = 0
    judge_repeats: int = 0
    time_limit: str | None = None

    def document(self) -> dict[str, Any]:
        """The JSON form: amounts as exact decimal strings, ``null`` when unknown."""
        return {
            "cases": self.cases,
            "generator_requests": self.generator_requests,
            "judge_requests": self.judge_requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "judge_prompt_tokens": self.judge_prompt_tokens,
            "judge_completion_tokens": self.judge_completion_tokens,
            "cost": None if self.cost is None else str(self.cost),
            "currency": self.currency,
            "seconds": self.seconds,
            "time_limit": self.time_limit,
            "concurrency": self.concurrency,
            "from_run": self.from_run,
            "measured_cases": self.measured_cases,
        }


def estimate_answering(
    answering: Any, config: Config, repository: Any | None, progress: Callable[[CheckProgress], None] | None = None
) -> RunEstimate:
    """The estimate of a prepared prompt run (:func:`~evalkit.run.answering.prompts.prepare_prompts`),
    from ONE pass over its prompts (a stream of a million takes seconds a pass), held to the check's
    (:class:`~evalkit.errors.SetChangedError` when a stream yields other prompts, or its producer
    fails, this time). ``progress`` hears how far that pass has come, as the check's ``on_check``
    does (:func:`evalkit.validation.paced`)."""
    from ..components import declared, judge_instance
    from ..set_versions import prompt_digest
    from ..validation import paced
    from .answering.repeats import answer_usage
    from .answering.spending import DEFAULT_OUTPUT_TOKENS, estimate_tokens, judge_calls, measured_cases, run_pricing

    from_run, stored = measured_cases(repository, answering) if repository is not None else (None, {})
    max_tokens = declared(answering.bound.generator, "max_tokens")
    judge = judge_instance(answering.grading)
    repeats = judge_calls(answering.grading)
    cases = measured = measured_out = 0
    prompt_tokens = completion_tokens = judge_in = judge_out = 0
    latency = 0.0
    # An unmeasured case's completion is guessed from the measured ones, known only once the pass
    # has ended: how many guessed completions the sums lack, added at the end (exact: all integers;
    # each guessed answer is also in each of its ``repeats`` judge calls).
    guessed_answers = 0
    prompts = answering.golden_set.prompts
    if answering.order is not None:  # held to the check's pass: a stream that fails or shifts now is named, not a traceback
        prompts = answering.order.follow(prompts)
    prompts = paced(prompts, progress, answering.golden_set.identifier, answering.case_count)
    for prompt in prompts:
        cases += 1
        case = stored.get(prompt.id)
        usage = answer_usage(case) if case is not None else None  # one answer's, of a run answered --repeats N
        if (
            usage is None or usage.input_tokens is None or usage.output_tokens is None or case.answer_source
            or (case.prompt_digest is not None and case.prompt_digest != prompt_digest(prompt))
        ):  # fmt: skip
            given = estimate_tokens(prompt)
            prompt_tokens += given
            guessed_answers += 1
            judge_in += repeats * (given + JUDGE_INSTRUCTION_TOKENS)
            judge_out += repeats * JUDGE_OUTPUT_TOKENS
            continue
        given, answered = usage.input_tokens, usage.output_tokens
        measured += 1
        measured_out += answered
        latency += case.latency_s
        prompt_tokens += given
        completion_tokens += answered
        # the judge calls the case's stored usage measured, then the rest estimated alike
        unmeasured = repeats
        for known in case.judge_usage[:repeats]:
            if known is not None and known.input_tokens is not None and known.output_tokens is not None:
                judge_in += known.input_tokens
                judge_out += known.output_tokens
                unmeasured -= 1
        judge_in += unmeasured * (given + answered + JUDGE_INSTRUCTION_TOKENS)
        judge_out += unmeasured * JUDGE_OUTPUT_TOKENS
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0:
        output_guess = max_tokens
    elif measured:
        output_guess = math.ceil(measured_out / measured)
    else:
        output_guess = DEFAULT_OUTPUT_TOKENS
    completion_tokens += guessed_answers * output_guess
    judge_in += repeats * guessed_answers * output_guess
    # with --repeats every prompt is answered (and each answer judged) that many times
    answers = answering.repeats
    prompt_tokens, completion_tokens = prompt_tokens * answers, completion_tokens * answers
    judge_in, judge_out = judge_in * answers, judge_out * answers
    pricing = run_pricing(config, answering.bound, answering.grading)
    cost, currency = _cost(
        price_from_mapping(pricing.get("generator")), prompt_tokens, completion_tokens,
        price_from_mapping(pricing.get("judge")) if repeats else None, judge_in, judge_out, bool(repeats),
    )  # fmt: skip
    concurrency = answering.concurrency
    seconds = None
    if measured:
        # the unmeasured cases are assumed as slow as the measured ones on average
        seconds = latency / measured * cases * answers / max(1, min(concurrency, cases))
    reserved = output_guess * cases * answers if output_guess == max_tokens else 0
    limited = [
        # a request's tokens, as the pacing counts them before it is sent, hold its whole max_tokens
        *_limits_of(config, answering.bound.instance, cases * answers, prompt_tokens + max(completion_tokens, reserved)),
        *(_limits_of(config, judge, cases * repeats * answers, judge_in + judge_out) if repeats and isinstance(judge, str) else []),
    ]
    time_limit = None
    for limit_seconds, name in limited:
        if seconds is None or limit_seconds > seconds:
            seconds, time_limit = limit_seconds, name
    return RunEstimate(
        cases, cases * answers, cases * repeats * answers, prompt_tokens, completion_tokens,
        judge_in, judge_out, cost, currency, seconds, concurrency, from_run, measured, repeats, time_limit,
    )  # fmt: skip


def minute_limit_seconds(amount: int, per_minute: int, *, requests: int | None = None) -> int:
    """The least whole seconds a per-minute limit of ``per_minute`` units needs to pass ``amount``
    of them, as the ``openai`` adapter's pacing does (:class:`evalkit_plugins._pacing.MinuteBucket`:
    a full minute's worth at once, then refilled evenly; a request takes at most the capacity, so
    ``requests`` of them take at most ``requests * per_minute`` tokens). In integers: a count of
    400 digits is no float."""
    if requests is not None:
        amount = min(amount, requests * per_minute)
    waiting = max(0, amount - per_minute)
    return -(-waiting * 60 // per_minute)


def _limits_of(config: Config, instance: str | None, requests: int, tokens: int) -> list[tuple[int, str]]:
    """The seconds each per-minute limit the provider ``instance`` declares needs for ``requests``
    carrying ``tokens``, each with the limit's name as the plan says it."""
    from ..wording import figure

    provider = config.providers.get(instance) if instance is not None else None
    if provider is None:
        return []
    found = []
    for option, amount, per_request in (("max_requests_per_minute", requests, None), ("max_tokens_per_minute", tokens, requests)):
        per_minute = provider.options.get(option)
        if isinstance(per_minute, int) and not isinstance(per_minute, bool) and per_minute > 0:
            needed = minute_limit_seconds(amount, per_minute, requests=per_request)
            found.append((needed, f'{option} = {figure(per_minute)} of {quoted(instance)}'))
    return found


def _cost(
    price: Price | None, given: int, answered: int, judge_price: Price | None, judge_in: int, judge_out: int, judged: bool
) -> tuple[Decimal | None, str | None]:
    """The estimated cost and its currency; unknown without a price that would be paid, or when
    generator and judge are priced in two currencies."""
    if price is None or (judged and judge_price is None):
        return None, price.currency if price is not None else None
    cost = price.request_cost(given, answered)
    if judged and judge_price is not None:
        if judge_price.currency != price.currency:
            return None, None
        cost += judge_price.request_cost(judge_in, judge_out)
    return cost, price.currency


def estimate_set(
    set_identifier: str | GoldenPromptSet,
    *,
    provider: str | None = None,
    model: str | None = None,
    grader: str = "deterministic",
    grader_options: Mapping[str, Any] | None = None,
    config: Config | None = None,
    database: str | None = None,
    concurrency: int | None = None,
    repeats: int | None = None,
    cwd: Path | None = None,
    on_check: Callable[[CheckProgress], None] | None = None,
    on_estimate: Callable[[CheckProgress], None] | None = None,
) -> RunEstimate:
    """Estimate a run of ``set_identifier`` (the arguments of :func:`evalkit.evaluate_set`; the set
    itself, as a caller that has looked it up already passes it, spares a second look-up) without
    calling anything: the requests, the tokens, the cost and the time (see the module docstring) of
    a run that answers every prompt ``repeats`` times (else ``[run] repeats``, else once). An
    unknown set, grader or provider instance, or repeats a run would refuse, is refused as a run
    refuses it (a usage error). ``on_check`` hears how far the check of the set has come, as
    :func:`evalkit.evaluate_set`'s does, and ``on_estimate`` how far the estimate's own pass over
    the prompts has come (the same :class:`~evalkit.validation.CheckProgress`). The set is read
    twice: checked and counted, then estimated; a generator that wants to see the set before a run
    (the reference generator's ``bind_set``) is not shown it, as it is never asked. An argument of
    the wrong kind (``database=""``, ``grader=None``, ``on_check=5``) is refused by name first, as
    :func:`evalkit.evaluate_set` refuses it."""
    from .. import hooks
    from ..arguments import CALLBACK, OPTIONAL_TEXT, check_arguments
    from .answering import prompts as prompt_answering
    from .library import chosen_repeats, opened
    from .settings import prompt_run_kinds

    kinds = prompt_run_kinds(
        "set_identifier", "model", "grader", "grader_options", "config", "database", "cwd", "on_check",
        provider=OPTIONAL_TEXT, on_estimate=CALLBACK,
    )  # fmt: skip
    check_arguments("estimate_set", locals(), kinds)
    cwd = Path(cwd) if cwd is not None else None
    config = config if config is not None else load_config(cwd=cwd)
    repeats = chosen_repeats(repeats, config)
    manager, _ = hooks.plugin_manager(())
    source = prompt_answering.PromptSource(
        set_identifier, provider, model, grader, True, dict(grader_options or {}), None, concurrency, repeats=repeats,
        answered=False,
    )
    answering, _notes = prompt_answering.prepare_prompts(source, config, manager, on_check)
    url = resolve_database_url(database, config, cwd)
    check_database_url(url)
    if missing_store(url) is not None:  # an estimate never creates a store
        return estimate_answering(answering, config, None, on_estimate)
    with opened(url) as repository:
        return estimate_answering(answering, config, repository, on_estimate)
