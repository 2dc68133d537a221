"""The ``openai`` generator's HTTP client: aiohttp, one session per endpoint and event loop.

:class:`EndpointSession` wraps one ``aiohttp.ClientSession`` whose connector holds at most as many
connections as requests may be in flight (the run's concurrency). Everything an endpoint needs is
decided once, when the generator is built (:class:`EndpointSettings`):

* **TLS**: certificates are verified against ``ca_bundle`` when the provider instance names one,
  else against the system's store as OpenSSL finds it, which ``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR`` replace (:func:`tls_context`).
* **Proxies** come from the environment as curl, requests and aiohttp's own ``trust_env`` read
  them: ``HTTPS_PROXY`` / ``HTTP_PROXY`` (then ``ALL_PROXY``) unless ``NO_PROXY`` names the host
  (:func:`environment_proxy`). They are looked up once per generator rather than through
  ``trust_env=True``, which asks two worker threads per request (the proxy lookup and a
  ``.netrc`` read) and would send ``.netrc`` credentials where the API key goes.
* **Timeouts**: ``timeout`` bounds each request whole — connecting, sending and reading the last
  byte — so an endpoint that trickles its answer forever (a slow-loris) still times out. Waiting
  for a free connection is not counted: requests past the pool's size wait before the clock starts.
* **Bodies** are read in chunks and never past the limit (:class:`ResponseTooLarge`), counted after
  ``gzip`` or ``deflate`` decoding, which is done here a bounded piece at a time (a gzip bomb stops
  at the limit too); a coding evalkit did not ask for is refused (:class:`UndecodableBody`).
* No redirects are followed (a 3xx is the endpoint's answer), no cookies kept.

Failures are aiohttp's own exceptions (:data:`TRANSPORT_FAILURES`); :func:`failure_kind` names
each in the words evalkit's messages have always used (``ConnectError``, ``ReadTimeout``, …).
"""

from __future__ import annotations

import asyncio
import os
import ssl
import urllib.request
import zlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
import attrs
from yarl import URL

if TYPE_CHECKING:
    from multidict import CIMultiDict, CIMultiDictProxy

__all__ = [
    "ACCEPTED_CODINGS",
    "TRANSPORT_FAILURES",
    "EndpointSession",
    "EndpointSettings",
    "Reply",
    "ResponseTooLarge",
    "UndecodableBody",
    "connection_refused",
    "environment_proxy",
    "failure_detail",
    "failure_kind",
    "run_blocking",
    "tls_context",
]

#: The content codings evalkit asks for (and decodes itself, within the size limit).
ACCEPTED_CODINGS = "gzip, deflate"
#: Seconds an idle connection is kept for reuse (many servers close theirs after 5 s).
KEEPALIVE_SECONDS = 4.0

#: What a request may raise when the endpoint could not be reached or did not answer in HTTP:
#: worth another attempt. (``TimeoutError`` covers aiohttp's timeouts; ``OSError`` what slips past it.)
TRANSPORT_FAILURES = (aiohttp.ClientError, TimeoutError, OSError)

T = TypeVar("T")


class ResponseTooLarge(Exception):
    """A response body is longer than the limit; reading stopped there and the connection was dropped.

    Not a transport failure: a reply that is too large is what the endpoint says, not a transient
    fault to retry. ``status`` and ``reason`` are the response's (its head was read).
    """

    def __init__(self, limit: int, status: int = 0, reason: str = "") -> None:
        self.limit = limit
        self.status = status
        self.reason = reason
        super().__init__(f"the response body is larger than {limit} bytes; reading stopped there")


