"""Turning names into working components: generators from provider instances, graders by name."""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from . import registry
from .answers import Answer, ChatRequest, GenerationRequest, Turn
from .config import DEFAULT_ANSWER_TIMEOUT_S, Config, ProviderInstance
from .durations import MAX_WAIT_S, read_duration
from .errors import (
    PLUGIN_FAILURES,
    ConfigError,
    EndpointRefused,
    EvalkitWarning,
    UnknownPluginError,
    UsageError,
    carried,
)
from .grading import Grading
from .options import resolve_paths
from .plugin_attributes import declared, declares, offers, promises
from .privacy import SecretHolder, secrets_to_keep_out
from .prompts import GoldenPrompt
from .shapes import exception_text, short_repr
from .wording import argument, listed, path_named, quoted, table_key

if TYPE_CHECKING:
    from .runs import CaseResult

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_OWN_NOTE_CHARS",
    "AsyncClosing",
    "aclosed",
    "AssertionKindsAware",
    "AsyncGenerator",
    "AsyncGrader",
    "AsyncChatGenerator",
    "BoundGenerator",
    "ChatGenerator",
    "ConcurrencyAware",
    "Generator",
    "Grader",
    "JudgeGrader",
    "JudgeTemperature",
    "ReadinessCheck",
    "RubricJudging",
    "RunMetricsSource",
    "SetAware",
    "PathOptions",
    "resolve_paths",
    "SecretHolder",
    "async_method_fault",
    "concurrency_fault",
    "declared",
    "declares",
    "echoed_model_note_fault",
    "grader_plugin",
    "judge_instance",
    "plugin_awaited",
    "plugin_call_failed",
    "plugin_close_failed",
    "plugin_close_stuck",
    "plugin_called",
    "plugin_gave_unusable",
    "plugin_method",
    "offers",
    "promises",
    "ServingEvidence",
    "answered_by",
    "same_generator",
    "stored_alias",
    "bind_generator",
    "check_generator_ready",
    "read_wait_ready",
    "check_provider_known",
    "load_grader",
    "REFERENCE_INSTANCE",
    "UnknownProviderError",
]

#: The instance name a run uses when no provider is configured: the set's own references.
REFERENCE_INSTANCE = "reference"


@runtime_checkable
class Generator(Protocol):
    """The system under test: answers one prompt."""

    def generate(self, request: GenerationRequest) -> Answer:
        """Answer ``request``."""
        ...


@runtime_checkable
class AsyncGenerator(Protocol):
    """A generator that answers asynchronously; preferred by the runner when present."""

    async def agenerate(self, request: GenerationRequest) -> Answer:
        """Answer ``request``."""
        ...


