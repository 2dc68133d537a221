"""An https chat server with a certificate made for the test, and the certificate authority that
signed it (``trustme``: no key is committed, none outlives the test)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trustme

from tests.support.chat_server import ChatServer

__all__ = ["https_chat_server", "write_ca_bundle"]


def write_ca_bundle(authority: trustme.CA, path: Path) -> Path:
    """The authority's certificate as a PEM file at ``path``: what ``ca_bundle`` or ``SSL_CERT_FILE`` names."""
    authority.cert_pem.write_to_path(str(path))
    return path


@contextmanager
def https_chat_server(authority: trustme.CA) -> Iterator[ChatServer]:
    """A chat server on ``https://127.0.0.1:PORT/v1`` whose certificate ``authority`` signed (for
    ``127.0.0.1`` and ``localhost``), which no system trusts."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    with ChatServer(ssl_context=context) as server:
        yield server