class UndecodableBody(Exception):
    """A reply's body in a content coding evalkit did not ask for, or not valid in the one it names."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(what)


class Reply:
    """A response read whole: status code, reason phrase, headers and (decoded) body."""

    __slots__ = ("status", "reason", "headers", "content")

    def __init__(self, status: int, reason: str, headers: CIMultiDictProxy[str] | CIMultiDict[str], content: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.content = content

    def header(self, name: str) -> str | None:
        """The last value of the header ``name`` (any case), or ``None``."""
        values = self.headers.getall(name, None)
        return values[-1] if values else None


@attrs.frozen
class EndpointSettings:
    """How every request to one endpoint is made: the headers sent with each (values checked to be
    sendable; never shown: they hold the API key), seconds a request may take, the TLS
    verification (``True``: aiohttp's default context) and the proxy (``None``: connect directly)."""

    headers: Mapping[str, str] = attrs.field(repr=False)
    timeout: float
    tls: ssl.SSLContext | bool = True
    proxy: URL | None = None


class EndpointSession:
    """One ``aiohttp.ClientSession`` for one endpoint, bound to the event loop it is made on.

    At most ``connections`` requests are in flight (the rest wait for a free slot, outside their
    timeout); idle connections are reused. Call :meth:`aclose` on the same loop.
    """

    def __init__(self, settings: EndpointSettings, connections: int) -> None:
        connector = aiohttp.TCPConnector(limit=connections, limit_per_host=0, ssl=settings.tls, keepalive_timeout=KEEPALIVE_SECONDS)
        self._session = aiohttp.ClientSession(
            connector=connector,
            # Every header aiohttp would add is given (no skip_auto_headers: aiohttp's fast path),
            # and it adds no body type to a GET.
            headers=settings.headers,
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,  # decoded within the limit by _Decoder
            timeout=aiohttp.ClientTimeout(total=settings.timeout),
            trust_env=False,  # the proxy was looked up once (see the module docstring)
        )
        self._proxy = settings.proxy
        self._slots = asyncio.Semaphore(connections)

    async def send(self, method: str, url: URL, body: bytes | None, limit: int) -> Reply:
        """The endpoint's reply to one request, its body read whole (at most ``limit`` bytes).

        Raises one of :data:`TRANSPORT_FAILURES`, :class:`ResponseTooLarge` or :class:`UndecodableBody`.
        """
        async with self._slots, self._session.request(
            method, url, data=body, allow_redirects=False, proxy=self._proxy
        ) as response:
            try:
                content = await _read_body(response, limit)
            except ResponseTooLarge:
                response.close()  # the rest is never read: the connection goes
                raise ResponseTooLarge(limit, response.status, response.reason or "") from None
            return Reply(response.status, response.reason or "", response.headers, content)

    async def aclose(self) -> None:
        """Close the session and its connections."""
        await self._session.close()


async def _read_body(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body of ``response``, decoded, or :class:`ResponseTooLarge` as soon as it passes ``limit``."""
    coding = response.headers.get("Content-Encoding", "").strip().lower()
    decoder = _Decoder(coding, limit) if coding not in ("", "identity") else None
    declared = response.content_length
    if decoder is None and declared is not None and declared > limit:
        raise ResponseTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    stream = response.content
    while chunk := await stream.readany():
        if decoder is not None:
            chunk = decoder.decode(chunk, limit - size)
        size += len(chunk)
        if size > limit:
            raise ResponseTooLarge(limit)
        chunks.append(chunk)
    if decoder is not None:
        chunks.append(decoder.finish())
        if size + len(chunks[-1]) > limit:
            raise ResponseTooLarge(limit)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class _Decoder:
    """Decodes a ``gzip`` or ``deflate`` body as it arrives, never producing more than is asked
    (a small gzip bomb is stopped, not inflated). The sessions leave decoding to it
    (``auto_decompress=False``): what evalkit did not ask for is named, not guessed at."""

    def __init__(self, coding: str, limit: int) -> None:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise UndecodableBody(f"Content-Encoding {coding[:40]!r}, which evalkit did not ask for")
        self._coding = coding
        self._decompressor: Any = None

    def decode(self, chunk: bytes, room: int) -> bytes:
        """``chunk`` decoded: at most ``room + 1`` bytes (one more than fits proves it too large)."""
        if self._decompressor is None:
            if self._coding == "deflate":
                # zlib-wrapped as the standard says (low nibble 8), or raw as some servers send it
                wbits = zlib.MAX_WBITS if chunk[0] & 0x0F == 8 else -zlib.MAX_WBITS
            else:
                wbits = 16 + zlib.MAX_WBITS
            self._decompressor = zlib.decompressobj(wbits)
        try:
            decoded = self._decompressor.decompress(chunk, max(room, 0) + 1)
        except zlib.error:
            raise UndecodableBody(f"a body that is not valid {self._coding}") from None
        if self._decompressor.unconsumed_tail:  # more output than room: too large
            return decoded + b"\0"
        return decoded

    def finish(self) -> bytes:
        """What the decoder still holds at the end of the body."""
        if self._decompressor is None:
            return b""
        try:
            return self._decompressor.flush()
        except zlib.error:
            raise UndecodableBody(f"a body that is not valid {self._coding}") from None


def failure_kind(exc: BaseException) -> str:
    """The kind of transport failure ``exc`` is, in the names evalkit's messages use."""
    if isinstance(exc, TimeoutError):
        return "ConnectTimeout" if isinstance(exc, aiohttp.ConnectionTimeoutError) else "ReadTimeout"
    if isinstance(exc, (aiohttp.ClientProxyConnectionError, aiohttp.ClientHttpProxyError)):
        return "ProxyError"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "ConnectError"
    if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError)):
        return "RemoteProtocolError"
    return "NetworkError"


