"""Endpoint URLs, parsed and normalised as httpx 0.28 does it, without importing httpx.

:class:`EndpointURL` follows ``httpx/_urlparse.py`` rule for rule, so every byte the ``openai``
generator sends or shows (request target, ``Host`` header, displayed ``base_url``) is what
``httpx.URL`` gave: scheme and host lower-cased, a non-ASCII host IDNA-encoded (IDNA 2008, the
``idna`` package httpx uses, imported only for such a host), a default port dropped, ``.`` and
``..`` path segments removed, path, query and fragment percent-encoded with the WHATWG sets while
existing ``%XX`` escapes are kept, and the same :class:`InvalidURL` messages for what httpx
refuses. ``tests/plugins/test_urls.py`` compares the two on ordinary and hostile URLs.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote

__all__ = ["EndpointURL", "InvalidURL"]

MAX_URL_LENGTH = 65536

_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_SUB_DELIMS = "!$&'()*+,;="


def _printable_ascii_except(*excluded: int) -> str:
    return "".join(chr(i) for i in range(0x20, 0x7F) if i not in excluded)


_FRAG_SAFE = _printable_ascii_except(0x20, 0x22, 0x3C, 0x3E, 0x60)
_QUERY_SAFE = _printable_ascii_except(0x20, 0x22, 0x23, 0x3C, 0x3E)
_PATH_SAFE = _printable_ascii_except(0x20, 0x22, 0x23, 0x3C, 0x3E, 0x3F, 0x60, 0x7B, 0x7D)
_USERINFO_SAFE = _printable_ascii_except(
    0x20, 0x22, 0x23, 0x3C, 0x3E, 0x3F, 0x60, 0x7B, 0x7D, 0x2F, 0x3B, 0x3D, 0x40, 0x5B, 0x5C, 0x5D, 0x5E, 0x7C
)
_HOST_SAFE = _SUB_DELIMS + '"`{}%|\\'

_PERCENT_ENCODED = re.compile("%[A-Fa-f0-9]{2}")
_URL = re.compile(
    r"(?:(?P<scheme>([a-zA-Z][a-zA-Z0-9+.-]*)?):)?"
    r"(?://(?P<authority>[^/?#]*))?"
    r"(?P<path>[^?#]*)"
    r"(?:\?(?P<query>[^#]*))?"
    r"(?:#(?P<fragment>.*))?"
)
_AUTHORITY = re.compile(r"(?:(?P<userinfo>.*)@)?(?P<host>(\[.*\]|[^:@]*)):?(?P<port>.*)?")
_COMPONENTS = {
    "scheme": re.compile("([a-zA-Z][a-zA-Z0-9+.-]*)?"),
    "authority": re.compile("[^/?#]*"),
    "path": re.compile("[^?#]*"),
    "query": re.compile("[^#]*"),
    "fragment": re.compile(".*"),
}
_IPV4_STYLE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$")
_IPV6_STYLE = re.compile(r"^\[.*\]$")
_DEFAULT_PORTS = {"ftp": 21, "http": 80, "https": 443, "ws": 80, "wss": 443}


class InvalidURL(Exception):
    """A URL that httpx would refuse, with httpx's message (the same class name, as messages show it)."""


