"""The viewer's addresses: stable, shareable, with every id in the query string.

Ids are anything a set, a plugin or a user chose (``/``, ``?``, ``#``, control characters, a
lone surrogate), so they travel percent-encoded in the query, never in the path: ``/run?id=…``,
``/case?run=…&id=…``, ``/set?id=…``, ``/compare?base=…&run=…``. A link is the same for everyone
who opens it (a token is never part of it). A lone surrogate is written as the three bytes UTF-8
would give it (``surrogatepass``) and :func:`query` reads it back so; every page reads its query
through :func:`query`, never through Starlette's own reading, which turns those bytes into
U+FFFD and so names another id.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote

__all__ = ["case_url", "compare_url", "progress_url", "query", "run_url", "set_url", "with_query"]


def _encoded(value: object) -> str:
    text = str(value)
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def _decoded(text: str) -> str:
    """The inverse of :func:`_encoded` for one percent-decoded value (``text`` holds its bytes as
    Latin-1): UTF-8 with lone surrogates as :func:`_encoded` writes them; bytes that are no UTF-8
    at all (an address typed or cut by hand) as U+FFFD, which no stored id is told by."""
    raw = text.encode("latin-1")
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def query(request: Any) -> Any:
    """The query parameters of ``request`` (a Starlette ``Request``) as :func:`with_query` wrote
    them, lone surrogates included: what every page reads its ids and options from."""
    from starlette.datastructures import QueryParams

    pairs = parse_qsl(request.scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True, encoding="latin-1")
    return QueryParams([(_decoded(name), _decoded(value)) for name, value in pairs])


def with_query(path: str, **params: object) -> str:
    """``path`` with ``params`` (those not ``None`` or empty) as its query, in the order given."""
    query = "&".join(f"{name}={_encoded(value)}" for name, value in params.items() if value not in (None, ""))
    return f"{path}?{query}" if query else path


def set_url(set_identifier: str) -> str:
    """A set's page: its runs and their trends."""
    return with_query("/set", id=set_identifier)


def run_url(run_id: str, **params: object) -> str:
    """A run's page (``params``: filter, q, regex, sort, order, page, per)."""
    return with_query("/run", id=run_id, **params)


def case_url(run_id: str, case_id: str) -> str:
    """One case of a run."""
    return with_query("/case", run=run_id, id=case_id)


def compare_url(base_id: str, run_id: str, **params: object) -> str:
    """Two runs of a set compared (``params``: show, page, tolerances)."""
    return with_query("/compare", base=base_id, run=run_id, **params)


def progress_url(run_id: str) -> str:
    """How far a run is (JSON), for the live refresh of a running run's page."""
    return with_query("/progress", id=run_id)
