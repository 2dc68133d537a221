"""What a privacy level keeps, and the scrubber that removes secrets and e-mail addresses.

``metadata`` keeps aggregates, per-case verdicts and the serving-identity proof, and no text from
answers or judges; ``redacted`` keeps that text with secrets and e-mail addresses replaced by
``***``; ``full`` keeps everything. Error messages are always scrubbed.

A secret a component declares is removed in every form it may come back in — an endpoint that
echoes the key JSON-escaped (``sk-abc\\/def``, ``\\u002f``), percent-encoded, HTML-escaped, or
base64-encoded as ``user:key`` for HTTP Basic authentication — by :func:`remove_secrets`, the one
function every printed and stored text passes through.
"""

from __future__ import annotations

import base64
import functools
import itertools
import re
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, Protocol, runtime_checkable

from .errors import PLUGIN_FAILURES, carried


@runtime_checkable
class SecretHolder(Protocol):
    """A component that holds credentials; their exact values never reach the database."""

    def secret_values(self) -> tuple[str, ...]:
        """The credential values (API keys, header values) this component sends."""
        ...

__all__ = [
    "SecretHolder",
    "scrub",
    "keeps_text",
    "is_scrubbable",
    "remember_secret_holder",
    "read_secrets",
    "MAX_SECRET_CHARS",
    "MAX_SECRET_VALUES",
    "secrets_remembered_within",
    "remove_secrets",
    "secrets_to_hide",
    "secret_pattern",
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
    # e-mail: parts bounded by their RFC limits (64 for the local part, 63 a label), so a search
    # tries at most 64 characters from each position — unbounded, a long word without "@" (a
    # megabyte answer, a base64 blob) was scanned to its end from every one of its characters.
    re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,63}"),
]


#: Secret values shorter than this are not scrubbed: a dummy key such as ``x`` (local servers
#: accept anything) would otherwise turn "text" into "te***t". A run warns about such a key.
MIN_SECRET_LENGTH = 8


def is_scrubbable(secret: str) -> bool:
    """True when ``secret`` is long enough to be scrubbed as a secret (see :data:`MIN_SECRET_LENGTH`)."""
    return len(secret) >= MIN_SECRET_LENGTH


def remove_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every value of ``secrets`` (credentials a component sends) replaced by ``***``,
    in each form an endpoint or a log may echo it back in (:func:`secret_pattern`).

    Values shorter than :data:`MIN_SECRET_LENGTH` are left alone: they are no real secret, and
    replacing them would mangle ordinary text.
    """
    matcher = _matcher_of(secrets)
    if matcher is None or len(text) < matcher.shortest:  # no form of a secret fits (most texts printed)
        return text
    found = _echoed_spans(text, matcher)
    # base64 words: first a plain substring test per core (far faster than a pattern over text
    # whose every letter may start one), then the whole word of each, its other characters too
    if any(core in text for core in matcher.cores):
        for match in matcher.encoded.finditer(text):
            start, end = match.span()
            while start > 0 and text[start - 1] in _BASE64_CHARACTERS:
                start -= 1
            while end < len(text) and text[end] in _BASE64_CHARACTERS:
                end += 1
            while end < len(text) and text[end] == "=":
                end += 1
            found.append((start, end))
    spans: list[list[int]] = []
    for start, end in sorted(found):
        if spans and start <= spans[-1][1]:  # overlapping or touching: one replacement
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces += (text[last:start], REDACTION)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


class _Matcher(NamedTuple):
    """What finds one set of secrets in a text, compiled once (:func:`_matcher`). A named tuple,
    not an attrs class: the console imports this module for every line it prints, ``evalkit
    list`` included, and attrs' import costs that command a fifth of its start-up."""

    #: The secrets, longest first.
    secrets: tuple[str, ...]
    #: The alternation of their literal and echoed forms (:func:`secret_pattern`).
    echoed: re.Pattern[str]
    #: The most characters an echoed form can take.
    reach: int
    #: The alternation of their base64 cores, and the cores.
    encoded: re.Pattern[str]
    cores: frozenset[str]
    #: The characters an escape starts with (``\\ % &``, and ``+`` when a secret holds a space).
    escapes: tuple[str, ...]
    #: The length of the shortest secret: a shorter text holds none.
    shortest: int


#: The most characters one character of a secret can take when echoed (``\ud83d\ude00``, ``%F0%9F%98%80``).
_LONGEST_FORM = 12


