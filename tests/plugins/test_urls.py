"""``EndpointURL`` against ``httpx.URL``, on ordinary and hostile base URLs: the same bytes or the same refusal.

The first half compares the two types component by component and through every ``copy_with`` the
``openai`` generator makes; the second compares what the generator derives from a ``base_url``
(what it sends, shows and keeps secret, or how it refuses) with what it derived when it parsed
the URL with httpx.
"""

from __future__ import annotations

from urllib.parse import quote, quote_plus

import httpx
import pytest
from evalkit.errors import ConfigError
from evalkit_plugins._http11 import origin_of
from evalkit_plugins._urls import EndpointURL, InvalidURL
from evalkit_plugins.openai import OpenAIGenerator, _httpx_url

BASE_URLS = [
    # ordinary
    "https://api.openai.com/v1",
    "http://127.0.0.1:8080/v1",
    "http://localhost:11434/v1/",
    "https://gw.example/openai/deployments/gpt-4o/?api-version=2024-02-01",
    "http://[::1]:8080/v1",
    "https://[2001:db8::1]/v1",
    "http://[fe80::1%25eth0]:8080/v1",
    "http://h",
    "http://h?x",
    "http://h/v1?",
    "http://h/v1#",
    "http://h/v1#frag",
    "http://h/v1?a=b#f",
    "http://h/v1//",
    "http://h//v1",
    # upper case, default ports
    "HTTPS://API.Example.COM/V1",
    "HTTP://Example.com:80/v1",
    "http://example.com:80/v1",
    "https://example.com:443/",
    "http://example.com:443/",
    "hTTp://h:8080/v1",
    # unicode hosts
    "https://münchen.de/v1",
    "HTTPS://MÜNCHEN.DE/v1",
    "http://faß.de/v1",
    "http://中国.icom.museum/v1",
    "http://xn--mnchen-3ya.de/v1",
    "http://www.xn--mnchen-3ya.de/v1",
    "http://😀.com/v1",
    "http://ü..de/",
    "http://Ⅷ.example/",
    "http://straße.de:8443/v1",
    # percent signs and encodings in the path
    "http://h/a%20b",
    "http://h/a%3Fb",
    "http://h/a%23b",
    "http://h/a%2Fb/",
    "http://h/%2e%2e/x",
    "http://h/%2E/x",
    "http://h/%",
    "http://h/100%/v1",
    "http://h/a%2541",
    "http://h/a%zz",
    "http://h/a%7e%7E",
    "http://h/%00/v1",
    "http://h/%0d%0aX:1",
    "http://h/é ü/v1",
    'http://h/a"<>`{}|\\^/v1',
    # dot segments
    "http://h/a/./b/../c",
    "http://h/..",
    "http://h/v1/.",
    "http://h/v1/..",
    # spaces
    "http://a b/v1",
    "http://h/a b/",
    "http://h/v1?q=a b",
    " http://h/v1",
    "http://h/v1 ",
    # queries
    "http://h/v1?code=s3cr%26t&api-version=2024-02-01",
    "http://h/v1?a=1&a=2&b=&c",
    "http://h/v1?q=é&r=ü+x",
    "http://h/v1?=x&&y==",
    "http://h/v1?k=%zz&x=%41",
    "http://h/v1?a=%2B%20+&b=%25",
    "http://h/v1?a#b?c",
    "http://h/v1?<script>&\"'",
    # ports
    "http://h:0/v1",
    "http://h:1/v1",
    "http://h:65535/v1",
    "http://h:65536/v1",
    "http://h:-1/v1",
    "http://h: 80/v1",
    "http://h:+8080/v1",
    "http://h:٣/v1",
    "http://h:1_0/v1",
    "http://h:x/v1",
    "http://h:/v1",
    "http://h:99999999999999999999/v1",
    "http://h:80:80/v1",
    # IP addresses
    "http://1.2.3.999/v1",
    "http://999.1.1.1/",
    "http://1.2.3/v1",
    "http://[zz]/",
    "http://[::1/",
    "http://::1/",
    "http://[::1]x/",
    # user info
    "https://user:pw@h/v1",
    "http://user@h/v1",
    "http://@h/v1",
    "http://a@b@h/",
    "http://:pw@h/v1",
    # no host, or not http(s)
    "http:///v1",
    "http:h/v1",
    "http:/h/v1",
    "http://:80/v1",
    "http://?x",
    "/v1",
    "h/v1",
    "//h/v1",
    "",
    "http:",
    "http://",
    "ftp://example.com/v1",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "mailto:x@example.com",
    "1http://h/",
    "ht tp://h/",
    # control characters
    "http://h/\x00",
    "http://h\t/v1",
    "http://h/v1\r\nX-Injected: 1",
    "http://h/\x7f",
    "\x1bhttp://h/",
    "http://h/\x85",
    "http://h/v1?\u2028",
    "http://h/\ud800",
    # very long
    "http://h/" + "a" * 70000,
    "http://h/" + "a" * 65000,
    "http://h/" + "é" * 30000,
    "http://h/v1?q=" + "é" * 30000,
    "http://h/" + "é" * 7000 + "?q=" + "é" * 7000,  # each part under 64 KiB encoded, the whole URL over
    "http://" + "a" * 300 + ".example/v1",
    "http://" + "ü" * 70 + ".example/v1",
    "http://h/" + "%2e%2e/" * 50,
]


