"""The ``openai`` generator against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from evalkit.answers import GenerationRequest, Usage
from evalkit.config import load_config
from evalkit.errors import ConfigError, GenerationError
from evalkit.evaluation import evaluate_set
from evalkit.options import build_plugin
from evalkit_plugins._http import Reply
from evalkit_plugins.openai import OpenAIGenerator, OpenAIOptions, _retry_after
from multidict import CIMultiDict
from yarl import URL

from tests.support.chat_server import ChatServer, Fault
from tests.support.providers import openai_provider_table

KEY = "sk-test-Zq8X3vT0pL9wK2"
HEADER_SECRET = "hdr-secret-77f1c0"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def make(server: ChatServer, **options: object) -> OpenAIGenerator:
    """A generator pointed at ``server`` with fast retries; ``options`` override."""
    settings: dict[str, object] = {
        "base_url": server.base_url,
        "model": "gpt-test",
        "api_key_env": "EVALKIT_TEST_KEY",
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "max_attempts": 3,
    }
    settings.update(options)
    return OpenAIGenerator(OpenAIOptions(**settings))


def ask(generator: OpenAIGenerator, *requests: GenerationRequest) -> list:
    """Send ``requests`` concurrently on one event loop, return answers or exceptions, then close."""

    async def run() -> list:
        try:
            return await asyncio.gather(*(generator.agenerate(r) for r in requests), return_exceptions=True)
        finally:
            await generator.aclose()

    return asyncio.run(run())


def fails(generator: OpenAIGenerator, request: GenerationRequest | None = None) -> GenerationError:
    """The GenerationError one request ends in."""
    (outcome,) = ask(generator, request or GenerationRequest("hello"))
    assert isinstance(outcome, GenerationError), outcome
    assert KEY not in str(outcome) and HEADER_SECRET not in str(outcome)
    return outcome


# --- the success path -------------------------------------------------------------------------


def test_answer_carries_text_reported_model_usage_and_finish_reason(chat_server: ChatServer) -> None:
    chat_server.model = "gpt-test-2025-01-01"
    chat_server.responder = lambda body: "Paris is the capital of France."
    (answer,) = ask(make(chat_server), GenerationRequest("What is the capital of France?"))
    assert answer.text == "Paris is the capital of France."
    assert answer.model == "gpt-test-2025-01-01"
    assert answer.usage == Usage(input_tokens=6, output_tokens=6, total_tokens=12)
    assert answer.finish_reason == "stop"


@pytest.mark.parametrize(
    ("usage", "finish_reason", "kept"),
    [
        ({"prompt_tokens": "5", "completion_tokens": -1}, 7, None),
        ({"prompt_tokens": 3, "completion_tokens": 10**40}, ["stop"], None),  # one count out of range: the whole usage set aside
        ({"prompt_tokens": True, "completion_tokens": 4.0}, None, None),
        ("lots", {"why": "stop"}, None),
    ],
)
def test_odd_usage_and_finish_reason_are_dropped_and_the_answer_kept(chat_server: ChatServer, usage, finish_reason, kept) -> None:  # noqa: ANN001
    body = {"model": "m-1", "choices": [{"message": {"content": "Paris"}, "finish_reason": finish_reason}], "usage": usage}
    chat_server.fail_next(Fault.garbage(json.dumps(body)))
    (answer,) = ask(make(chat_server), GenerationRequest("What is the capital of France?"))
    assert (answer.text, answer.model, answer.usage, answer.finish_reason) == ("Paris", "m-1", kept, None)


def test_a_reported_model_or_finish_reason_too_long_to_keep_is_dropped_and_the_answer_kept(chat_server: ChatServer) -> None:
    """The kernel refuses an answer whose model or finish reason is over 1,000 characters; the
    adapter keeps what the endpoint says beside the answer only when it is fit to keep."""
    body = {"model": "m" * 1_001, "choices": [{"message": {"content": "Paris"}, "finish_reason": "s" * 1_001}]}
    chat_server.fail_next(Fault.garbage(json.dumps(body)))
    (answer,) = ask(make(chat_server), GenerationRequest("What is the capital of France?"))
    assert (answer.text, answer.model, answer.finish_reason) == ("Paris", None, None)
    body = {"model": "m" * 1_000, "choices": [{"message": {"content": "Paris"}, "finish_reason": "stop"}]}
    chat_server.fail_next(Fault.garbage(json.dumps(body)))
    (answer,) = ask(make(chat_server), GenerationRequest("What is the capital of France?"))
    assert (answer.model, answer.finish_reason) == ("m" * 1_000, "stop")


def test_request_carries_system_prompt_model_sampling_and_key(chat_server: ChatServer) -> None:
    generator = make(chat_server, temperature=0.2, max_tokens=50, extra_headers={"X-Team": "evals"})
    ask(generator, GenerationRequest("Hi", system_prompt="Be brief.", model="gpt-other", temperature=0.0, max_tokens=7))
    (seen,) = chat_server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.body == {
        "model": "gpt-other",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "temperature": 0.0,
        "max_tokens": 7,
    }
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["x-team"] == "evals"
    assert seen.headers["content-type"] == "application/json"


def test_instance_options_fill_in_and_unset_ones_are_omitted(chat_server: ChatServer) -> None:
    ask(make(chat_server, temperature=0.3, max_tokens=64), GenerationRequest("Hi", system_prompt=""))
    ask(make(chat_server), GenerationRequest("Hi"))
    first, second = chat_server.requests
    assert first.body == {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}], "temperature": 0.3, "max_tokens": 64}
    assert second.body == {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}]}


def test_base_url_defaults_to_the_environment(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    generator = OpenAIGenerator(OpenAIOptions(model="gpt-test", api_key_env="EVALKIT_TEST_KEY"))
    assert generator.base_url == chat_server.base_url
    assert generator.generate(GenerationRequest("echo me")).text == "echo me"


def test_default_base_url_is_openai() -> None:
    assert OpenAIGenerator(OpenAIOptions(model="gpt-4o")).base_url == "https://api.openai.com/v1"


def test_without_a_key_no_authorization_is_sent_and_a_401_says_why(
    chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALKIT_TEST_KEY")
    ask(make(chat_server), GenerationRequest("Hi"))
    assert "authorization" not in chat_server.requests[0].headers
    chat_server.fail_next(Fault.http_error(401))
    error = fails(make(chat_server))
    assert "HTTP 401" in str(error) and "EVALKIT_TEST_KEY is not set" in str(error)


def test_connections_are_kept_alive_and_bounded_by_concurrency(chat_server: ChatServer) -> None:
    chat_server.delay = 0.02
    answers = ask(make(chat_server, concurrency=4), *(GenerationRequest(f"q{i}") for i in range(24)))
    assert [a.text for a in answers] == [f"q{i}" for i in range(24)]
    assert chat_server.connection_count == 4


def test_chunked_responses_are_read(chat_server: ChatServer) -> None:
    chat_server.chunked = True
    (answer,) = ask(make(chat_server), GenerationRequest("chunk me"))
    assert answer.text == "chunk me"


def test_sync_generate_and_reuse_after_aclose(chat_server: ChatServer) -> None:
    generator = make(chat_server)
    assert generator.generate(GenerationRequest("one")).text == "one"
    assert [a.text for a in ask(generator, GenerationRequest("two"))] == ["two"]
    assert [a.text for a in ask(generator, GenerationRequest("three"))] == ["three"]


def test_no_model_is_refused_when_the_generator_is_built(chat_server: ChatServer) -> None:
    with pytest.raises(ConfigError, match='"model" of the openai generator is required'):
        make(chat_server, model=None)
    assert chat_server.request_count == 0


def test_no_model_names_the_models_option_on_the_command_line_and_the_keyword_to_a_python_caller(
    chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any], sqlite_url: str
) -> None:
    """It said "(or pass --model)" to a Python caller too, who gives the alias as ``model=``."""
    table = openai_provider_table("bare", chat_server.base_url, "x").replace('model = "x"\n', "")
    (project / "evalkit.toml").write_text(table, encoding="utf-8")
    refused = evalkit_cli("run", "evalkit.smoke", "--provider", "bare")
    assert refused.code == 2 and "in the provider instance (or pass --model ALIAS)." in refused.stderr
    with pytest.raises(ConfigError) as called:
        evaluate_set("evalkit.smoke", provider="bare", config=load_config(project / "evalkit.toml"), database=sqlite_url)
    assert str(called.value).endswith("in the provider instance (or pass model=ALIAS).")
    assert chat_server.request_count == 0


# --- transient faults are retried -------------------------------------------------------------


def test_429_waits_for_retry_after_then_succeeds(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.rate_limited(retry_after=0.3))
    started = time.perf_counter()
    (answer,) = ask(make(chat_server, backoff_max=5), GenerationRequest("hello"))
    assert time.perf_counter() - started >= 0.3
    assert answer.text == "hello"
    assert chat_server.request_count == 2


def waits_asked(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the generator chose before each retry (not slept: the test does not wait them)."""
    waits: list[float] = []
    chosen = OpenAIGenerator._backoff

    def recorded(self: OpenAIGenerator, attempt: int, retry_after: float | None) -> float:
        waits.append(chosen(self, attempt, retry_after))
        return 0.0

    monkeypatch.setattr(OpenAIGenerator, "_backoff", recorded)
    return waits


