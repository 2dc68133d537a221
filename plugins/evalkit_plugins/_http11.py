"""A lean HTTP/1.1 keep-alive client transport on plain asyncio streams: the ``openai`` generator's.

httpx's default transport (httpcore 1.0 over anyio and h11) costs about 0.9 ms of CPU per request
on a small pool and grows quadratically with the pool size, because every request start and end
rescans every pooled connection (encode/httpcore#1035). At concurrency 64 that is 7-9 ms of CPU per
request, far above what an evaluation run can afford; httpx's client layer on top cost more again.
:class:`Http11Transport` keeps only the wire layer: a bounded pool of idle connections per origin,
one write per request (a head the caller encoded once, then the body), and a response read with
``readuntil``/``readexactly`` into a :class:`Reply`. It never imports httpx, which the generator
uses only behind a proxy, and imports ``urllib.request`` only where a proxy may be configured
(:func:`proxy_settings_possible`). Its :class:`TransportError` hierarchy carries httpx's class
names, so the generator's messages, which name the kind of failure, read the same on either path.

What it does not do: proxies, HTTP/2, streaming response bodies (every body is read in full
before the response is returned), content decoding, ``Expect: 100-continue``. The ``read``
timeout bounds the whole response, not each socket read. A body longer than ``max_body_bytes`` is
not read: the transport stops at the limit, drops the connection and raises
:class:`ResponseTooLarge`, so a 300 MB reply costs no more memory than the limit.
"""

from __future__ import annotations

import asyncio
import collections
import os
import ssl
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit_plugins._urls import EndpointURL

__all__ = [
    "TRANSPORT_ERRORS",
    "CloseError",
    "ConnectError",
    "ConnectTimeout",
    "Http11Transport",
    "LocalProtocolError",
    "NetworkError",
    "PoolTimeout",
    "ProtocolError",
    "ProxyError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Reply",
    "ResponseTooLarge",
    "TimeoutException",
    "TransportError",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
    "env_proxy_applies",
    "head_lines",
    "origin_of",
    "proxy_settings_possible",
]

_HEADER_END = b"\r\n\r\n"
_CRLF = b"\r\n"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_READ_SIZE = 1 << 16
#: A request body at least this long is written after its head rather than copied onto it.
_SEPARATE_BODY = 1 << 16


class TransportError(Exception):
    """The request could not be sent or its response not read; worth another attempt.

    This class and its subclasses bear the names of httpx's: the ``openai`` generator raises
    them on both of its paths (it translates httpx's own behind a proxy), and its messages name them.
    """


class TimeoutException(TransportError):
    """A timeout expired."""


class ConnectTimeout(TimeoutException):
    """No connection within the ``connect`` timeout."""


class ReadTimeout(TimeoutException):
    """No complete response within the ``read`` timeout."""


class WriteTimeout(TimeoutException):
    """The request was not sent within the ``write`` timeout."""


class PoolTimeout(TimeoutException):
    """No connection of the pool came free within the ``pool`` timeout."""


class NetworkError(TransportError):
    """The network failed: a socket operation raised."""


class ConnectError(NetworkError):
    """The connection could not be opened (refused, unresolvable, a TLS handshake that failed)."""


class ReadError(NetworkError):
    """Reading the response failed."""


class WriteError(NetworkError):
    """Sending the request failed."""


class CloseError(NetworkError):
    """Closing a connection failed (raised by httpx only, behind a proxy)."""


class ProtocolError(TransportError):
    """Someone broke HTTP/1.1."""


class RemoteProtocolError(ProtocolError):
    """The server broke HTTP/1.1: no response, a malformed one or a body cut short."""


class LocalProtocolError(ProtocolError):
    """The request broke HTTP/1.1 (raised by httpx only, behind a proxy)."""


class ProxyError(TransportError):
    """The proxy refused or failed the request (raised by httpx only)."""


class UnsupportedProtocol(TransportError):
    """A URL scheme that cannot be spoken (raised by httpx only)."""


#: Every class above by name: the proxy path re-raises each httpx transport error as its namesake.
TRANSPORT_ERRORS: dict[str, type[TransportError]] = {
    cls.__name__: cls
    for cls in (
        TransportError,
        TimeoutException,
        ConnectTimeout,
        ReadTimeout,
        WriteTimeout,
        PoolTimeout,
        NetworkError,
        ConnectError,
        ReadError,
        WriteError,
        CloseError,
        ProtocolError,
        RemoteProtocolError,
        LocalProtocolError,
        ProxyError,
        UnsupportedProtocol,
    )
}