def outcome(function, *args):
    """``function(*args)``, or the name and message of what it raised."""
    try:
        return function(*args)
    except Exception as exc:  # InvalidURL and whatever else escapes either parser
        return (type(exc).__name__, str(exc))


def theirs(url: httpx.URL) -> tuple:
    return (
        url.scheme,
        url.userinfo.decode(),
        url.raw_host.decode(),
        url.port,
        url.netloc.decode(),
        url.path,
        url.raw_path,
        url.query.decode(),
        str(url),
    )


def ours(url: EndpointURL) -> tuple:
    return (
        url.scheme,
        url.userinfo,
        url.host,
        url.port,
        url.netloc,
        url.decoded_path,
        url.raw_path,
        url.query or "",
        str(url),
    )


def shown(text: str) -> str:
    return text if len(text) < 80 else f"{text[:60]!r}… ({len(text)} chars)"


@pytest.mark.parametrize("base_url", BASE_URLS, ids=shown)
def test_a_url_parses_to_what_httpx_makes_of_it_or_is_refused_alike(base_url: str) -> None:
    assert outcome(lambda: ours(EndpointURL.parse(base_url))) == outcome(lambda: theirs(httpx.URL(base_url)))


@pytest.mark.parametrize("base_url", BASE_URLS, ids=shown)
def test_every_copy_the_generator_makes_matches_httpxs(base_url: str) -> None:
    """The copies ``openai`` makes, in its order (fragment and query dropped, ``/chat/completions``,
    ``/models`` and ``/props``), each through the same re-validation httpx applies; the first
    refusal ends the chain, as it ends the generator's construction."""
    try:
        their, our = {"given": httpx.URL(base_url)}, {"given": EndpointURL.parse(base_url)}
    except (httpx.InvalidURL, UnicodeError):
        return
    copies = [
        ("base", "given", lambda url: url.copy_with(fragment=None)),
        ("shown", "base", lambda url: url.copy_with(query=None, fragment=None)),
        ("chat", "base", lambda url: url.copy_with(path=url.path.rstrip("/") + "/chat/completions")),
        ("models", "chat", lambda url: url.copy_with(path=url.path.removesuffix("/chat/completions") + "/models")),
        ("props", "chat", lambda url: url.copy_with(path="/props")),
    ]
    for name, source, step in copies:
        their_copy = outcome(step, their[source])
        if not isinstance(their_copy, httpx.URL):
            assert outcome(step, Decoded(our[source])) == their_copy
            return
        our_copy = step(Decoded(our[source]))
        assert ours(our_copy) == theirs(their_copy)
        assert _httpx_url(our_copy) == their_copy  # what the proxy path hands to httpx
        their[name], our[name] = their_copy, our_copy