def test_retry_after_is_honoured_past_backoff_max_up_to_retry_after_max(chat_server: ChatServer, monkeypatch) -> None:
    """``backoff_max`` (evalkit's own back-off) capped the wait an endpoint asked for: "retry after
    30 s" was asked again after 0.05 s, answered 429 again and burnt the attempts. ``Retry-After``
    is honoured up to ``retry_after_max``; a longer one is cut to it, and the notes say so."""
    waits = waits_asked(monkeypatch)
    chat_server.fail_next(Fault.rate_limited(retry_after=30))
    chat_server.fail_next(Fault.http_error(503, retry_after=7200))
    generator = make(chat_server, backoff_max=0.05, retry_after_max=120)
    (answer,) = ask(generator, GenerationRequest("hello"))
    assert answer.text == "hello" and waits == [30.0, 120.0]
    (note,) = [n for n in generator.pacing_notes() if "Retry-After" in n]
    assert note.startswith(f"1 Retry-After wait of {chat_server.base_url} cut to retry_after_max = 120 s (the longest asked for 7,200 s)")


@pytest.mark.parametrize(
    "value",
    ["-5", "nan", "inf", "1e308", "9" * 400, "0x10", "1_0", "5\x00", "\x1b[2J", "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 10000 00:00:00 GMT"],
)
def test_a_retry_after_of_any_form_waits_a_finite_time_within_retry_after_max(value: str, monkeypatch) -> None:
    """A negative, NaN, huge or control-character Retry-After is no wait the endpoint asked for
    (the back-off is used); a date centuries away is cut to ``retry_after_max``: nothing raises,
    nothing sleeps for ever."""
    generator = OpenAIGenerator(OpenAIOptions(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="", retry_after_max=60))
    asked = _retry_after(reply_with(retry_after=value))
    assert asked is None or (math.isfinite(asked) and asked >= 0)
    assert 0 <= generator._backoff(1, asked) <= 60


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_error_then_success(chat_server: ChatServer, status: int) -> None:
    chat_server.fail_next(Fault.http_error(status))
    (answer,) = ask(make(chat_server), GenerationRequest("hello"))
    assert answer.text == "hello"
    assert chat_server.request_count == 2


