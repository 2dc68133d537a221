"""What a prompt run does besides asking the model for every answer: reuse an answer it already has
(a stored run's, the answer cache's), and stop asking before a budget or a request limit is passed.

:class:`AnswerExtras` is handed to the async runner only when one of these is asked for (``--cache``,
``--answers-from``, ``evalkit regrade``, ``--budget``, ``--max-requests``): without it the runner's
per-request path is what it always was, and nothing here costs a store round trip.

* :class:`StoredAnswers` — a source run's answers by case id, each reused only for a prompt whose
  fingerprint is unchanged and whose answer was stored whole (at ``full`` privacy, not cut).
* The answer cache (:mod:`evalkit.answer_cache`) — read before a request, written after an answer.
* :class:`SpendGuard` — before each request its cost is estimated (:func:`estimate_tokens`; its
  judge calls too, and never below what the run's replies and judge calls cost so far on average)
  and the request is refused when what was spent, plus what is in flight, plus it would pass
  ``--budget``; ``--max-requests`` counts the generator's requests. What was spent is counted as
  answers arrive, judge calls included; shards of one run share it through the store. A request
  that costs more than its estimate can take what was spent past the budget: the run says by how
  much (:func:`budget_passed`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_CEILING, Decimal
from typing import Any, Literal

import attrs

from ...answer_cache import request_key
from ...answers import Answer, GenerationRequest, ServingIdentity, Usage
from ...components import answered_by, declared, judge_instance, plugin_called, same_generator
from ...costs import SCIENTIFIC_FROM, CaseUsage, Price, RunSpend, cost_of, limited_requests, run_spend, stored_replies
from ...prompts import GoldenPrompt
from ...runs import CaseResult
from ...wording import argument, quoted, table_key
from ..limit_stops import REQUEST_LIMIT_REACHED, requests_reached

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "JUDGE_INSTRUCTION_TOKENS",
    "JUDGE_OUTPUT_TOKENS",
    "AnswerExtras",
    "Reservation",
    "ReusedAnswer",
    "SpendGuard",
    "budget_passed",
    "StoredAnswers",
    "estimate_tokens",
    "run_spend",
]

#: The documented estimate of a prompt's tokens when no stored usage says: 4 characters a token
#: (OpenAI's rule of thumb for English), plus :data:`MESSAGE_OVERHEAD_TOKENS` per message.
CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
#: The completion tokens assumed for a request when neither ``max_tokens`` nor an answer of this
#: run says better.
DEFAULT_OUTPUT_TOKENS = 256
#: A judge call's instructions (its prompt template) beyond the case's prompt and answer, in tokens.
JUDGE_INSTRUCTION_TOKENS = 300
#: The tokens a judge answers with (a short verdict).
JUDGE_OUTPUT_TOKENS = 50
#: The marker :func:`~evalkit.run.answering.prompt_runner.stored_answer` ends a cut answer with.

CUT_MARKER = "\n… [truncated by evalkit: the answer was "


def estimate_tokens(prompt: GoldenPrompt) -> int:
    """A prompt's estimated prompt tokens from its length (see :data:`CHARS_PER_TOKEN`)."""
    chars = len(prompt.prompt) + len(prompt.system_prompt or "")
    messages = 2 if prompt.system_prompt else 1
    return math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS * messages


@attrs.frozen
class ReusedAnswer:
    """An answer that needs no request: what was answered, who answered it, and where it came
    from (``cache`` or ``run:<id>``)."""

    answer: Answer
    identity: ServingIdentity | None
    source: str


@attrs.frozen
class StoredAnswers:
    """A stored run's answers, by case id (``only``: never ask the model — a re-grade)."""

    run_id: str
    cases: Mapping[str, CaseResult]
    only: bool = False

    def reuse(self, prompt: GoldenPrompt, fingerprint: str) -> ReusedAnswer | str | None:
        """The stored answer to ``prompt``; the reason it cannot be reused when there is one
        (an edited prompt, an answer stored cut or not at all); ``None``: the run has no case.

        The prompt is the same when its digest (prompt and system prompt) is the stored one; a
        case stored without a digest is compared by its whole fingerprint (checks included), and
        one stored without either is never reused."""
        from ...set_versions import prompt_digest

        case = self.cases.get(prompt.id)
        if case is None:
            return None if not self.only else f"run {self.run_id} has no answer to this prompt"
        if case.errored or case.answer_text is None:
            return f"run {self.run_id} stored no answer to this prompt"
        if case.prompt_digest is not None:
            changed = case.prompt_digest != prompt_digest(prompt)
        else:
            changed = case.fingerprint is None or case.fingerprint != fingerprint
        if changed:
            return f"the prompt changed since run {self.run_id}: its answer there answers another prompt, so it is not re-used"
        if CUT_MARKER in case.answer_text:
            return f"run {self.run_id} stored this answer cut (max_answer_bytes), so it cannot be graded whole"
        identity = case.identity
        answer = Answer(text=case.answer_text, model=identity.reported_model if identity else None, usage=case.usage)
        return ReusedAnswer(answer, identity, f"run:{self.run_id}")


