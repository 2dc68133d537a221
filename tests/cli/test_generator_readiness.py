"""Before the first paid request the generator under test says whether it can run: one free
``GET /models``; refusals exit 2 with nothing stored, a missing alias is only a warning."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support.chat_server import Fault


def configure(project: Path, base_url: str, *, key_env: str | None = "EVALKIT_TEST_KEY", model: str = "gpt-test") -> None:
    lines = ["[providers.prod]", 'adapter = "openai"', f'base_url = "{base_url}"', f'model = "{model}"', "max_attempts = 1"]
    if key_env is not None:
        lines.append(f'api_key_env = "{key_env}"')
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n")


def refused(result, project: Path) -> None:  # noqa: ANN001 - a CliResult
    assert result.code == 2, result.stdout + result.stderr
    assert 'provider instance "prod" is not ready, so nothing was run or stored' in result.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"


def test_an_unreachable_endpoint_is_refused_before_anything_is_stored(evalkit_cli, project) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configure(project, f"http://127.0.0.1:{port}/v1")
    result = evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_TEST_KEY": "k"})
    refused(result, project)
    assert "connection failed" in result.stderr
    # a refused connection is also a local server still starting: the option that waits is named
    assert "; use --wait-ready DURATION if the server is still starting" in result.stderr


def test_rejected_credentials_are_refused_after_one_free_request(evalkit_cli, project, chat_server) -> None:
    configure(project, chat_server.base_url)
    chat_server.fail_next(Fault.http_error(401))
    result = evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_TEST_KEY": "revoked"})
    refused(result, project)
    assert "HTTP 401" in result.stderr and "revoked" not in result.stderr
    assert "--wait-ready" not in result.stderr, "waiting cannot help refused credentials"
    assert [(r.method, r.path) for r in chat_server.requests] == [("GET", "/v1/models")]


def test_a_redirecting_endpoint_says_where_to_and_is_refused_before_anything_is_stored(evalkit_cli, project, chat_server) -> None:
    """A base_url answered with a redirect (http:// moved to https://, a gateway's new path) said
    only `HTTP 301 Moved Permanently: (empty body) (not retried)` in every case and exited 3 (an
    incomplete run). Redirects are still not followed (the key would go wherever they point): the
    probe says where to, escaped, and which base_url goes there; a misconfigured base_url is the
    configuration's fault, exit 2, nothing stored."""
    configure(project, chat_server.base_url)
    chat_server.fail_next(Fault.http_error(301, body="", location="https://api.example.com/v1/models"))
    result = evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_TEST_KEY": "k"})
    refused(result, project)
    assert "answered HTTP 301 Moved Permanently" in result.stderr
    assert '; redirected to "https://api.example.com/v1/models" (redirects are not followed)' in result.stderr
    assert '; set base_url to where it points: base_url = "https://api.example.com/v1"' in result.stderr
    assert [(r.method, r.path) for r in chat_server.requests] == [("GET", "/v1/models")], "not followed"
    # a relative Location is resolved against the request; one going elsewhere is shown as it is, escaped
    chat_server.fail_next(Fault.http_error(307, body="", location="/elsewhere\x1b[31m"))
    moved = evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_TEST_KEY": "k"})
    refused(moved, project)
    assert f'; redirected to "{chat_server.base_url.removesuffix("/v1")}/elsewhere%1B%5B31m" (redirects are not followed); set base_url to it' in moved.stderr
    assert "\x1b" not in moved.stderr


def test_an_unset_key_variable_is_refused_without_any_request(evalkit_cli, project, chat_server) -> None:
    configure(project, chat_server.base_url, key_env="EVALKIT_UNSET_KEY")
    result = evalkit_cli("run", "evalkit.smoke")
    refused(result, project)
    assert "EVALKIT_UNSET_KEY (api_key_env) is not set" in result.stderr
    assert chat_server.request_count == 0


def test_a_gateway_reporting_a_missing_key_as_500_is_recognised(evalkit_cli, project, chat_server) -> None:
    configure(project, chat_server.base_url, key_env=None)
    body = '{"error": {"message": "litellm.AuthenticationError: Missing API Key - no key passed in.", "code": "500"}}'
    chat_server.fail_next(Fault.http_error(500, body=body))
    result = evalkit_cli("run", "evalkit.smoke", env={"OPENAI_API_KEY": ""})
    refused(result, project)
    assert "HTTP 500" in result.stderr and "OPENAI_API_KEY is not set" in result.stderr


def test_an_alias_the_model_list_lacks_is_only_a_warning(evalkit_cli, project, chat_server) -> None:
    chat_server.pages["/v1/models"] = {"object": "list", "data": [{"id": "gpt-4o"}, {"id": "gpt-4o-mini"}]}
    configure(project, chat_server.base_url, key_env="")
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code in (0, 1), result.stdout + result.stderr  # the echo server's answers may fail checks
    assert 'the model "gpt-test" is not in the endpoint\'s model list (gpt-4o, gpt-4o-mini)' in result.stdout
    assert (project / ".evalkit" / "results.db").is_file()
    listed = evalkit_cli("run", "evalkit.smoke", "--model", "gpt-4o")
    assert "model list" not in listed.stdout


def test_wait_ready_waits_for_a_server_that_starts_after_the_command(evalkit_cli, project) -> None:
    """The README's local-model block starts the server in the background and runs evalkit at
    once: with --wait-ready the probe keeps asking until the port opens, then the run goes on."""
    import threading

    from tests.support.chat_server import ChatServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configure(project, f"http://127.0.0.1:{port}/v1", key_env="")
    server = ChatServer(port=port)
    starter = threading.Timer(1.5, server.start)
    starter.start()
    try:
        result = evalkit_cli("run", "evalkit.smoke", "--wait-ready", "60s")
    finally:
        starter.join()
        server.stop()
    assert result.code in (0, 1), result.stdout + result.stderr  # the echo server's answers may fail checks
    assert "Waiting up to 60 s for the generator to answer its readiness probe." in result.stderr
    assert "is not ready" not in result.stderr
    assert (project / ".evalkit" / "results.db").is_file()
    assert [r.path for r in server.requests][0] == "/v1/models"


def test_wait_ready_gives_up_after_its_duration_and_says_how_long_it_waited(evalkit_cli, project, chat_server) -> None:
    configure(project, chat_server.base_url, key_env="")
    chat_server.fail_next(Fault.http_error(401), count=100)
    result = evalkit_cli("run", "evalkit.smoke", "--wait-ready", "2s")
    assert result.code == 2, result.stdout + result.stderr
    assert 'provider instance "prod" is not ready after waiting 2 s, so nothing was run or stored' in result.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"
    assert 2 <= len(chat_server.requests) < 100, "asked again while waiting, with a pause between"


def test_a_bad_wait_ready_duration_is_a_usage_error(evalkit_cli, project, chat_server) -> None:
    configure(project, chat_server.base_url, key_env="")
    result = evalkit_cli("run", "evalkit.smoke", "--wait-ready", "soon")
    assert result.code == 2
    assert '--wait-ready must be a duration from 1 ms to 7 days (' in result.stderr and 'got "soon"' in result.stderr
    assert chat_server.request_count == 0 and not (project / ".evalkit").exists()