def test_dropped_connection_then_success(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.drop())
    (answer,) = ask(make(chat_server), GenerationRequest("hello"))
    assert answer.text == "hello"
    assert chat_server.request_count == 2


def test_timeout_then_success(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.stall(2.0))
    started = time.perf_counter()
    (answer,) = ask(make(chat_server, timeout=0.2), GenerationRequest("hello"))
    assert answer.text == "hello"
    assert time.perf_counter() - started < 1.5
    assert chat_server.request_count == 2


def test_fault_on_a_numbered_request_hits_only_that_request(chat_server: ChatServer) -> None:
    chat_server.fail_at(2, Fault.http_error(500))
    generator = make(chat_server, max_attempts=1)
    first = ask(generator, GenerationRequest("a"))
    second = ask(generator, GenerationRequest("b"))
    third = ask(generator, GenerationRequest("c"))
    assert first[0].text == "a" and isinstance(second[0], GenerationError) and third[0].text == "c"


def test_exhausted_retries_say_what_happened_and_how_often(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.http_error(503), count=3)
    error = fails(make(chat_server, max_attempts=3))
    assert "failed after 3 attempts" in str(error)
    assert "HTTP 503" in str(error)
    assert chat_server.request_count == 3


def test_exhausted_retries_on_timeouts(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.stall(2.0), count=2)
    error = fails(make(chat_server, timeout=0.1, max_attempts=2))
    assert "failed after 2 attempts" in str(error) and "timed out" in str(error)