@attrs.frozen
class Reservation:
    """What :meth:`SpendGuard.admit` reserved for one request: its ``generator`` estimate and that
    of its answer's judge calls (``judge``)."""

    generator: Decimal
    judge: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        """The whole reservation."""
        return self.generator + self.judge


@attrs.define
class SpendGuard:
    """Stops dispatching before ``budget`` (in ``price``'s currency) or ``max_requests`` would be
    passed (see the module docstring). ``spent`` and ``requests`` start at what the run's stored
    cases already spent (a resumed run, other shards); ``refresh`` re-reads that from the store
    (shards), every :data:`REFRESH_EVERY` settled requests. ``judge_calls``: the judge calls a
    judge grader makes for one answer (0: no judge)."""

    REFRESH_EVERY = 16

    budget: Decimal | None
    max_requests: int | None
    price: Price | None
    judge_price: Price | None = None
    output_tokens: int | None = None
    #: The completion tokens of an answer as measured before this run answered any (the mean of the
    #: latest run of the set, instance and alias), used until this run has answers of its own.
    prior_output: int | None = None
    judge_calls: int = 0
    #: The parts (shards) of the run that spend from the budget at once.
    parts: int = 1
    spent: Decimal = Decimal(0)
    requests: int = 0
    in_flight: Decimal = Decimal(0)
    in_flight_requests: int = 0
    #: Reused answers whose judge calls are in flight (:meth:`admit_judging`): no generator request.
    in_flight_judging: int = 0
    stopped: str | None = None
    #: The estimate of the request the budget refused (``None``: none was refused).
    refused: Decimal | None = None
    refresh: Callable[[], tuple[Decimal, int]] | None = None
    own_spent: Decimal = Decimal(0)
    own_requests: int = 0
    _settled: int = 0
    #: The settled requests counted when the store was last read (``-1``: never).
    _refreshed_at: int = -1
    _answered_output: int = 0
    _answered: int = 0
    #: What the run's replies of known cost cost, and their requests: the mean a request is
    #: estimated at least at (:meth:`observe`).
    _paid: Decimal = Decimal(0)
    _paid_requests: int = 0
    #: What the judge calls of the run's judged answers cost, and those answers.
    _judged_cost: Decimal = Decimal(0)
    _judged: int = 0
    _settled_event: asyncio.Event | None = None

    def _output(self) -> int:
        """The completion tokens a request is expected to be answered with."""
        if self.output_tokens is not None:
            return self.output_tokens
        if self._answered:
            return math.ceil(self._answered_output / self._answered)
        return self.prior_output if self.prior_output is not None else DEFAULT_OUTPUT_TOKENS

    def request_estimate(self, prompt: GoldenPrompt) -> Decimal:
        """What the generator requests for ``prompt`` are expected to cost (0 without a price): one
        for each user turn of a scripted conversation (it is started whole), each its
        prompt's length and the expected answer, and never less than what the run's replies of
        known cost cost a request so far — a reply dearer than estimated (an endpoint counting more
        tokens than 4 characters a token, or answering past ``max_tokens``) raises the estimate of
        the next, instead of each request being admitted at the estimate that was too low."""
        if self.price is None:
            return Decimal(0)
        cost = self.price.request_cost(estimate_tokens(prompt), self._output())
        if self._paid_requests:
            cost = max(cost, self._paid / self._paid_requests)
        # a scripted conversation is started whole: one request for each of its user turns
        turns = getattr(prompt, "user_turns", 1)
        return cost * turns if isinstance(turns, int) and turns > 1 else cost

    def judge_estimate(self, prompt: GoldenPrompt) -> Decimal:
        """What the judge calls of one answer to ``prompt`` are expected to cost (0 without a
        judge, or an unpriced one): each the prompt, the expected answer and
        :data:`JUDGE_INSTRUCTION_TOKENS`, answered in :data:`JUDGE_OUTPUT_TOKENS` (as ``evalkit plan``
        estimates them) until the run has judged an answer; then what its judged answers' calls cost
        on average (the instructions' length is a guess; what the judge charged is not)."""
        if not self.judge_calls or self.judge_price is None:
            return Decimal(0)
        if self._judged:
            return self._judged_cost / self._judged
        given = estimate_tokens(prompt) + self._output() + JUDGE_INSTRUCTION_TOKENS
        return self.judge_calls * self.judge_price.request_cost(given, JUDGE_OUTPUT_TOKENS)

    def estimate(self, prompt: GoldenPrompt) -> Decimal:
        """What one request for ``prompt`` and its answer's judge calls are expected to cost."""
        return self.request_estimate(prompt) + self.judge_estimate(prompt)

    def admit(self, prompt: GoldenPrompt) -> Reservation | None | Literal["wait"]:
        """The estimate reserved for a request for ``prompt``; ``None``: no more requests;
        ``"wait"``: only the estimates of requests in flight stand in the way (they usually cost
        less than estimated), so ask again once one of them has settled."""
        if self.stopped is not None:
            return None
        if self.max_requests is not None and self.requests + self.in_flight_requests >= self.max_requests:
            self.stopped = requests_reached(self.max_requests)  # in flight counts
            return None
        reservation = Reservation(self.request_estimate(prompt), self.judge_estimate(prompt))
        cost = reservation.total
        if self.refresh is not None and self._refreshed_at != self._settled and self._near_limit(cost):
            self._refresh()
            if self.max_requests is not None and self.requests + self.in_flight_requests >= self.max_requests:
                self.stopped = requests_reached(self.max_requests)
                return None
        if self._over_budget(cost):
            return "wait" if self.in_flight_requests or self.in_flight_judging else self._refuse(cost)
        self.in_flight += cost
        self.in_flight_requests += 1
        return reservation

    def admit_judging(self, prompt: GoldenPrompt) -> Reservation | None | Literal["wait"]:
        """The estimate reserved for the judge calls on a reused answer to ``prompt`` (the answer
        cache's, a stored run's: no generator request, so ``--max-requests`` does not count it),
        held to the budget as a request's are (:meth:`admit`); ``None``: the budget stops it;
        ``"wait"``: only what is in flight stands in the way."""
        if self.stopped is not None and not self.stopped.startswith(REQUEST_LIMIT_REACHED):
            return None
        reservation = Reservation(Decimal(0), self.judge_estimate(prompt))
        cost = reservation.total
        if cost and self.refresh is not None and self._refreshed_at != self._settled and self._near_limit(cost):
            self._refresh()
        if cost and self._over_budget(cost):
            return "wait" if self.in_flight_requests or self.in_flight_judging else self._refuse(cost)
        self.in_flight += cost
        self.in_flight_judging += 1
        return reservation

    def _over_budget(self, cost: Decimal) -> bool:
        """True when what was spent, plus what is in flight, plus ``cost`` passes the budget."""
        return self.budget is not None and self.spent + self._in_flight_worth() + cost > self.budget

    def _refuse(self, cost: Decimal) -> None:
        """Stop at the budget, keeping the estimate it refused (what the resume is told to allow)."""
        self.stopped = "budget reached"
        self.refused = cost
        return None

    def _in_flight_worth(self) -> Decimal:
        """What the requests in flight are expected to cost: what was reserved for them, or, when
        the replies that settled since cost more a request (and their judge calls more an answer),
        that mean for each — they were reserved at an estimate the run has since learnt was low (a
        reused answer's judge calls in flight count the judge's mean alone)."""
        floor = Decimal(0)
        if self._paid_requests:
            floor += self._paid / self._paid_requests * self.in_flight_requests
        if self._judged:
            floor += self._judged_cost / self._judged * (self.in_flight_requests + self.in_flight_judging)
        return max(self.in_flight, floor)

    async def admitted(self, prompt: GoldenPrompt, *, judging_only: bool = False) -> Reservation | None:
        """:meth:`admit` (``judging_only``: :meth:`admit_judging`), waiting while the requests in
        flight settle; ``None``: no more requests."""
        while True:
            decision = self.admit_judging(prompt) if judging_only else self.admit(prompt)
            if decision != "wait":
                return decision  # type: ignore[return-value]
            if self._settled_event is None:
                self._settled_event = asyncio.Event()
            self._settled_event.clear()
            await self._settled_event.wait()

    def measure(self, usage: Usage | None, answers: int = 1) -> None:
        """Count the completion tokens (when reported) of ``answers`` whole answers (``usage`` sums
        them: a stored case of a run answered ``--repeats N``) into the size :meth:`estimate`
        expects. Only whole answers measure it: an errored case's usage is what its replies before
        the failure reported (see :func:`~evalkit.run.answering.repeats.answer_usage`) — spent, and
        counted in what was spent, but no answer's size."""
        if usage is not None and usage.output_tokens is not None and answers >= 1:
            self._answered_output += usage.output_tokens
            self._answered += answers

    def observe(self, cost: Decimal | None, requests: int, judge_calls: Sequence[Usage] = ()) -> None:
        """Count what ``requests`` generator requests cost (``None``: not known, not counted) and
        what the judge calls of an answer cost into the least :meth:`estimate` reserves; the
        running process counts each reply as it settles, a resumed one the run's stored cases, by
        one rule: as for an answer's size (:meth:`measure`), an errored case's requests are spent
        but are no measure of what a request costs, nor is a reused answer's."""
        if cost is not None and requests >= 1:
            self._paid += cost
            self._paid_requests += requests
        costs = [cost_of(call, self.judge_price) if self.judge_price is not None else None for call in judge_calls]
        if costs and all(c is not None for c in costs):
            self._judged_cost += sum(costs, Decimal(0))  # type: ignore[arg-type]
            self._judged += 1

    def settle_judging(self, reserved: Reservation, case: CaseResult) -> None:
        """Count what the judge calls on ``case``'s reused answer cost, releasing ``reserved``
        (:meth:`admit_judging`)."""
        self.in_flight -= reserved.total
        self.in_flight_judging -= 1
        self.add_judge(case.judge_usage)
        self._settled += 1
        if self._settled_event is not None:
            self._settled_event.set()

    def settle(self, reserved: Reservation, case: CaseResult) -> None:
        """Count what the request for ``case`` (and its judge calls) cost, releasing ``reserved``."""
        self.in_flight -= reserved.total
        self.in_flight_requests -= 1
        known = cost_of(case.usage, self.price) if self.price is not None else Decimal(0)
        # a request that failed without a reply costs nothing, as it does read back (budget_spent)
        # and in the run's spend; a reply that reported no usage costs its estimate: what is known
        replied = not getattr(case, "errored", False) or bool(getattr(case, "requests", None))
        spent = known if known is not None else reserved.generator if replied else Decimal(0)
        # the requests the answer sent (a conversation's model turns each, one that got no reply
        # too): as the run's stored cases are counted (limited_requests), or the shards' counts disagree
        sent = CaseUsage(
            case.usage, (), None, getattr(case, "errored", False), getattr(case, "requests", None), getattr(case, "requests_sent", None)
        )
        made = max(1, limited_requests(sent))
        if not getattr(case, "errored", False):  # an errored answer's spend is spent, but it measures no answer
            self.measure(case.usage)
            self.observe(known, made)
        self.add_judge(case.judge_usage)
        self.spent += spent
        self.own_spent += spent
        self.requests += made
        self.own_requests += made
        self._settled += 1
        if self._settled_event is not None:
            self._settled_event.set()
        if self.refresh is not None and self._settled % self.REFRESH_EVERY == 0:
            self._refresh()

    def _near_limit(self, cost: Decimal) -> bool:
        """True when the next :data:`REFRESH_EVERY` requests of each of the run's :attr:`parts` could
        reach a limit: the other shards' spending is then read before each request, not every
        :data:`REFRESH_EVERY` settled ones (shards running at once each spent up to the whole budget
        before reading what the others had)."""
        ahead = self.REFRESH_EVERY * max(1, self.parts)  # what the other parts may have spent unseen
        if self.budget is not None and self.spent + self._in_flight_worth() + cost * ahead > self.budget:
            return True
        return self.max_requests is not None and self.requests + self.in_flight_requests + ahead > self.max_requests

    def _refresh(self) -> None:
        """Read what the run's shards spent from the store (:attr:`refresh`), at most once a settled request."""
        if self.refresh is None:
            return
        self._refreshed_at = self._settled
        others_spent, others_requests = self.refresh()
        self.spent = max(self.spent, others_spent)
        self.requests = max(self.requests, others_requests)

    def add_judge(self, calls: tuple[Usage, ...]) -> None:
        """Count the judge calls of a case (reused answers are judged too, and paid for)."""
        self.observe(None, 0, calls)
        for call in calls:
            cost = cost_of(call, self.judge_price) if self.judge_price is not None else None
            if cost is not None:
                self.spent += cost
                self.own_spent += cost


