"""What the ``openai`` generator's lean path puts on the wire and how it reads what comes back:
request heads, content codings (and a gzip bomb), and headers an HTTP request cannot carry."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import Callable

import pytest
from evalkit import __version__
from evalkit.answers import GenerationRequest
from evalkit.errors import ConfigError, GenerationError
from evalkit_plugins.openai import OpenAIGenerator, OpenAIOptions

KEY = "sk-wire-test-0123456789"
COMPLETION = json.dumps({"model": "m", "choices": [{"message": {"content": "Paris."}, "finish_reason": "stop"}]}).encode()


def serve(
    respond: Callable[[bytes], bytes], requests: list[object] | None = None, bodies: list[bytes] | None = None, **options: object
) -> tuple[list[object], list[bytes]]:
    """Ask a generator ``requests`` (three questions by default; a ``ChatRequest`` through
    ``achat``) against a raw server answering ``respond(head)``; the outcomes (answers or
    exceptions) and the request heads the server saw (their bodies appended to ``bodies``)."""
    from evalkit.answers import ChatRequest

    heads: list[bytes] = []
    asked = requests if requests is not None else [GenerationRequest(f"question {n}") for n in range(3)]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
                body = await reader.readexactly(length)
                heads.append(head)
                if bodies is not None:
                    bodies.append(body)
                writer.write(respond(head))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def run() -> list[object]:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        settings: dict[str, object] = {"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "api_key_env": "EVALKIT_WIRE_KEY", "max_attempts": 1}
        settings.update(options)
        generator = OpenAIGenerator(OpenAIOptions(**settings))
        try:
            return [
                await _outcome(generator.achat(request) if isinstance(request, ChatRequest) else generator.agenerate(request))  # type: ignore[arg-type]
                for request in asked
            ]
        finally:
            await generator.aclose()
            server.close()
            await server.wait_closed()

    return asyncio.run(run()), heads


async def _outcome(awaitable: object) -> object:
    try:
        return await awaitable  # type: ignore[misc]
    except GenerationError as exc:
        return exc


def reply(body: bytes, *headers: bytes) -> bytes:
    """A 200 response with ``Content-Length`` framing and extra header lines."""
    return b"HTTP/1.1 200 OK\r\n" + b"".join(h + b"\r\n" for h in headers) + b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_WIRE_KEY", KEY)
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_the_request_head_names_evalkit_the_host_the_key_and_the_extra_headers_on_one_connection() -> None:
    outcomes, heads = serve(lambda head: reply(COMPLETION), extra_headers={"X-Team": "evals", "User-Agent": "team-app/2"})
    assert [o.text for o in outcomes] == ["Paris."] * 3  # type: ignore[union-attr]
    lines = heads[0].decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    fields = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:] if line)}
    assert fields["host"].startswith("127.0.0.1:")
    assert fields["authorization"] == f"Bearer {KEY}"
    assert fields["x-team"] == "evals"
    assert fields["user-agent"] == "team-app/2"  # the team's own header wins over evalkit's
    assert fields["content-type"] == "application/json"
    assert fields["accept-encoding"] == "gzip, deflate"
    assert len(heads) == 3


def test_without_a_user_agent_of_its_own_the_generator_says_it_is_evalkit() -> None:
    _, heads = serve(lambda head: reply(COMPLETION))
    assert f"user-agent: evalkit/{__version__}\r\n".encode() in heads[0].lower()


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        (b"gzip", gzip.compress),
        (b"deflate", zlib.compress),
        (b"deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
        (b"identity", lambda data: data),
    ],
)
def test_a_compressed_reply_is_decoded(coding: bytes, encode: Callable[[bytes], bytes]) -> None:
    outcomes, _ = serve(lambda head: reply(encode(COMPLETION), b"Content-Encoding: " + coding))
    assert [o.text for o in outcomes] == ["Paris."] * 3  # type: ignore[union-attr]


def test_a_gzip_bomb_is_refused_at_the_size_limit_without_being_inflated() -> None:
    bomb = gzip.compress(b" " * (50 * 1024 * 1024))  # 50 MiB of spaces in ~50 KiB
    outcomes, heads = serve(lambda head: reply(bomb, b"Content-Encoding: gzip"), max_response_bytes=1024 * 1024)
    assert all(isinstance(o, GenerationError) for o in outcomes)
    assert "larger than max_response_bytes (1 MiB)" in str(outcomes[0])
    assert len(heads) == 3  # refused at once each time, never retried


def test_a_coding_evalkit_did_not_ask_for_is_named_and_not_retried() -> None:
    outcomes, heads = serve(lambda head: reply(b"\x1b\x00garbage", b"Content-Encoding: br"), max_attempts=3)
    assert isinstance(outcomes[0], GenerationError)
    assert "Content-Encoding 'br', which evalkit did not ask for (not retried)" in str(outcomes[0])
    assert len(heads) == 3  # one request per question: none was retried


def test_a_body_that_is_not_what_its_coding_says_is_named() -> None:
    outcomes, _ = serve(lambda head: reply(b"not gzip at all", b"Content-Encoding: gzip"))
    assert "a body that is not valid gzip (not retried)" in str(outcomes[0])


@pytest.mark.parametrize("value", ["evals\r\nX-Injected: 1", "evals\n", "nul\x00", "caf\u00e9"])
def test_an_extra_header_value_a_request_cannot_carry_is_refused_without_showing_it(value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        OpenAIGenerator(OpenAIOptions(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="EVALKIT_WIRE_KEY", extra_headers={"X-Team": value}))
    assert "'x-team' contains a line break, a control character or a non-ASCII character" in str(raised.value)
    assert value not in str(raised.value)


def test_a_header_name_that_is_not_a_token_is_refused() -> None:
    with pytest.raises(ConfigError, match="is not a valid HTTP header name"):
        OpenAIGenerator(OpenAIOptions(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="EVALKIT_WIRE_KEY", extra_headers={"X Team:": "a"}))


def test_a_key_pasted_with_its_newline_is_refused_naming_the_variable_not_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_WIRE_KEY", KEY + "\n")
    with pytest.raises(ConfigError) as raised:
        OpenAIGenerator(OpenAIOptions(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="EVALKIT_WIRE_KEY"))
    assert "The API key in the environment variable EVALKIT_WIRE_KEY contains a line break" in str(raised.value)
    assert KEY not in str(raised.value)


def probe(respond: Callable[[bytes], bytes]) -> tuple[object, list[bytes]]:
    """``check_ready()`` against a raw server answering ``respond(head)`` on a thread of its own;
    the warnings (or the GenerationError) and the request heads the server saw."""
    import socket
    import threading

    heads: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve_one() -> None:
        connection, _ = listener.accept()
        with connection:
            head = b""
            while b"\r\n\r\n" not in head:
                head += connection.recv(65536)
            heads.append(head)
            try:
                connection.sendall(respond(head))
            except ConnectionError:
                pass  # the client stopped reading a body over its limit and closed: the point of some tests

    thread = threading.Thread(target=serve_one, daemon=True)
    thread.start()
    generator = OpenAIGenerator(OpenAIOptions(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key_env="EVALKIT_WIRE_KEY"))
    try:
        outcome: object = generator.check_ready()
    except GenerationError as exc:
        outcome = exc
    thread.join(5)
    listener.close()
    return outcome, heads


def status(code: int, body: bytes) -> bytes:
    """A response with status ``code``, ``Content-Length`` framing and ``body``."""
    return b"HTTP/1.1 %d Whatever\r\nContent-Length: %d\r\n\r\n" % (code, len(body)) + body


def test_the_readiness_probe_asks_for_the_model_list_without_a_body_type_and_warns_about_a_missing_alias() -> None:
    listing = json.dumps({"data": [{"id": "other-model"}]}).encode()
    outcome, heads = probe(lambda head: status(200, listing))
    assert outcome == ['the model "m" is not in the endpoint\'s model list (other-model); going on, since many gateways serve aliases they do not list']
    head = heads[0].lower()
    assert head.startswith(b"get /v1/models http/1.1\r\n")
    assert b"content-type" not in head and f"authorization: bearer {KEY.lower()}".encode() in head


def test_a_model_list_over_a_megabyte_is_not_read_and_is_no_failure() -> None:
    outcome, _ = probe(lambda head: status(200, b"[" + b" " * 2_000_000 + b"]"))
    assert outcome == []


def test_a_refused_key_with_a_huge_body_is_still_named_as_a_401() -> None:
    outcome, _ = probe(lambda head: status(401, b"x" * 2_000_000))
    assert isinstance(outcome, GenerationError)
    assert "GET http://127.0.0.1:" in str(outcome) and "answered HTTP 401 Whatever: (a body over 1 MB)" in str(outcome)


def test_a_redirect_is_the_endpoints_answer_not_followed() -> None:
    """A 3xx would carry the key to wherever ``Location`` points; it is reported, not followed."""
    outcomes, heads = serve(lambda head: b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere.example/v1\r\nContent-Length: 0\r\n\r\n")
    assert isinstance(outcomes[0], GenerationError)
    assert "answered HTTP 302 Found: (empty body) (not retried)" in str(outcomes[0])
    assert len(heads) == 3  # one request per question, none to elsewhere


def test_no_cookie_an_endpoint_sets_is_sent_back() -> None:
    _, heads = serve(lambda head: reply(COMPLETION, b"Set-Cookie: session=tracked; Path=/"))
    assert len(heads) == 3 and not any(b"cookie:" in head.lower() for head in heads)


def test_a_request_holding_nan_is_an_error_naming_where_and_nothing_reaches_the_endpoint() -> None:
    """What evalkit sends is JSON: a NaN or an infinity a plugin put in a request (a judge's
    ``temperature``, a ``response_format``, a tool call's arguments) is a GenerationError naming
    its place, not ``NaN`` on the wire nor a ``null`` standing in for it."""
    from evalkit.answers import ChatRequest
    from evalkit.conversations import Message, ToolCall

    nan = float("nan")
    requests = [
        GenerationRequest("q", temperature=nan),
        GenerationRequest("q", response_format={"type": "json_schema", "json_schema": {"schema": {"maximum": -float("inf")}}}),
        ChatRequest([Message.user("Weather?"), Message.assistant(tool_calls=[ToolCall("w", {"days": [1, nan]}, "c1")]), Message.tool("c1", "18")]),
        GenerationRequest("fine", temperature=0.5),
    ]

    bodies: list[bytes] = []
    outcomes, _ = serve(lambda head: reply(COMPLETION), requests, bodies)
    where = "openai generator: POST http://127.0.0.1:"
    texts = [str(outcome) for outcome in outcomes[:3]]
    assert all(isinstance(outcome, GenerationError) and str(outcome).startswith(where) for outcome in outcomes[:3])
    assert texts[0].endswith("/v1/chat/completions was not sent: its body holds NaN at temperature, which is not a number JSON can carry (not retried)")
    assert "its body holds -Infinity at response_format.json_schema.schema.maximum, which is not a number JSON can carry" in texts[1]
    assert "the value of a tool call's arguments in turn 2 holds NaN at days[1], which is not a number JSON can carry" in texts[2]
    assert outcomes[3].text == "Paris."  # type: ignore[union-attr]
    (sent,) = bodies  # only the request JSON carries reached the endpoint
    assert json.loads(sent, parse_constant=lambda name: pytest.fail(name)) == {
        "model": "m", "messages": [{"role": "user", "content": "fine"}], "temperature": 0.5
    }
