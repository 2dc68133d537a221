"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1, stdlib only.

It speaks enough HTTP/1.1 (keep-alive, ``Content-Length`` bodies) for aiohttp and the OpenAI SDK, and
enough of ``POST /v1/chat/completions`` for a generator under test; over TLS when given a server
``ssl_context`` (``https://`` base URL).  Tests script it::

    with ChatServer(delay=0.0) as server:
        server.fail_next(Fault.rate_limited(retry_after=0.1))
        server.fail_at(3, Fault.drop())
        ...  # point a client at server.base_url
        assert server.requests[0].body["model"] == "gpt-test"

Run standalone (for benchmarks, so the server's CPU is not charged to the client process)::

    python tests/support/chat_server.py --port 0 --delay 0.05

prints the base URL on its first line of output and serves until interrupted; its last line is then a
JSON object of figures (requests, connections, max_in_flight, cpu_s).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import http
import json
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ChatServer",
    "ChatServerProcess",
    "Fault",
    "RecordedRequest",
    "Script",
    "StochasticResponder",
    "calls",
    "echo_last_user_message",
    "main",
]

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
DEFAULT_MODEL = "gpt-test-2025-01-01"

#: Makes the answer from the request body: its text, or a message ``{"content": ..., "tool_calls":
#: [{"name": ..., "arguments": {...}}]}`` (a turn that calls tools; ids are added when missing).
Responder = Callable[[Mapping[str, Any]], "str | Mapping[str, Any]"]


def echo_last_user_message(body: Mapping[str, Any]) -> str:
    """The default responder: the content of the last ``user`` message (``""`` when there is none)."""
    for message in reversed(body.get("messages") or ()):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


class StochasticResponder:
    """A model that answers each prompt correctly with probability ``p``, reproducibly.

    The ``n``-th request for one prompt draws from ``random.Random(f"{seed}:{prompt}:{n}")``: the
    same server answers the same sequence of runs the same way, run after run, whatever the order
    the requests arrive in. A correct answer is ``correct(body)`` (default: the prompt echoed,
    which holds its ``contains`` words); a wrong one is ``wrong``. ``p`` may be changed between runs
    (a drop), or be a mapping from prompt to probability (a per-case drop; others get ``default``).
    """

    def __init__(
        self,
        p: float | Mapping[str, float],
        seed: int = 0,
        *,
        correct: Responder = echo_last_user_message,
        wrong: str = "I cannot say.",
        default: float = 1.0,
    ) -> None:
        self.p = p
        self.seed = seed
        self.correct = correct
        self.wrong = wrong
        self.default = default
        self._asked: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def chance(self, prompt: str) -> float:
        """The probability ``prompt`` is answered correctly."""
        if isinstance(self.p, Mapping):
            return float(self.p.get(prompt, self.default))
        return float(self.p)

    def __call__(self, body: Mapping[str, Any]) -> str:
        import random

        prompt = echo_last_user_message(body)
        with self._lock:
            self._asked[prompt] += 1
            n = self._asked[prompt]
        if random.Random(f"{self.seed}:{prompt}:{n}").random() < self.chance(prompt):
            return self.correct(body)
        return self.wrong


@dataclass(frozen=True, slots=True)
class Fault:
    """What the server does to one request instead of answering it normally.

    Build one with the factories (``Fault.rate_limited()``, ``Fault.drop()``, …) and hand it to
    :meth:`ChatServer.fail_at` or :meth:`ChatServer.fail_next`.
    """

    kind: str
    status: int = 200
    retry_after: str | None = None
    seconds: float = 0.0
    model: str | None = None
    body: bytes | None = None
    size: int = 0
    framing: str = "length"
    location: str | None = None

    @classmethod
    def http_error(
        cls, status: int, *, body: bytes | str | None = None, retry_after: float | str | None = None, location: str | None = None
    ) -> Fault:
        """Answer with ``status`` and an OpenAI-style error body (or ``body``), optionally with
        ``Retry-After`` and ``Location`` (a redirect's target)."""
        if isinstance(body, str):
            body = body.encode()
        retry = None if retry_after is None else str(retry_after)
        return cls("http_error", status=status, body=body, retry_after=retry, location=location)

    def headers(self) -> tuple[tuple[str, str], ...]:
        """The extra headers an ``http_error`` fault answers with."""
        given = (("Retry-After", self.retry_after), ("Location", self.location))
        return tuple((name, value) for name, value in given if value is not None)

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 1) -> Fault:
        """Answer 429 with ``Retry-After: retry_after`` (seconds or an HTTP date; ``None`` omits the header)."""
        return cls.http_error(429, retry_after=retry_after)

    @classmethod
    def drop(cls) -> Fault:
        """Close the connection without sending any response."""
        return cls("drop")

    @classmethod
    def reset(cls) -> Fault:
        """Reset the connection (TCP RST) without sending any response: ``ECONNRESET`` at the client."""
        return cls("reset")

    @classmethod
    def trickle(cls, seconds: float = 0.05) -> Fault:
        """Start a 200 response, then send its body one byte every ``seconds``, for ever (a
        slow-loris server: never idle long enough for a per-read timeout, never done)."""
        return cls("trickle", seconds=seconds)

    @classmethod
    def garbage(cls, body: bytes | str = b"<html><body>upstream exploded</body></html>") -> Fault:
        """Answer 200 with a body that is not JSON."""
        return cls("garbage", body=body.encode() if isinstance(body, str) else body)

    @classmethod
    def no_choices(cls) -> Fault:
        """Answer 200 with a completion object that has no ``choices``."""
        return cls("no_choices")

    @classmethod
    def empty_content(cls) -> Fault:
        """Answer 200 with a choice whose ``message.content`` is the empty string."""
        return cls("empty_content")

    @classmethod
    def stall(cls, seconds: float) -> Fault:
        """Sleep ``seconds`` (on top of the server delay) before answering normally — outlast a client timeout."""
        return cls("stall", seconds=seconds)

    @classmethod
    def huge(cls, size: int, *, framing: str = "close") -> Fault:
        """Answer 200 with a ``size``-byte body, streamed (never held in memory): framed by
        ``Content-Length`` (``"length"``), ``"chunked"``, or by closing the connection (``"close"``).
        The body is a JSON completion whose content never ends; a client that stops reading ends it."""
        if framing not in ("length", "chunked", "close"):
            raise ValueError(f"framing must be length, chunked or close, not {framing!r}")
        return cls("huge", size=size, framing=framing)

    @classmethod
    def other_model(cls, model: str) -> Fault:
        """Answer normally but report ``model`` as the model that answered."""
        return cls("other_model", model=model)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it; ``body`` is the parsed JSON, or ``None`` when it was not JSON;
    ``path`` is the request target without its query string, which is ``query``."""

    number: int
    method: str
    path: str
    headers: dict[str, str] = field(repr=False)
    body: Any
    raw_body: bytes = field(repr=False)
    query: str = ""


class ChatServer:
    """An OpenAI-compatible chat-completions server running on its own event loop in a background thread.

    ``responder(body) -> str`` makes the answer text (default: echo the last user message; ``text``
    is a shortcut for a fixed answer). ``model`` is the model to report (default: the requested one).
    ``delay`` seconds are slept (asynchronously) before every answer. ``responder``, ``model`` and
    ``delay`` may be reassigned while the server runs. ``chunked`` sends completions with
    ``Transfer-Encoding: chunked`` instead of ``Content-Length``. Requests are numbered from 1 over
    all paths; :meth:`reset` forgets requests, faults and the count.

    ``response_formats`` names the ``response_format`` types the server accepts (``None``: any);
    a request asking for another type is refused with ``refuse_status`` and a validation-error
    body naming the field — 400 as OpenAI answers, or 500 as llama-cpp-python's server does.

    ``pages`` maps other paths (``/v1/models``, ``/props``) to JSON documents answered to a GET;
    ``reply_headers`` are sent with every completion (a gateway's ``x-litellm-model-name``).
    ``ssl_context`` (a server-side context holding a certificate) makes it an https server.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        delay: float = 0.0,
        responder: Responder | None = None,
        text: str | None = None,
        model: str | None = None,
        chunked: bool = False,
        record: bool = True,
        response_formats: frozenset[str] | None = None,
        refuse_status: int = 400,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if responder is not None and text is not None:
            raise ValueError("pass either responder or text, not both")
        self.host = host
        self.port = port
        self.delay = delay
        self.responder: Responder = responder or (echo_last_user_message if text is None else (lambda _body: text))
        self.model = model
        self.chunked = chunked
        self.record = record
        self.response_formats = response_formats
        self.refuse_status = refuse_status
        self.ssl_context = ssl_context
        self.pages: dict[str, Any] = {}
        #: The most requests the server was answering at one moment (reset by :meth:`reset`).
        self.max_in_flight = 0
        self._in_flight = 0
        #: When the last answer was written (``time.time()``; 0.0 before the first).
        self.last_answer_at = 0.0
        self.reply_headers: tuple[tuple[str, str], ...] = ()
        self._lock = threading.Lock()
        self._count = 0
        self._connections = 0
        self._faults_at: dict[int, Fault] = {}
        self._faults_next: collections.deque[Fault] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._startup_error: BaseException | None = None

    def __repr__(self) -> str:
        state = self.base_url if self._thread is not None else "stopped"
        return f"<ChatServer {state} requests={self._count}>"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:PORT/v1`` (``https://`` with an ``ssl_context``)."""
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order (empty when ``record`` is off)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """How many requests arrived since the start or the last :meth:`reset`."""
        return self._count

    @property
    def connection_count(self) -> int:
        """How many TCP connections were accepted since the start or the last :meth:`reset`."""
        return self._connections

    def fail_at(self, number: int, fault: Fault) -> None:
        """Apply ``fault`` to request ``number`` (1-based, counted over all requests)."""
        if number < 1:
            raise ValueError("request numbers start at 1")
        with self._lock:
            self._faults_at[number] = fault

    def fail_next(self, fault: Fault, count: int = 1) -> None:
        """Apply ``fault`` to the next ``count`` requests that no :meth:`fail_at` fault claims.

        Calls queue up: ``fail_next(a); fail_next(b)`` fails the next request with ``a``, the one after with ``b``.
        """
        with self._lock:
            self._faults_next.extend([fault] * count)

    def reset(self) -> None:
        """Forget recorded requests, pending faults and the request and connection counts."""
        with self._lock:
            self._count = 0
            self._connections = 0
            self._faults_at.clear()
            self._faults_next.clear()
            self._requests.clear()
            self.max_in_flight = 0

    def start(self) -> ChatServer:
        """Bind the socket and start serving in a daemon thread; returns once the server accepts connections."""
        if self._thread is not None:
            raise RuntimeError("the server is already running")
        ready = threading.Event()
        self._startup_error = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, args=(ready,), name=f"chat-server-{id(self):x}", daemon=True)
        self._thread.start()
        ready.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise self._startup_error
        return self

    def stop(self) -> None:
        """Stop serving: close the listener, cancel in-flight requests and join the thread."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self, ready: threading.Event) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            server = loop.run_until_complete(
                asyncio.start_server(self._serve_connection, self.host, self.port, backlog=1024, ssl=self.ssl_context)
            )
        except BaseException as exc:  # handed to the starting thread, which re-raises it
            self._startup_error = exc
            loop.close()
            ready.set()
            return
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            for task in list(self._handlers):
                task.cancel()
            loop.run_until_complete(self._drain(server))
            loop.close()

    async def _drain(self, server: asyncio.Server) -> None:
        # gathered inside the loop: outside it, asyncio.gather asks the thread's event loop policy,
        # which a command run in-process meanwhile (asyncio.run) may have replaced
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await server.wait_closed()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                except asyncio.LimitOverrunError:
                    writer.write(_response(431, b"", close=True))
                    return
                request_line, _, header_block = head[:-4].partition(b"\r\n")
                try:
                    method, path, version = request_line.decode("latin-1").split(" ", 2)
                except ValueError:
                    writer.write(_response(400, _error_body(400, "malformed request line"), close=True))
                    return
                headers = {}
                for line in header_block.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
                try:
                    length = int(headers.get("content-length") or 0)
                except ValueError:
                    writer.write(_response(400, _error_body(400, "bad Content-Length"), close=True))
                    return
                try:
                    raw = await reader.readexactly(length) if length else b""
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
                try:
                    answered = await self._answer(method, path, headers, raw, writer, keep_alive)
                finally:
                    self._in_flight -= 1
                if not answered:
                    return
                await writer.drain()
                self.last_answer_at = time.time()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.CancelledError):
            # Cancelled only by stop(); finishing normally keeps asyncio's stream callback quiet.
            return
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _answer(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> bool:
        """Write the response to one request; ``False`` means the connection must be dropped now."""
        if path.startswith(("http://", "https://")):  # absolute form: the client takes this server for a proxy
            path = "/" + path.split("://", 1)[1].partition("/")[2]
        path, _, query = path.partition("?")
        with self._lock:
            self._count += 1
            number = self._count
            fault = self._faults_at.pop(number, None)
            if fault is None and self._faults_next:
                fault = self._faults_next.popleft()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if self.record:
            with self._lock:
                self._requests.append(RecordedRequest(number, method, path, headers, body, raw, query))
        close = not keep_alive
        if path not in CHAT_PATHS:
            # Transport-level faults (an error status, a dropped connection) hit any path, so a
            # readiness probe such as GET /models can be failed too; content faults wait for a chat request.
            if fault is not None and fault.kind == "http_error":
                writer.write(_response(fault.status, fault.body or _error_body(fault.status), close=close, extra=fault.headers()))
                return True
            if fault is not None and fault.kind == "drop":
                return False
            if fault is not None:
                with self._lock:
                    self._faults_next.appendleft(fault)
            if method == "GET" and path in self.pages:
                writer.write(_response(200, json.dumps(self.pages[path]).encode(), close=close))
                return True
            writer.write(_response(404, _error_body(404, f"no route for {path}"), close=close))
            return True
        if method != "POST":
            writer.write(_response(405, _error_body(405, f"{method} is not allowed"), close=close))
            return True
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body.get("model"):
            writer.write(_response(400, _error_body(400, "body must be JSON with model and messages"), close=close))
            return True

        requested_format = body.get("response_format")
        if self.response_formats is not None and isinstance(requested_format, dict):
            if requested_format.get("type") not in self.response_formats:
                allowed = " or ".join(f"'{kind}'" for kind in sorted(self.response_formats)) or "nothing"
                detail = [{"type": "literal_error", "loc": ["body", "response_format", "type"], "msg": f"Input should be {allowed}"}]
                writer.write(_response(self.refuse_status, _error_body(self.refuse_status, json.dumps(detail)), close=close))
                return True

        if self.delay:
            await asyncio.sleep(self.delay)
        kind = fault.kind if fault is not None else None
        if kind == "drop":
            return False
        if kind == "reset":
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if kind == "trickle":
            await _trickle(writer, fault.seconds)
            return False
        if kind == "stall":
            await asyncio.sleep(fault.seconds)
        if kind == "http_error":
            payload = fault.body if fault.body is not None else _error_body(fault.status)
            writer.write(_response(fault.status, payload, close=close, extra=fault.headers()))
            return True
        if kind == "garbage":
            writer.write(_response(200, fault.body or b"", close=close, content_type="text/html"))
            return True
        if kind == "huge":
            await _stream_huge(writer, fault.size, fault.framing)
            return False

        try:
            said = "" if kind == "empty_content" else self.responder(body)
        except Exception as exc:  # a broken responder is a test bug; say so in the response
            writer.write(_response(500, _error_body(500, f"responder raised {exc!r}"), close=close))
            return True
        message, text = _message(said, number)
        model = fault.model if kind == "other_model" else (self.model or body["model"])
        prompt_tokens = sum(
            len(m["content"].split()) for m in body["messages"] if isinstance(m, dict) and isinstance(m.get("content"), str)
        )
        completion_tokens = len(text.split())
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1735689600,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if kind == "no_choices":
            del completion["choices"]
        writer.write(_response(200, json.dumps(completion).encode(), close=close, chunked=self.chunked, extra=self.reply_headers))
        return True


def _message(said: str | Mapping[str, Any], number: int) -> tuple[dict[str, Any], str]:
    """The completion's message for a responder's answer, and its text (for the token count)."""
    if isinstance(said, str):
        return {"role": "assistant", "content": said}, said
    calls = [
        {
            "id": call.get("id", f"call_{number}_{index}"),
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": call["arguments"] if isinstance(call.get("arguments"), str) else json.dumps(call.get("arguments", {})),
            },
        }
        for index, call in enumerate(said.get("tool_calls") or (), start=1)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": said.get("content")}
    if calls:
        message["tool_calls"] = calls
    return message, said.get("content") or ""


class Script:
    """A responder that plays turns in order, one per chat request: text, or a message with tool
    calls (see :data:`Responder`); past its last turn it answers ``"(script ended)"``. ``bodies``
    keeps every request body it answered, to check what the conversation sent."""

    def __init__(self, *turns: str | Mapping[str, Any]) -> None:
        self.turns = list(turns)
        self.bodies: list[Mapping[str, Any]] = []

    def __call__(self, body: Mapping[str, Any]) -> str | Mapping[str, Any]:
        self.bodies.append(body)
        index = len(self.bodies) - 1
        return self.turns[index] if index < len(self.turns) else "(script ended)"


def calls(*names_and_arguments: tuple[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A turn that calls tools: ``calls(("get_weather", {"city": "Paris"}))``."""
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in names_and_arguments]}


