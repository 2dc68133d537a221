"""A forward HTTP proxy on 127.0.0.1 that counts what passes through it, stdlib only.

It speaks the two forms a client uses with a proxy: ``CONNECT host:port`` opens a tunnel (the
client then speaks TLS to the origin through it, so an https endpoint is reached), and an
absolute-form request (``POST http://host:port/v1/chat/completions HTTP/1.1``) is forwarded to the
origin in origin form, one request per connection (``Connection: close`` both ways)::

    with ForwardProxy() as proxy:
        ...  # HTTPS_PROXY=proxy.url
        assert proxy.tunnels == ["127.0.0.1:8443"]
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

__all__ = ["ForwardProxy", "PassedThrough"]


class PassedThrough:
    """One request the proxy saw: its method, its target as sent (``host:port`` for a tunnel, the
    absolute URL otherwise) and its head's fields, lower-cased."""

    __slots__ = ("method", "target", "headers")

    def __init__(self, method: str, target: str, headers: dict[str, str]) -> None:
        self.method = method
        self.target = target
        self.headers = headers

    def __repr__(self) -> str:
        return f"<{self.method} {self.target}>"


class ForwardProxy:
    """The proxy, on its own event loop in a background thread; ``url`` is what ``HTTPS_PROXY`` names."""

    def __init__(self) -> None:
        self.port = 0
        self.seen: list[PassedThrough] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def tunnels(self) -> list[str]:
        """The ``host:port`` of every ``CONNECT``, in order."""
        with self._lock:
            return [p.target for p in self.seen if p.method == "CONNECT"]

    @property
    def forwarded(self) -> list[str]:
        """``METHOD absolute-URL`` of every request forwarded in absolute form, in order."""
        with self._lock:
            return [f"{p.method} {p.target}" for p in self.seen if p.method != "CONNECT"]

    def __enter__(self) -> ForwardProxy:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="forward-proxy", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def _run(self, ready: threading.Event) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        with self._lock:
            self.seen.append(PassedThrough(method, target, headers))
        with _closing(writer):
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                with _closing(upstream_writer):
                    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
                return
            parts = urlsplit(target)
            length = int(headers.get("content-length") or 0)
            body = await reader.readexactly(length) if length else b""
            kept = [line for line in lines if not line.lower().startswith(("proxy-", "connection:"))]
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            forwarded = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""]).encode("latin-1")
            upstream_reader, upstream_writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
            with _closing(upstream_writer):
                upstream_writer.write(forwarded + body)
                await _pipe(upstream_reader, writer)


@contextmanager
def _closing(writer: asyncio.StreamWriter) -> Iterator[None]:
    try:
        yield
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        pass
    finally:
        writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until the end, then end ``writer``'s side."""
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()