def budget_passed(budget: Decimal | None, spent: Decimal | None) -> Decimal | None:
    """By how much ``spent`` is past ``budget`` (``None``: it is not, or either is not known). A
    request is admitted on its estimate, and what its reply and its judge calls cost is only known
    once they are paid: the requests in flight when the budget was nearly reached can take what
    was spent past it by what they cost beyond their estimates."""
    if budget is None or spent is None or spent <= budget:
        return None
    return spent - budget


@attrs.define
class AnswerExtras:
    """What the runner does besides asking for every answer (see the module docstring): reuse a
    stored run's answers, read and write the answer ``cache`` (a store's
    :class:`~evalkit.storage.AnswerCache`, keyed with ``serving``), stop at a ``guard``. Counts what
    it reused."""

    stored: StoredAnswers | None = None
    cache: Any = None
    serving: Mapping[str, Any] | None = None
    guard: SpendGuard | None = None
    from_cache: int = 0
    reused: int = 0
    asked: int = 0

    def cache_key(self, request: GenerationRequest) -> str | None:
        """The request's cache key, or ``None`` when the cache is not used."""
        if self.cache is None or self.serving is None:
            return None
        return request_key(self.serving, request)

    def cached(self, key: str) -> ReusedAnswer | None:
        """The cache's answer for ``key``, with the serving identity it was answered with."""
        entry = self.cache.cached_answer(key)
        if entry is None:
            return None
        identity = None
        if entry.provider_instance and entry.model_alias and entry.reported_model:
            identity = ServingIdentity(entry.provider_instance, entry.model_alias, entry.reported_model)
        answer = Answer(
            text=entry.text, model=entry.reported_model, usage=entry.usage, finish_reason=entry.finish_reason
        )
        return ReusedAnswer(answer, identity, "cache")

    def keep(
        self, key: str, answer: Answer, identity: ServingIdentity | None, instance: str | None, alias: str | None
    ) -> None:
        """Keep a fresh answer in the cache under ``key``."""
        from ...storage.protocols import CachedAnswer

        self.cache.keep_answer(
            key,
            CachedAnswer(
                text=answer.text,
                provider_instance=instance or "",
                model_alias=alias,
                reported_model=identity.reported_model if identity is not None else answer.model,
                finish_reason=answer.finish_reason,
                usage=answer.usage,
            ),
        )