class EndpointURL(NamedTuple):
    """A parsed, normalised absolute or relative URL: each component in its encoded ASCII form.

    ``host`` is what httpx calls ``raw_host`` (lower-case, IDNA-encoded, an IPv6 address without
    brackets); ``path``, ``query`` and ``fragment`` are percent-encoded, ``query`` and ``fragment``
    ``None`` when absent (an empty string when the URL ends in a bare ``?`` or ``#``).
    """

    scheme: str
    userinfo: str
    host: str
    port: int | None
    path: str
    query: str | None
    fragment: str | None

    @classmethod
    def parse(cls, url: str) -> EndpointURL:
        """``url`` parsed as ``httpx.URL(url)`` does; :class:`InvalidURL` where httpx refuses it."""
        return _parse(url, {})

    def copy_with(self, **components: str | None) -> EndpointURL:
        """A copy with ``path`` (decoded, as :attr:`decoded_path` gives it), ``query`` or
        ``fragment`` replaced (``None`` drops one), every component checked and normalised again
        as ``httpx.URL.copy_with`` does; :class:`InvalidURL` where httpx refuses the result."""
        return _parse(
            "",
            {
                "scheme": self.scheme,
                "authority": self.authority,
                "path": self.path,
                "query": self.query,
                "fragment": self.fragment,
                **components,
            },
        )

    @property
    def authority(self) -> str:
        """``userinfo@host:port``, each part only when present."""
        return f"{self.userinfo}@{self.netloc}" if self.userinfo else self.netloc

    @property
    def netloc(self) -> str:
        """``host`` or ``host:port`` (an IPv6 host in brackets): the ``Host`` header's value."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    @property
    def decoded_path(self) -> str:
        """The path with its ``%XX`` escapes decoded, ``/`` when empty (httpx's ``URL.path``)."""
        return unquote(self.path or "/")

    @property
    def raw_path(self) -> bytes:
        """The request target: the path (``/`` when empty) and the query when there is one."""
        target = self.path or "/"
        return (target if self.query is None else f"{target}?{self.query}").encode("ascii")

    def __str__(self) -> str:
        authority = self.authority
        return "".join(
            [
                f"{self.scheme}:" if self.scheme else "",
                f"//{authority}" if authority else "",
                self.path,
                f"?{self.query}" if self.query is not None else "",
                f"#{self.fragment}" if self.fragment is not None else "",
            ]
        )


def _parse(url: str, components: dict[str, str | None]) -> EndpointURL:
    """httpx's ``urlparse(url, **components)`` for the keyword components ``ParseResult.copy_with`` passes."""
    if len(url) > MAX_URL_LENGTH:
        raise InvalidURL("URL too long")
    _refuse_control_characters(url, "Invalid non-printable ASCII character in URL, {char!r} at position {idx}.")
    for key, value in components.items():
        if value is not None:
            if len(value) > MAX_URL_LENGTH:
                raise InvalidURL(f"URL component '{key}' too long")
            _refuse_control_characters(
                value, f"Invalid non-printable ASCII character in URL {key} component, {{char!r}} at position {{idx}}."
            )
            if not _COMPONENTS[key].fullmatch(value):
                raise InvalidURL(f"Invalid URL component '{key}'")

    parts = _URL.match(url).groupdict()  # always matches, perhaps with empty components
    scheme = components.get("scheme", parts["scheme"]) or ""
    authority = components.get("authority", parts["authority"]) or ""
    path = components.get("path", parts["path"]) or ""
    query = components.get("query", parts["query"])
    fragment = components.get("fragment", parts["fragment"])
    authority_parts = _AUTHORITY.match(authority).groupdict()
    userinfo = authority_parts["userinfo"] or ""
    host = authority_parts["host"] or ""

    userinfo = _quote(userinfo, _USERINFO_SAFE)
    host = _encode_host(host)
    # As httpx does, the default port is looked up by the scheme as written: HTTP://h:80 keeps :80.
    port = _normalize_port(authority_parts["port"], scheme)
    has_authority = userinfo != "" or host != "" or port is not None
    _validate_path(path, has_scheme=scheme != "", has_authority=has_authority)
    if scheme or has_authority:
        path = _normalize_path(path)
    return EndpointURL(
        scheme.lower(),
        userinfo,
        host,
        port,
        _quote(path, _PATH_SAFE),
        None if query is None else _quote(query, _QUERY_SAFE),
        None if fragment is None else _quote(fragment, _FRAG_SAFE),
    )


def _refuse_control_characters(text: str, message: str) -> None:
    for idx, char in enumerate(text):
        if char.isascii() and not char.isprintable():
            raise InvalidURL(message.format(char=char, idx=idx))


def _encode_host(host: str) -> str:
    if not host:
        return ""
    if _IPV4_STYLE.match(host):
        import ipaddress

        try:
            ipaddress.IPv4Address(host)
        except ipaddress.AddressValueError:
            raise InvalidURL(f"Invalid IPv4 address: {host!r}") from None
        return host
    if _IPV6_STYLE.match(host):
        import ipaddress

        try:
            ipaddress.IPv6Address(host[1:-1])
        except ipaddress.AddressValueError:
            raise InvalidURL(f"Invalid IPv6 address: {host!r}") from None
        return host[1:-1]
    if host.isascii():
        return _quote(host.lower(), _HOST_SAFE)
    import idna

    try:
        return idna.encode(host.lower()).decode("ascii")
    except idna.IDNAError:
        raise InvalidURL(f"Invalid IDNA hostname: {host!r}") from None


def _normalize_port(port: str | None, scheme: str) -> int | None:
    if port is None or port == "":
        return None
    try:
        number = int(port)
    except ValueError:
        raise InvalidURL(f"Invalid port: {port!r}") from None
    return None if number == _DEFAULT_PORTS.get(scheme) else number


def _validate_path(path: str, *, has_scheme: bool, has_authority: bool) -> None:
    if has_authority and path and not path.startswith("/"):
        raise InvalidURL("For absolute URLs, path must be empty or begin with '/'")
    if not has_scheme and not has_authority:
        if path.startswith("//"):
            raise InvalidURL("Relative URLs cannot have a path starting with '//'")
        if path.startswith(":"):
            raise InvalidURL("Relative URLs cannot have a path starting with ':'")


def _normalize_path(path: str) -> str:
    """``path`` without ``.`` and ``..`` segments (RFC 3986, 5.2.4)."""
    if "." not in path:
        return path
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    output: list[str] = []
    for segment in segments:
        if segment == ".":
            pass
        elif segment == "..":
            if output and output != [""]:
                output.pop()
        else:
            output.append(segment)
    return "/".join(output)


def _quote(text: str, safe: str) -> str:
    """``text`` percent-encoded (UTF-8) except for unreserved and ``safe`` characters, its
    existing ``%XX`` escapes kept as they are."""
    parts = []
    position = 0
    for match in _PERCENT_ENCODED.finditer(text):
        if match.start() != position:
            parts.append(_percent_encoded(text[position : match.start()], safe))
        parts.append(match.group(0))
        position = match.end()
    if position != len(text):
        parts.append(_percent_encoded(text[position:], safe))
    return "".join(parts)


def _percent_encoded(text: str, safe: str) -> str:
    kept = _UNRESERVED + safe
    if not text.rstrip(kept):
        return text
    return "".join(char if char in kept else "".join(f"%{byte:02X}" for byte in char.encode("utf-8")) for char in text)
