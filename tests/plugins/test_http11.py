"""The lean HTTP/1.1 transport behind the ``openai`` generator, against hand-written raw responses."""

from __future__ import annotations

import asyncio
import gzip
import os
import ssl
import sys
from collections.abc import Awaitable, Callable

import pytest
from evalkit_plugins._http11 import (
    ConnectError,
    Http11Transport,
    PoolTimeout,
    RemoteProtocolError,
    TimeoutException,
    TransportError,
    env_proxy_applies,
    head_lines,
    proxy_settings_possible,
)
from evalkit_plugins._urls import EndpointURL

Reply = Callable[[bytes], bytes | None]
BODY = b'{"x":1}'
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
PROXY_VARIABLES += tuple(name.upper() for name in PROXY_VARIABLES)


def request_head(path: str, port: int) -> bytes:
    """A complete POST head for ``path`` carrying :data:`BODY`, as a caller of ``send`` encodes it."""
    fields = [(b"host", b"127.0.0.1:%d" % port), (b"content-length", b"%d" % len(BODY))]
    return head_lines(b"POST", path.encode(), fields) + b"\r\n"


async def exchange(reply: Reply, *paths: str, max_connections: int = 4, pause: float = 0.0) -> tuple[list, list[bytes], int]:
    """Serve every request with ``reply(head) -> raw response``, send ``paths`` in order.

    ``None`` closes the connection instead of answering; a response with an ``X-Then: close`` header
    keeps its keep-alive framing but the server closes the connection after sending it.

    Returns the replies (or exceptions), the request heads the server saw and the connection count.
    """
    heads: list[bytes] = []
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
                await reader.readexactly(length)
                heads.append(head)
                raw = reply(head)
                if raw is None:
                    break
                writer.write(raw)
                await writer.drain()
                lowered = raw.lower()
                delimited = b"content-length" in lowered or b"chunked" in lowered or b" 204 " in lowered
                if b"connection: close" in lowered or b"x-then: close" in lowered or not delimited:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = Http11Transport(max_connections=max_connections)
    origin = ("http", "127.0.0.1", port)
    outcomes = []
    try:
        for path in paths:
            try:
                outcomes.append(await transport.send(origin, request_head(path, port), BODY, connect=2.0, read=2.0))
            except TransportError as exc:
                outcomes.append(exc)
            await asyncio.sleep(pause)
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    return outcomes, heads, connections


def run(coroutine: Awaitable) -> object:
    """Run ``coroutine`` on a fresh loop."""
    return asyncio.run(coroutine)


def ok(body: bytes, *headers: bytes) -> bytes:
    """A 200 response with ``Content-Length`` framing and extra header lines."""
    return b"HTTP/1.1 200 OK\r\n" + b"".join(h + b"\r\n" for h in headers) + b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_keep_alive_reuses_one_connection_and_sends_the_head_as_given() -> None:
    outcomes, heads, connections = run(exchange(lambda head: ok(b"hi"), "/a?x=1", "/b", "/c"))
    assert [r.content for r in outcomes] == [b"hi", b"hi", b"hi"]
    assert [(r.status, r.reason) for r in outcomes] == [(200, b"OK")] * 3
    assert connections == 1
    port = int(heads[0].split(b"host: 127.0.0.1:")[1].split(b"\r\n")[0])
    assert heads == [request_head(path, port) for path in ("/a?x=1", "/b", "/c")]


def test_connection_close_is_honoured() -> None:
    outcomes, _, connections = run(exchange(lambda head: ok(b"bye", b"Connection: close"), "/a", "/b"))
    assert [r.content for r in outcomes] == [b"bye", b"bye"]
    assert connections == 2


def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    outcomes, _, connections = run(exchange(lambda head: ok(b"one", b"X-Then: close"), "/a", "/b", pause=0.05))
    assert [r.content for r in outcomes] == [b"one", b"one"]
    assert connections == 2


def test_a_body_delimited_by_close_is_read_to_the_end() -> None:
    outcomes, _, _ = run(exchange(lambda head: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", "/a", "/b"))
    assert [r.content for r in outcomes] == [b"until the end", b"until the end"]


def test_chunked_bodies_are_joined_and_their_content_coding_left_to_the_caller() -> None:
    packed = gzip.compress(b'{"ok": true}')
    chunks = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (5, packed[:5], len(packed) - 5, packed[5:])
    raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
    (reply,), _, _ = run(exchange(lambda head: raw, "/a"))
    assert reply.content == packed and reply.header(b"content-encoding") == b"gzip"
    assert gzip.decompress(reply.content) == b'{"ok": true}'


def test_interim_responses_are_skipped_and_204_has_no_body() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
    outcomes, _, connections = run(exchange(lambda head: raw, "/a", "/b"))
    assert [(r.status, r.content, r.reason) for r in outcomes] == [(204, b"", b"No Content")] * 2
    assert connections == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "Server disconnected without sending a response."),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\nConnection: close\r\n\r\nshort", "peer closed connection without sending complete message body"),
        (b"SMTP ready\r\n\r\n", "malformed HTTP response"),
    ],
)
def test_broken_responses_are_remote_protocol_errors(raw: bytes | None, message: str) -> None:
    (error,), _, _ = run(exchange(lambda head: raw, "/a"))
    assert isinstance(error, RemoteProtocolError) and message in str(error)
    assert isinstance(error, TransportError) and not isinstance(error, TimeoutException)


