"""The ``openai`` generator over TLS (a certificate made for the test, trusted through ``ca_bundle``
or ``SSL_CERT_FILE``, refused without them) and through a forward proxy named by the environment."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
import trustme
from evalkit.answers import GenerationRequest
from evalkit.errors import ConfigError, GenerationError
from evalkit_plugins.openai import OpenAIGenerator, OpenAIOptions

from tests.support.chat_server import ChatServer
from tests.support.forward_proxy import ForwardProxy
from tests.support.tls import write_ca_bundle

KEY = "sk-tls-proxy-0123456789abcdef"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_TLS_KEY", KEY)
    for name in (*PROXY_VARIABLES, *(n.upper() for n in PROXY_VARIABLES), "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ca_bundle(authority: trustme.CA, tmp_path: Path) -> Path:
    return write_ca_bundle(authority, tmp_path / "local-ca.pem")


def make(server: ChatServer, **options: object) -> OpenAIGenerator:
    settings: dict[str, object] = {
        "base_url": server.base_url, "model": "m", "api_key_env": "EVALKIT_TLS_KEY", "max_attempts": 2, "backoff_base": 0.01,
    }  # fmt: skip
    settings.update(options)
    return OpenAIGenerator(OpenAIOptions(**settings))


def ask(generator: OpenAIGenerator, prompt: str = "hello") -> object:
    """The answer to one prompt, or the GenerationError it ends in."""

    async def run() -> object:
        try:
            return await generator.agenerate(GenerationRequest(prompt))
        except GenerationError as exc:
            return exc
        finally:
            await generator.aclose()

    return asyncio.run(run())


# --- TLS ---------------------------------------------------------------------------------------


def test_an_https_endpoint_is_trusted_through_ca_bundle(https_chat_server: ChatServer, ca_bundle: Path) -> None:
    generator = make(https_chat_server, ca_bundle=str(ca_bundle))
    assert generator.check_ready() == []
    assert ask(generator, "over TLS").text == "over TLS"  # type: ignore[attr-defined]
    assert [(r.method, r.path) for r in https_chat_server.requests] == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    assert https_chat_server.requests[1].headers["authorization"] == f"Bearer {KEY}"
    assert generator.redacted_options()["ca_bundle"] == str(ca_bundle)


def test_an_https_endpoint_is_trusted_through_ssl_cert_file(
    https_chat_server: ChatServer, ca_bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_bundle))
    generator = make(https_chat_server)
    assert generator.check_ready() == []
    assert ask(generator).text == "hello"  # type: ignore[attr-defined]


def test_a_certificate_nobody_vouches_for_is_refused_saying_how_to_trust_it(https_chat_server: ChatServer) -> None:
    generator = make(https_chat_server)
    with pytest.raises(GenerationError) as refused:
        generator.check_ready()
    message = str(refused.value)
    assert f"GET {https_chat_server.base_url}/models: connection failed (ConnectError: " in message
    assert "CERTIFICATE_VERIFY_FAILED" in message and "ca_bundle option" in message and "SSL_CERT_FILE" in message
    error = ask(generator)
    assert isinstance(error, GenerationError) and "failed after 2 attempts" in str(error) and "ConnectError" in str(error)
    assert https_chat_server.request_count == 0


def test_a_ca_bundle_of_another_authority_is_no_trust(https_chat_server: ChatServer, tmp_path: Path) -> None:
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    with pytest.raises(GenerationError, match="CERTIFICATE_VERIFY_FAILED"):
        make(https_chat_server, ca_bundle=str(other)).check_ready()


def test_a_ca_bundle_replaces_the_system_store_rather_than_adding_to_it(ca_bundle: Path) -> None:
    import ssl

    generator = OpenAIGenerator(OpenAIOptions(base_url="https://api.openai.com/v1", model="m", ca_bundle=str(ca_bundle)))
    context = generator._post_settings.tls
    assert isinstance(context, ssl.SSLContext) and context.cert_store_stats()["x509_ca"] == 1


# --- proxies -----------------------------------------------------------------------------------


def test_an_http_endpoint_is_reached_through_http_proxy_in_absolute_form(
    chat_server: ChatServer, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    generator = make(chat_server)
    assert generator.check_ready() == []
    assert ask(generator, "proxied").text == "proxied"  # type: ignore[attr-defined]
    origin = chat_server.base_url
    assert proxy.forwarded == [f"GET {origin}/models", f"POST {origin}/chat/completions"]
    assert proxy.tunnels == []
    assert chat_server.requests[1].headers["authorization"] == f"Bearer {KEY}"


def test_an_https_endpoint_is_reached_through_https_proxy_in_a_connect_tunnel(
    https_chat_server: ChatServer, ca_bundle: Path, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    generator = make(https_chat_server, ca_bundle=str(ca_bundle))
    assert generator.check_ready() == []
    assert ask(generator, "tunnelled").text == "tunnelled"  # type: ignore[attr-defined]
    assert proxy.tunnels == [f"127.0.0.1:{https_chat_server.port}"] * 2  # the probe's session, then the run's
    assert proxy.forwarded == []  # the key went inside the tunnel, never to the proxy
    assert all("authorization" not in seen.headers for seen in proxy.seen)


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "*", "localhost,127.0.0.1"])
def test_no_proxy_naming_the_host_bypasses_the_proxy(
    chat_server: ChatServer, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, no_proxy: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    generator = make(chat_server)
    assert generator.check_ready() == []
    assert ask(generator).text == "hello"  # type: ignore[attr-defined]
    assert proxy.seen == [] and chat_server.request_count == 2


def test_proxy_credentials_are_sent_to_the_proxy_only_and_kept_secret(
    chat_server: ChatServer, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url.replace("http://", "http://team:proxy-pw-5a6b7c8d@"))
    generator = make(chat_server)
    assert ask(generator).text == "hello"  # type: ignore[attr-defined]
    (seen,) = proxy.seen
    assert seen.headers["proxy-authorization"].startswith("Basic ")
    assert "proxy-authorization" not in chat_server.requests[0].headers
    assert "proxy-pw-5a6b7c8d" in generator.secret_values()


def test_a_proxy_that_refuses_connections_is_named(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    generator = make(chat_server)
    with pytest.raises(GenerationError, match=r"/v1/models: connection failed \(ProxyError: "):
        generator.check_ready()
    error = ask(generator)
    assert isinstance(error, GenerationError) and "connection failed (ProxyError: " in str(error)
    assert chat_server.request_count == 0


def test_a_proxy_evalkit_cannot_speak_to_is_a_config_error(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ConfigError, match=r"the proxy the environment names for http:// URLs .* is not an http:// proxy \(scheme 'socks5'\)"):
        make(chat_server)