@attrs.frozen
class SpendingPlan:
    """What a prompt run was asked to do besides asking for every answer: ``budget`` (an amount in
    the generator's currency) and ``max_requests``, ``cache`` (read and write the answer cache,
    keyed with ``serving``: :func:`evalkit.answer_cache.serving_side`), and ``stored`` answers of
    another run (``reuse_kind``: ``answers-from`` or ``regrade``)."""

    budget: Decimal | None = None
    max_requests: int | None = None
    cache: bool = False
    serving: Mapping[str, Any] | None = None
    stored: StoredAnswers | None = None
    reuse_kind: str | None = None
    output_tokens: int | None = None
    prior_output: int | None = None
    #: Answers per prompt (``--repeats``): a stored case's usage sums that many.
    repeats: int = 1
    #: The judge calls a judge grader makes for one answer (``--judge-repeats``; 0: no judge).
    judge_calls: int = 0

    def extras_for(
        self, part: Any, pricing: Mapping[str, Any] | None, bound: Any, prompts: Sequence[GoldenPrompt] = ()
    ) -> AnswerExtras:
        """The runner's extras for one slice of the run, bound to the store: its answer cache, and
        a guard that starts from what the run's stored cases already spent (a resume, other shards).
        ``prompts``: the set's, whose mean estimate a stored reply of unknown cost counts when no
        reply's cost is known (:func:`budget_spent`); they are gone over only then, once."""
        store = part.store
        cache = store.cache if self.cache else None
        guard = None
        if self.budget is not None or self.max_requests is not None:
            spend = RunSpend.priced(pricing)
            guard = SpendGuard(
                self.budget, self.max_requests, spend.generator_price, spend.judge_price,
                output_tokens=self.output_tokens, prior_output=self.prior_output, judge_calls=self.judge_calls,
            )  # fmt: skip
            if store.spending is not None:  # a resumed run, other shards: their answers measure it best
                # by the rule of this run's own answers: whole answers asked of the model (not an
                # errored case's, nor a reused one), a case of a repeated run being its N answers;
                # what a request and an answer's judge calls cost, as the running process counted them
                for row in CaseUsage.rows(store.spending.case_usage(part.run_id)):
                    if not row.errored and not row.answer_source:
                        guard.measure(row.usage, answers=self.repeats)
                        made = stored_replies(row.usage, row.errored, row.requests)
                        paid = cost_of(row.usage, guard.price) if guard.price is not None and made else None
                        guard.observe(paid, made)
                    guard.observe(None, 0, row.judge_usage)

            mean_estimate: list[Decimal | None] = []

            def unknown_cost() -> Decimal | None:
                if not mean_estimate:  # one pass, and only when asked: a streamed set is produced again
                    total, count = Decimal(0), 0
                    for prompt in prompts:
                        total, count = total + guard.request_estimate(prompt), count + 1
                    mean_estimate.append(total / count if count else None)
                return mean_estimate[0]

            def stored_spend() -> tuple[Decimal, int]:
                if store.spending is None:
                    return guard.own_spent, guard.own_requests
                return budget_spent(pricing, store.spending.case_usage(part.run_id), unknown_cost)

            guard.spent, guard.requests = stored_spend()
            if part.shard is not None and store.spending is not None:
                before_spent, before_requests = guard.spent, guard.requests

                def refresh() -> tuple[Decimal, int]:
                    # every shard's stored spending, plus this one's not yet committed
                    stored_now, requests_now = stored_spend()
                    return max(stored_now, before_spent + guard.own_spent), max(
                        requests_now, before_requests + guard.own_requests
                    )

                guard.refresh = refresh
                guard.parts = part.shard.count
        return AnswerExtras(stored=self.stored, cache=cache, serving=self.serving, guard=guard)


