"""Fixtures of the https and proxy tests (the ``openai`` generator's and the CLI's): a certificate
authority no system trusts, a chat server serving https with its certificate, a forward proxy.
Registered for every test by the root conftest (``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trustme

from tests.support.chat_server import ChatServer
from tests.support.forward_proxy import ForwardProxy
from tests.support.tls import https_chat_server as serving_https

__all__ = ["authority", "https_chat_server", "proxy"]


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    """A certificate authority no system trusts."""
    return trustme.CA()


@pytest.fixture
def https_chat_server(authority: trustme.CA) -> Iterator[ChatServer]:
    """The chat server, over https with a certificate ``authority`` signed."""
    with serving_https(authority) as server:
        yield server


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    """A forward proxy on 127.0.0.1 (CONNECT and plain requests), counting what passes."""
    with ForwardProxy() as running:
        yield running
