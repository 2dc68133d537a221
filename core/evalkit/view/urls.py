"""The viewer's addresses: stable, shareable, with every id in the query string.

Ids are anything a set, a plugin or a user chose (``/``, ``?``, ``#``, control characters, a
lone surrogate), so they travel percent-encoded in the query, never in the path: ``/run?id=…``,
``/case?run=…&id=…``, ``/set?id=…``, ``/compare?base=…&run=…``. A link is the same for everyone
who opens it (a token is never part of it).
"""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["case_url", "compare_url", "progress_url", "run_url", "set_url", "with_query"]


def _encoded(value: object) -> str:
    text = str(value)
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


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
