"""What the judge graders share: the judge instance, readiness, asking with one retry, repeats,
and the checks that keep every verdict.

A judge is a configured provider instance used through the ordinary generator contract, so any
adapter can judge. It is asked at temperature 0; a reply that is not what the prompt asked for is
asked again once, then the case's grading fails. Asked ``repeats`` times per case, every verdict is
kept as a check named ``verdict i/K = <verdict>`` (check names survive every privacy level; the
judge's reasons live in check details, which only ``redacted`` and ``full`` keep), and a
``judge_agreement`` check records whether the verdicts agreed. A case whose verdicts disagree is
*unstable*: the kernel leaves it out of regression comparisons. The repeats of a case are asked in
parallel, within the judge instance's own ``concurrency`` across all cases in flight.

Structured output is negotiated: a judge asks for ``response_format`` ``json_schema`` first; when
the endpoint refuses that field (:class:`~evalkit.errors.RequestRejected`), it asks again with
``json_object`` (carrying the schema as ``"schema"``, which llama.cpp's and llama-cpp-python's
servers enforce with a grammar and others ignore), and when that is refused too, with no
``response_format`` at all (plain prompting,
the strict parser still decides). What was accepted is remembered for the rest of the run — the
grader is bound to one judge endpoint per run — and reported in the run's judge metrics.
"""

from __future__ import annotations

import abc
import asyncio
import contextvars
import json
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs
from evalkit.answers import Answer, GenerationRequest, Usage
from evalkit.components import BoundGenerator, ReadinessCheck, bind_generator, offers
from evalkit.config import Config
from evalkit.errors import GraderUnavailableError, RequestRejected, UsageError
from evalkit.grading import AGREEMENT_CHECK, Check, Grading, verdict_check_name
from evalkit.identity import model_problem
from evalkit.jsonparse import parse_json
from evalkit.printable import hidden_escaped
from evalkit.prompts import GoldenPrompt
from evalkit.runs import CaseResult
from evalkit.wording import argument, quoted, table_key

from evalkit_plugins import judge_prompts
from evalkit_plugins.judge_options import JudgeOptions

__all__ = ["JudgeFailure", "JudgeGraderBase", "JudgeVerdict", "NotGradable", "ReplyError", "judge_named", "self_judge_allowed"]


def judge_named(name: str = "NAME") -> str:
    """The judge option as a refusal names it to its caller (:func:`evalkit.wording.argument`):
    ``--judge NAME`` on the command line, ``grader_options={"judge": NAME}`` to a Python caller."""
    return argument("grader_options", f'{{"judge": {name}}}', option=f"--judge {name}")


def self_judge_allowed() -> str:
    """``--allow-self-judge`` on the command line, ``grader_options={"allow_self_judge": True}`` to a
    Python caller."""
    return argument("grader_options", '{"allow_self_judge": True}', option="--allow-self-judge")


class ReplyError(Exception):
    """A judge reply that is not what the prompt asked for. The message names the problem and
    never quotes the reply: it is stored at every privacy level."""


class NotGradable(Exception):
    """The answer lacks what the judge needs (e.g. passages); the judge is not asked."""


class _JudgeFailure(Exception):
    """No verdict could be had for one case; ``reply`` is the last unusable reply, if any."""

    def __init__(self, message: str, reply: str | None = None) -> None:
        super().__init__(message)
        self.reply = reply


#: The public name of a judge failure (what :meth:`JudgeGraderBase._ask` raises).
JudgeFailure = _JudgeFailure


@attrs.frozen
class JudgeVerdict:
    """One reply of the judge, parsed.

    ``value`` is what agreement compares (a level, a verdict word), ``label`` how a check names it,
    ``score`` its worth in 0..1, ``text`` the judge's reason or claim (content: privacy applies) and
    ``model`` the model the endpoint reported.
    """

    value: Any
    label: str
    score: Fraction
    text: str
    model: str | None


#: The token counts of the judge calls made for the case being graded (see ``agrade``).
_JUDGE_CALLS: contextvars.ContextVar[list[Usage] | None] = contextvars.ContextVar("evalkit_judge_calls", default=None)

#: Requests in flight at a judge whose instance does not say its ``concurrency``.
DEFAULT_JUDGE_CONCURRENCY = 8

#: Structured-output modes, strictest first; ``none`` sends no ``response_format``.
STRUCTURED_MODES = ("json_schema", "json_object", "none")