def budget_spent(
    pricing: Mapping[str, Any] | None, rows: Any, unknown_cost: Callable[[], Decimal | None] | None = None
) -> tuple[Decimal, int]:
    """What a run's stored cases spent, as a budget counts it, and their generator requests as
    ``--max-requests`` counts them (:func:`~evalkit.costs.limited_requests`: the requests each
    sent, a failed one included), from :class:`~evalkit.storage.RunSpending` rows (a store's plain
    tuples read as :class:`~evalkit.storage.CaseUsage`).

    The run's spend says its cost is unknown once one reply reported no usage; a budget cannot
    count that as nothing (a resumed run forgot all it had spent, and spent the budget again). A
    reply of unknown cost counts what one request cost on average among the run's replies whose
    cost is known; none known (an endpoint that never reports usage), what ``unknown_cost()``
    says — the mean estimate of the set's requests, as the running process counted the estimate it reserved for
    each (else nothing: a resume then spent its whole budget again). A judge call of unknown cost
    adds nothing, as it did there."""
    rows = list(CaseUsage.rows(rows))
    spend = run_spend(pricing, rows)
    generator, judge = spend.generator_price, spend.judge_price
    known, known_requests, unknown_requests, judged, limited = Decimal(0), 0, 0, Decimal(0), 0
    for row in rows:
        limited += limited_requests(row)
        for call in row.judge_usage:
            cost = cost_of(call, judge) if judge is not None else None
            judged += cost if cost is not None else Decimal(0)
        made = stored_replies(row.usage, row.errored, row.requests)
        if row.answer_source or not made:
            continue  # reused, or no reply
        cost = cost_of(row.usage, generator) if generator is not None else None
        if cost is None:
            unknown_requests += made
        else:
            known += cost
            known_requests += made
    if unknown_requests and known_requests:
        known += known / known_requests * unknown_requests
    elif unknown_requests and unknown_cost is not None:
        each = unknown_cost()
        known += each * unknown_requests if each is not None else Decimal(0)
    return known + judged, limited