def test_a_refused_connection_is_a_connect_error() -> None:
    async def scenario() -> BaseException:
        server = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        transport = Http11Transport(max_connections=1)
        try:
            await transport.send(("http", "127.0.0.1", port), request_head("/", port), BODY, connect=2.0)
        except TransportError as exc:
            return exc
        raise AssertionError("a closed port answered")

    error = run(scenario())
    assert type(error) is ConnectError and str(error)


def test_no_more_than_max_connections_requests_are_in_flight() -> None:
    async def scenario() -> tuple[list, int, int]:
        in_flight = most = connections = 0

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal in_flight, most, connections
            connections += 1
            try:
                while True:
                    await reader.readuntil(b"\r\n\r\n")
                    await reader.readexactly(len(BODY))
                    in_flight += 1
                    most = max(most, in_flight)
                    await asyncio.sleep(0.02)
                    in_flight -= 1
                    writer.write(ok(b"done"))
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = Http11Transport(max_connections=2)
        origin = ("http", "127.0.0.1", port)
        head = request_head("/", port)
        replies = await asyncio.gather(*(transport.send(origin, head, BODY, read=5.0) for _ in range(8)))
        await transport.aclose()
        server.close()
        await server.wait_closed()
        return replies, most, connections

    replies, most, connections = run(scenario())
    assert [r.content for r in replies] == [b"done"] * 8
    assert most == 2 and connections == 2


def test_waiting_for_a_free_connection_is_bounded_by_the_pool_timeout() -> None:
    async def scenario() -> list:
        release = asyncio.Event()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            await release.wait()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = Http11Transport(max_connections=1)

        def send() -> Awaitable:
            return transport.send(("http", "127.0.0.1", port), request_head("/", port), BODY, pool=0.05, read=5.0)

        first = asyncio.ensure_future(send())
        await asyncio.sleep(0.05)
        outcomes = await asyncio.gather(send(), return_exceptions=True)
        release.set()
        outcomes += await asyncio.gather(first, return_exceptions=True)
        await transport.aclose()
        server.close()
        return outcomes

    waited, first = run(scenario())
    assert isinstance(waited, PoolTimeout) and isinstance(waited, TimeoutException)
    assert isinstance(first, RemoteProtocolError)


def test_proxy_environment_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    url = EndpointURL.parse("https://api.example.com/v1/chat/completions")
    assert not env_proxy_applies(url)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert env_proxy_applies(url)
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert not env_proxy_applies(url)


@pytest.mark.skipif(sys.platform == "darwin" or os.name == "nt", reason="system proxy settings count there")
@pytest.mark.parametrize("name", ["https_proxy", "HTTP_PROXY", "All_Proxy", "no_proxy", "ftp_proxy"])
def test_proxy_settings_are_possible_just_when_urllib_finds_a_variable(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    import urllib.request

    for variable in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(variable)
    assert not proxy_settings_possible() and urllib.request.getproxies() == {}
    monkeypatch.setenv(name, "")
    assert not proxy_settings_possible() and urllib.request.getproxies() == {}
    monkeypatch.setenv(name, "http://proxy.internal:3128")
    assert proxy_settings_possible() and urllib.request.getproxies() != {}


def test_the_default_tls_context_is_httpxs(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Built as ``httpx.create_ssl_context()`` builds it: certifi's bundle, or $SSL_CERT_FILE, or $SSL_CERT_DIR."""
    import certifi
    import httpx
    from evalkit_plugins._http11 import _default_tls_context

    def described(context: ssl.SSLContext) -> tuple:
        settings = ("verify_mode", "check_hostname", "options", "minimum_version", "maximum_version")
        return (*(getattr(context, name) for name in settings), context.cert_store_stats())

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    assert described(_default_tls_context()) == described(httpx.create_ssl_context())
    assert _default_tls_context().cert_store_stats()["x509_ca"] > 0
    (tmp_path / "certs").mkdir()
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "certs"))
    assert described(_default_tls_context()) == described(httpx.create_ssl_context())
    assert _default_tls_context().cert_store_stats()["x509_ca"] == 0
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert described(_default_tls_context()) == described(httpx.create_ssl_context())
    assert _default_tls_context().cert_store_stats()["x509_ca"] > 0


def test_the_tls_context_is_built_on_the_first_https_connection_only() -> None:
    async def scenario() -> list:
        server = await asyncio.start_server(lambda reader, writer: writer.close(), "127.0.0.1", 0)  # hangs up at once
        port = server.sockets[0].getsockname()[1]
        transport = Http11Transport(max_connections=1)
        seen = []
        for scheme in ("http", "https"):
            try:
                await transport.send((scheme, "127.0.0.1", port), request_head("/", port), BODY, connect=2.0, read=2.0)
            except TransportError as exc:
                seen.append((scheme, type(exc), transport._ssl_context))
        server.close()
        await server.wait_closed()
        return seen

    (_, _, plain), (_, failure, context) = run(scenario())
    assert plain is None
    assert failure is ConnectError and isinstance(context, ssl.SSLContext)
