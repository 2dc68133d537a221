"""What a privacy level keeps, and the scrubber that removes secrets and e-mail addresses.

``metadata`` keeps aggregates, per-case verdicts and the serving-identity proof, and no text from
answers or judges; ``redacted`` keeps that text with secrets and e-mail addresses replaced by
``***``; ``full`` keeps everything. Error messages are always scrubbed.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from .errors import PLUGIN_FAILURES

__all__ = [
    "scrub",
    "keeps_text",
    "is_scrubbable",
    "remember_secret_holder",
    "secrets_remembered_within",
    "remove_secrets",
    "secrets_to_hide",
    "MIN_SECRET_LENGTH",
    "REDACTED_DETAIL_CHARS",
    "REDACTION",
    "redacted_text",
]

REDACTION = "***"

_PATTERNS = [
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),  # JWT
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,}-)*[A-Za-z0-9_-]{16,}"),  # OpenAI-style keys
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\s*[:=]\s*['\"]?[^\s'\"]{6,}"),
    re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),  # e-mail
]


#: Secret values shorter than this are not scrubbed: a dummy key such as ``x`` (local servers
#: accept anything) would otherwise turn "text" into "te***t". A run warns about such a key.
MIN_SECRET_LENGTH = 8


def is_scrubbable(secret: str) -> bool:
    """True when ``secret`` is long enough to be scrubbed as a secret (see :data:`MIN_SECRET_LENGTH`)."""
    return len(secret) >= MIN_SECRET_LENGTH


def remove_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every exact value of ``secrets`` (credentials a component sends) replaced by ``***``.

    Values shorter than :data:`MIN_SECRET_LENGTH` are left alone: they are no real secret, and
    replacing them would mangle ordinary text.
    """
    for secret in sorted(secrets, key=len, reverse=True):
        if isinstance(secret, str) and is_scrubbable(secret):
            text = text.replace(secret, REDACTION)
    return text


def scrub(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """``text`` with secret shapes, e-mail addresses and any of ``extra_secrets`` replaced by ``***``."""
    text = remove_secrets(text, extra_secrets)
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTION, text)
    return text


#: At ``redacted``, each stored text (answer, check detail, judge detail) is cut to this many
#: characters after scrubbing, with :data:`TRUNCATION_MARKER` appended — the original's rule; a
#: cut JSON detail no longer parses and reads back as no detail.
REDACTED_DETAIL_CHARS = 2000
TRUNCATION_MARKER = "… [truncated]"


def redacted_text(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """``text`` as the ``redacted`` level stores it: scrubbed, then cut to :data:`REDACTED_DETAIL_CHARS`."""
    text = scrub(text, extra_secrets)
    if len(text) > REDACTED_DETAIL_CHARS:
        text = text[:REDACTED_DETAIL_CHARS] + TRUNCATION_MARKER
    return text


def keeps_text(level: str) -> bool:
    """True when ``level`` stores answer and judge text (scrubbed or verbatim)."""
    return level in ("redacted", "full")


# Secret values of the components built in this process, so every printed line can be scrubbed of
# them. A component's values are noted when it is built (the run's report is printed after its
# generator is gone) and asked again at print time while it lives (a judge grader learns its
# judge's credentials after it is built).
_values: set[str] = set()
_holders: weakref.WeakSet[Any] = weakref.WeakSet()


def _declared(component: Any) -> set[str]:
    try:
        declared = tuple(component.secret_values())
    except PLUGIN_FAILURES:  # a broken secret_values() must not take the output down
        return set()
    return {v for v in declared if isinstance(v, str) and is_scrubbable(v)}


def remember_secret_holder(component: Any) -> None:
    """Remember a component with ``secret_values()``, so :func:`secrets_to_hide` includes its values."""
    _values.update(_declared(component))
    try:
        _holders.add(component)
    except TypeError:  # no __weakref__ slot: its values as of now are what is known
        pass


@contextmanager
def secrets_remembered_within() -> Iterator[None]:
    """Secrets remembered inside are forgotten on the way out; those remembered before are kept.

    One CLI command is such a span (``evalkit.cli.main``): called again in the same process, the
    next command scrubs the secrets of its own components and of the caller's, not the last one's.
    """
    values, holders = set(_values), list(_holders)
    try:
        yield
    finally:
        _values.clear()
        _values.update(values)
        _holders.clear()
        for holder in holders:
            _holders.add(holder)


def secrets_to_hide() -> tuple[str, ...]:
    """The scrubbable secret values of every component remembered in this process."""
    for holder in list(_holders):
        _values.update(_declared(holder))
    return tuple(_values)