def budget_args(
    guard: SpendGuard, spend: RunSpend, case_count: int, repeats: int = 1, whole: int | None = None
) -> tuple[str, ...]:
    """The limits a resume command gives after ``guard`` stopped a run: a budget enough for the
    whole run at the cost per case so far, and for what the resume counts to — all the run spent, a
    case cut between its repeats included, and each case not stored ``whole`` again in full at the
    cost per request so far (rounded up, with a quarter to spare) —, at least twice the old one and
    at least what lets the resumed run send the request the budget refused and the rest at its
    estimate; a request limit of the requests the whole run takes (``repeats`` a case,
    more when its cases so far took more: conversations), at least twice the old one, and at least
    what the resume counts to: it starts from every request the run's stored cases spent
    (``spend``: a case cut between its repeats is stored errored, its requests counted) and asks
    each case not stored ``whole`` (``None``: not known, none) again in full. The CLI's line and a
    library caller's both say this limit."""
    args: list[str] = []
    asked = spend.asked
    requests = spend.generator.requests
    # the requests a case takes: ``repeats``, more when its cases so far took more (conversations)
    each = max(repeats, math.ceil(requests / asked)) if asked else repeats
    # the cases the resume asks again in full: every case not stored whole, a case cut between its repeats too
    left = max(0, case_count - (whole if whole is not None else asked))
    if guard.budget is not None:
        cost = spend.cost
        wanted = guard.budget * 2
        if cost is not None and asked:
            projected = cost / asked * case_count
            if requests:
                # the resume starts from all that was spent, the cut case's first answers included, and
                # pays that case again whole: at the cost per request, not per case asked (a cut case
                # counted as one whole made the budget one case short)
                projected = max(projected, cost + cost / requests * each * left)
            wanted = max(wanted, projected * Decimal("1.25"))
        if guard.refused is not None:
            # else a run stopped before its first answer is told a budget that stops it again
            wanted = max(wanted, (guard.spent + guard.refused * each * max(1, left)) * Decimal("1.25"))
        if wanted >= SCIENTIFIC_FROM:
            # Six significant digits, written 2.275E+26: cents would pass the context's 28 digits
            # (quantize() fails) and the plain form --budget's 40 characters.
            quantum = Decimal(1).scaleb(wanted.adjusted() - 5)
        else:
            quantum = Decimal("0.01") if wanted >= 1 else Decimal("0.0001")
        rounded = wanted.quantize(quantum, rounding=ROUND_CEILING).normalize()
        args += ["--budget", str(rounded) if wanted >= SCIENTIFIC_FROM else f"{rounded:f}"]
    if guard.max_requests is not None and guard.stopped and guard.stopped.startswith(REQUEST_LIMIT_REACHED):
        needed = case_count * repeats
        if asked:
            needed = max(needed, math.ceil(requests * case_count / asked))
        if whole is not None:
            # the resume's count starts at what was spent, a case cut short and a failed request
            # included (the guard counted them: limited_requests), and asks that case again
            needed = max(needed, max(requests, guard.requests) + max(0, case_count - whole) * each)
        args += ["--max-requests", str(max(needed, guard.max_requests * 2))]
    return tuple(args)


def cache_note(from_cache: int, answered: int) -> str:
    """The summary's line on answers that came from the cache."""
    if from_cache >= answered:
        return (
            f"All {from_cache} answers came from the answer cache: this run measures the grading, not the model "
            "(it is never accepted as a baseline automatically)."
        )
    return f"{from_cache} of {answered} answers came from the answer cache (such a run is never accepted as a baseline automatically)."