def _echoed_spans(text: str, matcher: _Matcher) -> list[tuple[int, int]]:
    """Where ``text`` holds a secret as written or echoed. The literal values are found by substring
    search; the alternation runs only near the first character of an escape (``\\ % & +``), which
    every other form holds within ``reach`` of where it starts, so ordinary prose costs a few
    substring searches."""
    reach, escapes = matcher.reach, matcher.escapes
    found: list[tuple[int, int]] = []
    for secret in matcher.secrets:
        start = text.find(secret)
        while start != -1:
            found.append((start, start + len(secret)))
            start = text.find(secret, start + len(secret))
    end = len(text)
    at = _first_of(text, escapes, 0)
    while at != -1:
        low, high = max(0, at - reach), min(end, at + reach + 1)
        while True:  # widen the window while it holds another escape further on
            last = max(text.rfind(c, at + 1, high) for c in escapes)
            if last == -1 or min(end, last + reach + 1) == high:
                break
            at, high = last, min(end, last + reach + 1)
        found += (match.span() for match in matcher.echoed.finditer(text, low, high))
        at = _first_of(text, escapes, high)
    return found


def _first_of(text: str, characters: tuple[str, ...], start: int) -> int:
    """The first place at or after ``start`` where ``text`` holds one of ``characters``, else -1."""
    places = [place for place in (text.find(c, start) for c in characters) if place != -1]
    return min(places) if places else -1


#: The pattern of each tuple of secrets :func:`remove_secrets` was given as it was given: a run
#: passes the same tuple for every text, and sorting it each time cost more than the search.
_MATCHER_OF_TUPLE: dict[tuple[Any, ...], _Matcher | None] = {}


def _matcher_of(secrets: Iterable[str]) -> _Matcher | None:
    if not secrets:
        return None
    if type(secrets) is not tuple:
        return _matcher(_scrubbable(secrets))
    try:
        return _MATCHER_OF_TUPLE[secrets]
    except KeyError:
        pass
    except TypeError:  # a value that is not hashable: not a secret either
        return _matcher(_scrubbable(secrets))
    if len(_MATCHER_OF_TUPLE) >= 256:
        _MATCHER_OF_TUPLE.clear()
    matcher = _MATCHER_OF_TUPLE[secrets] = _matcher(_scrubbable(secrets))
    return matcher


def _scrubbable(secrets: Iterable[str]) -> tuple[str, ...]:
    """The distinct scrubbable values of ``secrets``, in one order (the cache key of their pattern)."""
    return tuple(sorted({s for s in secrets if isinstance(s, str) and is_scrubbable(s)}))


#: The characters of base64 (standard and URL-safe) a word holding an encoded secret is made of.
_BASE64_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
#: JSON's two-character escapes, and the entities of HTML's escaping, by the character they stand for.
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HTML_ESCAPES = {"&": ("&amp;",), "<": ("&lt;",), ">": ("&gt;",), '"': ("&quot;", "&#34;", "&#x22;"), "'": ("&#x27;", "&#39;")}