def test_unreachable_endpoint_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    generator = OpenAIGenerator(OpenAIOptions(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_attempts=2, backoff_base=0.01))
    (error,) = ask(generator, GenerationRequest("hello"))
    assert isinstance(error, GenerationError)
    assert "failed after 2 attempts" in str(error) and "connection failed (ConnectError" in str(error)


# --- permanent faults are not retried ---------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(chat_server: ChatServer, status: int) -> None:
    chat_server.fail_next(Fault.http_error(status, body='{"error": {"message": "nope, bad request"}}'))
    error = fails(make(chat_server))
    assert f"HTTP {status}" in str(error) and "nope, bad request" in str(error) and "not retried" in str(error)
    assert chat_server.request_count == 1


@pytest.mark.parametrize(
    ("path", "hinted"), [("", True), ("/api", True), ("/v1", False), ("/openai/v1/", False)]
)
def test_a_404_at_a_base_url_without_v1_says_to_check_base_url(chat_server: ChatServer, path: str, hinted: bool) -> None:
    # a new user's base_url = "http://127.0.0.1:8080" (no /v1): every case erred "HTTP 404 Not Found:
    # … (not retried)" with nothing pointing at the URL; at a /v1 URL a 404 is the endpoint's own
    # (an unknown model), no hint
    base = chat_server.base_url.removesuffix("/v1") + path
    chat_server.fail_next(Fault.http_error(404, body='{"error": {"message": "not found"}}'))
    error = str(fails(make(chat_server, base_url=base)))
    assert "HTTP 404" in error and "not retried" in error
    hint = (
        "; nothing serves chat completions at that URL: check base_url — most OpenAI-compatible servers serve "
        f'them under /v1 (base_url = "{base.rstrip("/")}/v1")'
    )
    assert (hint in error) is hinted, error
    assert ("check base_url" in error) is hinted, error


def test_a_redirected_completion_says_where_to_and_is_not_followed(chat_server: ChatServer) -> None:
    # a 3xx to the chat request (the probe not asked, or answered) erred "HTTP 308 Permanent
    # Redirect: (empty body) (not retried)": where it pointed went unsaid
    chat_server.fail_next(Fault.http_error(308, body="", location="https://gw.example/openai/v1/chat/completions"))
    error = str(fails(make(chat_server)))
    assert "HTTP 308" in error and "not retried" in error
    assert '; redirected to "https://gw.example/openai/v1/chat/completions" (redirects are not followed)' in error
    assert 'set base_url to where it points: base_url = "https://gw.example/openai/v1"' in error
    assert chat_server.request_count == 1
    chat_server.fail_next(Fault.http_error(302, body=""))
    assert "the endpoint redirects (no Location header) and redirects are not followed: check base_url" in str(
        fails(make(chat_server))
    )