def pacing_notes(bound: Any, grading: Any) -> list[str]:
    """What the generator (and a judge's) said about rate limits while the run ran ("concurrency
    lowered to 12 after 429s"): the ``pacing_notes()`` of an adapter that keeps them."""
    notes: list[str] = []
    sources = [bound.generator]
    judge = declared(grading, "_bound")
    judged_by = declared(judge, "generator") if judge is not None else None
    if judged_by is not None and judged_by is not bound.generator:
        sources.append(judged_by)
    for source in sources:
        report = declared(source, "pacing_notes")
        if callable(report):
            try:
                notes.extend(str(n) for n in report())
            except Exception:  # noqa: BLE001 - a note is a bonus, never a failure
                continue
    return notes


@attrs.frozen
class SpendingRequest:
    """What the caller asked for: ``budget`` and ``max_requests``, ``cache`` (``None``: the
    configuration's ``[cache] enabled``), ``answers_from`` (a stored run's id), and ``repeats``
    (answers per prompt: above 1 the cache is neither read nor written)."""

    budget: Decimal | None = None
    max_requests: int | None = None
    cache: bool | None = None
    answers_from: str | None = None
    repeats: int = 1

    @property
    def asked(self) -> bool:
        """True when anything beyond plain asking was requested."""
        return (
            self.budget is not None
            or self.max_requests is not None
            or bool(self.cache)
            or self.answers_from is not None
        )


def run_pricing(config: Any, bound: Any, grading: Any) -> dict[str, Any]:
    """The prices a run is costed at: its generator instance's and its judge's (``None`` each when
    unpriced or not a configured instance)."""

    def price(instance: str | None) -> Any:
        configured = config.providers.get(instance) if instance else None
        return configured.price.as_mapping() if configured is not None and configured.price is not None else None

    return {"generator": price(bound.instance if bound.configured else None), "judge": price(judge_instance(grading))}


def cache_allowed(wanted: bool, repeats: int) -> bool:
    """The cache is used only when wanted and each prompt is answered once: repeats are
    independent requests by construction, so they neither read nor write it."""
    return wanted and repeats <= 1


def check_cache_privacy(privacy: str, config: Any, explicit_flag: bool) -> None:
    """Refuse ``--cache`` below ``full`` privacy unless ``[cache] enabled = true`` says the cache
    may keep full answers (it holds answer text whatever the run's level)."""
    from ...errors import UsageError

    if privacy != "full" and not config.cache_enabled and explicit_flag:
        raise UsageError(
            f"{argument('cache')} keeps full answer text in the store, and this run's privacy level is {quoted(privacy)}: "
            "set [cache] enabled = true in evalkit.toml to allow it (the cache then stores full answers whatever "
            f"the privacy level), or run with {argument('privacy', 'full', option='--privacy full')}"
        )


def check_spending(answering: Any, config: Any, privacy: str, request: SpendingRequest) -> None:
    """Refuse (usage error) what is wrong with ``request`` whatever the store holds — a budget
    without prices, a cache the privacy level does not allow — before the store is opened: opened
    first, a refusal (exit 2) left a new store behind in a project that had none."""
    from ...errors import UsageError

    if request.cache if request.cache is not None else config.cache_enabled:
        check_cache_privacy(privacy, config, explicit_flag=True)
    if request.budget is not None and (answering.pricing or {}).get("generator") is None:
        name = answering.bound.instance or answering.bound.adapter
        raise UsageError(
            f"{argument('budget')} needs the prices of provider instance {quoted(name)}: set price_per_million_input and "
            f"price_per_million_output (and currency) in [providers.{table_key(name)}] of evalkit.toml"
        )
    if request.budget is not None:
        spend = RunSpend.priced(answering.pricing)
        generator, judge = spend.generator_price, spend.judge_price
        if generator is not None and judge is not None and judge.currency != generator.currency:
            name, judged = answering.bound.instance or answering.bound.adapter, judge_instance(answering.grading)
            raise UsageError(
                f"{argument('budget')} is an amount in {quoted(generator.currency)}, the currency of provider instance "
                f"{quoted(name)}, and judge {quoted(judged)} is priced in {quoted(judge.currency)}: a budget cannot count its "
                f"calls (no exchange rate is assumed); price both instances in one currency"
            )