def connection_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is a refused connection (nothing listens at the endpoint's address: a server
    not started, or still starting), not a name that does not resolve, a timeout or a TLS failure."""
    cause = exc.os_error if isinstance(exc, aiohttp.ClientConnectorError) else exc
    return isinstance(cause, ConnectionRefusedError)


def failure_detail(exc: BaseException) -> str:
    """What went wrong, in aiohttp's words, with a hint where the cause is the trust store."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        detail += (
            "; the endpoint's certificate is not trusted: name the certificate authority that signed it "
            "with the instance's ca_bundle option (a PEM file), or set SSL_CERT_FILE"
        )
    return detail


def tls_context(ca_bundle: str | None) -> ssl.SSLContext | bool:
    """The TLS verification for https endpoints: a context trusting only ``ca_bundle`` (a PEM file);
    else, when ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` is set, the system's default context as those
    make it now; else ``True`` (aiohttp's shared default context, the same store).

    Raises ``OSError`` or ``ssl.SSLError`` when ``ca_bundle`` cannot be read as certificates.
    """
    if ca_bundle is not None:
        context = ssl.create_default_context(cafile=ca_bundle)
    elif os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        # aiohttp's default context read these when it was imported; they may have been set since
        context = ssl.create_default_context()
    else:
        return True
    context.set_alpn_protocols(("http/1.1",))
    return context


def environment_proxy(url: URL) -> URL | None:
    """The proxy the environment names for ``url``, or ``None``.

    ``<scheme>_proxy`` (either case; then ``all_proxy``), unless ``no_proxy`` covers the host
    (``urllib.request``'s rules: suffixes, ``*``, a host with its port). A value without a scheme is
    taken as ``http://``. Raises ``ValueError`` for a proxy that is not ``http://`` or ``https://``.
    """
    proxies = urllib.request.getproxies()
    value = proxies.get(url.scheme) or proxies.get("all")
    if not value:
        return None
    host = url.host or ""
    if urllib.request.proxy_bypass(f"{host}:{url.port}" if url.explicit_port else host):
        return None
    proxy = URL(value if "://" in value else f"http://{value}")
    if proxy.scheme not in ("http", "https") or not proxy.host:
        raise ValueError(
            f"the proxy the environment names for {url.scheme}:// URLs ({url.scheme.upper()}_PROXY or ALL_PROXY) "
            f"is not an http:// proxy (scheme {proxy.scheme!r}), which evalkit cannot use"
        )
    return proxy


def run_blocking(job: Callable[[], Awaitable[T]]) -> T:
    """Run ``job()`` to completion from synchronous code: on a fresh event loop, or — when this
    thread already runs one (a library caller's) — on a fresh loop in a worker thread, waited for."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(job))
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="evalkit-http") as worker:
        return worker.submit(asyncio.run, _awaited(job)).result()


async def _awaited(job: Callable[[], Awaitable[Any]]) -> Any:
    return await job()
