"""Serving the viewer: bind a socket, say where, and run uvicorn until Ctrl-C.

The socket is bound before uvicorn starts, so ``--port 0`` (a free port) gives its real port to
the ``Host`` check and to the address printed; the printed line means the server accepts
connections (they wait in the socket's backlog until uvicorn answers them). uvicorn's access log
is off: the first request of a token-guarded viewer carries the token in its address.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable
from typing import Any

import attrs

from .settings import LOOPBACK_HOSTS

__all__ = ["ServeOptions", "allowed_hosts_for", "is_loopback", "serve"]

#: Host names meaning every interface.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


@attrs.frozen
class ServeOptions:
    """How ``evalkit view`` serves: where, with which token, over which store and configuration;
    ``announce`` says a line for people as soon as it is called (the address: a caller waits for
    it), ``warn`` one that is not the output (default: printed on standard output and error)."""

    database_url: str
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    open_browser: bool = False
    config: Any = None
    store_options: tuple[str, ...] = ()
    announce: Callable[[str], None] = attrs.field(default=lambda text: print(text, flush=True))
    warn: Callable[[str], None] = attrs.field(default=lambda text: print(text, file=sys.stderr))


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address or ``localhost`` (only this machine can connect)."""
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts_for(host: str) -> frozenset[str] | None:
    """The names a ``Host`` header may give for a server bound to ``host``: the loopback names for
    a loopback address, any for every interface (``None``; a token guards it), else ``host`` itself."""
    if host in WILDCARD_HOSTS:
        return None
    if is_loopback(host):
        return LOOPBACK_HOSTS | {host.lower()}
    return frozenset({host.lower().strip("[]")})


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host`` and ``port``; :class:`OSError` when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host and ":" not in host and not _is_ip(host):
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    return socket.create_server((host, port), family=family, reuse_port=False)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def address(host: str, port: int) -> str:
    """``http://host:port/`` (an IPv6 address in brackets; every interface shown as the loopback one)."""
    shown = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"


def serve(options: ServeOptions) -> int:
    """Serve until Ctrl-C or SIGTERM; 0 (stopping is how a server ends). An address that cannot be bound raises
    :class:`~evalkit.errors.UsageError`; a store that cannot be read,
    :class:`~evalkit.errors.StorageError` (nothing is served)."""
    import uvicorn

    from . import create_app

    try:
        sock = _bind(options.host, options.port)
    except OSError as exc:
        from ..errors import UsageError

        hint = " (choose another with --port, or --port 0 for a free one)" if options.port else ""
        raise UsageError(f"cannot listen on {options.host} port {options.port}: {exc.strerror or exc}{hint}") from None
    port = sock.getsockname()[1]
    try:
        app = create_app(
            options.database_url, options.token, allowed_hosts=allowed_hosts_for(options.host), port=port,
            config=options.config, store_options=options.store_options,
        )  # fmt: skip
    except BaseException:
        sock.close()
        raise
    from urllib.parse import quote

    from ..storage.urls import redact_url

    url = address(options.host, port)
    if options.token:  # printed whole, as Jupyter does: the way in for whoever started it
        url += "?token=" + quote(options.token.encode("utf-8", "surrogatepass"), safe="")
    options.announce(f"evalkit view: {redact_url(options.database_url)} (read only) at {url}")
    options.announce("evalkit view: Ctrl-C stops it")
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, server_header=False, proxy_headers=False, lifespan="on"
    )
    server = uvicorn.Server(config)
    if options.open_browser:
        threading.Thread(target=_open_when_started, args=(server, url, options.warn), daemon=True).start()
    restore = _stop_on_sigterm(server)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn raises the Ctrl-C (or SIGTERM) it stopped on again once it has stopped
        pass
    finally:
        restore()
        sock.close()
    return 0


def _stop_on_sigterm(server: Any) -> Callable[[], None]:
    """While ``server`` runs, SIGTERM asks it to stop (``should_exit``; a second one, at once:
    ``force_exit``), and the function returned puts the previous handler back. The ``evalkit``
    command claims SIGTERM (:mod:`evalkit.signal_claims`), so uvicorn's own handler was never
    installed: the command's handler raised ``KeyboardInterrupt`` inside the serving event loop,
    which cancelled the application's lifespan and printed its traceback. Set through ``_signal``,
    evalkit's own way past the claim."""
    import _signal
    import signal

    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # an embedding's thread: signals are not ours to take

    def stop(signum: int, frame: Any) -> None:
        if server.should_exit:
            server.force_exit = True
        server.should_exit = True

    previous = _signal.signal(signal.SIGTERM, stop)
    return lambda: _signal.signal(signal.SIGTERM, previous)


def _open_when_started(server: Any, url: str, warn: Callable[[str], None]) -> None:
    """Open ``url`` in the user's browser once uvicorn serves (within 10 s)."""
    import time

    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        webbrowser.open(url)
    except webbrowser.Error as exc:  # no browser here: the address is printed anyway
        warn(f"evalkit view: could not open a browser ({exc})")
