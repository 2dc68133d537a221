"""Who may ask the viewer, and what every answer carries: the ASGI middleware in front of it.

- **Host check** (against DNS rebinding: a page on another site whose name the attacker points
  at 127.0.0.1 makes the browser send ``Host: attacker.example``): a request whose ``Host``
  header does not name an allowed host name, on the bound port, is refused (400) before anything
  is read. A server bound to every interface allows any name; it needs a token instead.
- **Token** (required by ``evalkit view`` on any host but loopback): every request carries it,
  as ``?token=`` once (answered with a cookie and a redirect to the same address without it, so
  it stays out of the history and of shared links), then the cookie, or an ``Authorization:
  Bearer`` header. Compared in constant time; a request without it gets 401.
- **Only GET and HEAD**: the viewer writes nothing, and takes nothing but addresses.
- **Headers on every response**: a Content-Security-Policy that lets the page load only its own
  script, styles and data-URI images (no inline script, no framing, no other origin),
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and ``Cache-Control:
  no-store`` (pages hold answers).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..shapes import whole_number
from .settings import ViewerSettings

__all__ = ["COOKIE", "CSP", "SECURITY_HEADERS", "Guard", "host_and_port"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The cookie a token-guarded viewer sets once the token was given in the address.
COOKIE = "evalkit_view"
#: The page may load its own script, styles and images (and data: images), nothing else.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


def host_and_port(header: str) -> tuple[str, int | None] | None:
    """``(host name, port)`` from a ``Host`` header (``None`` port: not given); ``None`` when
    it does not parse. An IPv6 address loses its brackets; names are lower-cased, a final dot
    dropped."""
    header = header.strip()
    if not header or any(c.isspace() or c in "/@\\" for c in header):
        return None
    if header.startswith("["):
        end = header.find("]")
        if end < 0:
            return None
        host, rest = header[1:end], header[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif header.count(":") == 1:
        host, port_text = header.split(":")
    elif ":" in header:
        return None
    else:
        host, port_text = header, None
    port = None
    if port_text is not None:
        port = whole_number(port_text, max_digits=5)
        if port is None:
            return None
    return host.lower().rstrip("."), port


def _digest(token: str) -> bytes:
    """What the cookie holds and what every offered token is compared by: a keyed digest, so the
    token's length does not leak through the comparison and the cookie is not the token."""
    return hmac.new(token.encode("utf-8", "surrogatepass"), b"evalkit view cookie", hashlib.sha256).digest()


class Guard:
    """The middleware described in the module docstring, around ``app``."""

    def __init__(self, app: ASGIApp, settings: ViewerSettings) -> None:
        """Guard ``app`` as ``settings`` say (token, allowed host names and port)."""
        self.app = app
        self.settings = settings
        self._expected = _digest(settings.token) if settings.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse, redirect or pass the request on, adding the security headers to the answer."""
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return  # no websockets

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _REPLACED]
                message["headers"] = [*headers, *SECURITY_HEADERS]
            await send(message)

        headers = _headers(scope)
        hosts = [value for name, value in scope.get("headers", []) if name.lower() == b"host"]
        if len(hosts) != 1 or not self._host_allowed(headers.get("host")):
            await _plain(send_with_headers, 400, "The Host header does not name this viewer (a DNS-rebinding guard).")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send_with_headers, 405, "The viewer is read only: GET and HEAD only.", [(b"allow", b"GET, HEAD")])
            return
        if self._expected is not None:
            query = scope.get("query_string", b"").decode("latin-1")
            pairs = parse_qsl(query, keep_blank_values=True)
            offered = [value for key, value in pairs if key == "token"]
            if offered:
                if len(offered) == 1 and self._matches(offered[0]):
                    await self._redirect_without_token(scope, pairs, send_with_headers)
                else:
                    await _plain(send_with_headers, 401, _NEEDS_TOKEN)
                return
            if not (self._bearer_matches(headers.get("authorization")) or self._cookie_matches(headers.get("cookie"))):
                await _plain(send_with_headers, 401, _NEEDS_TOKEN)
                return
        await self.app(scope, receive, send_with_headers)

    def _host_allowed(self, header: str | None) -> bool:
        allowed = self.settings.allowed_hosts
        if header is None:
            return False
        parsed = host_and_port(header)
        if parsed is None:
            return False
        host, port = parsed
        if allowed is not None and host not in allowed:
            return False
        expected = self.settings.port
        return expected is None or (port if port is not None else 80) == expected

    def _matches(self, offered: str) -> bool:
        assert self._expected is not None
        return hmac.compare_digest(_digest(offered), self._expected)

    def _bearer_matches(self, header: str | None) -> bool:
        if not header:
            return False
        scheme, _, value = header.partition(" ")
        return scheme.lower() == "bearer" and self._matches(value.strip())

    def _cookie_matches(self, header: str | None) -> bool:
        if not header or self._expected is None:
            return False
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(header)
        except Exception:  # noqa: BLE001 - a malformed cookie header is no token
            return False
        morsel = cookie.get(COOKIE)
        if morsel is None:
            return False
        try:
            offered = bytes.fromhex(morsel.value)
        except ValueError:
            return False
        return hmac.compare_digest(offered, self._expected)

    async def _redirect_without_token(self, scope: Scope, pairs: list[tuple[str, str]], send: Send) -> None:
        assert self._expected is not None
        rest = urlencode([(k, v) for k, v in pairs if k != "token"])
        path = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
        location = path.split(b"?", 1)[0] + (b"?" + rest.encode("ascii") if rest else b"")
        cookie = f"{COOKIE}={self._expected.hex()}; Path=/; HttpOnly; SameSite=Lax".encode("ascii")
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location), (b"set-cookie", cookie), (b"content-length", b"0"),
        ]})  # fmt: skip
        await send({"type": "http.response.body", "body": b""})


_NEEDS_TOKEN = (
    "This viewer needs its token: open the address `evalkit view` printed (it carries ?token=), "
    "or send an Authorization: Bearer header."
)
#: Headers the guard sets itself, dropped from the app's answer first.
_REPLACED = frozenset(name for name, _ in SECURITY_HEADERS)


def _headers(scope: Scope) -> dict[str, str]:
    """The request headers by lower-case name (the last of repeated ones), decoded as Latin-1."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode("ascii")), *(extra or []),
    ]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