_FILLER = b"x" * (1 << 20)


async def _stream_huge(writer: asyncio.StreamWriter, size: int, framing: str) -> None:
    """Write a 200 response whose body is ``size`` bytes, a megabyte at a time, then close.

    A client that stops reading makes a write fail; that ends the response early.
    """
    lines = ["HTTP/1.1 200 OK", "Content-Type: application/json", "Connection: close"]
    if framing == "length":
        lines.append(f"Content-Length: {size}")
    elif framing == "chunked":
        lines.append("Transfer-Encoding: chunked")
    head = b'{"choices":[{"message":{"role":"assistant","content":"'
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    sent = 0
    try:
        while sent < size:
            piece = head if sent == 0 else _FILLER[: min(len(_FILLER), size - sent)]
            piece = piece[: size - sent]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if framing == "chunked" else piece)
            sent += len(piece)
            await writer.drain()
        if framing == "chunked":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
    except (ConnectionError, RuntimeError):
        return


async def _trickle(writer: asyncio.StreamWriter, seconds: float) -> None:
    """A 200 response announcing a megabyte, then one byte of it every ``seconds`` until the client goes."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{")
    try:
        while not writer.is_closing():
            await writer.drain()
            await asyncio.sleep(seconds)
            writer.write(b" ")
    except (ConnectionError, RuntimeError):
        return


def _error_body(status: int, message: str | None = None) -> bytes:
    kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}.get(status, "server_error")
    text = message or http.HTTPStatus(status).phrase
    return json.dumps({"error": {"message": text, "type": kind, "code": status}}).encode()


def _response(
    status: int,
    body: bytes,
    *,
    close: bool,
    content_type: str = "application/json",
    extra: tuple[tuple[str, str], ...] = (),
    chunked: bool = False,
) -> bytes:
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {content_type}",
        "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(body)}",
        *(f"{name}: {value}" for name, value in extra),
    ]
    if close:
        lines.append("Connection: close")
    if chunked:
        half = len(body) // 2
        body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:half], body[half:]) if part) + b"0\r\n\r\n"
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class ChatServerProcess:
    """Run the server standalone in a child process, so its CPU is not charged to the measuring process.

    Use as a context manager; ``base_url`` is set once the child is listening, ``stats`` once it has
    stopped; ``quiet`` drops its closing summary on stderr. Faults cannot be
    scripted across the process boundary — use :class:`ChatServer` for that.
    """

    def __init__(
        self,
        *,
        delay: float = 0.0,
        model: str | None = None,
        text: str | None = None,
        quiet: bool = False,
        correct_probability: float | None = None,
        seed: int = 0,
        routed_model: str | None = None,
    ) -> None:
        self.delay = delay
        self.quiet = quiet
        self.model = model
        self.text = text
        self.correct_probability = correct_probability
        self.seed = seed
        self.routed_model = routed_model
        self.base_url = ""
        #: What the child reported when it stopped: ``requests``, ``connections``, ``max_in_flight``,
        #: ``cpu_s`` (empty until the context exits).
        self.stats: dict[str, Any] = {}
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ChatServerProcess:
        command = [sys.executable, __file__, "--port", "0", "--delay", str(self.delay)]
        if self.model is not None:
            command += ["--model", self.model]
        if self.text is not None:
            command += ["--text", self.text]
        if self.correct_probability is not None:
            command += ["--correct-probability", str(self.correct_probability), "--seed", str(self.seed)]
        if self.routed_model is not None:
            command += ["--routed-model", self.routed_model]
        stderr = subprocess.DEVNULL if self.quiet else None
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self._process.kill()
            self._process.wait()
            raise RuntimeError(f"the chat server did not start (first output line: {self.base_url!r})")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            last = self._process.stdout.read().strip().splitlines()
            self._process.stdout.close()
            if last:
                self.stats = json.loads(last[-1])
        self._process = None


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT or SIGTERM, after printing the base URL as the first line of output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before every answer")
    parser.add_argument("--model", default=None, help="model to report (default: the requested one)")
    parser.add_argument("--text", default=None, help="fixed answer text (default: echo the last user message)")
    parser.add_argument(
        "--correct-probability", type=float, default=None, metavar="P",
        help="answer each prompt correctly (echoed) with probability P, seeded per request (StochasticResponder)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the seed of --correct-probability")
    parser.add_argument("--routed-model", default=None, help="send x-litellm-model-name: NAME with every completion (a gateway)")
    args = parser.parse_args(argv)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    responder = StochasticResponder(args.correct_probability, args.seed) if args.correct_probability is not None else None
    server = ChatServer(
        host=args.host, port=args.port, delay=args.delay, model=args.model, text=args.text, record=False, responder=responder
    )
    if args.routed_model is not None:
        server.reply_headers = (("x-litellm-model-name", args.routed_model),)
    with server:
        print(server.base_url, flush=True)
        stopped.wait()
        print(
            f"served {server.request_count} requests on {server.connection_count} connections"
            f" using {time.process_time():.2f} s of CPU",
            file=sys.stderr,
        )
        # The last line of output, for ChatServerProcess.stats.
        stats = {
            "requests": server.request_count, "connections": server.connection_count,
            "max_in_flight": server.max_in_flight, "cpu_s": time.process_time(),
            "last_answer_at": server.last_answer_at,
        }
        print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
