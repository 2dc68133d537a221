"""The spending limit that stopped a run or one of its shards, kept as data in the run's provenance.

A run (or a shard) that ``--max-requests`` or ``--budget`` stopped says so in its verdict; the
words are for people. What readers act on — the verdict job of a sharded run (``evalkit run
--wait-for-shards``), ``show``/``history``/``report --wait`` telling a shard a limit stopped from
one that was killed, the command that continues it with a higher limit — is this module's
document, kept under :data:`LIMIT_STOPS` in the run's stored ``provenance`` (no migration: the
column is a JSON object every store keeps through ``finish_run(provenance=...)``)::

    {"limit_stops": {"1/2": {"limit": "max_requests", "value": "1", "currency": null,
                             "resume_limits": ["--max-requests", "6"]}}}

Keyed by the part that stopped (``*``: the whole run, ``I/N``: a shard), each entry says which
limit (``max_requests`` or ``budget``), its value (a decimal string; a budget's ``currency``) and
the limits a command that continues that part gives (``--max-requests 6``: enough for the rest);
a budget's entry whose run spent past it keeps what it spent (``spent``, a decimal string).
A part that finishes again replaces its entry (cleared when nothing stopped it); a whole-run
finish replaces them all. A store that revises a run's provenance
(:class:`~evalkit.storage.RevisableProvenance`) merges each entry with the run's row locked, and
has a part's entry cleared when that part is taken again; another store is written through
``finish_run`` (see docs/architecture.md). A reader never trusts what it reads: an entry that is not of this shape
(a third-party store, an edited row) is ignored, as if nothing were known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ..shapes import decimal_text
from ..wording import counted
from .placement import stored_provenance

__all__ = [
    "LIMIT_STOPS",
    "LIMITS",
    "REQUEST_LIMIT_REACHED",
    "limit_stop",
    "provenance_after",
    "reached_words",
    "requests_reached",
    "resume_limits",
    "run_stopped_by",
    "stops_of",
]

#: The key of a run's stored ``provenance`` that keeps the limits that stopped its parts.
LIMIT_STOPS = "limit_stops"
#: Each limit as stored, and the option that sets it.
LIMITS = {"max_requests": "--max-requests", "budget": "--budget"}
#: How the words of a request limit met begin (:func:`requests_reached`: "the limit of 4 requests
#: reached"). The words are stored (a case cut short, the verdict's reason) and shown later by
#: `evalkit show` or read by a Python caller, so they name neither the command line's
#: ``--max-requests`` nor the keyword.
REQUEST_LIMIT_REACHED = "the limit of "
#: The whole run's part (as :data:`evalkit.storage.values.WHOLE_RUN`).
_WHOLE = "*"


def limit_stop(
    limit: str, value: Decimal | int, currency: str | None, resume: Sequence[str], spent: Decimal | None = None
) -> dict[str, Any]:
    """The entry of one part that ``limit`` (``max_requests`` or ``budget``) of ``value`` stopped
    (``currency``: a budget's), with the limit words that continue it (``resume``); ``spent``: what
    the run spent when that is past its budget (the requests in flight cost more than estimated),
    kept as ``spent`` only then."""
    if limit not in LIMITS:
        raise ValueError(f"no such limit: {limit}")
    entry = {"limit": limit, "value": f"{value}", "currency": currency, "resume_limits": list(resume)}
    if spent is not None:
        entry["spent"] = f"{spent}"
    return entry


def reached_words(stop: Mapping[str, Any]) -> str:
    """``the limit of 2 requests reached``, ``the budget of 0.03 EUR reached``: what a verdict says
    of ``stop``. Stored with the verdict and shown later to whoever asks (a command line's user, a
    Python caller), so it names neither's option."""
    from ..costs import format_amount

    if stop["limit"] == "budget":
        budget, currency = Decimal(stop["value"]), stop.get("currency")
        spent = _amount(stop.get("spent"))
        if spent is not None and spent > budget:
            return f"the budget of {format_amount(budget, currency)} reached, and passed by {format_amount(spent - budget, currency)}"
        return f"the budget of {format_amount(budget, currency)} reached"
    return requests_reached(int(Decimal(stop["value"])))


def requests_reached(limit: int) -> str:
    """``the limit of 2 requests reached``: the words of a request limit met (they begin with
    :data:`REQUEST_LIMIT_REACHED`), said by the spending guard as it stops and by a verdict."""
    return f"{REQUEST_LIMIT_REACHED}{counted(limit, 'request', grouped=True)} reached"


def _amount(value: Any) -> Decimal | None:
    """A stored decimal string as a number (``None``: absent, or not one)."""
    if not isinstance(value, str) or not decimal_text(value) or value.strip() != value:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


def stops_of(run: Any) -> dict[str, Mapping[str, Any]]:
    """Stored ``run``'s limit stops, by part (``*`` or ``I/N``), each checked (see the module);
    empty when none is stored or the store keeps no provenance."""
    stored = stored_provenance(run).get(LIMIT_STOPS)
    if not isinstance(stored, Mapping):
        return {}
    return {part: stop for part, stop in stored.items() if isinstance(part, str) and _valid(stop)}


def _valid(stop: Any) -> bool:
    """True when ``stop`` is an entry of the shape :func:`limit_stop` makes."""
    if not isinstance(stop, Mapping) or stop.get("limit") not in LIMITS:
        return False
    value, currency = stop.get("value"), stop.get("currency")
    if not isinstance(value, str) or not decimal_text(value) or value.strip() != value:
        return False
    if not (
        currency is None
        or (isinstance(currency, str) and currency.isascii() and currency.isalpha() and len(currency) <= 8)
    ):
        return False
    try:
        Decimal(value)
    except InvalidOperation:
        return False
    if "spent" in stop and _amount(stop["spent"]) is None:
        return False
    words = stop.get("resume_limits", [])
    return isinstance(words, list) and _limit_words(words)


def _limit_words(words: Sequence[Any]) -> bool:
    """True when ``words`` are pairs of a limit's option and a decimal value."""
    if len(words) % 2 or len(words) > 2 * len(LIMITS):
        return False
    pairs = zip(words[::2], words[1::2], strict=True)
    return all(
        option in LIMITS.values() and isinstance(value, str) and value.strip() == value and decimal_text(value)
        for option, value in pairs
    )


def resume_limits(run: Any, part: str) -> tuple[str, ...]:
    """The limit words (``--max-requests 6``) that continue ``part`` of stored ``run`` after a
    limit stopped it; none when no limit did."""
    stop = stops_of(run).get(part)
    return tuple(stop.get("resume_limits", ())) if stop is not None else ()


def run_stopped_by(run: Any) -> str | None:
    """What stopped stored ``run`` as its verdict says it (``the limit of 1 request reached``; the
    different limits of its shards joined by ``;``), ``None`` when no limit did."""
    words = list(dict.fromkeys(reached_words(stop) for stop in stops_of(run).values()))
    return "; ".join(words) or None


def provenance_after(
    provenance: Mapping[str, Any] | None, part: str, stop: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """``provenance`` with ``part``'s entry set to ``stop`` (removed when ``None``; a whole-run
    finish replaces every entry), or ``None`` when that changes nothing (nothing to write)."""
    current = dict(provenance) if isinstance(provenance, Mapping) else {}
    before = current.get(LIMIT_STOPS)
    stops = dict(before) if isinstance(before, Mapping) else {}
    after = {} if part == _WHOLE else {p: s for p, s in stops.items() if p != part}
    if stop is not None:
        after[part] = dict(stop)
    if after == stops and (after or before is None):
        return None
    if after:
        current[LIMIT_STOPS] = after
    else:
        current.pop(LIMIT_STOPS, None)
    return current