class Decoded:
    """An ``EndpointURL`` seen through httpx's names (``path`` decoded), so one step serves both types."""

    def __init__(self, url: EndpointURL) -> None:
        self.url = url
        self.path = url.decoded_path

    def copy_with(self, **components: str | None) -> EndpointURL:
        return self.url.copy_with(**components)


def test_invalid_url_keeps_httpxs_class_name() -> None:
    with pytest.raises(InvalidURL, match="Invalid port: 'x'"):
        EndpointURL.parse("http://h:x/")
    assert InvalidURL.__name__ == httpx.InvalidURL.__name__


# --- the generator: what it sends, shows and keeps secret, or how it refuses ----------------------


def the_generator_with_httpx(base_url: str) -> object:
    """What ``OpenAIGenerator`` derived from ``base_url`` when it parsed it with ``httpx.URL``
    (the code before ``EndpointURL``): the refusal, or the displayed URL, the POST's origin
    (httpx's own transport connects to ``raw_host``), target and Host header, the GETs'
    targets, and the query values kept secret."""
    try:
        parsed = httpx.URL(base_url)
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        return "refused: not an http(s) URL"
    if parsed.userinfo:
        return "refused: user info"
    if parsed.port is not None and not 0 < parsed.port <= 65535:  # a departure: httpx connected and failed
        return "refused: no TCP port"
    base = parsed.copy_with(fragment=None)
    display = str(base.copy_with(query=None, fragment=None))
    url = base.copy_with(path=base.path.rstrip("/") + "/chat/completions")
    models = url.copy_with(path=url.path.removesuffix("/chat/completions") + "/models")
    origin = (url.scheme, url.raw_host.decode(), url.port or {"http": 80, "https": 443}[url.scheme])
    secrets = {base.query.decode("ascii", "replace")}
    for _, value in base.params.multi_items():
        secrets.update((value, quote(value, safe=""), quote_plus(value)))
    return (
        display,
        origin,
        url.raw_path,
        url.netloc.decode(),
        models.raw_path,
        url.copy_with(path="/props").raw_path,
        secrets - {""},
    )


def the_generator(base_url: str) -> object:
    try:
        generator = OpenAIGenerator(base_url=base_url, model="m", api_key_env="")
    except ConfigError as exc:
        if "a TCP port is 1 to 65535" in str(exc):
            return "refused: no TCP port"
        return "refused: user info" if "user info" in str(exc) else "refused: not an http(s) URL"
    url = generator._url
    models = url.copy_with(path=url.decoded_path.removesuffix("/chat/completions") + "/models")
    props = url.copy_with(path="/props").raw_path
    return (
        generator.base_url,
        origin_of(url),
        url.raw_path,
        url.netloc,
        models.raw_path,
        props,
        set(generator.secret_values()),
    )


@pytest.mark.parametrize("base_url", BASE_URLS, ids=shown)
def test_the_generator_sends_shows_and_hides_what_it_did_with_httpx(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert outcome(the_generator, base_url) == outcome(the_generator_with_httpx, base_url)


def test_the_config_errors_name_the_option_and_never_echo_the_url() -> None:
    for base_url, wording in [
        ("http://h:x/v1", "must be an http:// or https:// URL"),
        ("ftp://h/v1", "must be an http:// or https:// URL"),
        ("http:///v1", "must be an http:// or https:// URL"),
        ("http://h/\x00", "must be an http:// or https:// URL"),
        ("https://user:s3cret@h/v1", "must not carry user info"),
    ]:
        with pytest.raises(ConfigError, match=wording) as caught:
            OpenAIGenerator(base_url=base_url, model="m")
        assert 'Option "base_url" of the openai generator' in str(caught.value) and "s3cret" not in str(caught.value)
