"""The lean HTTP/1.1 transport behind the ``openai`` generator, against hand-written raw responses."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable

import httpx
import pytest
from evalkit_plugins._http11 import Http11Transport, env_proxy_applies
from evalkit_plugins._urls import EndpointURL

Reply = Callable[[bytes], bytes | None]


async def exchange(reply: Reply, *paths: str, max_connections: int = 4, pause: float = 0.0) -> tuple[list, list[bytes], int]:
    """Serve every request with ``reply(head) -> raw response``, fetch ``paths`` in order.

    ``None`` closes the connection instead of answering; a response with an ``X-Then: close`` header
    keeps its keep-alive framing but the server closes the connection after sending it.

    Returns the responses (or exceptions), the request heads the server saw and the connection count.
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
    client = httpx.AsyncClient(transport=Http11Transport(max_connections=max_connections), timeout=httpx.Timeout(2.0))
    outcomes = []
    try:
        for path in paths:
            try:
                outcomes.append(await client.post(f"http://127.0.0.1:{port}{path}", content=b'{"x":1}'))
            except httpx.HTTPError as exc:
                outcomes.append(exc)
            await asyncio.sleep(pause)
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
    return outcomes, heads, connections


def run(coroutine: Awaitable) -> object:
    """Run ``coroutine`` on a fresh loop."""
    return asyncio.run(coroutine)


def ok(body: bytes, *headers: bytes) -> bytes:
    """A 200 response with ``Content-Length`` framing and extra header lines."""
    return b"HTTP/1.1 200 OK\r\n" + b"".join(h + b"\r\n" for h in headers) + b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_keep_alive_reuses_one_connection_and_sends_the_query() -> None:
    outcomes, heads, connections = run(exchange(lambda head: ok(b"hi"), "/a?x=1", "/b", "/c"))
    assert [r.text for r in outcomes] == ["hi", "hi", "hi"]
    assert connections == 1
    assert heads[0].startswith(b"POST /a?x=1 HTTP/1.1\r\n")
    assert b"\r\nContent-Length: 7" in heads[0] or b"\r\ncontent-length: 7" in heads[0].lower()


def test_connection_close_is_honoured() -> None:
    outcomes, _, connections = run(exchange(lambda head: ok(b"bye", b"Connection: close"), "/a", "/b"))
    assert [r.text for r in outcomes] == ["bye", "bye"]
    assert connections == 2


def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    outcomes, _, connections = run(exchange(lambda head: ok(b"one", b"X-Then: close"), "/a", "/b", pause=0.05))
    assert [r.text for r in outcomes] == ["one", "one"]
    assert connections == 2


def test_a_body_delimited_by_close_is_read_to_the_end() -> None:
    outcomes, _, _ = run(exchange(lambda head: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", "/a", "/b"))
    assert [r.text for r in outcomes] == ["until the end", "until the end"]


def test_chunked_bodies_and_gzip_are_decoded() -> None:
    packed = gzip.compress(b'{"ok": true}')
    chunks = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (5, packed[:5], len(packed) - 5, packed[5:])
    raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
    (response,), _, _ = run(exchange(lambda head: raw, "/a"))
    assert response.json() == {"ok": True}


def test_interim_responses_are_skipped_and_204_has_no_body() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
    outcomes, _, connections = run(exchange(lambda head: raw, "/a", "/b"))
    assert [(r.status_code, r.content, r.reason_phrase) for r in outcomes] == [(204, b"", "No Content")] * 2
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
    assert isinstance(error, httpx.RemoteProtocolError) and message in str(error)


def test_waiting_for_a_free_connection_is_bounded_by_the_pool_timeout() -> None:
    async def scenario() -> list:
        release = asyncio.Event()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            await release.wait()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        client = httpx.AsyncClient(transport=Http11Transport(max_connections=1), timeout=httpx.Timeout(5.0, pool=0.05))
        first = asyncio.ensure_future(client.get(url))
        await asyncio.sleep(0.05)
        outcomes = await asyncio.gather(client.get(url), return_exceptions=True)
        release.set()
        outcomes += await asyncio.gather(first, return_exceptions=True)
        await client.aclose()
        server.close()
        return outcomes

    waited, first = run(scenario())
    assert isinstance(waited, httpx.PoolTimeout)
    assert isinstance(first, httpx.RemoteProtocolError)


def test_proxy_environment_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    url = EndpointURL.parse("https://api.example.com/v1/chat/completions")
    assert not env_proxy_applies(url)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert env_proxy_applies(url)
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert not env_proxy_applies(url)