def _schema_of(response_format: Mapping[str, Any] | None) -> Any:
    """The JSON Schema a ``json_schema`` response format asks for, else ``None``."""
    if not response_format or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    return spec.get("schema") if isinstance(spec, Mapping) else None


def _mode_of(response_format: Mapping[str, Any] | None) -> str:
    if response_format is None:
        return "none"
    kind = response_format.get("type")
    return kind if kind in STRUCTURED_MODES else "json_schema"


def structured_response_format(mode: str, name: str, properties: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` a judge asks with in structured-output ``mode``
    (:data:`STRUCTURED_MODES`): for ``json_schema`` the strict schema of one object with exactly
    ``properties`` (all required, in that order), named ``name``; ``{"type": "json_object"}``;
    or nothing."""
    if mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object"}
    schema = {"type": "object", "properties": dict(properties), "required": list(properties), "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


class JudgeGraderBase(abc.ABC):
    """A grader that asks a judge instance; subclasses build the request and parse the reply.

    Built with its :class:`JudgeOptions` (grader options, or ``--judge``/``--judge-repeats``/
    ``--allow-self-judge``; a subclass declares a subclass of them); their fields say what each is.
    """

    #: The options this grader declares (evalkit checks them before building it).
    Options: type = JudgeOptions
    #: The grader's name (its entry point) and the first part of its yardsticks.
    name: str = ""
    #: The name of the check carrying the case's verdict.
    check_name: str = ""
    #: What a usable reply looks like, for the failure message.
    expected_reply: str = ""

    def __init__(self, options: JudgeOptions | None = None) -> None:
        options = options if options is not None else self.Options()
        self.judge = options.judge
        self.repeats = options.repeats
        self.allow_self_judge = bool(options.allow_self_judge)
        self.temperature = float(options.temperature)
        self.prompt = judge_prompts.load(self.name, options.prompt_version)
        self._bound: BoundGenerator | None = None
        #: The structured-output mode the endpoint accepted (``None``: not narrowed yet).
        self._accepted_mode: str | None = None
        #: Why stricter modes were given up, in order (endpoint messages, credentials scrubbed).
        self._refused_modes: list[str] = []
        #: The judge's request slots, made on the run's event loop at the first request.
        self._slots: asyncio.Semaphore | None = None

    @property
    def judge_temperature(self) -> float:
        """The judge's sampling temperature (part of its identity in calibration records)."""
        return self.temperature

    @property
    def judge_instance(self) -> str | None:
        """The bound judge instance's name (``None`` before :meth:`bind_judge`)."""
        return self._bound.instance if self._bound is not None else None

    # -- kernel capabilities -------------------------------------------------------------------

    def bind_judge(self, config: Config, under_test: BoundGenerator) -> None:
        """Bind the judge instance named by the option or the config's ``judge``.

        Refuses (``UsageError``) when no judge is named, when the name is not a configured
        instance, and — unless ``allow_self_judge`` — when the judge is the instance under test or
        serves the same model at the same endpoint.
        """
        name = self.judge or config.judge
        if not name:
            raise UsageError(
                f"the {quoted(self.name)} grader asks a judge model: name a configured provider instance with "
                f'{judge_named()}, or set judge = "NAME" in evalkit.toml'
            )
        instance = config.providers.get(name)
        if instance is None:
            known = ", ".join(map(hidden_escaped, config.providers)) or "none"
            raise UsageError(
                f"judge {quoted(name)} is not a configured provider instance (configured: {known}); "
                f"add [providers.{table_key(name)}] to evalkit.toml"
            )
        if not self.allow_self_judge:
            if under_test.instance == name:
                raise UsageError(
                    f"the judge {quoted(name)} is the provider instance under test, so the model would grade its own "
                    f"answers; choose another judge with {judge_named()}, or pass {self_judge_allowed()} if that is intended"
                )
            tested = config.providers.get(under_test.instance or "")
            if (
                tested is not None
                and tested.adapter == instance.adapter
                and under_test.alias is not None
                and under_test.alias == instance.model
                and tested.options.get("base_url") == instance.options.get("base_url")
            ):
                raise UsageError(
                    f"the judge {quoted(name)} serves the model under test ({quoted(under_test.alias)} at the same endpoint as "
                    f"{quoted(under_test.instance)}), so the model would grade its own answers; choose another judge "
                    f"with {judge_named()}, or pass {self_judge_allowed()} if that is intended"
                )
        self._bound = bind_generator(config, name)

    def check_ready(self) -> None:
        """Ask the judge's adapter, once and for free, whether its endpoint answers."""
        if self._bound is None:
            raise GraderUnavailableError(f"The {quoted(self.name)} grader cannot run: no judge is bound (bind_judge was not called)")
        generator = self._bound.generator
        if offers(generator, ReadinessCheck):
            try:
                generator.check_ready()
            except Exception as exc:
                raise GraderUnavailableError(
                    f"The {quoted(self.name)} grader cannot run: its judge {quoted(self._bound.instance)} is not reachable: {exc}"
                ) from None

    def secret_values(self) -> tuple[str, ...]:
        """The judge's credentials, so the kernel keeps them out of stored text too."""
        return self._bound.secrets() if self._bound is not None else ()

    async def aclose(self) -> None:
        """Close the judge's connections (on the run's event loop)."""
        if self._bound is not None:
            await self._bound.aclose()

    def run_metrics(self, cases: Sequence[CaseResult]) -> Mapping[str, Any]:
        """The judge's identity and, when asked more than once per case, its self-agreement:
        the share of judged cases on which every verdict agreed."""
        judge: dict[str, Any] = {
            "grader": self.name,
            "instance": self.judge_instance,
            "prompt_version": self.prompt.version,
            "repeats": self.repeats,
        }
        if self.temperature:
            judge["temperature"] = self.temperature
        if self._accepted_mode is not None:
            judge["structured_output"] = self._accepted_mode
            judge["structured_output_refused"] = list(self._refused_modes)
        judged = [c for c in cases if any(check.name == AGREEMENT_CHECK for check in c.checks)]
        if judged:
            unstable = [c.case_id for c in judged if c.unstable]
            judge.update(
                judged_cases=len(judged),
                agreeing_cases=len(judged) - len(unstable),
                self_agreement=(len(judged) - len(unstable)) / len(judged),
                unstable_cases=unstable,
            )
        return {"judge": judge}

    # -- calibration ---------------------------------------------------------------------------

    def calibration_judge(self, grader: str) -> JudgeGraderBase | None:
        """The judge a calibration set for ``grader`` measures: this one, for its own name."""
        return self if grader == self.name else None

    def judge_scale(self) -> tuple[Any, ...]:
        """Every value :meth:`parse` may give (a calibration set's labels must be these)."""
        raise NotImplementedError

    def item_request(self, item: Any) -> GenerationRequest:
        """The request about one calibration item (:class:`evalkit.calibration.CalibrationItem`)."""
        from evalkit.answers import Passage

        prompt = GoldenPrompt(item.id, item.prompt or "", reference=item.reference)
        answer = Answer(item.answer or "", passages=tuple(Passage(text) for text in item.context))
        return self.judge_request(prompt, answer)

    async def alabel(self, item: Any) -> tuple[Any, str | None]:
        """The judge's label for one calibration item and the model that gave it; raises
        :class:`JudgeFailure` when no usable reply could be had."""
        assert self._bound is not None
        request = attrs.evolve(self.item_request(item), model=self._bound.alias, temperature=self.temperature)
        verdict = await self._ask_in_turn(request)
        return verdict.value, verdict.model

    def yardstick_for(self, model: str) -> str:
        """The yardstick this judge's gradings carry when ``model`` answers."""
        assert self._bound is not None
        return f"{self.name}:{self._bound.instance}:{model}:v{self.prompt.version}"

    # -- what subclasses provide ---------------------------------------------------------------

    @abc.abstractmethod
    def judge_request(self, prompt: GoldenPrompt, answer: Answer) -> GenerationRequest:
        """The request to the judge for one answer; raise :class:`NotGradable` when it cannot be judged."""

    @abc.abstractmethod
    def parse(self, reply: Answer) -> JudgeVerdict:
        """The verdict in ``reply``; raise :class:`ReplyError` when it is not exactly what was asked."""

    @abc.abstractmethod
    def passes(self, score: Fraction) -> bool:
        """Whether a (mean) score passes."""

    @abc.abstractmethod
    def summary(self, verdicts: Sequence[JudgeVerdict], score: Fraction) -> str:
        """The human sentence stored as the verdict check's detail (content: privacy applies)."""

    @abc.abstractmethod
    def verdict_record(self, verdict: JudgeVerdict) -> dict[str, Any]:
        """One verdict as stored in the case detail."""

    # -- grading -------------------------------------------------------------------------------

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Ask the judge ``repeats`` times; every failure becomes a failed grading, never an exception.
        The grading carries the token counts of every judge call it made (``Grading.usage``)."""
        calls: list[Usage] = []
        token = _JUDGE_CALLS.set(calls)
        try:
            grading = await self._grade_once(prompt, answer)
        finally:
            _JUDGE_CALLS.reset(token)
        return attrs.evolve(grading, usage=tuple(calls)) if calls else grading

    async def _grade_once(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        if self._bound is None:
            return self._failed("no judge is bound (bind_judge was not called)")
        try:
            request = attrs.evolve(self.judge_request(prompt, answer), model=self._bound.alias, temperature=self.temperature)
        except NotGradable as exc:
            return self._failed(str(exc))
        verdicts: list[JudgeVerdict] = []
        asked = await asyncio.gather(*(self._ask_in_turn(request) for _ in range(self.repeats)), return_exceptions=True)
        for outcome in asked:
            if isinstance(outcome, _JudgeFailure):
                return self._failed(str(outcome), verdicts, outcome.reply)
            if isinstance(outcome, BaseException):
                raise outcome
            verdicts.append(outcome)
        models = {v.model for v in verdicts}
        if None in models:
            return self._failed(
                f"the judge {quoted(self._bound.instance)} reported no model, so its verdict cannot be attributed", verdicts
            )
        if len(models) > 1:
            seen = ", ".join(sorted(m for m in models if m is not None))
            return self._failed(f"the judge model changed between the repeats of this case ({seen})", verdicts)
        model = verdicts[0].model
        score = min(Fraction(1), sum((v.score for v in verdicts), Fraction(0)) / len(verdicts))
        passed = self.passes(score)
        return Grading(
            float(score),
            passed,
            (Check(self.check_name, passed, detail=self.summary(verdicts, score), judged=True), *self._verdict_checks(verdicts)),
            yardstick=f"{self.name}:{self._bound.instance}:{model}:v{self.prompt.version}",
            detail=self._detail(verdicts, model),
        )

    async def _ask_in_turn(self, request: GenerationRequest) -> JudgeVerdict:
        """:meth:`_ask`, holding one of the judge instance's slots: the repeats of a case are asked
        in parallel, and all cases together never have more requests in flight at the judge than
        its own ``concurrency``."""
        assert self._bound is not None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._bound.concurrency or DEFAULT_JUDGE_CONCURRENCY)
        async with self._slots:
            return await self._ask(request)

    async def _ask(self, request: GenerationRequest) -> JudgeVerdict:
        assert self._bound is not None
        problem = ""
        reply_text: str | None = None
        for _attempt in range(2):
            try:
                reply = await self._generate(request)
            except Exception as exc:
                raise _JudgeFailure(f"the judge {quoted(self._bound.instance)} failed: {exc}") from None
            malformed = None if reply.model is None else model_problem(reply.model)
            if malformed is not None:
                # The model becomes part of the yardstick (the grader's scope, a calibration's
                # key): one the run's own identity check would refuse is no evidence of who judged.
                raise _JudgeFailure(
                    f"the judge {quoted(self._bound.instance)} reported a model that is not well formed ({malformed}), so its verdict cannot be attributed"
                )
            try:
                return self.parse(reply)
            except ReplyError as exc:
                problem, reply_text = str(exc), reply.text
        raise _JudgeFailure(
            f"the judge's reply was unusable twice (last: {problem}); expected {self.expected_reply}", reply_text
        )

    async def _generate(self, request: GenerationRequest) -> Answer:
        assert self._bound is not None
        while True:
            request = self._negotiated(request)
            try:
                raw = await self._call_generator(request)
            except RequestRejected as exc:
                if exc.field != "response_format" or request.response_format is None:
                    raise
                self._give_up_mode(_mode_of(request.response_format), str(exc))
                continue
            if self._accepted_mode is None and request.response_format is not None:
                self._accepted_mode = _mode_of(request.response_format)
            break
        calls = _JUDGE_CALLS.get()
        if calls is not None:  # every answered call is paid for, a reply that will not parse too
            calls.append((raw.usage if isinstance(raw, Answer) else None) or Usage())
        if isinstance(raw, str):
            return Answer(text=raw)
        if not isinstance(raw, Answer):
            raise TypeError(f"the judge's generator returned {type(raw).__name__}, not an Answer")
        return raw

    async def _call_generator(self, request: GenerationRequest) -> Any:
        assert self._bound is not None
        generator = self._bound.generator
        if self._bound.is_async:
            return await generator.agenerate(request)
        return await asyncio.to_thread(generator.generate, request)

    def _negotiated(self, request: GenerationRequest) -> GenerationRequest:
        """``request`` with its ``response_format`` no stricter than what the endpoint accepts."""
        if self._accepted_mode is None or request.response_format is None:
            return request
        wanted = _mode_of(request.response_format)
        if STRUCTURED_MODES.index(wanted) >= STRUCTURED_MODES.index(self._accepted_mode):
            return request
        if self._accepted_mode == "none":
            return attrs.evolve(request, response_format=None)
        # json_object keeps the schema asked for, in the form both llama.cpp servers read
        # ({"type": "json_object", "schema": ...}: their grammar then holds the reply to it);
        # llama-cpp-python refuses json_schema, and without it a small model leaves fields out
        schema = _schema_of(request.response_format)
        return attrs.evolve(request, response_format={"type": self._accepted_mode, **({"schema": schema} if schema else {})})

    def _give_up_mode(self, refused: str, reason: str) -> None:
        """Step down from ``refused`` to the next mode (once, however many requests were refused at once)."""
        following = STRUCTURED_MODES[STRUCTURED_MODES.index(refused) + 1]
        if self._accepted_mode is not None and STRUCTURED_MODES.index(self._accepted_mode) >= STRUCTURED_MODES.index(following):
            return
        self._accepted_mode = following
        self._refused_modes.append(f"{refused}: {reason}")

    def _verdict_checks(self, verdicts: Sequence[JudgeVerdict], *, agreement: bool = True) -> tuple[Check, ...]:
        if self.repeats == 1 or not verdicts:
            return ()
        checks = [
            Check(verdict_check_name(i, self.repeats, v.label), self.passes(v.score), detail=v.text, judged=True)
            for i, v in enumerate(verdicts, start=1)
        ]
        if agreement:
            labels = ", ".join(v.label for v in verdicts)
            agreed = len({v.value for v in verdicts}) == 1
            checks.append(Check(AGREEMENT_CHECK, agreed, detail=f"{len(verdicts)} verdicts: {labels}", judged=True))
        return tuple(checks)

    def _detail(self, verdicts: Sequence[JudgeVerdict], model: str | None) -> dict[str, Any]:
        assert self._bound is not None
        return {
            "judge": self._bound.instance,
            "judge_model": model,
            "prompt_version": self.prompt.version,
            "verdicts": [self.verdict_record(v) for v in verdicts],
        }

    def _failed(self, reason: str, verdicts: Sequence[JudgeVerdict] = (), reply: str | None = None) -> Grading:
        detail: dict[str, Any] | None = None
        if verdicts or reply is not None:
            detail = self._detail(verdicts, verdicts[0].model if verdicts else None)
            if reply is not None:
                detail["unusable_reply"] = reply
        return Grading(
            0.0,
            False,
            self._verdict_checks(verdicts, agreement=False),
            yardstick=f"{self.name}:failed",
            error=f"Judge failed: {reason}",
            detail=detail,
        )


_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```", re.S | re.I)


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ReplyError("a key appears twice in the JSON object")
    return dict(pairs)


def _reject_constant(name: str) -> Any:
    raise ReplyError(f"{name} is not a JSON number")


def json_reply(text: str, keys: Sequence[str]) -> dict[str, Any]:
    """The one JSON object a judge replied, holding exactly ``keys``, strictly: optionally inside
    one Markdown code fence, with nothing but whitespace around it. Rejected (:class:`ReplyError`,
    whose message never quotes the reply): text before or after the object, a reply that is not
    an object, duplicate keys, ``NaN``/``Infinity``, a missing key, any other key."""
    body = text.strip()
    fence = _FENCE.fullmatch(body)
    if fence is not None:
        body = fence.group("body").strip()
    if not body.startswith("{"):
        raise ReplyError("text before the JSON object" if "{" in body else "no JSON object in the reply")
    try:
        value = parse_json(body, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise ReplyError("text after the JSON object") from None
        raise ReplyError(f"not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(value, dict):
        raise ReplyError("the reply is not a JSON object")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ReplyError(f'the JSON object has no {quoted(missing[0])}')
    extra = len(set(value) - set(keys))
    if extra:
        raise ReplyError(f"the JSON object has other keys ({extra} besides {', '.join(keys)})")
    return value