def test_echoed_credentials_are_scrubbed_from_error_messages(chat_server: ChatServer) -> None:
    echo = f'{{"error": "bad auth: Bearer {KEY}, X-Secret: {HEADER_SECRET}"}}'
    chat_server.fail_next(Fault.http_error(401, body=echo))
    error = fails(make(chat_server, extra_headers={"X-Secret": HEADER_SECRET}))
    assert "Bearer ***" in str(error) and "X-Secret: ***" in str(error)


@pytest.mark.parametrize(
    ("fault", "says", "shows"),
    [
        (Fault.garbage("<html>upstream exploded</html>"), "not JSON", "<html>upstream exploded</html>"),
        (Fault.garbage("[" * 100_000 + "]" * 100_000), "a body that is not JSON", "[[[["),  # past the parser's stack
        (Fault.no_choices(), "no choices", '"object": "chat.completion"'),
        (Fault.empty_content(), "empty content (finish_reason 'stop')", '"content": ""'),
    ],
)
def test_malformed_answers_are_reported_with_the_body_and_not_retried(
    chat_server: ChatServer, fault: Fault, says: str, shows: str
) -> None:
    chat_server.fail_next(fault)
    error = fails(make(chat_server))
    assert says in str(error) and shows in str(error)
    assert chat_server.request_count == 1


def test_a_long_body_is_shortened_in_the_message(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.garbage("x" * 5000))
    message = str(fails(make(chat_server)))
    assert "x" * 199 + "…" in message and "x" * 200 not in message


# --- options ----------------------------------------------------------------------------------


def test_unknown_options_are_named_with_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        build_plugin(OpenAIGenerator, model="m", temprature=0.1, retries=3)
    message = str(caught.value)
    assert 'no option "retries"' in message and 'no option "temprature"' in message and 'Did you mean "temperature"?' in message
    assert all(name in message for name in attrs.fields_dict(OpenAIOptions))


def test_a_key_is_never_accepted_as_an_option() -> None:
    with pytest.raises(ConfigError) as caught:
        build_plugin(OpenAIGenerator, model="m", api_key=KEY)
    assert "api_key_env" in str(caught.value) and KEY not in str(caught.value)


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": "60"},
        {"concurrency": 0},
        {"concurrency": True},
        {"max_attempts": 0},
        {"backoff_base": -1},
        {"max_tokens": 0},
        {"temperature": float("nan")},
        {"model": ""},
        {"api_key_env": 5},
        {"base_url": "ftp://example.com"},
        {"extra_headers": ["X-A"]},
    ],
)
def test_impossible_values_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=f'"{next(iter(options))}"'):
        OpenAIGenerator(OpenAIOptions(**options))


def test_header_values_are_not_echoed_by_config_errors() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIGenerator(OpenAIOptions(model="m", extra_headers={"X-Secret": HEADER_SECRET, "X-Count": 3}))
    assert HEADER_SECRET not in str(caught.value)


def test_secrets_stay_out_of_repr_and_redacted_options(chat_server: ChatServer) -> None:
    generator = make(chat_server, extra_headers={"X-Secret": HEADER_SECRET})
    shown = f"{generator!r} {generator.redacted_options()!r}"
    assert KEY not in shown and HEADER_SECRET not in shown
    assert generator.redacted_options()["extra_headers"] == {"X-Secret": "***"}
    assert generator.redacted_options()["api_key_env"] == "EVALKIT_TEST_KEY"
    assert generator.concurrency == 8


