"""``evalkit view``: a local, read-only web viewer over the results store.

Server-rendered pages (Starlette, Jinja2 with autoescaping, served by uvicorn; a few lines of
evalkit's own JavaScript only for live refresh), installed with the ``view`` extra
(``pip install "evalkit-golden[view]"``):

- :mod:`.settings` — what an app is built from (:class:`ViewerSettings`)
- :mod:`.store` — the reads the viewer makes (:class:`ReadOnlyStore`: no write method exists)
- :mod:`.index` — a run's cases as a compact index, so pages are cut server-side
- :mod:`.installed` — prompt, reference and question text from the installed sets
- :mod:`.search` — text and time-limited regex search
- :mod:`.diff` — word diffs of two answers
- :mod:`.state` — the caches and reads behind every page; :mod:`.pages` — what each page shows
- :mod:`.guard` — Host check, token, security headers; :mod:`.app` — routes and templates
- :mod:`.server` — binding a socket and running uvicorn (what ``evalkit view`` calls)

This module imports no web library: :func:`create_app` imports them when called.
"""

from __future__ import annotations

from typing import Any

from .settings import LOOPBACK_HOSTS, ViewerSettings

__all__ = ["LOOPBACK_HOSTS", "MISSING_EXTRA", "ViewerSettings", "create_app", "missing_modules"]

#: The modules the ``view`` extra installs.
EXTRA_MODULES = ("starlette", "uvicorn", "jinja2")
#: What to say when they are missing.
MISSING_EXTRA = 'evalkit view needs the "view" extra: pip install "evalkit-golden[view]"'


def missing_modules() -> list[str]:
    """The modules of the ``view`` extra that cannot be imported (empty when it is installed)."""
    from importlib import import_module

    missing = []
    for name in EXTRA_MODULES:
        try:
            import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def create_app(
    database_url: str,
    token: str | None = None,
    *,
    allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS,
    port: int | None = None,
    config: Any = None,
    store_options: tuple[str, ...] = (),
) -> Any:
    """The viewer as an ASGI application (a Starlette app) over the store ``database_url``.

    ``token``: when given, every request must carry it (``?token=`` once, then a cookie, or
    ``Authorization: Bearer``). ``allowed_hosts``: the host names the ``Host`` header may name
    (``None``: any, for a server bound to every interface, where the token guards it); ``port``:
    the port it must name (``None``: any). ``config``: the :class:`evalkit.config.Config` whose
    sets are looked up for prompt and reference text. ``store_options``: the ``--config`` and
    ``--database`` words the line continuing a killed run repeats. The store is opened now (a
    :class:`~evalkit.errors.StorageError` for one that cannot be read) and never written.
    """
    from .app import build_app

    settings = ViewerSettings(
        database_url, token=token, allowed_hosts=allowed_hosts, port=port, config=config, store_options=store_options
    )
    return build_app(settings)