def prepare_spending(
    answering: Any, config: Any, privacy: str, request: SpendingRequest, repository: Any
) -> tuple[SpendingPlan | None, list[str]]:
    """The run's :class:`SpendingPlan` and notes, refusing (usage error, nothing called or stored)
    a budget without prices, a cache the privacy level or the store does not allow, and a source
    run whose answers cannot be reused (:func:`check_spending` first: what needs no store)."""
    from ...answer_cache import serving_side
    from ...errors import UsageError
    from ...storage.protocols import capabilities

    check_spending(answering, config, privacy, request)
    notes: list[str] = []
    bound = answering.bound
    wants_cache = request.cache if request.cache is not None else config.cache_enabled
    if wants_cache:
        if not cache_allowed(True, request.repeats):
            notes.append(
                "The answer cache is neither read nor written: each prompt is answered more than once "
                f"({argument('repeats')}), and repeats must be independent."
            )
            wants_cache = False
        elif capabilities(repository).cache is None:
            raise UsageError(
                f"{argument('cache')} needs a store that keeps an answer cache (AnswerCache), and the configured one does not"
            )
    stored = None
    if request.answers_from is not None:
        stored = stored_answers(repository, request.answers_from, answering, only=False)
    if not (wants_cache or stored is not None or request.budget is not None or request.max_requests is not None):
        return None, notes
    serving = None
    if wants_cache:
        configured = config.providers.get(bound.instance) if bound.instance else None
        if configured is not None and bound.configured:
            options = dict(configured.options)
        else:
            # an ad-hoc generator's options as it shows them: its call under the one rule for a
            # plugin's calls outside a case (what it raises names it); no table read as none
            redacted = declared(bound.generator, "redacted_options")
            shown = plugin_called(bound.plugin, "redacted_options", redacted) if callable(redacted) else None
            options = dict(shown) if isinstance(shown, Mapping) else {}
        serving = serving_side(bound.instance, bound.adapter, bound.alias, options)
    output = declared(bound.generator, "max_tokens")
    prior_output = measured_output(repository, answering) if request.budget is not None else None
    plan = SpendingPlan(
        budget=request.budget, max_requests=request.max_requests, cache=wants_cache, serving=serving, stored=stored,
        reuse_kind="answers-from" if stored is not None else None,
        output_tokens=output if isinstance(output, int) and not isinstance(output, bool) and output > 0 else None,
        prior_output=prior_output, repeats=max(1, request.repeats), judge_calls=judge_calls(answering.grading),
    )  # fmt: skip
    return plan, notes


def judge_calls(grading: Any) -> int:
    """The judge calls ``grading`` makes for one answer: its ``repeats`` (``--judge-repeats``) when
    it asks a judge instance, 0 when it asks none (what ``evalkit plan`` counts and a budget reserves)."""
    if judge_instance(grading) is None:
        return 0
    repeats = declared(grading, "repeats", 1)
    return repeats if isinstance(repeats, int) and not isinstance(repeats, bool) and repeats > 0 else 1


def measured_cases(repository: Any, answering: Any) -> tuple[str | None, dict[str, Any]]:
    """The latest prompt run of the set for this instance and alias, and its cases by id (what
    ``evalkit plan`` and a budget's estimate of an answer's size measure from)."""
    from ...storage import capabilities

    history = capabilities(repository).history
    if history is None:
        return None, {}
    bound = answering.bound
    for run in history.recent_runs(answering.golden_set.identifier, limit=50):
        if run.kind.value == "prompts" and (run.provider_instance, run.model_alias) == (bound.instance, bound.alias):
            full = repository.get_run(run.id)
            return run.id, {case.case_id: case for case in (full.cases if full is not None else ())}
    return None, {}


def measured_output(repository: Any, answering: Any) -> int | None:
    """The mean completion tokens of the answered cases of the latest run of the set for this
    instance and alias (what ``evalkit plan`` estimates from), or ``None`` when none is measured."""
    from .repeats import answer_usage

    _, cases = measured_cases(repository, answering)
    usages = [
        answer_usage(c) for c in cases.values() if not c.answer_source
    ]  # one answer's, of a run answered --repeats N
    measured = [u.output_tokens for u in usages if u is not None and u.output_tokens is not None]
    return math.ceil(sum(measured) / len(measured)) if measured else None


def stored_answers(repository: Any, run_id: str, answering: Any, *, only: bool) -> StoredAnswers:
    """The answers of stored run ``run_id`` for ``answering``'s set, refused (usage error) when the
    run is not there, is of another set or another provider instance and alias (``only`` false:
    ``--answers-from`` mixes them into a run of this instance), or kept its answers below ``full``."""
    from ...errors import UsageError
    from ...run_lookup import stored_run

    source = stored_run(repository, run_id, option=None if only else argument("answers_from"))
    if source.set_identifier != answering.golden_set.identifier:
        raise UsageError(
            f"run {run_id} is a run of set {quoted(source.set_identifier)}, not {quoted(answering.golden_set.identifier)}"
        )
    if source.kind.value != "prompts":
        raise UsageError(f"run {run_id} is a {source.kind.value} run; only a prompt run's answers can be re-graded")
    if source.privacy != "full":
        what = "scrubbed and cut" if source.privacy == "redacted" else "not kept"
        raise UsageError(
            f"run {run_id} was stored at privacy level {quoted(source.privacy)}: its answers are {what}, so they cannot be "
            f"graded again (only a run stored with {argument('privacy', 'full', option='--privacy full')} can be)"
        )
    if not only and not same_generator(
        (source.provider_instance, source.adapter, source.model_alias),
        (answering.bound.instance, answering.bound.adapter, answering.bound.alias),
    ):
        raise UsageError(
            f"run {run_id} was answered by {answered_by(source.provider_instance, source.adapter, source.model_alias)}; this run "
            f"asks {answered_by(answering.bound.instance, answering.bound.adapter, answering.bound.alias)}, and one run holds "
            "the answers of one model"
        )
    return StoredAnswers(run_id, {case.case_id: case for case in source.cases}, only=only)
