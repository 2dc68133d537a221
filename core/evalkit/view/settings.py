"""What a viewer app is built from."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["LOOPBACK_HOSTS", "ViewerSettings"]

#: The names a browser on this machine reaches a loopback-bound server by.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@attrs.frozen
class ViewerSettings:
    """One viewer: its store, who may ask (token, Host names and port), and where sets come from.

    ``allowed_hosts`` are the host names a request's ``Host`` header may carry (lower case;
    ``None``: any, for a server bound to every interface, which then needs a token); ``port``
    the port it must carry (``None``: any). ``config`` is the project configuration the installed
    sets are loaded with (``None``: the providers that need none). ``page_size`` is how many
    cases a page shows unless the address asks for another number. ``store_options``: the
    ``--config`` and ``--database`` words ``evalkit view`` was given (a password as ``***``), which
    the line continuing a killed run repeats (:attr:`evalkit.run.continuing.ResumeDefaults.store`).
    """

    database_url: str
    token: str | None = None
    allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS
    port: int | None = None
    config: Any = None
    page_size: int = 50
    store_options: tuple[str, ...] = ()
