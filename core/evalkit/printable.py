"""Making hostile text printable: a string from a plugin, a set, an endpoint or a stored row is
data, so its control and format characters are shown as escapes rather than acted on — by a
terminal, or by the CI runner reading the job's log (see :data:`RUNNER_COMMAND`)."""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "HIDDEN_CATEGORIES",
    "RUNNER_COMMAND",
    "has_visible_text",
    "hidden_escaped",
    "is_hidden",
    "json_visible",
    "lone_surrogate",
    "not_nfc",
    "visible",
]

#: Unicode categories never sent raw to a terminal: controls (ESC of ANSI CSI/OSC sequences, CR,
#: NUL, the one-byte C1 CSI), format characters (bidi overrides, zero-width joiners), lone
#: surrogates (undecodable bytes; they cannot even be encoded) and line/paragraph separators.
HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> tuple[int, int] | None:
    """The first lone surrogate in ``text`` — half of a UTF-16 pair alone: what ``os.fsdecode``
    makes of a byte that is not UTF-8, or a JSON ``"\\ud800"`` escape — as its code point and its
    1-based character position, else ``None``. Such text cannot be encoded as UTF-8: not sent to an
    endpoint, not passed to libpq. The one finder of them for every check that refuses one."""
    found = _LONE_SURROGATE.search(text)
    return None if found is None else (ord(found.group()), found.start() + 1)


def _hidden(char: str) -> bool:
    return not char.isprintable() and unicodedata.category(char) in HIDDEN_CATEGORIES


def is_hidden(char: str) -> bool:
    """Whether ``char`` is one :func:`visible` and :func:`json_visible` write as an escape: a
    control, format, surrogate or line/paragraph separator character (:data:`HIDDEN_CATEGORIES`)."""
    return _hidden(char)


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


#: What a CI runner acts on in a job's log, so never printed as it came: a line that starts (after
#: spaces) with ``::`` is a GitHub Actions workflow command (``::add-mask::``, ``::error::``,
#: ``::stop-commands::``, ``::set-output``); ``##vso[`` is an Azure Pipelines logging command and
#: ``##[`` a GitHub/Azure one, anywhere in a line; ``##teamcity[`` a TeamCity service message.
#: A match ends with the one ``:`` or ``#`` shown as an escape (``\\x3a``, ``\\x23``), so the text
#: reads the same; group 1 is the spaces before a line's ``::``.
_HASH_COMMAND = r"#(?=#(?:vso|teamcity)?\[)"
RUNNER_COMMAND = re.compile(rf"(?m:^([^\S\n]*):(?=:))|{_HASH_COMMAND}", re.IGNORECASE)
#: The first ``#`` of a ``##vso[``, ``##[`` or ``##teamcity[`` (in JSON text).
_HASH_PREFIX = re.compile(_HASH_COMMAND, re.IGNORECASE)


def _defused(match: re.Match[str]) -> str:
    spaces = match.group(1)
    return "\\x23" if spaces is None else spaces + "\\x3a"


def hidden_escaped(text: str, keep: str = "") -> str:
    """``text`` with every hidden character (:func:`is_hidden`: controls, line breaks — ``\\n``,
    ``\\r``, ``\\x0b``, ``\\x0c``, ``\\x85``, ``\\u2028``, ``\\u2029`` — format characters, lone
    surrogates) but those in ``keep`` replaced by its backslash escape (``\\x0a``): the one rule
    :func:`visible` applies where text is printed, and :func:`evalkit.wording.quoted` to a word
    put into a message (whose own line breaks the output keeps)."""
    if text.isprintable():
        return text
    return "".join(_escape(c) if c not in keep and _hidden(c) else c for c in text)


def visible(text: str, keep: str = "") -> str:
    """``text`` with every control character (``\\n``, ``\\x1b``, …), invisible format character
    (bidi overrides, zero-width joiners), lone surrogate and line separator replaced by its
    backslash escape, and a CI runner's command (:data:`RUNNER_COMMAND`) defused by one such
    escape; the rest — and any character in ``keep`` (``"\\n\\t"`` for multi-line text) —
    unchanged."""
    text = hidden_escaped(text, keep)
    if "::" in text or "##" in text:
        text = RUNNER_COMMAND.sub(_defused, text)
    return text


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(json_text: str) -> str:
    """JSON text with every hidden character that ``json.dumps(ensure_ascii=False)`` leaves raw
    (DEL, C1 controls, bidi overrides, lone surrogates, …) written as a ``\\uXXXX`` escape: the
    document parses to the same data. Only valid in JSON text, where such characters can only be
    inside strings."""
    json_text = "\n".join(
        line if line.isprintable() else "".join(_json_escape(c) if _hidden(c) else c for c in line)
        for line in json_text.split("\n")
    )
    # A JSON line never starts with "::"; "##vso[" and the like can only be inside a string.
    return _HASH_PREFIX.sub(r"\\u0023", json_text) if "##" in json_text else json_text


#: How much of a name :func:`not_nfc` shows escaped (a name may be 1,000 characters, each escape up to 10).
_NFC_SHOWN_CHARS = 120


def _escaped(text: str) -> str:
    """``text`` as Python's ``ascii()`` writes it (``'cafe\\u0301'``), cut to :data:`_NFC_SHOWN_CHARS`."""
    shown = ascii(text)
    return shown if len(shown) <= _NFC_SHOWN_CHARS else shown[: _NFC_SHOWN_CHARS - 4] + "...'"


def not_nfc(name: str) -> str | None:
    """Why ``name`` cannot name anything, as words following it, when it is not in Unicode normal
    form NFC; ``None`` when it is. ``"café"`` written as ``e`` and a combining accent (NFD, as
    macOS file names and some editors write it) prints exactly as ``"café"`` written with ``é``,
    yet the two never match: a set could hold two cases no one can tell apart, and a baseline, a
    quarantine or ``--provider`` would match one and not the other. The one rule of the names a
    user reads and types back: a prompt or question id (``validation._located``), a provider
    instance, a quarantined case id. The words name ``name`` escaped and its NFC form:
    ``"'cafe\\u0301' is not in Unicode normal form NFC ...; write it as "café" ('caf\\xe9')"``."""
    if unicodedata.is_normalized("NFC", name):
        return None
    nfc = unicodedata.normalize("NFC", name)
    readable = visible(nfc if len(nfc) <= _NFC_SHOWN_CHARS else nfc[: _NFC_SHOWN_CHARS - 3] + "...")
    return (
        f"{_escaped(name)} is not in Unicode normal form NFC (it prints like other text it never matches); "
        f'write it as "{readable}" ({_escaped(nfc)})'
    )


def has_visible_text(text: str) -> bool:
    """True when ``text`` holds something besides whitespace and control characters (``"\\x00"`` does not)."""
    return any(not ch.isspace() and unicodedata.category(ch) not in HIDDEN_CATEGORIES for ch in text)
