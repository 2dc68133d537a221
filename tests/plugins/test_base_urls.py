"""The ``openai`` generator on ordinary and hostile ``base_url`` values: each is refused with a
configuration error that names the option and never echoes the URL, or becomes a request target,
Host and display URL that carry nothing a request line cannot (no space, no control character, no
line break to inject a header), with the query kept as the secrets the generator declares."""

from __future__ import annotations

import pytest
from evalkit.errors import ConfigError
from evalkit_plugins.openai import OpenAIGenerator, OpenAIOptions

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


def shown(text: str) -> str:
    return text if len(text) < 80 else f"{text[:60]!r}… ({len(text)} chars)"


def wire_safe(text: str) -> bool:
    """Printable ASCII without spaces: what a request line or a Host header can carry."""
    return text.isascii() and text.isprintable() and " " not in text


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("base_url", BASE_URLS, ids=shown)
def test_a_base_url_is_refused_naming_the_option_or_sent_as_only_wire_safe_bytes(base_url: str) -> None:
    try:
        generator = OpenAIGenerator(OpenAIOptions(base_url=base_url, model="m", api_key_env=""))
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith('Option "base_url" of the openai generator ')
        assert "h/" not in message and "pw" not in message and len(message) < 400  # the URL is not echoed
        return
    url = generator._url
    assert url.scheme in ("http", "https") and url.raw_host
    for sent in (url.raw_path_qs, url.raw_authority, generator._models_url.raw_path_qs, generator.base_url):
        assert wire_safe(sent), sent[:200]
    assert url.raw_path.endswith("/chat/completions") and generator._models_url.raw_path.endswith("/models")
    assert url.raw_query_string == generator._models_url.raw_query_string  # the query follows every path
    assert "?" not in generator.base_url and "#" not in generator.base_url
    if url.raw_query_string:
        assert url.raw_query_string in generator.secret_values()


@pytest.mark.parametrize(
    ("base_url", "wording"),
    [
        ("http://h:x/v1", "must be an http:// or https:// URL"),
        ("ftp://h/v1", "must be an http:// or https:// URL"),
        ("http:///v1", "must be an http:// or https:// URL"),
        ("http://h/\x00", "must be an http:// or https:// URL"),
        ("http://h/v1\r\nX-Injected: 1", "must be an http:// or https:// URL"),
        ("http://a b/v1", "must be an http:// or https:// URL"),
        ("http://h:0/v1", "has port 0; a TCP port is 1 to 65535"),
        ("http://h:65536/v1", "has port 65536; a TCP port is 1 to 65535"),
        ("https://user:s3cret@h/v1", "must not carry user info"),
        ("http://:s3cret@h/v1", "must not carry user info"),
    ],
)
def test_the_config_errors_name_the_option_and_never_echo_the_url(base_url: str, wording: str) -> None:
    with pytest.raises(ConfigError, match=wording) as caught:
        OpenAIGenerator(OpenAIOptions(base_url=base_url, model="m"))
    assert 'Option "base_url" of the openai generator' in str(caught.value) and "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("base_url", "target", "shown_as"),
    [
        ("https://api.openai.com/v1", "/v1/chat/completions", "https://api.openai.com/v1"),
        ("HTTPS://API.Example.COM/V1/", "/V1/chat/completions", "https://api.example.com/V1/"),
        ("https://münchen.de/v1", "/v1/chat/completions", "https://xn--mnchen-3ya.de/v1"),
        ("http://[::1]:8080/v1", "/v1/chat/completions", "http://[::1]:8080/v1"),
        ("https://gw.example/openai/deployments/d?api-version=2024-02-01", "/openai/deployments/d/chat/completions?api-version=2024-02-01", "https://gw.example/openai/deployments/d"),
        ("http://h/a%2Fb/v1", "/a%2Fb/v1/chat/completions", "http://h/a%2Fb/v1"),
        ("http://h/é/v1", "/%C3%A9/v1/chat/completions", "http://h/%C3%A9/v1"),
        ("http://h/a/./b/../v1", "/a/v1/chat/completions", "http://h/a/v1"),
    ],
)  # fmt: skip
def test_what_is_sent_and_shown_for_a_base_url(base_url: str, target: str, shown_as: str) -> None:
    generator = OpenAIGenerator(OpenAIOptions(base_url=base_url, model="m", api_key_env=""))
    assert (generator._url.raw_path_qs, generator.base_url) == (target, shown_as)