def test_user_info_in_the_base_url_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError, match="must not carry user info") as caught:
        OpenAIGenerator(OpenAIOptions(base_url="https://user:pw-secret@gateway.example/v1", model="m"))
    assert "pw-secret" not in str(caught.value) and "user" not in str(caught.value).split("user info")[0]


@pytest.mark.parametrize("port", ["0", "99999", "4294967297"])
def test_a_base_url_port_that_is_no_tcp_port_is_refused_naming_it(port: str) -> None:
    """Port 99999 was accepted and failed at the readiness probe with "connect(): port must be
    0-65535.", naming neither the option nor the instance."""
    with pytest.raises(ConfigError, match=f'Option "base_url" of the openai generator has port {port}; a TCP port is 1 to 65535'):
        OpenAIGenerator(OpenAIOptions(base_url=f"http://127.0.0.1:{port}/v1", model="m"))


def test_query_credentials_in_the_base_url_are_secrets_and_not_displayed() -> None:
    generator = OpenAIGenerator(OpenAIOptions(base_url="https://gateway.example/v1?token=tok-secret-42&api-version=2024-02-01", model="m"))
    shown = f"{generator!r}"
    assert "tok-secret-42" not in shown
    assert generator.base_url == "https://gateway.example/v1"
    assert {"tok-secret-42", "2024-02-01"} <= set(generator.secret_values())


def test_a_base_url_with_a_query_keeps_it_after_the_path(chat_server: ChatServer) -> None:
    (answer,) = ask(make(chat_server, base_url=chat_server.base_url + "?api-version=2024-02-01"), GenerationRequest("hi"))
    assert answer.text == "hi"
    assert chat_server.requests[0].path == "/v1/chat/completions"
    assert chat_server.requests[0].query == "api-version=2024-02-01"


# --- Retry-After parsing ----------------------------------------------------------------------


def reply_with(**headers: str) -> Reply:
    """A 503 reply carrying ``headers`` (underscores in names become dashes)."""
    return Reply(503, "Service Unavailable", CIMultiDict((k.replace("_", "-"), v) for k, v in headers.items()), b"")


def test_retry_after_forms() -> None:
    in_five = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert _retry_after(reply_with(retry_after="2")) == 2.0
    assert 3.0 < _retry_after(reply_with(retry_after=in_five)) <= 5.0
    assert _retry_after(reply_with(retry_after="Wed, 21 Oct 2015 07:28:00 GMT")) == 0.0
    assert _retry_after(reply_with(retry_after_ms="250", retry_after="9")) == 0.25
    assert _retry_after(reply_with(retry_after="soon")) is None
    assert _retry_after(reply_with()) is None


@pytest.mark.parametrize(
    ("status", "body", "field"),
    [
        (400, b'{"error": {"message": "response_format is not supported with this model"}}', "response_format"),
        (422, b'{"detail": [{"loc": ["body", "max_tokens"], "msg": "must be positive"}]}', "max_tokens"),
        (500, b"{\"error\": {\"message\": \"[{'loc': ('body', 'response_format', 'type'), 'msg': \\\"Input should be 'text'\\\"}]\"}}", "response_format"),
        (500, b'{"error": {"message": "upstream timed out while streaming response_format output"}}', None),
        (503, b'{"error": {"message": "overloaded"}}', None),
        (429, b'{"error": {"message": "invalid temperature? slow down"}}', None),
        (400, b'{"error": {"message": "messages must not be empty"}}', None),
    ],
)
def test_an_error_is_a_refusal_of_a_request_field_only_when_it_names_one_deterministically(
    status: int, body: bytes, field: str | None
) -> None:
    from evalkit_plugins.openai import _rejected_field

    assert _rejected_field(status, body) == field


