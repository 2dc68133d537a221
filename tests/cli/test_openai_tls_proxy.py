"""`evalkit run` against an https endpoint (a certificate made in the test) and through a forward
proxy, with the endpoint named in evalkit.toml: trusted through ``ca_bundle`` or ``SSL_CERT_FILE``,
refused before anything is stored without them; ``HTTPS_PROXY``/``HTTP_PROXY`` honoured, ``NO_PROXY``
bypassing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.chat_server import ChatServer
from tests.support.tls import write_ca_bundle

KEY = "sk-cli-tls-SECRET-0123456789"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def cli(evalkit_cli, monkeypatch: pytest.MonkeyPatch):
    """``evalkit`` with none of the machine's proxy variables (a machine's certificate variables
    may stay: they never trust the authority made here), the key set, plus ``env``."""
    for name in (*PROXY_VARIABLES, *(n.upper() for n in PROXY_VARIABLES)):
        monkeypatch.delenv(name, raising=False)  # an empty http_proxy would cancel HTTP_PROXY

    def run(*args: str, env: dict[str, str] | None = None):
        return evalkit_cli(*args, env={"EVALKIT_TEST_KEY": KEY, **(env or {})}, timeout=120)

    return run


def configure(project: Path, server: ChatServer, *, ca_bundle: str | None = None) -> None:
    lines = [
        "[providers.secure]",
        'adapter = "openai"',
        f'base_url = "{server.base_url}"',
        'model = "gpt-test"',
        'api_key_env = "EVALKIT_TEST_KEY"',
        "max_attempts = 2",
        "backoff_base = 0.01",
        "timeout = 10",
    ]
    if ca_bundle is not None:
        lines.append(f'ca_bundle = "{ca_bundle}"')
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n")


def answered_all(result) -> int:  # noqa: ANN001 - a CliResult
    """How many prompts the run answered, each of them (the echo server's answers may fail checks:
    the run's exit code is 0 or 1, never 2 or 3)."""
    assert result.code in (0, 1), result.stdout + result.stderr
    document = result.json()
    assert document["errored"] == 0 and document["answered"] == len(document["cases"]) > 0
    return document["answered"]


# --- TLS ---------------------------------------------------------------------------------------


def test_a_ca_bundle_next_to_the_config_makes_the_endpoint_trusted(cli, project, https_chat_server, authority) -> None:
    write_ca_bundle(authority, project / "certs.pem")
    configure(project, https_chat_server, ca_bundle="certs.pem")  # relative to evalkit.toml
    answered_all(cli("run", "evalkit.smoke", "--provider", "secure", "--json"))
    assert [(r.method, r.path) for r in https_chat_server.requests][:2] == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    assert https_chat_server.requests[1].headers["authorization"] == f"Bearer {KEY}"


def test_a_ca_bundle_outside_the_project_is_used_where_it_is(cli, project, https_chat_server, authority, tmp_path) -> None:
    # The system's own bundles live in /etc/ssl: a CA bundle is trusted, never quoted, stored or
    # sent, so the rule that keeps files outside the project unread does not apply to it.
    (tmp_path / "elsewhere").mkdir()
    bundle = write_ca_bundle(authority, tmp_path / "elsewhere" / "ca.pem")
    configure(project, https_chat_server, ca_bundle=str(bundle))
    answered_all(cli("run", "evalkit.smoke", "--provider", "secure", "--json"))


def test_ssl_cert_file_makes_the_endpoint_trusted(cli, project, https_chat_server, authority, tmp_path) -> None:
    configure(project, https_chat_server)
    bundle = write_ca_bundle(authority, tmp_path / "ca.pem")
    answered_all(cli("run", "evalkit.smoke", "--provider", "secure", "--json", env={"SSL_CERT_FILE": str(bundle)}))


def test_an_untrusted_certificate_is_refused_before_anything_is_stored(cli, project, https_chat_server) -> None:
    configure(project, https_chat_server)
    result = cli("run", "evalkit.smoke", "--provider", "secure")
    assert result.code == 2, result.stdout + result.stderr
    assert 'provider instance "secure" is not ready, so nothing was run or stored' in result.stderr
    assert "connection failed (ConnectError: " in result.stderr and "CERTIFICATE_VERIFY_FAILED" in result.stderr
    assert "ca_bundle option" in result.stderr and "SSL_CERT_FILE" in result.stderr
    assert KEY not in result.stdout + result.stderr
    assert not (project / ".evalkit").exists()
    assert https_chat_server.request_count == 0


def test_a_ca_bundle_that_is_not_there_is_refused_naming_it(cli, project, https_chat_server) -> None:
    configure(project, https_chat_server, ca_bundle="missing.pem")
    result = cli("run", "evalkit.smoke", "--provider", "secure")
    assert result.code == 2, result.stdout + result.stderr
    assert 'provider instance "secure" ("openai"): Option "ca_bundle" of the openai generator:' in result.stderr
    assert "missing.pem" in result.stderr and "No such file or directory" in result.stderr
    assert https_chat_server.request_count == 0 and not (project / ".evalkit").exists()


# --- proxies -----------------------------------------------------------------------------------


def test_https_proxy_tunnels_to_the_https_endpoint(cli, project, https_chat_server, authority, proxy) -> None:
    write_ca_bundle(authority, project / "certs.pem")
    configure(project, https_chat_server, ca_bundle="certs.pem")
    answered = answered_all(cli("run", "evalkit.smoke", "--provider", "secure", "--json", env={"HTTPS_PROXY": proxy.url}))
    assert set(proxy.tunnels) == {f"127.0.0.1:{https_chat_server.port}"} and proxy.forwarded == []
    assert https_chat_server.request_count == 1 + answered  # the readiness probe and the prompts


def test_http_proxy_forwards_to_the_http_endpoint(cli, project, chat_server, proxy) -> None:
    configure(project, chat_server)
    answered = answered_all(cli("run", "evalkit.smoke", "--provider", "secure", "--json", env={"HTTP_PROXY": proxy.url}))
    assert proxy.forwarded[0] == f"GET {chat_server.base_url}/models"
    assert proxy.forwarded[1:] == [f"POST {chat_server.base_url}/chat/completions"] * answered


def test_no_proxy_bypasses_the_proxy(cli, project, chat_server, proxy) -> None:
    configure(project, chat_server)
    env = {"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"}
    answered = answered_all(cli("run", "evalkit.smoke", "--provider", "secure", "--json", env=env))
    assert proxy.seen == [] and chat_server.request_count == 1 + answered
