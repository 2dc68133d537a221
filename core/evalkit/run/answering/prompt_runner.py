"""Answering a slice of a prompt set: at most ``concurrency`` prompts in flight, each answered by the
generator, graded, and committed through the lifecycle's sink as it finishes.

The runner keeps at most ``concurrency`` prompts in flight, pulling them from one shared iterator
(never one task per case up front), so a 100,000-case set costs no more memory than a small one.
Each finished case goes to the sink, which commits it (cases finishing within 50 ms share a
transaction: :class:`~evalkit.run.lifecycle.CaseRecorder`), so a crash loses no more than those and
``--resume`` answers only what is missing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sized
from typing import Any

import attrs

from ...answers import (
    Answer,
    ChatRequest,
    GenerationRequest,
    ServingIdentity,
    Turn,
    UsageSetAside,
    answer_problems,
    sum_usage,
)
from ...awaitables import AwaitableReturned
from ...bounded import BoundedCalls
from ...checks import AssertionKind
from ...components import (
    MAX_CONCURRENCY,
    AssertionKindsAware,
    AsyncGrader,
    BoundGenerator,
    SecretHolder,
    declared,
    grader_plugin,
    offers,
    plugin_called,
)
from ...config import DEFAULT_GRADE_TIMEOUT_S
from ...environment import variable
from ...errors import PLUGIN_FAILURES, GenerationError, UsageError, carried, carried_async
from ...grading import Grading, grading_problems
from ...judge_gate import JudgeGate
from ...privacy import is_scrubbable, secrets_to_keep_out
from ...prompts import GoldenPrompt, handed_prompt
from ...runs import CaseResult
from ...set_versions import case_fingerprint, prompt_digest
from ...shapes import exception_message, exception_text, short_repr, whole_number
from ...timeouts import TimeLimitExceeded, alarm_bounded, alarm_bounded_steps, alarm_scope, alarms_reach_this_thread
from . import CaseSink
from .conversation import Conversation, converse, plain_request, with_loop_checks
from .repeats import merge_answers

__all__ = [
    "PromptJob",
    "answer_prompts",
    "concurrency_from_environment",
    "default_concurrency",
    "prompt_secrets",
    "stored_answer",
]


@attrs.frozen
class PromptJob:
    """What answering a slice of a prompt set needs: the prompts (iterated once), the bound
    generator and the grader with the assertion kinds it grades by, how many prompts are in flight,
    extra request fields, the limits on a stored answer and on one grading, and how many times
    each prompt is answered."""

    prompts: Iterable[GoldenPrompt]
    bound: BoundGenerator
    grader: Any
    kinds: Mapping[str, AssertionKind]
    concurrency: int
    request_options: Mapping[str, Any] = attrs.Factory(dict)
    max_answer_bytes: int | None = None
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S
    #: The judges' licences: a grading by an uncalibrated judge has its judged checks made advisory.
    judge_gate: JudgeGate | None = None
    #: How many times each prompt is answered (independent requests, each graded; see
    #: :mod:`~evalkit.run.answering.repeats`).
    repeats: int = 1
    #: Reused answers, the answer cache, a budget (:mod:`.spending`); ``None``: ask for every answer.
    extras: Any = None
    #: The grader's name, which its failures outside a case's grading name (its plugin and distribution).
    grader_name: str | None = None
    #: Where the usages summed over a case's requests that were set aside are kept, for the run's
    #: notes (:func:`~evalkit.answers.sum_usage`); ``None``: set aside unnoted.
    usage_sums: UsageSetAside | None = None
    #: Where the replies (an Answer, a Turn) whose usage the generator plugin reported impossible
    #: (:meth:`~evalkit.answers.UsageSetAside.kept`) are counted, for the run's notes; ``None``:
    #: such a usage is kept as reported.
    reply_usage: UsageSetAside | None = None


def prompt_secrets(bound: BoundGenerator, grader: Any) -> tuple[str, ...]:
    """The generator's and the grader's credential values long enough to be scrubbed (see
    :func:`evalkit.privacy.remove_secrets`): with none, a finished case is stored as it is,
    without copying it field by field."""
    values = bound.secrets() + (secrets_to_keep_out(grader, f"grader {getattr(grader, 'name', None) or '?'}") if offers(grader, SecretHolder) else ())
    return tuple(s for s in values if isinstance(s, str) and is_scrubbable(s))


def _failed_grading(grader: Any, error: str, grader_name: str | None = None) -> Grading:
    """A grading that raised or broke the rules (:func:`~evalkit.grading.grading_problems`) is no
    measurement: it fails, and its yardstick ``<grader>:failed`` keeps the run out of comparisons.
    ``<grader>`` is the name the grader declares, else ``grader_name`` (the name the run chose it
    by: a plugin grader rarely declares one, and ``grader:failed`` named none), else ``grader``."""
    for name in (declared(grader, "name"), grader_name):
        if isinstance(name, str) and 0 < len(name) <= 200:
            return Grading(0.0, False, yardstick=f"{name}:failed", error=error)
    return Grading(0.0, False, yardstick="grader:failed", error=error)


#: How many of a broken grading's problems its failed check names (a grading with a thousand
#: broken checks has a thousand problems).
_PROBLEMS_SHOWN = 10


#: The request fields a conversation's turns carry from a run's extra request options.
_CHAT_FIELDS = ("temperature", "max_tokens")


def _case_identity(bound: BoundGenerator, answer: Answer) -> ServingIdentity | None:
    if not bound.instance or not bound.alias or not answer.model:
        return None
    return ServingIdentity(bound.instance, bound.alias, answer.model)


def stored_answer(text: str, max_bytes: int | None) -> str:
    """``text`` as a case keeps it: whole up to ``max_bytes`` bytes of UTF-8, else cut there (on a
    character boundary) with a marker saying how long the answer was. Grading sees the whole text."""
    if max_bytes is None or len(text) * 4 <= max_bytes:
        return text  # cannot exceed the limit: no need to encode
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text
    kept = encoded[:max_bytes].decode("utf-8", "ignore")
    return f"{kept}\n… [truncated by evalkit: the answer was {len(encoded)} bytes; the first {max_bytes} are stored]"


def _coerce_answer(value: Any, reply_usage: UsageSetAside | None = None) -> Answer:
    """The generator's reply as an :class:`Answer` (text becomes one), refused as a
    :class:`GenerationError` when evalkit cannot use it; a usage impossible in itself is set aside
    in ``reply_usage`` (:meth:`~evalkit.answers.UsageSetAside.kept`)."""
    if isinstance(value, Answer):
        broken = answer_problems(value)
        if broken:
            raise GenerationError(f"the generator returned an Answer evalkit cannot use: {'; '.join(broken)}")
        if reply_usage is not None and value.usage is not None and reply_usage.kept(value.usage) is None:
            return attrs.evolve(value, usage=None)
        return value
    if isinstance(value, str):
        return Answer(text=value)
    raise GenerationError(f"the generator returned {type(value).__name__} {str(value)[:80]!r}, not an Answer")


class _AnswerStalled(TimeLimitExceeded):
    """Raised into a step of an async generator that blocked the event loop past its ``answer_timeout``."""


class _Answerer:
    """Answers and grades one prompt at a time for :func:`answer_prompts` (its workers share one)."""

    def __init__(self, job: PromptJob, pool: BoundedCalls | None) -> None:
        self.job = job
        self.bound = job.bound
        self.grader = job.grader
        self.pool = pool
        self.options = dict(job.request_options)
        self.grade_async = offers(job.grader, AsyncGrader) and asyncio.iscoroutinefunction(job.grader.agrade)
        # Signals reach the main thread only: elsewhere (a library caller's thread) a synchronous
        # grader runs unguarded, and an async grader or generator that blocks the loop is not interrupted.
        self.alarms_reach = alarms_reach_this_thread()
        self.extras = job.extras

    async def answer(self, prompt: GoldenPrompt) -> CaseResult | None:
        """The case of ``prompt``: answered and graded (``repeats`` times, one after the other, so
        the requests in flight stay at the run's concurrency), or errored when the generator failed;
        ``None`` when a budget or request limit stops the run before it is asked."""
        answers = []
        for _ in range(self.job.repeats):
            if self.extras is not None:
                answer = await self._answer_with_extras(prompt, self.extras)
            else:
                answer = await self.answer_once(prompt)
            if answer is None:  # a budget or request limit stopped the run
                return self._cut_short(answers) if answers else None
            answers.append(answer)
            if answer.errored:  # the case is errored anyway: the resume answers it again
                break
        return merge_answers(answers, self.job.usage_sums)

    def _cut_short(self, answers: list[CaseResult]) -> CaseResult:
        """A case a budget or request limit stopped before all its ``repeats`` answers: errored (its
        requests and tokens counted), so ``--resume`` answers it whole instead of keeping it
        answered fewer times than the rest."""
        guard = self.extras.guard if self.extras is not None else None
        why = guard.stopped if guard is not None and guard.stopped else "the run was stopped"
        merged = merge_answers(answers, self.job.usage_sums)
        return attrs.evolve(
            merged, passed=False, score=0.0, error=f"{why} after {len(answers)} of {self.job.repeats} answers"
        )

    async def answer_once(self, prompt: GoldenPrompt) -> CaseResult:
        """One answer to ``prompt``, graded, or errored when the generator failed. A conversation (a
        prompt with turns or tools) is answered by the kernel's loop
        (:func:`~evalkit.run.answering.conversation.converse`), whose own checks join the grading."""
        started = time.perf_counter()
        reply = await self._generate(prompt, started)
        if isinstance(reply, CaseResult):
            return reply
        loop_checks: tuple[Any, ...] = ()
        requests = 1
        if isinstance(reply, Conversation):
            reply, loop_checks, requests = reply.answer, reply.checks, reply.requests
        latency = time.perf_counter() - started
        grading = with_loop_checks(await self._grade(prompt, reply), loop_checks)
        if self.job.judge_gate is not None:
            grading = self.job.judge_gate.apply(grading)
        bound = self.bound
        return CaseResult.from_grading(
            prompt.id,
            grading,
            latency_s=latency,
            identity=_case_identity(bound, reply),
            adapter=bound.adapter,
            answer_text=stored_answer(reply.text, self.job.max_answer_bytes),
            usage=reply.usage,
            finished_at=time.time(),
            fingerprint=case_fingerprint(prompt),
            prompt_digest=prompt_digest(prompt),
            transcript=reply.transcript,
            requests=requests,
            requests_sent=requests,
        )

    async def _answer_with_extras(self, prompt: GoldenPrompt, extras: Any) -> CaseResult | None:
        """:meth:`answer` with a stored run's answers, the answer cache and a budget (:mod:`.spending`)."""
        started = time.perf_counter()
        bound = self.bound
        fingerprint = case_fingerprint(prompt)
        reused = extras.stored.reuse(prompt, fingerprint) if extras.stored is not None else None
        if isinstance(reused, str):
            if extras.stored.only:  # a re-grade never asks: the case says why it has no answer
                return CaseResult(
                    case_id=prompt.id, passed=False, score=0.0, error=f"not re-graded: {reused}", adapter=bound.adapter,
                    finished_at=time.time(), fingerprint=fingerprint, requests=0, requests_sent=0,
                )  # fmt: skip
            reused = None  # --answers-from: the model is asked for this one
        key = None
        reserved = None
        loop_checks: tuple[Any, ...] = ()
        requests = 0  # a reused answer took none
        if reused is None:
            # a conversation is never cached (its turns depend on the replies): only a plain request has a key
            request = None if prompt.is_chat else plain_request(prompt, bound.base_prompt, {"model": bound.alias, "case_id": prompt.id, **self.options})
            key = extras.cache_key(request) if request is not None else None
            if key is not None:
                reused = extras.cached(key)
        if reused is None:
            if extras.guard is not None:
                reserved = await extras.guard.admitted(prompt)
                if reserved is None:
                    return None
            reply = await self._generate(prompt, started, request)
            extras.asked += 1
            if isinstance(reply, CaseResult):
                if reserved is not None:
                    extras.guard.settle(reserved, reply)
                return reply
            requests = 1
            if isinstance(reply, Conversation):
                reply, loop_checks, requests = reply.answer, reply.checks, reply.requests
            identity = _case_identity(bound, reply)
            if key is not None:
                extras.keep(key, reply, identity, bound.instance, bound.alias)
            source = None
        else:
            if extras.guard is not None:  # no request, but the judge calls on it are paid: held to the budget
                reserved = await extras.guard.admitted(prompt, judging_only=True)
                if reserved is None:
                    return None
            reply, identity, source = reused.answer, reused.identity, reused.source
            if source == "cache":
                extras.from_cache += 1
            else:
                extras.reused += 1
        latency = time.perf_counter() - started
        grading = with_loop_checks(await self._grade(prompt, reply), loop_checks)
        if self.job.judge_gate is not None:
            grading = self.job.judge_gate.apply(grading)
        case = CaseResult.from_grading(
            prompt.id,
            grading,
            latency_s=latency,
            identity=identity,
            adapter=bound.adapter,
            answer_text=stored_answer(reply.text, self.job.max_answer_bytes),
            usage=reply.usage,
            finished_at=time.time(),
            fingerprint=fingerprint,
            answer_source=source,
            prompt_digest=prompt_digest(prompt),
            transcript=getattr(reply, "transcript", ()),
            requests=requests,
            requests_sent=requests,
        )
        if extras.guard is not None and reserved is not None:
            if source is None:
                extras.guard.settle(reserved, case)
            else:
                extras.guard.settle_judging(reserved, case)
        return case

    async def _generate(
        self, prompt: GoldenPrompt, started: float, request: GenerationRequest | None = None
    ) -> Answer | Conversation | CaseResult:
        """The generator's answer (a conversation's, for a prompt with turns or tools), or the
        errored case of a generator that failed or took too long. ``request``: the plain request
        already made (a cached one's key was taken from it)."""
        bound, pool = self.bound, self.pool
        calls: list[Any] = []  # the pool's futures, the last one abandoned when time runs out
        received: list[Turn] = []  # a conversation's turns answered, kept when a later one fails
        sent = [0 if prompt.is_chat else 1]  # the requests asked: a conversation counts each turn as it asks it
        try:
            due = time.monotonic() + bound.answer_timeout  # the workers share this answerer: kept per call
            async with asyncio.timeout(bound.answer_timeout) as limit:
                if prompt.is_chat:
                    chat_options = {k: v for k, v in self.options.items() if k in _CHAT_FIELDS}
                    options = {"model": bound.alias, "case_id": prompt.id, **chat_options}
                    return await converse(prompt, self._turn_caller(calls, due, sent), bound.base_prompt, options, self.job.usage_sums, received)
                if request is None:
                    request = plain_request(prompt, bound.base_prompt, {"model": bound.alias, "case_id": prompt.id, **self.options})
                if pool is None:
                    raw = await self._answer_steps(carried_async(bound.generator.agenerate(request), "agenerate"), due)
                else:
                    calls.append(pool.submit(bound.generator.generate, request))
                    raw = await asyncio.wrap_future(calls[-1])
            return _coerce_answer(raw, self.job.reply_usage)
        except asyncio.CancelledError:
            raise
        except (_AnswerStalled, *PLUGIN_FAILURES) as exc:  # sys.exit() in a plugin ends its case, never the run (exit 0)
            if isinstance(exc, _AnswerStalled):  # an async generator that blocked the loop, interrupted there
                error = (
                    f"no answer within {bound.answer_timeout:g} s (the provider instance's answer_timeout); "
                    "the generator was interrupted"
                )
            elif isinstance(exc, TimeoutError) and limit.expired():
                if calls and not calls[-1].done():
                    pool.abandon(calls[-1])  # type: ignore[union-attr]
                error = (
                    f"no answer within {bound.answer_timeout:g} s (the provider instance's answer_timeout); "
                    "the call was abandoned"
                )
            elif isinstance(exc, AwaitableReturned):  # the plugin's defect, the same in every case: named
                who = bound.plugin
                error = f"{who if isinstance(who, str) else who.label}: {exception_message(exc, lines=True)}"
            else:
                error = exception_message(exc, lines=True) if isinstance(exc, GenerationError) else exception_text(exc, lines=True)
            return CaseResult(
                case_id=prompt.id,
                passed=False,
                score=0.0,
                latency_s=time.perf_counter() - started,
                error=error,
                adapter=bound.adapter,
                finished_at=time.time(),
                fingerprint=case_fingerprint(prompt),
                prompt_digest=prompt_digest(prompt),
                # the replies received: none for a plain request, a conversation's turns answered before
                usage=sum_usage((turn.usage for turn in received), self.job.usage_sums),
                requests=len(received),
                # every request asked: a plain one that failed, a conversation's turns and the one that failed
                requests_sent=sent[0],
            )

    def _turn_caller(self, calls: list[Any], due: float, sent: list[int]) -> Any:
        """How the loop asks the generator for one turn: awaited (``achat``), or on the pool's
        threads; ``sent[0]`` counts the turns asked (one that fails is a request sent too)."""
        generator, pool = self.bound.generator, self.pool

        async def asked(request: ChatRequest) -> Any:
            if self.bound.chats_async:
                return await self._answer_steps(carried_async(generator.achat(request), "achat"), due)
            if pool is None:  # an async generator whose chat() is synchronous: still off the loop
                return await asyncio.to_thread(carried, generator.chat, request)
            calls.append(pool.submit(generator.chat, request))
            return await asyncio.wrap_future(calls[-1])

        async def call(request: ChatRequest) -> Any:
            sent[0] += 1
            turn = await asked(request)
            aside = self.job.reply_usage
            if aside is not None and isinstance(turn, Turn) and turn.usage is not None and aside.kept(turn.usage) is None:
                return attrs.evolve(turn, usage=None)
            return turn

        return call

    async def _answer_steps(self, answering: Any, due: float) -> Any:
        """``answering`` (an async generator's coroutine) awaited, each step of it under the alarm
        until ``due`` (``time.monotonic()``; main thread): one that blocks the loop (a ``time.sleep`` in
        ``agenerate``) is interrupted there, where ``asyncio.timeout`` could never cancel it."""
        if not self.alarms_reach:
            return await answering
        return await alarm_bounded_steps(answering, due - time.monotonic(), _AnswerStalled)

    async def _grade(self, prompt: GoldenPrompt, reply: Answer) -> Grading:
        """The grader's grading, or a failed one: it raised, took longer than ``grade_timeout`` or
        broke the rules (:func:`~evalkit.grading.grading_problems`)."""
        grader, grade_timeout = self.grader, self.job.grade_timeout
        grading_limit = None
        # the grader gets a deep copy: one that sets a field of the frozen prompt (object.__setattr__ on its
        # id) changed the case the runner then stored, so a set of 7 cases was left "running" with 1; one
        # that changed an assertion's expected values changed the stored fingerprint and the next repeat's grading
        prompt = handed_prompt(prompt)
        try:
            if self.grade_async:
                async with asyncio.timeout(grade_timeout) as grading_limit:
                    grading_steps = carried_async(grader.agrade(prompt, reply), "agrade")
                    if self.alarms_reach:  # each step under the alarm too: one that blocks the loop is interrupted
                        grading = await alarm_bounded_steps(grading_steps, grade_timeout, TimeLimitExceeded)
                    else:
                        grading = await grading_steps
            elif self.alarms_reach:
                grading = alarm_bounded(carried, (grader.grade, prompt, reply), grade_timeout, TimeLimitExceeded)
            else:
                grading = carried(grader.grade, prompt, reply)
        except asyncio.CancelledError:
            raise
        except (TimeLimitExceeded, *PLUGIN_FAILURES) as exc:
            if isinstance(exc, TimeLimitExceeded) or (grading_limit is not None and grading_limit.expired()):
                how = "interrupted" if isinstance(exc, TimeLimitExceeded) else "cancelled"
                return _failed_grading(grader, f"no grading within {grade_timeout:g} s (grade_timeout); the grader was {how}", self.job.grader_name)
            return _failed_grading(grader, exception_text(exc, lines=True), self.job.grader_name)
        try:
            broken = grading_problems(grading)
        except PLUGIN_FAILURES as exc:  # a grading built to break the check itself (a raising property)
            broken = [f"checking it raised {exception_text(exc, lines=True)}"]
        if broken:
            more = f"; and {len(broken) - _PROBLEMS_SHOWN:,} more" if len(broken) > _PROBLEMS_SHOWN else ""
            return _failed_grading(
                grader, f"the grader returned a grading evalkit cannot use: {'; '.join(broken[:_PROBLEMS_SHOWN])}{more}", self.job.grader_name
            )
        return grading


async def answer_prompts(job: PromptJob, sink: CaseSink) -> int:
    """Answer and grade ``job.prompts`` with at most ``job.concurrency`` in flight; commit each
    finished case through ``sink``.

    ``prompts`` is iterated once, as the workers pull from it (a
    :class:`~evalkit.run.answering.prompt_order.CaseSelection` or a :class:`~evalkit.PromptStream`
    is never held whole); its ``len()``, when it has one, only caps the number of workers.

    Returns how many cases this call finished; the cases themselves are in the store (memory stays
    flat however large the set), each with its prompt's fingerprint (errored ones too). A generator
    failure makes an errored case (never a pass, never dropped). Cancellation (Ctrl-C) commits what
    finished before it propagates. An answer longer than ``max_answer_bytes`` is graded whole and
    stored cut (see :func:`stored_answer`). Grading one answer may take ``grade_timeout`` seconds,
    then it is a failed grading: an async grader is cancelled, a synchronous one interrupted by
    ``SIGALRM`` (:func:`~evalkit.timeouts.alarm_bounded`; off the main thread, where no signal
    reaches it, a synchronous grader has no time limit).
    """
    prompts, concurrency = job.prompts, job.concurrency
    if offers(job.grader, AssertionKindsAware):
        name = job.grader_name or declared(job.grader, "name") or type(job.grader).__name__
        who = (lambda: grader_plugin(name)) if isinstance(name, str) else type(job.grader).__name__
        plugin_called(who, "use_assertion_kinds", job.grader.use_assertion_kinds, job.kinds)
    wanted = min(concurrency, len(prompts)) if isinstance(prompts, Sized) else concurrency
    # A synchronous generator answers on daemon threads: one that never returns is abandoned at
    # its time limit (a thread of a concurrent.futures pool would be joined at exit, for ever).
    pool = None if job.bound.is_async else BoundedCalls(max(1, wanted), name="evalkit-gen")
    answerer = _Answerer(job, pool)
    queue = iter(prompts)
    finished = 0

    async def worker() -> None:
        nonlocal finished
        for prompt in queue:
            case = await answerer.answer(prompt)
            if case is None:  # a budget or request limit: no more requests from any worker
                return
            finished += 1
            sink.commit(case)

    try:
        # One SIGALRM handler for the whole run: a grading that ends in time costs no system call.
        with alarm_scope():
            workers = [asyncio.ensure_future(worker()) for _ in range(max(1, wanted))]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
    finally:
        sink.flush()
        if pool is not None:
            pool.close()
    return finished


def default_concurrency(bound: BoundGenerator, requested: int | None) -> int:
    """The run's effective concurrency: ``--concurrency``, else the instance's configured
    ``concurrency``, else ``$EVALKIT_CONCURRENCY``, else what the generator asks for, else 8.

    A ``requested`` concurrency (a library caller's ``concurrency=``) that is not an ``int`` from 1
    to :data:`MAX_CONCURRENCY` (``-1``, ``0``, ``"4"``, ``2.5``, ``True``) raises
    :class:`~evalkit.errors.UsageError` likewise: it reached the runner, after the run was stored.
    A ``$EVALKIT_CONCURRENCY`` that is not a whole number from 1 to :data:`MAX_CONCURRENCY`
    (``-5``, ``0``, ``abc``, ``1e3``) raises :class:`~evalkit.errors.UsageError`, whichever value
    wins: the environment is checked before anything is called or stored.
    """
    from_env = concurrency_from_environment()
    if requested is not None:
        if isinstance(requested, bool) or not isinstance(requested, int) or not 1 <= requested <= MAX_CONCURRENCY:
            raise UsageError(
                f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY:,}, got {type(requested).__name__} {short_repr(requested, 40)}"
            )
        return requested
    if bound.configured_concurrency:
        return bound.configured_concurrency
    if from_env is not None:
        return from_env
    return bound.concurrency or 8


def concurrency_from_environment() -> int | None:
    """``$EVALKIT_CONCURRENCY`` as a whole number (``None`` when unset), or a usage error (set but
    empty included: :func:`evalkit.environment.variable`)."""
    given = variable("EVALKIT_CONCURRENCY", "a whole number of requests", "use the configured concurrency")
    if given is None:
        return None
    raw = given.strip()
    number = whole_number(raw, max_digits=len(str(MAX_CONCURRENCY)))
    if number is not None and 1 <= number <= MAX_CONCURRENCY:
        return number
    shown = raw if len(raw) <= 20 else raw[:20] + "…"
    raise UsageError(f"EVALKIT_CONCURRENCY must be a whole number from 1 to {MAX_CONCURRENCY}, got {shown!r}")