class Reply:
    """A fully read HTTP/1.1 response: status code, reason phrase, raw headers and body bytes."""

    __slots__ = ("status", "reason", "headers", "content")

    def __init__(self, status: int, reason: bytes, headers: list[tuple[bytes, bytes]], content: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.content = content

    def header(self, name: bytes) -> bytes | None:
        """The last value of the header ``name`` (lower-case bytes), or ``None``."""
        found = None
        for key, value in self.headers:
            if key.lower() == name:
                found = value
        return found


class ResponseTooLarge(Exception):
    """A response body is longer than the limit; reading stopped there and the connection is dropped.

    Deliberately not a :class:`TransportError`: a reply that is too large is what the endpoint
    says, not a transient fault to retry.
    """

    def __init__(self, limit: int, status: int = 0, reason: bytes = b"") -> None:
        self.limit = limit
        #: The response's status code and reason phrase (when its head was read before the body proved too long).
        self.status = status
        self.reason = reason
        super().__init__(f"the response body is larger than {limit} bytes; reading stopped there")


def origin_of(url: EndpointURL) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an ``http``/``https`` URL, the port defaulted: what a pool is keyed by
    and connected to (the host IDNA-encoded, as httpx's own transport connects)."""
    return url.scheme, url.host, url.port or _DEFAULT_PORTS[url.scheme]


def head_lines(method: bytes, target: bytes, fields: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The request line and header lines of a request, each ending in CRLF; the blank line that
    ends the head is the caller's (a caller may add a ``content-length`` line per request first)."""
    return b"".join([b"%s %s HTTP/1.1\r\n" % (method, target), *(b"%s: %s\r\n" % field for field in fields)])


def proxy_settings_possible() -> bool:
    """Whether any proxy may be configured: a non-empty ``*_proxy`` variable (any case) is set, or
    this is macOS or Windows, where ``urllib.request.getproxies`` also reads the system settings.

    ``False`` proves that ``getproxies()`` is empty, without importing ``urllib.request``.
    """
    if sys.platform == "darwin" or os.name == "nt":
        return True
    return any(value and name.lower().endswith("_proxy") for name, value in os.environ.items())


def env_proxy_applies(url: EndpointURL) -> bool:
    """Whether the environment routes ``url`` through a proxy (``HTTPS_PROXY``, ``ALL_PROXY``, … minus ``NO_PROXY``)."""
    if not proxy_settings_possible():
        return False
    import urllib.request

    proxies = urllib.request.getproxies()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(url.host)


class _Connection:
    """One open HTTP/1.1 connection and when it last went idle."""

    __slots__ = ("reader", "writer", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float, expiry: float) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing() or now - self.idle_since > expiry)

    def close(self) -> None:
        self.writer.close()


class Http11Transport:
    """A client transport speaking HTTP/1.1 with keep-alive over asyncio streams.

    At most ``max_connections`` requests are in flight at once (the rest wait, bounded by the
    ``pool`` timeout); idle connections are reused for ``keepalive_expiry`` seconds. A transport is
    bound to the event loop it is first used on.
    """

    def __init__(
        self,
        *,
        max_connections: int,
        keepalive_expiry: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
        max_body_bytes: int | None = None,
    ) -> None:
        self._slots = asyncio.Semaphore(max_connections)
        self._max_body = max_body_bytes
        self._keepalive_expiry = keepalive_expiry
        self._ssl_context = ssl_context
        self._idle: dict[tuple[str, str, int], collections.deque[_Connection]] = {}
        self._closed = False

    async def send(
        self,
        origin: tuple[str, str, int],
        head: bytes,
        body: bytes,
        *,
        pool: float | None = None,
        connect: float | None = None,
        write: float | None = None,
        read: float | None = None,
    ) -> Reply:
        """Send a request whose head (request line and headers, ending in a blank line) is
        already encoded, on a pooled connection to ``origin`` (scheme, host, port), and return
        the fully read response.

        The cheap path for a caller that sends many requests of one shape (the ``openai``
        generator builds its head once). Failures raise a :class:`TransportError` (a
        :class:`TimeoutException` for each timeout), or :class:`ResponseTooLarge`.
        """
        if self._closed:
            raise RuntimeError("the transport is closed")
        if self._slots.locked():
            try:
                async with asyncio.timeout(pool):
                    await self._slots.acquire()
            except TimeoutError:
                raise PoolTimeout("Timed out waiting for a free connection.") from None
        else:
            await self._slots.acquire()
        try:
            connection = self._take_idle(origin) or await self._connect(origin, connect)
            try:
                reply, reusable = await self._exchange(connection, head, body, write, read)
            except BaseException:
                connection.close()
                raise
            if reusable and not self._closed:
                connection.idle_since = time.monotonic()
                self._idle.setdefault(origin, collections.deque()).append(connection)
            else:
                connection.close()
        finally:
            self._slots.release()
        return reply

    async def aclose(self) -> None:
        """Close every idle connection; connections in use close when their response is read."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def _take_idle(self, origin: tuple[str, str, int]) -> _Connection | None:
        connections = self._idle.get(origin)
        if not connections:
            return None
        now = time.monotonic()
        while connections:
            connection = connections.pop()
            if connection.usable(now, self._keepalive_expiry):
                return connection
            connection.close()
        return None

    async def _connect(self, origin: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            if self._ssl_context is None:
                self._ssl_context = _default_tls_context()
            tls = self._ssl_context
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, ssl=tls, server_hostname=host if tls else None)
        except TimeoutError:
            raise ConnectTimeout(f"Timed out connecting to {host}:{port}.") from None
        except (OSError, ssl.SSLError) as exc:
            raise ConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(reader, writer)

    async def _exchange(
        self,
        connection: _Connection,
        head: bytes,
        body: bytes,
        write_timeout: float | None,
        read_timeout: float | None,
    ) -> tuple[Reply, bool]:
        reader, writer = connection.reader, connection.writer
        try:
            if len(body) < _SEPARATE_BODY:
                writer.write(head + body)
            else:
                writer.writelines((head, body))
            if writer.transport.get_write_buffer_size():
                async with asyncio.timeout(write_timeout):
                    await writer.drain()
        except TimeoutError:
            raise WriteTimeout("Timed out sending the request.") from None
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from exc

        started = False
        try:
            async with asyncio.timeout(read_timeout):
                while True:
                    head = await reader.readuntil(_HEADER_END)
                    started = True
                    status, reason, headers, framing, keep_alive = _parse_head(head)
                    if not 100 <= status < 200:
                        break
                limit = self._max_body
                try:
                    if status in (204, 304):
                        content = b""
                    elif framing == "chunked":
                        content = await _read_chunked(reader, limit)
                    elif framing is not None:
                        if limit is not None and framing > limit:
                            raise ResponseTooLarge(limit)
                        content = await reader.readexactly(framing)
                    else:
                        content = await _read_to_close(reader, limit)
                        keep_alive = False
                except ResponseTooLarge as exc:
                    raise ResponseTooLarge(exc.limit, status, reason) from None
        except TimeoutError:
            raise ReadTimeout("Timed out reading the response.") from None
        except asyncio.IncompleteReadError:
            message = (
                "peer closed connection without sending complete message body"
                if started
                else "Server disconnected without sending a response."
            )
            raise RemoteProtocolError(message) from None
        except (asyncio.LimitOverrunError, ValueError) as exc:
            raise RemoteProtocolError(f"malformed HTTP response: {exc}") from None
        except OSError as exc:
            raise ReadError(str(exc) or type(exc).__name__) from exc
        return Reply(status, reason, headers, content), keep_alive


def _default_tls_context() -> ssl.SSLContext:
    """What ``httpx.create_ssl_context()`` builds: certificates verified against the file
    ``$SSL_CERT_FILE``, else the directory ``$SSL_CERT_DIR``, else certifi's bundle."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _parse_head(head: bytes) -> tuple[int, bytes, list[tuple[bytes, bytes]], int | str | None, bool]:
    """Status, reason, headers, framing (a length, ``"chunked"`` or ``None`` for read-to-close), keep-alive."""
    status_line, _, block = head[:-4].partition(_CRLF)
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError(f"bad status line {status_line[:80]!r}")
    status = int(parts[1])
    reason = parts[2] if len(parts) == 3 else b""
    keep_alive = parts[0] == b"HTTP/1.1"
    headers = []
    framing: int | str | None = None
    for line in block.split(_CRLF) if block else ():
        name, sep, value = line.partition(b":")
        if not sep:
            raise ValueError(f"bad header line {line[:80]!r}")
        value = value.strip()
        headers.append((name, value))
        lowered = name.lower()
        if lowered == b"content-length" and framing is None:
            framing = int(value)
        elif lowered == b"transfer-encoding" and b"chunked" in value.lower():
            framing = "chunked"
        elif lowered == b"connection":
            token = value.lower()
            if b"close" in token:
                keep_alive = False
            elif b"keep-alive" in token:
                keep_alive = True
    return status, reason, headers, framing, keep_alive


async def _read_chunked(reader: asyncio.StreamReader, limit: int | None) -> bytes:
    chunks = []
    total = 0
    while True:
        size = int((await reader.readuntil(_CRLF)).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while await reader.readuntil(_CRLF) != _CRLF:
                pass
            return b"".join(chunks)
        total += size
        if limit is not None and total > limit:
            raise ResponseTooLarge(limit)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def _read_to_close(reader: asyncio.StreamReader, limit: int | None) -> bytes:
    if limit is None:
        return await reader.read()
    chunks = []
    total = 0
    while chunk := await reader.read(_READ_SIZE):
        total += len(chunk)
        if total > limit:
            raise ResponseTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)