def secret_pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled alternation matching every value of ``secrets`` (none: ``None``) as written and
    as echoed: JSON-escaped (``\\/``, and any character as ``\\u002f`` in either case, surrogate
    pairs included), percent-encoded (any character as ``%2F`` or ``%2f``, a space as ``+``),
    HTML-escaped, or any mix of these one character at a time. Longer values first, so a value
    holding another is replaced whole. Cached: a run asks for the same values every time.
    (:func:`remove_secrets` also finds each value inside base64 — of the value, or of
    ``user:value`` as HTTP Basic authentication sends it, whatever the user — by the characters
    only the value decides, and replaces the whole base64 word.)"""
    matcher = _matcher(_scrubbable(secrets))
    return matcher.echoed if matcher is not None else None


@functools.lru_cache(maxsize=64)
def _matcher(secrets: tuple[str, ...]) -> _Matcher | None:
    """The patterns of :func:`secret_pattern` and of the base64 cores, and the cores. Every
    alternative starts with one literal character (the first character's forms are spelled out),
    so the search skips in C to the places where a secret can start."""
    if not secrets:
        return None
    alternatives: list[str] = []
    for secret in sorted(secrets, key=len, reverse=True):
        rest = "".join(f"(?:{'|'.join(_character_forms(c))})" for c in secret[1:])
        alternatives += (first + rest for first in _character_forms(secret[0]))
    cores = _base64_cores(secrets)
    encoded = re.compile("|".join(re.escape(core) for core in sorted(cores, key=len, reverse=True)))
    longest_first = tuple(sorted(secrets, key=len, reverse=True))
    reach = _LONGEST_FORM * len(longest_first[0])
    escapes = ("\\", "%", "&", "+") if any(" " in secret for secret in secrets) else ("\\", "%", "&")
    shortest = min(len(secret) for secret in secrets)
    return _Matcher(longest_first, re.compile("|".join(alternatives)), reach, encoded, cores, escapes, shortest)


def _character_forms(character: str) -> list[str]:
    """Regular expressions for ``character`` and each form it may be echoed in."""
    forms = [re.escape(character)]
    if character in _JSON_ESCAPES:
        forms.append(re.escape(_JSON_ESCAPES[character]))
    forms += (re.escape(entity) for entity in _HTML_ESCAPES.get(character, ()))
    units = character.encode("utf-16-be", "surrogatepass")
    forms.append("".join(rf"\\u(?i:{units[i]:02x}{units[i + 1]:02x})" for i in range(0, len(units), 2)))
    forms.append("".join(f"%(?i:{byte:02x})" for byte in character.encode("utf-8", "surrogatepass")))
    if character == " ":
        forms.append(r"\+")
    return forms


def _base64_cores(secrets: tuple[str, ...]) -> frozenset[str]:
    """The base64 characters that only a secret's bytes decide, for each of the three places it can
    start at in a byte string (``user:`` before it is 5 bytes long, ``:`` 1), in the standard and
    the URL-safe alphabet: whatever comes before or after, an encoding holding the secret holds
    one of these."""
    cores: set[str] = set()
    for secret in secrets:
        data = secret.encode("utf-8", "surrogatepass")
        for shift in range(3):
            encoded = base64.b64encode(bytes(shift) + data).decode("ascii")
            first = -(-8 * shift // 6)  # the first character made only of the secret's bits
            last = 8 * (shift + len(data)) // 6  # one past the last such character
            core = encoded[first:last]
            cores.update((core, core.replace("+", "-").replace("/", "_")))
    return frozenset(cores)


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


#: The most values one component's ``secret_values()`` is read for: a generator that never ends
#: (``itertools.count()``'s keys) filled memory at the component's creation.
MAX_SECRET_VALUES = 1_000
#: The longest value scrubbed: each is compiled into a pattern of every form it may be echoed in,
#: and one of 10,000,000 characters took minutes and gigabytes before anything was printed.
MAX_SECRET_CHARS = 10_000


def read_secrets(component: Any) -> tuple[tuple[str, ...], str | None]:
    """What ``component.secret_values()`` declares, read once and bounded — the one place a
    plugin's secret values enter evalkit: its text values as plain ``str`` (a ``str`` subclass
    whose ``hash`` or ``==`` raises could not go into a set of them), at most
    :data:`MAX_SECRET_VALUES` of them, none longer than :data:`MAX_SECRET_CHARS`; and why the
    declaration breaks that rule, or ``None``. ``None`` declares no secrets; what is no iterable
    (``5``), a single text or bytes (read letter by letter, a key none of whose letters is long
    enough to hide) or holds a value that is no text (``[5]``, ``[None]``) breaks the rule: a
    secret not kept out of sight is a leak, never a declaration passed over. Only the types of
    what is wrong are said, never the values (one may be the key itself)."""
    from .shapes import exception_text

    def first_values() -> tuple[Any, ...] | str:
        values = component.secret_values()
        if values is None:
            return ()
        if isinstance(values, (str, bytes, bytearray)):
            return f"secret_values() returned one {type(values).__name__}, not an iterable of texts (a tuple of str)"
        if not hasattr(type(values), "__iter__"):
            return f"secret_values() returned {type(values).__name__}, not an iterable of texts (a tuple of str)"
        return tuple(itertools.islice(values, MAX_SECRET_VALUES + 1))

    try:
        declared = carried(first_values)
    except PLUGIN_FAILURES as exc:
        return (), f"secret_values() raised {exception_text(exc)}"
    if isinstance(declared, str):
        return (), declared
    problem = None
    if len(declared) > MAX_SECRET_VALUES:
        declared = declared[:MAX_SECRET_VALUES]
        problem = f"secret_values() returned more than {MAX_SECRET_VALUES:,} values (one that never ends?)"
    odd = next((value for value in declared if not isinstance(value, str)), _NO_VALUE)
    if odd is not _NO_VALUE:
        problem = problem or f"secret_values() returned a value of type {type(odd).__name__} among its values, where each must be text (str)"
    texts = tuple(str.__str__(value) for value in declared if isinstance(value, str))
    if any(len(value) > MAX_SECRET_CHARS for value in texts):
        longest = max(len(value) for value in texts)
        problem = problem or f"secret_values() returned a value of {longest:,} characters, more than the {MAX_SECRET_CHARS:,} a secret may have"
        texts = tuple(value for value in texts if len(value) <= MAX_SECRET_CHARS)
    return texts, problem


_NO_VALUE = object()


def secrets_to_keep_out(component: Any, who: str) -> tuple[str, ...]:
    """The values a run keeps out of what it stores and prints for ``component`` (``who`` names
    it: ``retriever "x"``), read by :func:`read_secrets`. A declaration that breaks the rule now —
    ``secret_values()`` raising, endless, a value too long — is a :class:`~evalkit.errors.PluginError`:
    read as no secrets, the component's credentials would be stored and shown as they are."""
    values, problem = read_secrets(component)
    if problem is not None:
        from .errors import PluginError

        raise PluginError(f"{who}: {problem}; its credentials could not be kept out of what is stored")
    return values


def _declared(component: Any) -> set[str]:
    # a broken secret_values() must not take the output down: what could be read is used
    return {v for v in read_secrets(component)[0] if is_scrubbable(v)}


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