@runtime_checkable
class Grader(Protocol):
    """Grades one answer to one golden prompt."""

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Grade ``answer``."""
        ...


@runtime_checkable
class PathOptions(Protocol):
    """A plugin factory that declares no ``Options`` and lists which of its options are file paths.

    A factory that declares ``Options`` marks its path fields instead (``option(..., path=True)``,
    see :mod:`evalkit.options`). Either way, a relative path given for one of these options in the
    project configuration is resolved against the configuration file's folder, and it must lie
    inside the project (:func:`resolve_paths`).
    """

    path_options: Sequence[str]


@runtime_checkable
class SetAware(Protocol):
    """A generator that wants to see the set before the run (the reference generator does)."""

    def bind_set(self, golden_set: Any) -> None:
        """Called once with the golden set about to run."""
        ...


def bind_set(bound: BoundGenerator, golden_set: Any) -> None:
    """Show ``golden_set`` to a :class:`SetAware` generator; whatever it raises (reading a streamed
    set again can fail) is a :class:`~evalkit.errors.GeneratorUnavailableError` (exit 2) naming the
    generator, before anything is stored."""
    from .errors import GeneratorUnavailableError

    try:
        carried(bound.generator.bind_set, golden_set)
    except PLUGIN_FAILURES as exc:
        raise GeneratorUnavailableError(
            f"{generator_named(bound)} could not take in the set, so nothing was run or stored: {exception_text(exc)}"
        ) from None


def answered_by(instance: str | None, adapter: str | None, alias: str | None) -> str:
    """Who answers (or answered) a run, as a message says it after "answered by": ``"prod/gpt-4o"``
    for a configured provider instance and its model alias (``"prod" (no model alias)``), ``the ad-hoc
    "openai" generator`` (``… with model "gpt-4o"``) for an ad-hoc run, which has no instance —
    never Python's ``None``. ``instance``, ``adapter`` and ``alias`` are a run's (stored or about to
    be) or a bound generator's; each is the user's word (an instance's TOML key, ``--model``), so
    it is :func:`~evalkit.wording.quoted`: a line break in it never prints a line of its own."""
    from .wording import quoted

    if instance is not None:
        return quoted(f"{instance}/{alias}") if alias is not None else f"{quoted(instance)} (no model alias)"
    named = f"the ad-hoc {quoted(adapter)} generator" if adapter else "an ad-hoc generator"
    return named if alias is None else f"{named} with model {quoted(alias)}"


def same_generator(
    first: tuple[str | None, str | None, str | None], second: tuple[str | None, str | None, str | None]
) -> bool:
    """Whether two ``(instance, adapter, alias)`` (of runs, stored or about to be, or bound
    generators) name one generator, whose answers one run may hold: the same provider instance and
    model alias, and for an ad-hoc run (no instance) the same adapter too — ``--provider llm`` does
    not continue a run of ``--provider reference``. An adapter a run did not store is not compared."""
    (instance, adapter, alias), (other_instance, other_adapter, other_alias) = first, second
    if (instance, alias) != (other_instance, other_alias):
        return False
    return instance is not None or not adapter or not other_adapter or adapter == other_adapter


def generator_named(bound: BoundGenerator) -> str:
    """``provider instance "prod"``, or ``the ad-hoc "openai" generator``: who a message is about."""
    return (
        f"provider instance {quoted(bound.instance)}"
        if bound.instance
        else f"the ad-hoc {quoted(bound.adapter)} generator"
    )


@runtime_checkable
class AsyncGrader(Protocol):
    """A grader that grades asynchronously (a judge asking a model); preferred when present."""

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Grade ``answer``."""
        ...


@runtime_checkable
class AssertionKindsAware(Protocol):
    """A grader that evaluates assertions and wants the run's kinds (built-in plus plugin kinds)."""

    def use_assertion_kinds(self, kinds: Mapping[str, Any]) -> None:
        """Called once before the run with every assertion kind a set may use."""
        ...


@runtime_checkable
class ReadinessCheck(Protocol):
    """A component that can say, before anything is paid for, whether it can run.

    Judges (graders) and generators both have it: the kernel calls it once before the run, before
    anything is stored. It raises when the component cannot run (an unreachable endpoint, refused
    credentials) and may return warnings (strings) that do not stop the run.
    """

    def check_ready(self) -> Iterable[str] | None:
        """Raise an :class:`~evalkit.errors.EvalkitError` (or any exception) if not ready; return warnings."""
        ...


def read_wait_ready(value: object, named: str) -> float:
    """How long the readiness probe may keep asking (:func:`check_generator_ready`'s ``wait_s``),
    by one rule for ``evalkit run --wait-ready`` and ``evaluate_set(wait_ready=…)``: a duration
    from 1 ms to a week, a number of seconds or text with a unit (``60``, ``"90s"``, ``"2m"``:
    :func:`evalkit.durations.read_duration`), refused naming ``named`` otherwise; the number ``0``
    (the library's default, as the option not given) asks once. The library had a rule of its own:
    any number from 0 (``wait_ready=1e12`` waited for ever), and no unit (``"60s"`` refused)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return 0.0
    return read_duration(value, named, most=MAX_WAIT_S)


def check_generator_ready(
    bound: BoundGenerator,
    wait_s: float = 0.0,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[str]:
    """Ask the generator under test whether it can run; its warnings, or
    :class:`~evalkit.errors.GeneratorUnavailableError` (exit 2, nothing stored) naming the instance.

    ``wait_s``: a server that is still starting (refused connections, a probe that fails) is asked
    again, 0.5 s later and then at most every 5 s, until it answers or ``wait_s`` seconds have
    passed — ``evalkit run --wait-ready 60s`` right after starting a local model server."""
    from .errors import GeneratorUnavailableError

    if not promises(bound.generator, ReadinessCheck):
        return []
    # read once, under the rule of a plugin's call: a check_ready that raises as it is read is the
    # plugin's failure (named, exit 2), not a generator that is "not ready" nor one without a probe
    check = plugin_called(bound.plugin, "check_ready", lambda: bound.generator.check_ready)
    who = generator_named(bound)
    deadline, delay = clock() + wait_s, 0.5
    while True:
        try:
            warnings_given = carried(check)
            break
        except PLUGIN_FAILURES as exc:  # whatever it raises, nothing has been paid for or stored yet
            remaining = deadline - clock()
            if remaining <= 0:
                waited = f" after waiting {wait_s:g} s" if wait_s > 0 else ""
                # a refused connection is a server not listening yet, as often as one not there
                hint = (
                    f"; use {argument('wait_ready', 'DURATION')} if the server is still starting"
                    if wait_s <= 0 and isinstance(exc, EndpointRefused)
                    else ""
                )
                raise GeneratorUnavailableError(
                    f"{who} is not ready{waited}, so nothing was run or stored: {exc}{hint}"
                ) from None
            sleep(min(delay, remaining))
            delay = min(delay * 2, 5.0)
    return [f"{who}: {w}" for w in (warnings_given or ()) if isinstance(w, str) and w]


@runtime_checkable
class JudgeGrader(Protocol):
    """A grader that asks a judge model, a configured provider instance.

    The kernel calls :meth:`bind_judge` once before the run (before readiness and before anything
    is stored) with the configuration and the generator under test, so the grader can bind its
    judge instance and refuse to let the model under test grade itself.
    """

    def bind_judge(self, config: Config, under_test: BoundGenerator) -> None:
        """Bind the judge instance; raise :class:`evalkit.errors.UsageError` when it cannot be used."""
        ...


@runtime_checkable
class RubricJudging(Protocol):
    """A grader that evaluates a prompt's assertions and can have its ``rubric`` checks decided by
    a judge model, a configured provider instance (the ``deterministic`` grader).

    The kernel calls :meth:`with_rubric_judge` once, before the run and before anything is called
    or stored, when the set declares rubric checks (``rubric_prompts``: the ids of the prompts that
    do, in set order); the grader it returns grades the run.
    """

    def with_rubric_judge(self, config: Config, under_test: BoundGenerator, rubric_prompts: Sequence[str]) -> Any:
        """The grader that also judges rubric checks; raise :class:`evalkit.errors.UsageError`
        naming ``rubric_prompts`` when no judge is configured or the one named cannot be used."""
        ...


@runtime_checkable
class JudgeTemperature(Protocol):
    """A grader whose judge samples at a set temperature: with the yardstick its gradings carry,
    the judge's identity in calibration records (see :mod:`evalkit.judge_gate`)."""

    @property
    def judge_temperature(self) -> float:
        """The judge's sampling temperature."""
        ...


@runtime_checkable
class RunMetricsSource(Protocol):
    """A grader that reports run-level measurements (a judge's self-agreement) from the stored cases."""

    def run_metrics(self, cases: Sequence[CaseResult]) -> Mapping[str, Any] | None:
        """The metrics stored with the run, computed from all of its stored cases (``None``: none)."""
        ...


@runtime_checkable
class ServingEvidence(Protocol):
    """A generator that can say, for free, what serves behind its endpoint beyond the model name
    its replies report: the model file and size a llama.cpp server loaded, the deployment a
    gateway routed to. Servers that echo the requested model name prove nothing with it; this is
    the evidence they do give. Called once after the run's cases are answered; a failure is
    ignored (the evidence is then simply absent)."""

    def serving_evidence(self) -> Mapping[str, Any]:
        """Short strings and numbers, stored with the run under ``metrics["serving"]``."""
        ...


@runtime_checkable
class ConcurrencyAware(Protocol):
    """A generator that sizes its resources (a connection pool) for the requests in flight.

    The kernel calls :meth:`use_concurrency` once, before the first request, with the run's
    effective concurrency (``--concurrency``, else the instance's ``concurrency`` option, else
    ``$EVALKIT_CONCURRENCY``, else what the generator asks for, else 8), so a pool never caps a
    run below what the user asked for.
    """

    def use_concurrency(self, requests: int) -> None:
        """Allow ``requests`` requests in flight from now on."""
        ...


@runtime_checkable
class AsyncClosing(Protocol):
    """A component holding connections that must be closed on the run's event loop."""

    async def aclose(self) -> None:
        """Release the connections."""
        ...


@runtime_checkable
class ChatGenerator(Protocol):
    """A generator that takes a conversation: the turns sent so far and the tools the model may
    call, and answers with one model turn — text, tool calls or both. The kernel drives the
    conversation (scripted user turns, tool calls answered from canned results, ``max_steps``:
    :mod:`evalkit.run.answering.conversation`); a generator only answers one turn at a time.

    A generator whose model may take no tools says so with ``supports_tools = False`` (and may
    name why with ``tools_refusal() -> str``): a set that offers tools is then refused before
    anything is called (exit 2), as the llm adapter does for a model without tool support. One
    that cannot be told which tool to call says ``supports_tool_choice = False``: a prompt whose
    ``tool_choice`` is not ``auto`` is refused the same way."""

    def chat(self, request: ChatRequest) -> Turn:
        """The model's next turn."""
        ...


@runtime_checkable
class AsyncChatGenerator(Protocol):
    """:class:`ChatGenerator`, for a generator whose turns are awaited (``async def achat``)."""

    async def achat(self, request: ChatRequest) -> Turn:
        """The model's next turn."""
        ...


#: The largest concurrency a run accepts, from ``--concurrency``, ``$EVALKIT_CONCURRENCY`` or an
#: instance's configured ``concurrency``.
MAX_CONCURRENCY = 1_000_000
#: The longest note a generator's ``echoed_model_note`` may give (:meth:`BoundGenerator.echoed_model_note`).
MAX_OWN_NOTE_CHARS = 300


def concurrency_fault(value: object) -> str | None:
    """Why a run refuses a generator's declared ``concurrency`` (read with :func:`declared`), as
    the words after ``declares concurrency`` — ``int 0, which must be a whole number of at least 1``
    — or ``None`` when it takes it (``None``: not declared; an ``int`` of at least 1). The one rule:
    :attr:`BoundGenerator.concurrency` refuses by it, and ``evalkit.testing.check_generator`` checks
    a plugin by it, so a generator that passes the kit is not refused by a run."""
    if value is None or (type(value) is int and value >= 1):
        return None
    return f"{type(value).__name__} {short_repr(value, 40)}, which must be a whole number of at least 1"


#: A generator's asynchronous method evalkit awaits, and the synchronous one it calls when that is absent.
_ASYNC_WITH_TWIN = (("agenerate", "generate"), ("achat", "chat"))


def async_method_fault(generator: object) -> str | None:
    """Why a run refuses ``generator`` for an ``agenerate`` (or ``achat``) that is no ``async def``
    while it has no ``generate`` (``chat``) to call instead — ``agenerate() is no async def …`` —
    or ``None``. evalkit awaits only an ``async def`` one: a plain method returning an awaitable was
    passed over for the ``generate()`` it lacks, an ``AttributeError`` in every case. The one rule:
    :func:`bind_generator` refuses by it (exit 2, nothing stored), and
    ``evalkit.testing.check_generator`` checks a plugin by it. Both methods are found without
    running anything (:func:`~evalkit.plugin_attributes.declares`): only a plain function is
    judged, never a property or ``__getattr__`` read one more time than the run reads it."""
    for awaited, plain in _ASYNC_WITH_TWIN:
        method = inspect.getattr_static(generator, awaited, None)
        if isinstance(method, (staticmethod, classmethod)):
            method = method.__func__
        if inspect.isfunction(method) and not inspect.iscoroutinefunction(method) and not declares(generator, plain):
            return (
                f"{awaited}() is no async def (evalkit awaits only an async def {awaited}(), and there is no "
                f"{plain}() to call instead): declare it async def {awaited}(), or write {plain}() instead"
            )
    return None


def echoed_model_note_fault(value: object) -> str | None:
    """Why a run refuses a generator's declared ``echoed_model_note`` (read with :func:`declared`),
    as the words after ``declares echoed_model_note`` — ``int 5, which must be text of 1 to 300
    printable characters (no line break), or None`` — or ``None`` when it takes it (``None``: nothing
    to say; text of 1 to :data:`MAX_OWN_NOTE_CHARS` printable characters). The one rule:
    :meth:`BoundGenerator.echoed_model_note` refuses by it, and ``evalkit.testing.check_generator``
    checks a plugin by it."""
    if value is None or (type(value) is str and 0 < len(value) <= MAX_OWN_NOTE_CHARS and value.isprintable()):
        return None
    return (
        f"{type(value).__name__} {short_repr(value, 40)}, which must be text of 1 to {MAX_OWN_NOTE_CHARS} printable "
        "characters (no line break), or None"
    )


def plugin_method(who: Any, component: Any, method: str, *args: Any) -> Any:
    """``component.method(*args)`` under the rule of :func:`plugin_called`, the method read within
    the call: a judge's ``bind_judge``, ``check_ready`` or ``task`` whose property or
    ``__getattr__`` raises as it is read, or that is missing, is ``who``'s failure in ``method()``,
    never an internal error."""
    return plugin_called(who, method, lambda *given: getattr(component, method)(*given), *args)


def judge_instance(grading: Any) -> str | None:
    """The provider instance a grader's judge asks (its ``judge_instance``), read with
    :func:`declared`: ``None`` when it has none, or none that is text."""
    value = declared(grading, "judge_instance")
    return value if isinstance(value, str) and value else None


def plugin_called(who: Any, method: str, call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``: a plugin's call the run makes outside its per-case wrappers (a generator's
    ``use_concurrency()``, a grader's ``use_assertion_kinds()`` or ``run_metrics()``; their
    closing, which comes once the cases are stored, is a warning made of
    :func:`plugin_call_failed` instead) — the one rule for them: what it raises (:data:`~evalkit.errors.PLUGIN_FAILURES`, and
    what :func:`~evalkit.errors.carried` carries) is a :class:`~evalkit.errors.PluginError` naming
    the plugin and its distribution (``who``: its record, a name when there is none, or a function
    giving either) and ``method``, never an internal error; an error of evalkit's own kind it
    raises is raised as it is."""
    from .errors import EvalkitError

    try:
        return carried(call, *args, method=method)
    except EvalkitError:
        raise
    except PLUGIN_FAILURES as exc:
        raise plugin_call_failed(who, method, exc) from exc


def plugin_close_failed(who: Any, method: str, exc: BaseException) -> str:
    """The warning saying that ``who`` (see :func:`plugin_called`) raised ``exc`` when closed once
    the run was stored (a generator's ``close()``, a grader's or judge's ``aclose()``, a
    retriever's ``close()``): the one wording for them all; the run, its verdict and exit code stay
    what they are."""
    return f"{plugin_call_failed(who, method, exc)}; the run is kept as it is"


def plugin_close_stuck(who: Any, method: str, seconds: float) -> str:
    """The warning saying that ``who`` (see :func:`plugin_called`) did not return from ``method()``
    within ``seconds`` once the run was stored, and was abandoned: the wording of
    :func:`plugin_close_failed` for a close that never returns."""
    limit = f"{seconds:g} s (the deployment's timeout)"
    return f"{_plugin_error(who, f'did not return from {method}() within {limit}; the call was abandoned')}; the run is kept as it is"


async def plugin_awaited(who: Any, method: str, awaitable: Any) -> Any:
    """``await awaitable`` under the rule of :func:`plugin_called`."""
    from .errors import EvalkitError, carried_async

    try:
        return await carried_async(awaitable)
    except EvalkitError:
        raise
    except PLUGIN_FAILURES as exc:
        raise plugin_call_failed(who, method, exc) from exc


def plugin_call_failed(who: Any, method: str, exc: BaseException) -> Any:
    """The :class:`~evalkit.errors.PluginError` saying that ``who`` (see :func:`plugin_called`)
    raised ``exc`` in ``method()``."""
    from .shapes import exception_message, exception_name

    return _plugin_error(who, f"raised {exception_name(exc)} in {method}(): {exception_message(exc)}")


def plugin_gave_unusable(who: Any, what: str, problem: str) -> Any:
    """The :class:`~evalkit.errors.PluginError` saying that ``who`` (see :func:`plugin_called`)
    gave ``what`` (``a reply from aprefer()``, ``a prompt.version``) that breaks evalkit's rule for
    it, ``problem`` saying how: a value a plugin returns outside a case, named as what it raises is."""
    return _plugin_error(who, f"gave {what} evalkit cannot use: {problem}")


def _plugin_error(who: Any, said: str) -> Any:
    """The :class:`~evalkit.errors.PluginError` whose message is ``who`` named, then ``said``."""
    from .errors import PluginError

    if callable(who):
        who = who()
    if isinstance(who, str):
        return PluginError(f"{who} {said}")
    return PluginError.for_plugin(who, f"{who.label} {said}")


async def aclosed(component: Any) -> None:
    """Close ``component`` with its ``aclose()``, a coroutine function's or a plain method's (what
    it returns is awaited when it can be): a plain ``aclose()`` that raised as it was called
    escaped the judge commands' closing as an internal error, and one that returned ``None`` was
    awaited. What either raises is raised as it is (and carried, :func:`~evalkit.errors.carried`):
    a caller names it with :func:`plugin_awaited` or :func:`plugin_close_failed`."""
    from .errors import carried, carried_async

    closing = carried(lambda: component.aclose(), awaits=True)
    if inspect.isawaitable(closing):
        await carried_async(closing)


def grader_plugin(name: str) -> registry.PluginRecord | str:
    """The record of the grader ``name`` (its distribution named in its failures), or ``grader "NAME"``."""
    try:
        return registry.find("evalkit.graders", name)
    except Exception:  # noqa: BLE001 - a failure's message never fails on who to name
        return f"grader {quoted(name)}"


@attrs.frozen
class BoundGenerator:
    """A generator object with the serving facts the runner records for each case.

    ``configured`` is true when the instance came from configuration (or is the built-in
    reference instance); only such runs can be verified and compared.
    """

    generator: Any
    adapter: str
    instance: str | None
    alias: str | None
    configured: bool
    record: registry.PluginRecord | None = None
    #: The instance's ``concurrency`` option as configured (``None``: not set in the config).
    configured_concurrency: int | None = None
    #: Seconds one answer may take (the instance's ``answer_timeout``); then the case errs.
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT_S
    #: The instance's base system prompt (``system_prompt`` or ``system_prompt_file``), put before
    #: every request's own system prompt, in the same system message; ``None``: none.
    base_prompt: str | None = None

    @property
    def can_chat(self) -> bool:
        """True when the generator takes conversations (:class:`ChatGenerator` or :class:`AsyncChatGenerator`)."""
        return offers(self.generator, ChatGenerator) or self.chats_async

    @property
    def chats_async(self) -> bool:
        """True when the generator has ``async def achat`` (read once, with :func:`declared`: a
        property answering otherwise the second time, or raising, is no internal error)."""
        return inspect.iscoroutinefunction(declared(self.generator, "achat"))

    @property
    def is_async(self) -> bool:
        """True when the generator has ``async def agenerate`` (read once, as :attr:`chats_async`)."""
        return inspect.iscoroutinefunction(declared(self.generator, "agenerate"))

    @property
    def is_reference_self_check(self) -> bool:
        """True for the built-in reference instance: the set's own references answer, no model is served."""
        return self.instance == REFERENCE_INSTANCE and self.adapter == "reference"

    @property
    def concurrency(self) -> int | None:
        """The concurrency the generator asks for, if it says; a ``concurrency`` property that
        raises says nothing; more than :data:`MAX_CONCURRENCY` gets the limit. One that is not a
        whole number of at least 1 (``"4"``, ``0``, ``2.5``, ``True``) is the plugin's defect, a
        :class:`~evalkit.errors.PluginError` naming it and the value (exit 2, nothing called or
        stored): it was passed over for 8 prompts in flight, unsaid, where
        ``evalkit.testing.check_generator`` refuses it."""
        value = declared(self.generator, "concurrency")
        fault = concurrency_fault(value)
        if fault is None:
            return value if value is None else min(value, MAX_CONCURRENCY)
        from .errors import PluginError

        said = (
            f"{self.record.label if self.record is not None else generator_named(self)} declares concurrency {fault} "
            "(a defect of the plugin; a concurrency configured for the instance is used instead of it)"
        )
        raise PluginError.for_plugin(self.record, said) if self.record is not None else PluginError(said)

    def echoed_model_note(self, default: str) -> str | None:
        """What the run says when the reported model equals the alias sent: the generator's own
        ``echoed_model_note`` (``None``: nothing to say), else ``default``; a property that raises
        says nothing of its own. One that is not text of 1 to :data:`MAX_OWN_NOTE_CHARS` printable
        characters, nor ``None`` (``5``, a line break, 100 KB), is the plugin's defect, a
        :class:`~evalkit.errors.PluginError` naming it and the value (exit 2, nothing called or
        stored), by the rule :attr:`concurrency` follows: it was passed over for ``default``, unsaid."""
        value = declared(self.generator, "echoed_model_note", default)
        fault = echoed_model_note_fault(value)
        if fault is None:
            return value
        from .errors import PluginError

        said = (
            f"{self.record.label if self.record is not None else generator_named(self)} declares echoed_model_note "
            f"{fault} (a defect of the plugin)"
        )
        raise PluginError.for_plugin(self.record, said) if self.record is not None else PluginError(said)

    @property
    def plugin(self) -> registry.PluginRecord | str:
        """Who the generator's failures name: its entry point's record (with its distribution), or
        the instance when there is none (a generator a library caller built)."""
        return self.record if self.record is not None else generator_named(self)

    def secrets(self) -> tuple[str, ...]:
        """Credential values the generator sends (empty when it holds none or does not say)."""
        if offers(self.generator, SecretHolder):
            return tuple(
                v
                for v in secrets_to_keep_out(
                    self.generator, f"provider instance {quoted(self.instance or self.adapter)}"
                )
                if v
            )
        return ()

    async def aclose(self) -> None:
        """Close the generator's resources if it has any."""
        closer = getattr(self.generator, "aclose", None)
        if closer is not None and inspect.iscoroutinefunction(closer):
            await closer()
            return
        closer = getattr(self.generator, "close", None)
        if callable(closer):
            closer()


def _create(
    adapter: str, options: Mapping[str, Any], table: str, config: Config | None = None
) -> tuple[Any, registry.PluginRecord]:
    """The generator ``adapter`` built with ``options``; with the ``config`` they were written in,
    their path options resolved first, and kept inside the project when a file configured them (a
    ``Config`` a library caller built in Python is its own choice, as a command-line argument is)."""
    record, factory = registry.driver("evalkit.generators", adapter)
    if config is not None:
        from .project_files import ProjectBoundary

        boundary = ProjectBoundary.of(config) if config.path is not None else None
        options = resolve_paths(options, factory, config.root, boundary=boundary, table=table)
    generator = registry.build(record, factory, options, table)
    wanted = "has none of generate(request), async agenerate(request), chat(request) or async achat(request)"
    generator = registry.require_offered(
        record, generator, (Generator, AsyncGenerator, ChatGenerator, AsyncChatGenerator), wanted
    )
    fault = async_method_fault(generator)
    if fault is not None:
        from .errors import PluginError

        raise PluginError.for_plugin(record, f"{record.label}: its {fault}")
    return generator, record


def bind_generator(
    config: Config, provider: str | None = None, model: str | None = None, **overrides: Any
) -> BoundGenerator:
    """The generator a run uses.

    ``provider`` names a configured instance (verified runs), or an adapter for an ad-hoc run
    (never verified); with neither, the built-in reference instance answers with the set's own
    references.
    """
    if model:
        _check_alias(model, argument("model"))
    instance: ProviderInstance | None = None
    if provider is None:
        if config.providers and len(config.providers) == 1:
            instance = next(iter(config.providers.values()))
        elif config.providers:
            raise ConfigError(
                f"several provider instances are configured ({listed(config.providers)}); choose one with {argument('provider')}"
            )
        else:
            generator, record = _create("reference", {}, "the built-in reference instance")
            return BoundGenerator(generator, "reference", REFERENCE_INSTANCE, model or "reference", True, record)
    elif provider in config.providers:
        instance = config.providers[provider]
    if instance is not None:
        options = {**instance.options, **overrides}
        where = f" of {path_named(config.path)}" if config.path else ""
        if model:
            options["model"] = model
        elif isinstance(instance.options.get("model"), str):
            _check_alias(instance.options["model"], f"model in [providers.{table_key(instance.name)}]{where}")
        try:
            generator, record = _create(
                instance.adapter, options, f"[providers.{table_key(instance.name)}]{where}", config
            )
        except ConfigError as exc:
            raise ConfigError(
                f"provider instance {quoted(instance.name)} ({quoted(instance.adapter)}): {exc}"
            ) from None
        alias = options.get("model")
        configured = instance.options.get("concurrency")
        if isinstance(configured, int) and not isinstance(configured, bool) and not 1 <= configured <= MAX_CONCURRENCY:
            raise ConfigError(
                f"provider instance {quoted(instance.name)}: concurrency must be a whole number from 1 to {MAX_CONCURRENCY:,} "
                f"(in [providers.{table_key(instance.name)}]{where}), got {short_repr(configured)}"
            )
        return BoundGenerator(
            generator,
            instance.adapter,
            instance.name,
            stored_alias(alias),
            True,
            record,
            configured_concurrency=configured
            if isinstance(configured, int) and not isinstance(configured, bool)
            else None,
            answer_timeout=instance.answer_timeout,
            base_prompt=base_prompt_of(config, instance),
        )
    try:
        options = dict(overrides)
        if model:
            options["model"] = model
        generator, record = _create(provider, options, f"the ad-hoc {argument('provider', provider)} run")  # type: ignore[arg-type]
    except UnknownPluginError as exc:
        raise UnknownProviderError(provider or "", config, exc.available) from None
    return BoundGenerator(generator, provider or "", None, model, False, record)


def stored_alias(model: Any) -> str | None:
    """The model alias a run of a provider instance stores for its options' ``model`` (the
    configured one, or ``--model``'s): as text, ``None`` without one."""
    return str(model) if model else None


def _check_alias(alias: str, source: str) -> None:
    """Refuse (:class:`~evalkit.errors.UsageError`, exit 2, before anything is called or stored) a
    model alias longer than :data:`~evalkit.shapes.MAX_NAME_CHARS`: it is a name the store keys a
    run's baseline scope on and every report prints. One of a million characters, from ``--model``
    or the instance's ``model``, was sent with every request; the run was stored, and each case
    erred (the generator's answer named that model) or, where the adapter ignores it, the run was
    kept under that alias. ``source`` names where it was read."""
    from .shapes import MAX_NAME_CHARS, too_long

    if (length := too_long(alias, MAX_NAME_CHARS)) is not None:
        raise UsageError(f"{source}: the model alias {length}")


def check_provider_known(provider: str, config: Config) -> None:
    """Raise :class:`UnknownProviderError` when ``provider`` is neither a configured instance nor
    an installed adapter, from the configuration and installed metadata alone (no adapter is
    imported): what :func:`bind_generator` would refuse, asked before anything runs."""
    if provider in config.providers:
        return
    adapters = sorted({record.name for record in registry.records("evalkit.generators")})
    if provider not in adapters:
        raise UnknownProviderError(provider, config, adapters)


#: The largest base system prompt file read, in bytes.
MAX_BASE_PROMPT_BYTES = 1024 * 1024


def base_prompt_of(config: Config, instance: ProviderInstance) -> str | None:
    """The instance's base system prompt: ``system_prompt``, or the text of ``system_prompt_file``
    (relative to the configuration file, inside the project or a place ``[sets] allow_outside``
    lists, UTF-8, at most :data:`MAX_BASE_PROMPT_BYTES`); ``None`` when it has none or it is empty."""
    if instance.system_prompt_file is None:
        return instance.system_prompt or None
    from .project_files import check_inside_project
    from .textfiles import read_whole_file, utf8_text

    what = f"the system_prompt_file of [providers.{table_key(instance.name)}]"
    path = check_inside_project(config, instance.system_prompt_file, what)
    try:
        text = utf8_text(read_whole_file(path, MAX_BASE_PROMPT_BYTES))
    except OSError as exc:
        raise ConfigError(f"{what}, {instance.system_prompt_file}, cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{what}, {instance.system_prompt_file}, is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return text.strip() or None


class UnknownProviderError(UnknownPluginError):
    """``--provider NAME`` is neither a configured instance nor an installed adapter.

    The message says where the configuration was looked for, which names are adapters, and shows
    the ``[providers.NAME]`` table that would define ``NAME``.
    """

    def __init__(self, name: str, config: Config, adapters: Sequence[str]) -> None:
        from .printable import hidden_escaped
        from .wording import did_you_mean

        configured = list(config.providers)
        UsageError.__init__(self)
        self.kind, self.name = "provider", name
        self.available = tuple([f"{hidden_escaped(n)} (configured)" for n in configured] + list(adapters))
        hint = did_you_mean(name, [*configured, *adapters])
        if config.path is None:
            where = f"No configuration file was found ({config.describe_search()})"
        elif configured:
            # the adapters are named in the next sentence: listed here too, "replay (configured in
            # evalkit.toml)" read as if the adapter were a configured instance
            shown = ", ".join(quoted(hidden_escaped(n)) for n in configured)
            where = f"Configured provider instances (in {path_named(config.path)}): {shown}"
        else:
            where = f"{path_named(config.path)} configures no provider instance"
        adapters_text = ", ".join(quoted(a) for a in adapters) or "none installed"
        example = next((a for a in ("openai", "replay") if a in adapters), adapters[0] if adapters else "openai")
        table = f'    [providers.{table_key(name)}]\n    adapter = "{example}"\n    model = "MODEL-ALIAS"'
        self.args = (
            f"Unknown provider {quoted(name)}: it is not a configured provider instance, nor an adapter.{hint} {where}. "
            f"Adapters (evalkit.generators, usable as {argument('provider')} for an ad-hoc run) are {adapters_text}. "
            f"To define {quoted(name)}, add this table to {config.path or 'evalkit.toml in your project root'}"
            f" (adapter options such as base_url or path go in it too; see `evalkit list plugins --options`):\n{table}",
        )
        if switched_off := registry.switched_off_note("evalkit.generators", name):  # an adapter switched off: the cause
            self.args = (
                f"Unknown provider {quoted(name)}: it is not a configured provider instance, nor an adapter. {switched_off}",
            )


def known_graders() -> list[str]:
    """Names of every installed grader."""
    return sorted({r.name for r in registry.records("evalkit.graders")})


def load_grader(name: str, *, strict: bool = True, config: Config | None = None, **options: Any) -> tuple[Any, str]:
    """The grader named ``name`` and the name actually used.

    With ``strict`` an unknown name raises :class:`UnknownPluginError` listing the known ones (the
    CLI); without it, the deterministic grader is used instead (the library), so a typo never spends
    judge tokens. With ``config``, the grader's table ``[graders.NAME]`` gives its options (paths
    relative to the configuration file, inside the project); ``options`` given here win over it.
    """
    try:
        record, factory = registry.driver("evalkit.graders", name)
    except UnknownPluginError:
        if strict:
            raise
        warnings.warn(f"unknown grader {quoted(name)}; grading deterministically", EvalkitWarning, stacklevel=2)
        name = "deterministic"
        record, factory = registry.driver("evalkit.graders", name)
    where = f"the grader options ({argument('grader_options', option='--judge, --judge-repeats, --judge-temperature, --allow-self-judge')})"
    table = _grader_table(config, name)
    if table:
        from .project_files import ProjectBoundary

        shown = (
            f"[graders.{table_key(name, always_quoted=True)}] of {path_named(config.path)}"
            if config is not None
            else ""
        )
        options = {
            **resolve_paths(table, factory, config.root, boundary=ProjectBoundary.of(config), table=shown),
            **options,
        }
        where = f"{shown}, or {where}"
    grader = registry.build(record, factory, options, where)
    return registry.require_offered(
        record, grader, (Grader, AsyncGrader), "has neither grade(prompt, answer) nor async agrade(prompt, answer)"
    ), name


def _grader_table(config: Config | None, name: str) -> dict[str, Any]:
    """The ``[graders.NAME]`` table of ``config`` (empty when there is none)."""
    if config is None or config.path is None:
        return {}
    graders = config.raw.get("graders", {})
    if not isinstance(graders, Mapping):
        raise ConfigError(
            f"{path_named(config.path)}: [graders] must be a table of one table per grader, like [graders.NAME]"
        )
    table = graders.get(name, {})
    if not isinstance(table, Mapping):
        raise ConfigError(
            f"{path_named(config.path)}: [graders.{table_key(name, always_quoted=True)}] must be a table of the grader's options"
        )
    return dict(table)
