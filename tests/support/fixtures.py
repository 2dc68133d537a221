"""Pytest fixtures around :class:`~tests.support.chat_server.ChatServer`.

Register them with ``pytest_plugins = ["tests.support.fixtures"]`` in the top-level ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.chat_server import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A fresh chat-completions server on 127.0.0.1 for one test: no delay, echoes the last user message.

    Reassign ``responder``, ``model`` or ``delay`` and script faults with ``fail_at`` / ``fail_next``.
    """
    with ChatServer() as server:
        yield server
