"""The built-in ``openai`` generator: any endpoint that speaks OpenAI chat completions.

Registered in the ``evalkit.generators`` group as ``openai``. OpenAI itself, Azure-style gateways
(through ``extra_headers``), vLLM, Ollama, LiteLLM and llama.cpp servers all fit.

Requests go over aiohttp (:mod:`evalkit_plugins._http`): one ``ClientSession`` per instance and
event loop, its connection pool sized to the run's concurrency, to a ``base_url`` parsed by yarl.
https endpoints are verified against ``ca_bundle`` when the instance names one, else the system's
certificate store (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` replace it); ``HTTPS_PROXY``,
``HTTP_PROXY`` and ``ALL_PROXY`` are honoured unless ``NO_PROXY`` names the host. ``timeout``
bounds each request whole, an answer trickled byte by byte included.

Fault handling, per prompt:

* HTTP 429, any 5xx, timeouts and transport errors (refused or dropped connections) are retried
  with exponential backoff and full jitter — ``uniform(0, min(backoff_max, backoff_base * 2**(n-1)))``
  before attempt ``n+1`` — or, when the endpoint sends ``Retry-After`` (seconds or an HTTP date) or
  ``retry-after-ms``, exactly that long, up to ``retry_after_max`` (default 60 s; ``backoff_max``
  bounds only evalkit's own back-off: an endpoint that says "retry after 30 s", asked again after
  2, answers 429 again and burns an attempt). A longer wait is cut to ``retry_after_max`` and the
  run's notes say so (:meth:`OpenAIGenerator.pacing_notes`); a value that is neither whole or
  decimal seconds nor an HTTP date (negative, ``nan``, ``1e308``, control characters) is ignored,
  and the back-off used. After ``max_attempts`` attempts
  the last failure is raised as :class:`~evalkit.errors.GenerationError`.
* A redirect (3xx) is not followed: it is raised at once saying where it points (``Location``,
  resolved, scrubbed and escaped) and the ``base_url`` that goes there; the readiness probe refuses it.
* Any other status (400, 401, 404, …) is raised at once, with a shortened body. An error that
  names a field of the request — a 400/422, or a 5xx whose body is a validation error such as
  llama-cpp-python's HTTP 500 "Input should be 'text' or 'json_object'" for ``response_format`` —
  is raised at once as :class:`~evalkit.errors.RequestRejected` naming that field: asking again
  cannot help, and a caller that can ask differently (a judge negotiating structured output) does.
* A 2xx answer that is not a usable completion (not JSON, no ``choices``, no ``message.content``,
  empty content) is raised at once and not retried: it is what the endpoint deterministically says,
  and the message shows what came back, shortened to 200 characters.
* A response body longer than ``max_response_bytes`` (default 16 MiB) is not read past that many
  bytes (counted after ``gzip``/``deflate`` decoding) and is raised at once, not retried: a 300 MB
  reply or a gzip bomb costs the limit in memory, not the reply.

The API key is read from the environment variable named by ``api_key_env`` when the generator is
built; it is never an option. It and the ``extra_headers`` values are kept only in the headers the
HTTP client sends: ``repr()`` and :meth:`OpenAIGenerator.redacted_options` show ``***`` and every
error message is scrubbed of them, even when an endpoint echoes them back.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import ssl
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

import attrs
from evalkit import __version__ as _EVALKIT_VERSION
from evalkit.answers import MAX_ANSWER_NAME_CHARS, Answer, ChatRequest, GenerationRequest, Turn, Usage, UsageSetAside
from evalkit.components import MAX_CONCURRENCY
from evalkit.conversations import Message, ToolCall
from evalkit.errors import ConfigError, EndpointRefused, GenerationError, RequestRejected
from evalkit.jsonparse import parse_json
from evalkit.jsontext import NotJsonNumber, sent_text
from evalkit.options import number, option, text, whole
from evalkit.privacy import remove_secrets
from evalkit.shapes import MIN_SECONDS
from evalkit.wording import argument, counted, quoted
from yarl import URL

from evalkit_plugins._http import (
    ACCEPTED_CODINGS,
    TRANSPORT_FAILURES,
    EndpointSession,
    EndpointSettings,
    Reply,
    ResponseTooLarge,
    UndecodableBody,
    connection_refused,
    environment_proxy,
    failure_detail,
    failure_kind,
    run_blocking,
    tls_context,
)
from evalkit_plugins._pacing import Pacer

__all__ = ["OpenAIGenerator"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The largest response body read (16 MiB): room for a 1 MiB answer even when every character is
#: JSON-escaped, far below what would hurt the process.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: The most of a ``GET /models`` listing the readiness probe reads.
MODEL_LIST_BYTES = 1_000_000
#: The readiness probe has not read ``GET /models`` yet.
_NOT_ASKED = object()
SHOWN_BODY_CHARS = 200
REDACTED = "***"



def _valid_base_url(instance: object, attribute: attrs.Attribute, value: str | None) -> None:  # type: ignore[type-arg]
    """The ``base_url`` validator: see :func:`_check_url` (the URL is never echoed)."""
    if value is not None:
        _check_url(value)


_valid_base_url.requirement = "must be an http:// or https:// URL, without user info"  # type: ignore[attr-defined]


def _valid_headers(instance: object, attribute: attrs.Attribute, value: Mapping[str, str] | None) -> None:  # type: ignore[type-arg]
    """The ``extra_headers`` validator: names that are HTTP tokens, values an HTTP/1.1 header can
    carry (never echoed: they may be credentials)."""
    if value is not None:
        _check_header_values({name.lower(): header for name, header in _check_headers(value).items()}, None)


_valid_headers.requirement = "must be a table of HTTP header names to printable ASCII values"  # type: ignore[attr-defined]


@attrs.frozen
class OpenAIOptions:
    """The options of an ``openai`` provider instance (the key itself is never one)."""

    base_url: str | None = option(
        "the endpoint, e.g. https://api.openai.com/v1 (default: $OPENAI_BASE_URL, else OpenAI)",
        default=None, secret=True, validator=_valid_base_url,
    )
    model: str | None = option("the model alias sent with every request", default=None, validator=attrs.validators.optional(text()))
    api_key_env: str | None = option(
        'the NAME of the environment variable holding the API key (default OPENAI_API_KEY; a named one must be set; "" for no key)',
        default=None, validator=attrs.validators.optional(text(empty=True)),
    )
    timeout: float = option("seconds to wait for one response", default=60.0, validator=number(at_least=MIN_SECONDS))
    temperature: float | None = option(
        "sampling temperature (default: the endpoint's)", default=None, validator=attrs.validators.optional(number(at_least=0))
    )
    max_tokens: int | None = option(
        "answer length limit in tokens (default: the endpoint's)", default=None, validator=attrs.validators.optional(whole(at_least=1))
    )
    extra_headers: dict[str, str] | None = option(
        "headers sent with every request (values never stored or shown)", default=None, secret=True, validator=_valid_headers
    )
    concurrency: int = option("prompts in flight (--concurrency overrides)", default=8, validator=whole(at_least=1, at_most=MAX_CONCURRENCY))
    max_attempts: int = option(
        "attempts per prompt on 429, 5xx, timeouts and dropped connections", default=5, validator=whole(at_least=1)
    )
    backoff_base: float = option(
        "first retry delay in seconds (doubles per attempt, full jitter)", default=0.5, validator=number(at_least=0)
    )
    backoff_max: float = option("longest retry delay in seconds", default=30.0, validator=number(at_least=0))
    retry_after_max: float = option(
        "longest wait in seconds a 429's or 5xx's Retry-After is honoured for (a longer one is cut to it, and the "
        "run's notes say so)",
        default=60.0, validator=number(at_least=0, at_most=86400),
    )
    max_response_bytes: int = option(
        "a response body longer than this is refused unread", default=DEFAULT_MAX_RESPONSE_BYTES, validator=whole(at_least=1024)
    )
    ca_bundle: str | None = option(
        "a PEM file of the certificate authorities to trust for an https endpoint, in place of the system's "
        "(relative to the config file, or anywhere: the system's own bundles live in /etc/ssl; default: the "
        "system's store, or $SSL_CERT_FILE)",
        default=None, path=True, anywhere=True, validator=attrs.validators.optional(text()),
    )
    max_requests_per_minute: int | None = option(
        "requests per minute this instance may be sent, honoured from the first (default: no limit)",
        default=None, validator=attrs.validators.optional(whole(at_least=1)),
    )
    max_tokens_per_minute: int | None = option(
        "tokens per minute this instance may be sent (estimated before each request: body length / 4 + max_tokens; "
        "default: no limit)",
        default=None, validator=attrs.validators.optional(whole(at_least=1)),
    )


class OpenAIGenerator:
    """A generator for an OpenAI-compatible ``/chat/completions`` endpoint.

    Built with a provider instance's :class:`OpenAIOptions` (checked by their validators when they
    are made). One HTTP connection pool per instance and event loop, sized to ``concurrency``; call
    :meth:`aclose` when done.
    """

    Options = OpenAIOptions

    def __init__(self, options: OpenAIOptions) -> None:
        # $OPENAI_BASE_URL is checked as the option would have been.
        base = _check_url(options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self.base_url = _display_url(base)
        self.model = options.model
        # None: the default variable, optional; a name: that variable must be set; "": no key at all.
        self._api_key_env_given = options.api_key_env is not None
        api_key_env = DEFAULT_API_KEY_ENV if options.api_key_env is None else options.api_key_env
        self.api_key_env = api_key_env
        self.timeout = float(options.timeout)
        self.temperature = None if options.temperature is None else float(options.temperature)
        self.max_tokens = options.max_tokens
        self.concurrency = options.concurrency
        self.max_attempts = options.max_attempts
        self.backoff_base = float(options.backoff_base)
        self.backoff_max = float(options.backoff_max)
        self.retry_after_max = float(options.retry_after_max)
        #: The Retry-After waits cut to ``retry_after_max``, and the longest one asked for.
        self._waits_cut = 0
        self._longest_wait_asked = 0.0
        self.max_response_bytes = options.max_response_bytes
        self.max_requests_per_minute = options.max_requests_per_minute
        self.max_tokens_per_minute = options.max_tokens_per_minute
        #: The pace of the current event loop's requests (429 back-off, per-minute limits).
        self._pacer: Pacer | None = None
        #: The replies that held a usage evalkit cannot count, and what was wrong with the first.
        self._usage_set_aside = UsageSetAside()
        extra_headers = options.extra_headers or {}
        self._header_names = tuple(extra_headers)
        if self.model is None:
            raise ConfigError(
                'Option "model" of the openai generator is required: set model = "<the model alias to send>" '
                f"in the provider instance (or pass {argument('model', 'ALIAS')})."
            )

        # The path is extended and the query kept: …/v1/chat/completions?api-version=… (Azure OpenAI).
        self._url = _below(base, "/chat/completions")
        self._models_url = _below(base, "/models")
        self._where = f"openai generator: POST {self.base_url.rstrip('/')}/chat/completions"
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        self._key_missing = not key
        headers = {"user-agent": USER_AGENT, "accept-encoding": ACCEPTED_CODINGS, "accept": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        headers.update((name.lower(), value) for name, value in extra_headers.items())
        _check_header_values(headers, api_key_env)
        self.ca_bundle = options.ca_bundle
        proxy = _proxy_for(self._url)
        #: The one-off GETs (readiness, evidence) send no body, so no body type.
        self._get_settings = EndpointSettings(
            headers={k: v for k, v in headers.items() if k != "content-type"},
            timeout=self.timeout,
            tls=_tls_for(self._url, self.ca_bundle),
            proxy=proxy,
        )
        self._post_settings = attrs.evolve(self._get_settings, headers={"content-type": "application/json", **headers})
        self._secrets = tuple(
            sorted(
                {key, *extra_headers.values(), *_query_secrets(base), proxy.password if proxy else ""} - {"", None},
                key=len,
                reverse=True,
            )
        )
        self._listing: Any = _NOT_ASKED  # GET /models as the readiness probe read it (None: no listing)
        self._session: EndpointSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        #: Models a gateway said it routed to (LiteLLM's ``x-litellm-model-name``), as seen.
        self._routed_models: set[str] = set()
        #: The model name the last request sent (a run's override may differ from ``model``).
        self._sent_model: str | None = self.model

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.redacted_options().items())
        return f"{type(self).__name__}({shown})"

    def redacted_options(self) -> dict[str, Any]:
        """The effective options for display or provenance, with header values as ``***``.

        The key is not an option, so it is not here; ``base_url`` loses any user info and query.
        """
        shown = {field.name: getattr(self, field.name) for field in attrs.fields(OpenAIOptions) if field.name != "extra_headers"}
        return {**shown, "extra_headers": dict.fromkeys(self._header_names, REDACTED)}

    def secret_values(self) -> tuple[str, ...]:
        """The API key, the header values, the values of ``base_url``'s query parameters (as given
        and URL-encoded) and the password of the environment's proxy URL, so the kernel keeps them
        out of every stored and printed byte."""
        return self._secrets

    def use_concurrency(self, requests: int) -> None:
        """Size the connection pool for ``requests`` in flight (the run's effective concurrency).

        Called by the kernel before the first request; a pool already open keeps its size until
        :meth:`aclose`.
        """
        if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
            raise ConfigError(f"openai generator: the concurrency must be a whole number of at least 1 (got {requests!r}).")
        self.concurrency = requests

    def check_ready(self) -> list[str]:
        """One free request before anything is paid for: ``GET <base_url>/models``.

        Raises :class:`~evalkit.errors.GenerationError` when the variable ``api_key_env`` names
        explicitly is not set, when the endpoint cannot be reached (refused, dropped, timed out), or
        when it rejects the credentials: 401, 403, or a 5xx whose body is about a missing or invalid
        key (LiteLLM answers a missing key with HTTP 500). Any other answer, including 404 from a
        server that lists no models, shows the endpoint is there. Returns warnings: the alias is
        not in the endpoint's model list (many gateways do not list aliases), or the probe got 5xx.
        """
        where = f"openai generator: GET {self.base_url.rstrip('/')}/models"
        if self._key_missing and self._api_key_env_given and self.api_key_env:
            raise GenerationError(
                f"the environment variable {self.api_key_env} (api_key_env) is not set, so no key would be sent; "
                'set it, or write api_key_env = "" for an endpoint that takes no key'
            )
        try:
            status, reason, content, location = self._fetch(self._models_url, min(self.timeout, 10.0), MODEL_LIST_BYTES)
        except UndecodableBody as exc:
            raise GenerationError(f"{where} answered with {self._scrub(exc.what)}") from None
        except TRANSPORT_FAILURES as exc:
            if isinstance(exc, TimeoutError):
                raise GenerationError(f"{where} timed out ({failure_kind(exc)})") from None
            failed = EndpointRefused if connection_refused(exc) else GenerationError
            raise failed(f"{where}: connection failed ({self._transport_failure(exc)})") from None
        shown = content[: SHOWN_BODY_CHARS * 4] if content is not None else b"(a body over 1 MB)"
        if 300 <= status < 400:  # base_url is not where the API is: said before anything is run
            failure = self._status_failure(status, reason, shown)
            raise GenerationError(f"{where} answered {failure}{self._redirect_hint(location, self._models_url, '/models')}")
        if status in (401, 403) or (status >= 500 and _about_credentials(shown)):
            failure = self._status_failure(status, reason, shown)
            raise GenerationError(f"{where} answered {failure}{self._status_hint(status, shown)}")
        if status >= 500:
            failure = self._status_failure(status, reason, shown)
            return [f"{where} answered {failure}; the run goes on (5xx answers are retried)"]
        return self._model_listed_warning(status, content or b"")

    def _fetch(self, url: URL, timeout: float, limit: int) -> tuple[int, str, bytes | None, str | None]:
        """``GET url`` with the generator's headers, on a session of its own (one connection) and
        an event loop of its own: the status, the reason phrase, the body (``None`` when it is
        longer than ``limit`` bytes; no more than that is read) and the ``Location`` header (a
        redirect's target, never followed).

        Raises one of :data:`~evalkit_plugins._http.TRANSPORT_FAILURES`, or ``UndecodableBody``.
        """
        settings = attrs.evolve(self._get_settings, timeout=timeout)

        async def get() -> tuple[int, str, bytes | None, str | None]:
            session = EndpointSession(settings, 1)
            try:
                reply = await session.send("GET", url, None, limit)
            except ResponseTooLarge as exc:
                return exc.status, exc.reason, None, None
            finally:
                await session.aclose()
            return reply.status, reply.reason, reply.content, reply.header("location")

        return run_blocking(get)

    def _get_json(self, url: URL, timeout: float) -> Any:
        """The JSON body of a GET that answered 200, else ``None`` (never raises); a body over
        :data:`_MAX_METADATA_BYTES` is not read past that."""
        try:
            status, _, body, _ = self._fetch(url, timeout, _MAX_METADATA_BYTES)
            return parse_json(body) if status == 200 and body is not None else None
        except (*TRANSPORT_FAILURES, UndecodableBody, ValueError):
            return None

    def _model_listed_warning(self, status: int, content: bytes) -> list[str]:
        """A warning when the endpoint lists its models and the alias is not among them (the listing
        is kept for :meth:`serving_evidence`, so the endpoint is asked once)."""
        self._listing = None
        if status != 200 or not content:
            return []
        try:
            self._listing = parse_json(content)
        except ValueError:
            return []
        if not self.model:
            return []
        try:
            listed = self._listing.get("data")
            ids = {item["id"] for item in listed if isinstance(item, dict) and isinstance(item.get("id"), str)}
        except (ValueError, AttributeError, TypeError, KeyError):
            return []
        if not ids or self.model in ids:
            return []
        shown = ", ".join(sorted(ids)[:5]) + (", …" if len(ids) > 5 else "")
        return [
            f'the model {quoted(self.model)} is not in the endpoint\'s model list ({shown}); '
            "going on, since many gateways serve aliases they do not list"
        ]

    def serving_evidence(self) -> dict[str, Any]:
        """What the endpoint says, for free, about what serves behind it (see ``ServingEvidence``).

        * the model a LiteLLM gateway routed to (``x-litellm-model-name`` on the replies);
        * this alias's entry in ``GET <base_url>/models``: ``owned_by`` and, from llama.cpp's
          server, its ``meta`` (parameters, size, context length);
        * from a llama.cpp server, ``GET /props``: the model file it loaded and its slots.

        Servers that echo the requested model name (llama.cpp, LiteLLM) prove nothing with the
        reported model; this is what they do prove. Values are shortened and credentials scrubbed.
        """
        evidence: dict[str, Any] = {}
        if self._routed_models:
            evidence["routed_model"] = ", ".join(sorted(self._routed_models))
        listing = self._listing if self._listing is not _NOT_ASKED else self._get_json(self._models_url, min(self.timeout, 5.0))
        entries = listing.get("data") if isinstance(listing, dict) else None
        entry = next(
            (e for e in entries or () if isinstance(e, dict) and e.get("id") == self._sent_model), None
        )
        if entry is not None:
            if isinstance(entry.get("owned_by"), str):
                evidence["owned_by"] = entry["owned_by"]
            meta = entry.get("meta")
            if isinstance(meta, dict):
                evidence.update((f"meta.{k}", v) for k, v in meta.items() if isinstance(v, (int, float, str)))
        if entry is not None and (entry.get("owned_by") == "llamacpp" or "meta" in entry):
            props = self._get_json(self._url.with_path("/props", keep_query=True), min(self.timeout, 5.0))
            if isinstance(props, dict):
                if isinstance(props.get("model_path"), str):
                    evidence["model_file"] = props["model_path"].replace("\\", "/").rsplit("/", 1)[-1]
                for key in ("total_slots", "build_info"):
                    if isinstance(props.get(key), (int, str)):
                        evidence[key] = props[key]
        return {k: self._scrub(v)[:200] if isinstance(v, str) else v for k, v in evidence.items()}

    async def agenerate(self, request: GenerationRequest) -> Answer:
        """Ask the endpoint for one completion, retrying transient faults; raises ``GenerationError``."""
        session = self._session
        if session is None or self._session_loop is not asyncio.get_running_loop():
            session = self._open_session()
        return await self._complete(session, self._payload(request))

    async def achat(self, request: ChatRequest) -> Turn:
        """Ask the endpoint for the next turn of a conversation, offering ``request.tools``; the
        turn may hold text, tool calls or both. Faults are handled as in :meth:`agenerate`."""
        session = self._session
        if session is None or self._session_loop is not asyncio.get_running_loop():
            session = self._open_session()
        return await self._complete(session, self._chat_payload(request), self._turn)

    def chat(self, request: ChatRequest) -> Turn:
        """Synchronous :meth:`achat` on a fresh event loop and a one-off connection."""

        async def once() -> Turn:
            session = EndpointSession(self._post_settings, 1)
            try:
                return await self._complete(session, self._chat_payload(request), self._turn)
            finally:
                await session.aclose()

        return asyncio.run(once())

    def generate(self, request: GenerationRequest) -> Answer:
        """Synchronous :meth:`agenerate` on a fresh event loop and a one-off connection.

        Must not be called from a running event loop; use :meth:`agenerate` there.
        """
        return asyncio.run(self._generate_once(request))

    async def aclose(self) -> None:
        """Close the connection pool of the running loop; the generator reopens one if used again."""
        session, self._session = self._session, None
        loop, self._session_loop = self._session_loop, None
        if session is not None and loop is asyncio.get_running_loop():
            await session.aclose()

    async def __aenter__(self) -> OpenAIGenerator:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _open_session(self) -> EndpointSession:
        # A pool is bound to the loop it was first used on; a pool left on a finished loop is abandoned.
        self._session = EndpointSession(self._post_settings, self.concurrency)
        self._session_loop = asyncio.get_running_loop()
        self._pacer = Pacer(self.concurrency, self.max_requests_per_minute, self.max_tokens_per_minute)
        return self._session

    def pacing_notes(self) -> list[str]:
        """What the run's notes say of this endpoint: the concurrency it lowered after 429s, and the
        replies whose usage was set aside (see :func:`evalkit.answers.reported_usage`)."""
        notes = self._pacer.notes(self.base_url) if self._pacer is not None else []
        if self._waits_cut:
            notes.append(
                f"{counted(self._waits_cut, 'Retry-After wait')} of {self.base_url} cut to retry_after_max = "
                f"{self.retry_after_max:g} s (the longest asked for {_seconds(self._longest_wait_asked)}): the retry "
                "may have come too early for the endpoint; raise retry_after_max to honour it"
            )
        return notes + self._usage_set_aside.notes(self.base_url)

    def _usage(self, data: dict[str, Any]) -> Usage | None:
        """The reply's token counts (:data:`_USAGE_FIELDS`), by the one rule of every adapter
        (:func:`evalkit.answers.reported_usage`); a usage set aside is remembered for the notes."""
        return self._usage_set_aside.usage(data.get("usage"), _USAGE_FIELDS)

    async def _generate_once(self, request: GenerationRequest) -> Answer:
        session = EndpointSession(self._post_settings, 1)
        try:
            return await self._complete(session, self._payload(request))
        finally:
            await session.aclose()

    def _payload(self, request: GenerationRequest) -> bytes:
        messages = [{"role": "user", "content": request.prompt}]
        if request.system_prompt:
            messages.insert(0, {"role": "system", "content": request.system_prompt})
        body = self._body(request, messages)
        if request.response_format is not None:
            body["response_format"] = request.response_format
        return self._encoded(body)

    def _chat_payload(self, request: ChatRequest) -> bytes:
        messages = []
        for turn, message in enumerate(request.messages, start=1):
            try:
                messages.append(_openai_message(message))
            except NotJsonNumber as exc:
                raise GenerationError(f"{self._where} was not sent: the value of a tool call's arguments in turn {turn} {exc} (not retried)") from None
        body = self._body(request, messages)
        if request.tools:
            body["tools"] = [tool.as_openai() for tool in request.tools]
            # OpenAI's default with tools ("auto") said outright when the prompt names none:
            # llama-cpp-python's function-calling chat formats offer the tools only when it is sent
            body["tool_choice"] = _tool_choice(request.tool_choice)
        return self._encoded(body)

    def _encoded(self, body: dict[str, Any]) -> bytes:
        """The request ``body`` as the JSON text sent (:func:`evalkit.jsontext.sent_text`); a body
        no JSON text carries (a NaN in a plugin's ``response_format`` or ``temperature``) is a
        ``GenerationError`` naming where, never ``NaN`` on the wire."""
        try:
            return sent_text(body).encode()
        except NotJsonNumber as exc:
            raise GenerationError(f"{self._where} was not sent: its body {exc} (not retried)") from None
        except (TypeError, ValueError) as exc:  # a value json cannot write (bytes, a loop)
            raise GenerationError(f"{self._where} was not sent: its body is not JSON: {exc} (not retried)") from None

    def _body(self, request: GenerationRequest | ChatRequest, messages: list[dict[str, Any]]) -> dict[str, Any]:
        model = request.model or self.model
        if not model:
            raise GenerationError(
                "openai generator: no model to ask — set the provider instance's model option or pass one in the request"
            )
        self._sent_model = model
        body: dict[str, Any] = {"model": model, "messages": messages}
        temperature = self.temperature if request.temperature is None else request.temperature
        if temperature is not None:
            body["temperature"] = temperature
        max_tokens = self.max_tokens if request.max_tokens is None else request.max_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return body

    async def _complete(self, session: EndpointSession, payload: bytes, parse: Any = None) -> Any:
        failure = ""
        cause: BaseException | None = None
        pacer = self._pacer if session is self._session else None
        tokens = len(payload) // 4 + (self.max_tokens or 0) if pacer is not None and self.max_tokens_per_minute else 0
        for attempt in range(1, self.max_attempts + 1):
            wait: float | None = None
            try:
                if pacer is None:
                    reply = await session.send("POST", self._url, payload, self.max_response_bytes)
                else:
                    await pacer.acquire(tokens)
                    try:
                        reply = await session.send("POST", self._url, payload, self.max_response_bytes)
                    finally:
                        pacer.release()
                    if reply.status == 429:
                        pacer.rate_limited(_retry_after(reply))
                    elif 200 <= reply.status < 300:
                        pacer.succeeded()
            except ResponseTooLarge:
                raise GenerationError(
                    f"{self._where} answered with a body larger than max_response_bytes "
                    f"({_size(self.max_response_bytes)}); evalkit stopped reading it (not retried)"
                ) from None
            except UndecodableBody as exc:
                raise GenerationError(f"{self._where} answered with {self._scrub(exc.what)} (not retried)") from None
            except TRANSPORT_FAILURES as exc:
                if isinstance(exc, TimeoutError):
                    failure = f"timed out ({failure_kind(exc)}, timeout {self.timeout:g} s)"
                else:
                    failure = f"connection failed ({self._transport_failure(exc)})"
                cause = exc
            else:
                status, content = reply.status, reply.content
                if 200 <= status < 300:
                    routed = reply.header("x-litellm-model-name")
                    if routed:
                        self._routed_models.add(routed[:200])
                    return (parse or self._answer)(content)
                failure, cause = self._status_failure(status, reply.reason, content), None
                field = _rejected_field(status, content)
                if field is not None:
                    raise RequestRejected(
                        f"{self._where} answered {failure} (the endpoint refused the request's {field!r}; not retried)",
                        field=field,
                        status=status,
                    )
                if (status != 429 and status < 500) or (status >= 500 and _about_credentials(content)):
                    hint = self._status_hint(status, content)
                    if 300 <= status < 400:
                        hint = self._redirect_hint(reply.header("location"), self._url, "/chat/completions")
                    raise GenerationError(f"{self._where} answered {failure} (not retried){hint}")
                wait = _retry_after(reply)
            if attempt < self.max_attempts:
                await asyncio.sleep(self._backoff(attempt, wait))
        attempts = counted(self.max_attempts, "attempt")
        raise GenerationError(f"{self._where} failed after {attempts}; last: {failure}") from cause

    def _transport_failure(self, exc: BaseException) -> str:
        """``Kind: what happened`` for a transport failure, credentials scrubbed."""
        return f"{failure_kind(exc)}: {self._scrub(failure_detail(exc))}"

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            if retry_after <= self.retry_after_max:
                return retry_after
            self._waits_cut += 1
            self._longest_wait_asked = max(self._longest_wait_asked, retry_after)
            return self.retry_after_max
        # The doubling stops at 2**64 (far past any backoff_max): 2.0 ** 1024 raises OverflowError,
        # and max_attempts has no upper bound.
        return random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2.0 ** min(attempt - 1, 64)))

    def _first_choice(self, content: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """The reply's JSON object and its first choice; :class:`GenerationError` when the body is
        not JSON or holds no choice that is an object."""
        try:
            data = parse_json(content)
        except ValueError:
            raise self._malformed("a body that is not JSON", content) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed("no choices", content)
        return data, choices[0]

    def _answer(self, content: bytes) -> Answer:
        data, choice = self._first_choice(content)
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str):
            raise self._malformed("a choice without message.content", content)
        if not text:
            raise self._malformed(f"empty content (finish_reason {choice.get('finish_reason')!r})", content)
        model = data.get("model")
        finish_reason = choice.get("finish_reason")
        # What the endpoint says beside the answer is kept only when it has the declared type.
        return Answer(
            text=text,
            model=_name_text(model),
            usage=self._usage(data),
            finish_reason=_name_text(finish_reason),
        )

    def _turn(self, content: bytes) -> Turn:
        """One conversation turn: ``message.content`` (null when the model only calls tools) and
        ``message.tool_calls`` (each ``function.arguments`` a JSON text, kept as sent when it is not JSON)."""
        data, choice = self._first_choice(content)
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._malformed("a choice without a message", content)
        text = message.get("content")
        calls = _tool_calls(message.get("tool_calls"))
        if calls is None:
            raise self._malformed("tool_calls that are not a list of function calls", content)
        if not isinstance(text, (str, type(None))) or (not text and not calls):
            raise self._malformed(f"neither content nor tool calls (finish_reason {choice.get('finish_reason')!r})", content)
        model = data.get("model")
        finish_reason = choice.get("finish_reason")
        return Turn(
            text=text or None,
            tool_calls=calls,
            model=_name_text(model),
            usage=self._usage(data),
            finish_reason=_name_text(finish_reason),
        )

    def _malformed(self, what: str, content: bytes) -> GenerationError:
        return GenerationError(f"{self._where} answered HTTP 200 with {what} (not retried): {self._shorten(content)}")

    def _status_failure(self, status: int, reason_phrase: str, content: bytes) -> str:
        reason = f" {self._scrub(reason_phrase[:80])}" if reason_phrase else ""
        return f"HTTP {status}{reason}: {self._shorten(content)}"

    def _status_hint(self, status: int, content: bytes = b"") -> str:
        """What to look at after an answer of ``status``: the key for a credentials refusal, the
        base URL for a 404 at a base URL without ``/v1`` (its most common mistake), else nothing."""
        parts = urlsplit(self.base_url)
        if status == 404 and not re.search(r"/v1(/|$)", parts.path):
            suggested = parts._replace(path=parts.path.rstrip("/") + "/v1").geturl()
            return (
                "; nothing serves chat completions at that URL: check base_url — most OpenAI-compatible "
                f'servers serve them under /v1 (base_url = "{suggested}")'
            )
        about_key = status in (401, 403) or (status >= 500 and _about_credentials(content))
        if about_key and self._key_missing and not self.api_key_env:
            return '; api_key_env is "", so no Authorization header was sent'
        if about_key and self._key_missing:
            return f"; the environment variable {self.api_key_env} is not set, so no Authorization header was sent"
        if about_key and status >= 500:
            return "; the endpoint (a gateway such as LiteLLM) reports a credentials problem as a server error"
        return ""

    def _redirect_hint(self, location: str | None, requested: URL, below: str) -> str:
        """What to do about a 3xx answer to ``requested`` (a URL ``below`` the base URL): redirects
        are never followed (the API key would go wherever the endpoint points), so the message says
        where it points — the ``Location`` header, resolved, scrubbed and escaped — and the base_url
        that goes there; a 3xx without one says to check base_url."""
        if not location:
            return "; the endpoint redirects (no Location header) and redirects are not followed: check base_url"
        try:
            target = requested.join(URL(location.strip()))
        except (ValueError, TypeError):
            target = None
        shown = self._scrub(str(target) if target is not None and target.is_absolute() else location)
        if len(shown) > SHOWN_BODY_CHARS:
            shown = shown[: SHOWN_BODY_CHARS - 1] + "…"
        said = f"; redirected to {quoted(shown)} (redirects are not followed)"
        if target is not None and target.is_absolute() and target.path.endswith(below):
            base = self._scrub(str(target.with_path(target.path.removesuffix(below)).with_query(None).with_fragment(None)))
            if len(base) <= SHOWN_BODY_CHARS:
                return f"{said}; set base_url to where it points: base_url = {quoted(base)}"
        return f"{said}; set base_url to it"

    def _shorten(self, content: bytes) -> str:
        text = self._scrub(" ".join(content.decode("utf-8", "replace").split()))
        if not text:
            return "(empty body)"
        return text if len(text) <= SHOWN_BODY_CHARS else text[: SHOWN_BODY_CHARS - 1] + "…"

    def _scrub(self, text: str) -> str:
        return remove_secrets(text, self._secrets)


#: What the generator says it is, on every request.
USER_AGENT = f"evalkit/{_EVALKIT_VERSION}"


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")


def _check_header_values(headers: Mapping[str, str], api_key_env: str | None) -> None:
    """Refuse, before any request, a header an HTTP/1.1 request cannot carry as given: a name that
    is not a token, a value with a line break, another control character or a non-ASCII character
    (a key pasted with its newline). The value is never shown: it may be a credential. With
    ``api_key_env``, the ``authorization`` header is the key read from that variable."""
    for name, value in headers.items():
        if api_key_env is not None and name == "authorization" and not _HEADER_VALUE.fullmatch(value):
            raise ConfigError(
                f"The API key in the environment variable {api_key_env} contains a line break, a control character "
                "or a non-ASCII character, which an HTTP header cannot carry; set it to the key alone."
            )
        if not _HEADER_NAME.fullmatch(name):
            raise ConfigError(f'Option "extra_headers" of the openai generator: {name[:60]!r} is not a valid HTTP header name.')
        if not _HEADER_VALUE.fullmatch(value):
            raise ConfigError(
                f'Option "extra_headers" of the openai generator: the value of header {name!r} contains a line break, '
                "a control character or a non-ASCII character, which an HTTP header cannot carry (the value is not shown)."
            )


#: Request fields an endpoint's validation error may name, most specific first. ``model`` and
def _name_text(value: object) -> str | None:
    """An endpoint's ``model`` or ``finish_reason`` as the answer keeps it: text of at most
    :data:`~evalkit.answers.MAX_ANSWER_NAME_CHARS` characters, else ``None`` (a sloppy endpoint
    never errors a case; the kernel refuses an answer that carries a longer one)."""
    return value if isinstance(value, str) and len(value) <= MAX_ANSWER_NAME_CHARS else None


#: ``messages`` are left out: "model" appears in many errors that are not about the request's field.
_REQUEST_FIELDS = ("response_format", "max_tokens", "temperature")
_VALIDATION_MARKERS = (
    "input should be",
    "validation",
    "literal_error",
    "extra_forbidden",
    "not supported",
    "unsupported",
    "invalid",
    "unrecognized",
    "unknown",
)


def _rejected_field(status: int, body: bytes) -> str | None:
    """The request field an error names when it is a deterministic refusal of that field, else ``None``.

    A 400 or 422 that names a field is such a refusal; so is a 5xx whose body is a validation
    error naming a field (some servers answer 500 to a schema violation). 429 and other 5xx stay
    transient.
    """
    if status not in (400, 422) and status < 500:
        return None
    text = body[:65536].decode("utf-8", "replace").lower()
    named = next((field for field in _REQUEST_FIELDS if field in text), None)
    if named is None:
        return None
    if status in (400, 422) or any(marker in text for marker in _VALIDATION_MARKERS):
        return named
    return None


#: The largest metadata document (``/models``, ``/props``) read for serving evidence.
_MAX_METADATA_BYTES = 1_000_000


def _size(count: int) -> str:
    """``16 MiB``, ``1.5 KiB``, ``900 bytes``."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:g} {unit}"
    return f"{count} bytes"


#: Words with which gateways (LiteLLM answers a missing key with HTTP 500) describe a credentials problem.
_CREDENTIAL_WORDS = re.compile(
    r"authenticationerror|api[ _-]?key|unauthori[sz]ed|no (?:auth|credentials)|invalid (?:auth|credentials|token)|missing (?:auth|credentials|token)",
    re.IGNORECASE,
)


def _about_credentials(content: bytes) -> bool:
    """A (5xx) body about a missing or invalid key (LiteLLM's way of saying 401)."""
    return _CREDENTIAL_WORDS.search(content[:65536].decode("utf-8", "replace")) is not None


def _retry_after(reply: Reply) -> float | None:
    """Seconds the endpoint asks to wait (``retry-after-ms``, then ``Retry-After``), or ``None``."""
    millis = reply.header("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(value, 0.0)
    raw = reply.header("retry-after")
    if raw is None:
        return None
    if _DELAY_SECONDS.fullmatch(raw):
        value = float(raw)
        return value if math.isfinite(value) else None
    import email.utils  # only here: few endpoints send an HTTP date

    try:
        when = email.utils.parsedate_to_datetime(raw)
        return max(when.timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


#: ``Retry-After``'s delay-seconds (whole, or decimal as some endpoints send it); anything else —
#: ``-5``, ``nan``, ``1e308``, ``0x10`` — is no delay the endpoint asked for.
_DELAY_SECONDS = re.compile(r"[ \t]*[0-9]{1,12}(?:\.[0-9]{1,9})?[ \t]*")


def _seconds(value: float) -> str:
    """``3,600 s``: a wait as the notes say it."""
    return f"{value:,.0f} s" if value >= 10 else f"{value:.2g} s"


#: The port of a URL whose port yarl refuses (out of range), to name it.
_PORT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(?:\[[^\]/?#]*\]|[^/?#:]*):([0-9]+)(?:[/?#]|$)")
#: A host as sent (IDNA-encoded): a name or an IPv4 address; IPv6 literals are checked by yarl.
_HOST = re.compile(r"[A-Za-z0-9._~-]+")


def _check_url(url: object) -> URL:
    """The base URL, parsed by yarl; refused (without echoing it: it may carry credentials) when it
    is not http(s), has no host, holds a space or a control character (yarl would drop a line
    break silently), names no TCP port, or carries user info — which an HTTP client sends as Basic
    auth in place of the ``api_key_env`` Bearer token."""
    refused = ConfigError('Option "base_url" of the openai generator must be an http:// or https:// URL.')
    if not isinstance(url, str) or not url.isprintable() or " " in url:
        raise refused
    try:
        parsed = URL(url)
    except (ValueError, UnicodeError):
        port = _PORT.match(url)
        if port is not None and not 0 < int(port.group(1)) <= 65535:
            raise _bad_port(port.group(1)) from None
        raise refused from None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        raise refused
    if parsed.raw_user or parsed.raw_password:
        raise ConfigError(
            'Option "base_url" of the openai generator must not carry user info ("user:password@"): it would be '
            "sent as Basic auth instead of the API key. Put the key in an environment variable named by "
            '"api_key_env", or a gateway credential in "extra_headers".'
        )
    if ":" not in parsed.raw_host and not _HOST.fullmatch(parsed.raw_host):
        raise refused
    if parsed.explicit_port is not None and not 0 < parsed.explicit_port <= 65535:
        raise _bad_port(str(parsed.explicit_port))
    return parsed.with_fragment(None)


def _bad_port(port: str) -> ConfigError:
    return ConfigError(f'Option "base_url" of the openai generator has port {port}; a TCP port is 1 to 65535.')


def _below(base: URL, path: str) -> URL:
    """``base`` with ``path`` appended to its path (one slash between), its query kept."""
    return base.with_path(base.raw_path.rstrip("/") + path, encoded=True, keep_query=True)


def _display_url(url: URL) -> str:
    return str(url.with_query(None).with_fragment(None))


def _query_secrets(url: URL) -> set[str]:
    """Every query parameter value of ``url``, decoded and as sent, and the raw query string."""
    values = {url.raw_query_string}
    for _, value in parse_qsl(url.raw_query_string, keep_blank_values=True):
        values.update((value, quote(value, safe=""), quote_plus(value)))
    return values


def _tls_for(url: URL, ca_bundle: str | None) -> ssl.SSLContext | bool:
    """The TLS verification for ``url`` (see :func:`~evalkit_plugins._http.tls_context`); a
    ``ca_bundle`` that cannot be read as certificates is a configuration error naming it."""
    if url.scheme != "https" and ca_bundle is None:
        return True  # no TLS is ever spoken (redirects are not followed): no certificate store to build
    try:
        return tls_context(ca_bundle)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        if isinstance(exc, OSError) and not isinstance(exc, ssl.SSLError) and exc.strerror:
            reason = exc.strerror
        else:
            reason = "it holds no certificate in PEM form"
        raise ConfigError(f'Option "ca_bundle" of the openai generator: {ca_bundle!r} cannot be used: {reason}.') from None


def _proxy_for(url: URL) -> URL | None:
    """The proxy the environment names for ``url`` (``None``: none, or ``NO_PROXY`` names the host)."""
    try:
        return environment_proxy(url)
    except ValueError as exc:
        raise ConfigError(f"openai generator: {exc}.") from None


def _check_headers(headers: object) -> Mapping[str, str]:
    if isinstance(headers, Mapping) and all(
        isinstance(name, str) and name and isinstance(value, str) for name, value in headers.items()
    ):
        return headers
    # Header values may be credentials: describe the shape, never the values.
    raise ConfigError('Option "extra_headers" of the openai generator must be a table of header names to string values.')


#: The counts of a chat completion's ``usage``, by the :class:`evalkit.answers.Usage` field each fills.
_USAGE_FIELDS = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
    "prompt_tokens_details.cached_tokens": "cached_input_tokens",
}


def _tool_choice(choice: str | None) -> str | dict[str, Any]:
    """A prompt's ``tool_choice`` as OpenAI's field: a word as it is, a tool's name as the object
    that forces that function."""
    if choice is None or choice in ("auto", "required", "none"):
        return choice or "auto"
    return {"type": "function", "function": {"name": choice}}


def _openai_message(message: Message) -> dict[str, Any]:
    """A conversation turn as chat completions take it (tool calls' arguments as JSON text). An
    assistant turn that only calls tools is sent with ``"content": ""``: OpenAI takes null, empty
    or none, but llama-cpp-python's server refuses null and its chat templates read the content."""
    content = "" if message.content is None and message.tool_calls else message.content
    sent: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        sent["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.sent_arguments()}}
            for call in message.tool_calls
        ]
    if message.role == "tool":
        sent["tool_call_id"] = message.tool_call_id
        if message.name:
            sent["name"] = message.name
    return sent


def _tool_calls(value: object) -> tuple[ToolCall, ...] | None:
    """``message.tool_calls`` of a completion as evalkit's tool calls; ``None`` when malformed."""
    if value is None:
        return ()
    if not isinstance(value, list):
        return None
    calls = []
    for item in value:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            return None
        call_id = item.get("id")
        calls.append(ToolCall(function["name"], function.get("arguments"), call_id if isinstance(call_id, str) and call_id else None))
    return tuple(calls)