@pytest.mark.skipif(sys.platform == "darwin" or os.name == "nt", reason="system proxy settings count there")
def test_a_plain_http_endpoint_builds_no_certificate_store(monkeypatch) -> None:
    """An http:// endpoint speaks no TLS (redirects are not followed), so the generator builds no
    certificate store for it (40 ms of CPU per run); an https:// one verifies, with a store of its
    own when SSL_CERT_FILE was set after aiohttp was imported."""
    import ssl

    from evalkit_plugins.openai import _tls_for

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    assert _tls_for(URL("http://127.0.0.1:8080/v1/models"), None) is True
    assert _tls_for(URL("https://api.example.com/v1/models"), None) is True  # aiohttp's verified default
    monkeypatch.setenv("SSL_CERT_DIR", "/nonexistent")
    context = _tls_for(URL("https://api.example.com/v1/models"), None)
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED


def test_a_ca_bundle_that_cannot_be_read_is_a_config_error_naming_it(tmp_path) -> None:
    not_pem = tmp_path / "bundle.pem"
    not_pem.write_text("not a certificate")
    for path, reason in [(tmp_path / "missing.pem", "No such file or directory"), (not_pem, "it holds no certificate in PEM form")]:
        with pytest.raises(ConfigError, match=f'Option "ca_bundle" of the openai generator: .*{path.name}.* cannot be used: {reason}'):
            OpenAIGenerator(OpenAIOptions(base_url="https://api.example.com/v1", model="m", ca_bundle=str(path)))


# --- imports ------------------------------------------------------------------------------------


def test_the_generator_module_imports_no_httpx_and_email_utils_only_through_aiohttp() -> None:
    """httpx is gone; a Retry-After date works (``email.utils``, which aiohttp imports anyway)."""
    probe = (
        "import sys\n"
        "from evalkit_plugins import openai\n"
        "from multidict import CIMultiDict\n"
        "print([m for m in ('httpx', 'httpcore') if m in sys.modules])\n"
        "reply = openai.Reply(503, '', CIMultiDict({'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT'}), b'')\n"
        "print(openai._retry_after(reply))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", "0.0"]


# --- a reset connection and a server that never finishes --------------------------------------


def test_a_reset_connection_is_retried(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.reset())
    (answer,) = ask(make(chat_server), GenerationRequest("hello"))
    assert answer.text == "hello"
    assert chat_server.request_count == 2


def test_a_reset_on_every_attempt_says_the_connection_failed(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.reset(), count=2)
    error = fails(make(chat_server, max_attempts=2))
    assert "failed after 2 attempts; last: connection failed (" in str(error)


def test_a_server_that_trickles_its_answer_for_ever_hits_the_timeout(chat_server: ChatServer) -> None:
    """A slow-loris endpoint sends a byte every 50 ms: no read ever waits long, but ``timeout``
    bounds the whole response, so each attempt ends and the prompt fails (and is retried)."""
    chat_server.fail_next(Fault.trickle(0.05), count=2)
    generator = make(chat_server, timeout=0.5, max_attempts=2)

    async def run() -> BaseException | object:
        try:  # the outer limit only turns a regression (a hang) into a failure
            return await asyncio.wait_for(generator.agenerate(GenerationRequest("hello")), 60)
        except Exception as exc:
            return exc
        finally:
            await generator.aclose()

    error = asyncio.run(run())
    assert isinstance(error, GenerationError), error
    assert "failed after 2 attempts; last: timed out (ReadTimeout, timeout 0.5 s)" in str(error)
    assert chat_server.request_count == 2


def test_backoff_past_a_thousand_attempts_stays_a_number(chat_server: ChatServer) -> None:
    # 2.0 ** 1024 overflows: a generator allowed thousands of attempts kept retrying until then,
    # and its case ended in "OverflowError" instead of the endpoint's own error.
    generator = make(chat_server, max_attempts=5000, backoff_base=0.0, backoff_max=0.0)
    assert generator._backoff(1500, None) == 0.0
    assert 0.0 <= make(chat_server, max_attempts=5000, backoff_base=1e300, backoff_max=2.0)._backoff(4000, None) <= 2.0
