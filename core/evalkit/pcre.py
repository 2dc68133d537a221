"""Regex patterns: the original's PCRE-style delimited form (``/9(:00)?\\s*am/i``) or a plain
pattern, compiled with the `regex` module and matched under a time limit.

A pattern is *delimited* only when its first character is one of ``/ # ~ ! @ % | + , ; :``, the
same character closes it (the first occurrence not escaped by a backslash, as PHP reads it) and
only modifier letters follow (another dialect's flags, JavaScript's ``gi`` and the like — see
:data:`FOREIGN_FLAGS` — make the pattern refused by name rather than read as plain text). Paired brackets (``()``, ``[]``, ``{}``, ``<>``) are never
delimiters, so ``[0-9]``, ``(a|b)c`` and ``<b>`` are what they look like. Anything else,
including a pattern whose delimiter is never closed, is a plain pattern.

Every pattern is compiled by `regex` in its version 0 (the syntax and meaning of Python's ``re``),
which also reads what PCRE users write and ``re`` refuses: Unicode properties (``\\p{L}``,
``\\p{Lu}``), atomic groups ``(?>…)``, possessive quantifiers (``a++``), inline flags anywhere
(``a(?i)b``: from there on, as in PCRE) and repeated group names. Callers match with
``timeout=`` :data:`MATCH_TIMEOUT_S`: `regex` stops a match after that much processor time, in any
thread, raising :class:`TimeoutError`.

Honoured modifiers: ``i m s x u D A`` (and ``S``, a PCRE optimisation hint with no effect on
what matches, and ``J``, which allows repeated group names: `regex` always does). Without ``u``
the character classes (``\\w \\d \\s \\b`` and ``\\p{…}``) are ASCII-only, as in PCRE. ``D`` makes
every ``$`` of the pattern match only at the very end of the subject (unless ``m`` is given, as in
PCRE). ``U X n e`` are PCRE modifiers `regex` cannot honour: refused by name.
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

__all__ = [
    "DELIMITERS",
    "FOREIGN_FLAGS",
    "MATCH_TIMEOUT_S",
    "MAX_PATTERN_CHARS",
    "MAX_REPETITIONS",
    "SUPPORTED_MODIFIERS",
    "PatternError",
    "compile_pattern",
    "compile_plain",
    "split_delimited",
]

#: How much processor time one match may take (seconds): the ``regex`` assertion's limit.
MATCH_TIMEOUT_S = 1.0
#: The most repetitions a pattern's counted repeats (``{m}``, ``{m,n}``) may ask for, nested ones
#: multiplied: `regex` builds a compiled pattern that grows with them (about 130 bytes each;
#: ``a{1000000000}`` would take the machine's memory), where ``re`` keeps a count.
MAX_REPETITIONS = 10_000
#: The longest pattern compiled, in characters: `regex` takes time and memory that grow with a
#: pattern's length to compile it (an alternation of 200,000 words, 2 MB, took 12 s and 470 MB),
#: and a compiled pattern is kept for the run. A real pattern is far shorter.
MAX_PATTERN_CHARS = 10_000

#: The characters that open (and close) a delimited pattern.
DELIMITERS = frozenset("/#~!@%|+,;:")
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}
#: Modifiers a delimited pattern may carry and that evalkit honours.
SUPPORTED_MODIFIERS = frozenset("imsxuDASJ")
#: PCRE modifiers that `regex` cannot honour; a pattern carrying one is refused.
_UNSUPPORTED_MODIFIERS = frozenset("UXne")
_KNOWN_MODIFIERS = SUPPORTED_MODIFIERS | _UNSUPPORTED_MODIFIERS
#: Flags of other regex dialects that are no modifier here: JavaScript's ``g`` (global, also
#: Perl's), ``y`` (sticky), ``d`` (match indices) and ``v`` (set notation). Letters after a closing
#: delimiter that hold one of these and are otherwise among :data:`_SHARED_FLAGS` (``/paris/gi``,
#: ``/x/gmu``) make a delimited pattern refused by name: it was the literal text ``/paris/gi``,
#: matching nothing an answer says. ``/docs/guide`` (an ``e``) stays a plain pattern.
FOREIGN_FLAGS = frozenset("gydv")
#: The modifiers JavaScript and Perl flag strings share with PCRE.
_SHARED_FLAGS = frozenset("imsxu")


class PatternError(ValueError):
    """The pattern cannot be compiled; the message says why."""


def split_delimited(pattern: str) -> tuple[str, str] | None:
    """``(body, modifiers)`` when ``pattern`` is delimited, else ``None`` (a plain regex)."""
    if not pattern or pattern[0] not in DELIMITERS:
        return None
    delimiter = pattern[0]
    index = 1
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == delimiter:
            modifiers = pattern[index + 1 :]
            if all(letter in _KNOWN_MODIFIERS for letter in modifiers) or _foreign_flags(modifiers):
                return pattern[1:index], modifiers
            return None
        index += 1
    return None


def _dollar_end_only(body: str, verbose: bool) -> str:
    """``body`` with every ``$`` anchor (not escaped, not in a character class, not in a verbose
    comment) replaced by ``\\Z``, the end-of-subject anchor (`regex` has no flag for PCRE's ``D``)."""
    out: list[str] = []
    index = 0
    in_class = False
    while index < len(body):
        char = body[index]
        if char == "\\":
            out.append(body[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
            # A "]" right after "[" or "[^" is a literal member, not the end of the class.
            if body.startswith("^", index):
                out.append("^")
                index += 1
            if body.startswith("]", index):
                out.append("]")
                index += 1
            continue
        elif char == "#" and verbose:
            end = body.find("\n", index)
            end = len(body) if end < 0 else end
            out.append(body[index:end])
            index = end
            continue
        elif char == "$":
            char = r"\Z"
        out.append(char)
        index += 1
    return "".join(out)


def _anchored(body: str, verbose: bool) -> str:
    """``body`` anchored at the start of the subject (`regex` has no flag for PCRE's ``A``)."""
    # In verbose mode a trailing comment would swallow the closing parenthesis without the newline.
    return rf"\A(?:{body}{chr(10) if verbose else ''})"


def _foreign_flags(letters: str) -> bool:
    """Whether ``letters`` are another dialect's flag string: one of :data:`FOREIGN_FLAGS` or
    more, the rest among :data:`_SHARED_FLAGS` (``gi``, ``gmu``, ``y``)."""
    return bool(letters) and set(letters) <= FOREIGN_FLAGS | _SHARED_FLAGS and not set(letters).isdisjoint(FOREIGN_FLAGS)


def _unknown_modifiers(pattern: str, modifiers: str) -> PatternError:
    """The refusal of ``pattern``, whose ``modifiers`` are another dialect's flags: naming the
    unknown ones, the known ones, the pattern without them and how to match the text as written."""
    unknown = "".join(dict.fromkeys(letter for letter in modifiers if letter not in _KNOWN_MODIFIERS))
    kept = "".join(letter for letter in modifiers if letter in _KNOWN_MODIFIERS)
    without = pattern[: len(pattern) - len(modifiers)] + kept
    plural = "s" if len(unknown) > 1 else ""
    return PatternError(
        f"unknown modifier{plural} {unknown!r} in {pattern!r} (known: {' '.join(sorted(SUPPORTED_MODIFIERS, key='imsxuDASJ'.index))}; "
        f"g, y, d and v are other dialects' flags, and a regex check looks for a match anywhere): write {without!r}, "
        f"or start the pattern with a backslash to match its text as written"
    )


def _translate(body: str, modifiers: str) -> tuple[str, int]:
    unsupported = sorted(set(modifiers) & _UNSUPPORTED_MODIFIERS)
    if unsupported:
        noun = "modifier" if len(unsupported) == 1 else "modifiers"
        raise PatternError(f"unsupported PCRE {noun} {''.join(unsupported)!r}")
    flags = 0 if "u" in modifiers else regex.ASCII
    for letter in modifiers:
        flags |= _FLAGS.get(letter, 0)
    verbose = "x" in modifiers
    if "D" in modifiers and "m" not in modifiers:
        body = _dollar_end_only(body, verbose)
    if "A" in modifiers:
        body = _anchored(body, verbose)
    return body, flags


#: A counted repeat: ``{m}``, ``{m,}``, ``{,n}``, ``{m,n}``.
_COUNTED = re.compile(r"\{(\d*)(,\d*)?\}")
#: Escapes whose argument is in braces (``\p{L}``, ``\N{EM DASH}``): not counted repeats.
_BRACED_ESCAPES = frozenset("pPN")
#: An inline flag group switching to `regex`'s version 1 (nested character classes, other case
#: folding): evalkit reads patterns in version 0, the meaning of ``re``.
_VERSION1 = re.compile(r"\(\?[A-Za-z0-9-]*V1")
#: A POSIX class inside a character class: ``[:alpha:]``, ``[:^digit:]``.
_POSIX_CLASS = re.compile(r"\[:\^?\w+:\]")


def _end_of_class(body: str, index: int) -> int:
    """Where the character class opening at ``body[index]`` ends (after its ``]``), as version 0
    reads it: a ``]`` first in the class is a member, ``[:alpha:]`` is one member."""
    index += 1
    if body.startswith("^", index):
        index += 1
    if body.startswith("]", index):
        index += 1
    while index < len(body) and body[index] != "]":
        if body[index] == "\\":
            index += 2
        elif body.startswith("[:", index) and (posix := _POSIX_CLASS.match(body, index)):
            index = posix.end()
        else:
            index += 1
    return index + 1


def _repetitions(body: str, comments: bool) -> int:
    """How many repetitions the counted repeats of ``body`` ask for at least (each its minimum
    count, times those of the groups around it), all added up; ``comments``: ``#`` starts a
    comment to the end of the line, as in verbose mode.

    Alternatives are added up and a space never separates an item from its quantifier, so where
    the pattern is unusual this over-counts.
    """
    open_groups: list[int] = []  # what was asked for before each open group, at its level
    total = 0  # what was asked for at the current level, so far
    last = 0  # what the last item asked for (the item a following quantifier repeats)
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            end = index + 2
            if body[index + 1 : end] in _BRACED_ESCAPES and body.startswith("{", end):
                close = body.find("}", end)
                end = len(body) if close < 0 else close + 1
            index, last = end, 0
        elif char == "[":
            index, last = _end_of_class(body, index), 0
        elif body.startswith("(?#", index) or (char == "#" and comments):
            close = body.find(")" if char == "(" else "\n", index)
            index = len(body) if close < 0 else close + 1
        elif char == "{" and (counted := _COUNTED.match(body, index)) and (counted.group(1) or counted.group(2)):
            digits = counted.group(1)
            times = int(digits or 0) if len(digits) <= 9 else 10**9  # past any limit; int() refuses 4,300 digits
            if times > 1:
                grown = times * max(last, 1)
                total += grown - last
                last = grown
            index = counted.end()
        else:
            if char == "(":
                open_groups.append(total)
                total = last = 0
            elif char == ")":
                last = total
                total = open_groups.pop() + last if open_groups else last
            elif not char.isspace():  # verbose mode puts spaces between an item and its quantifier
                last = 0
            index += 1
    return total + sum(open_groups)


def _compiled(body: str, flags: int, pattern: str) -> regex.Pattern[str]:
    """``body`` compiled with ``flags``; :class:`PatternError` naming ``pattern`` (what the user wrote)."""
    if len(pattern) > MAX_PATTERN_CHARS or len(body) > MAX_PATTERN_CHARS:
        long = max(len(pattern), len(body))
        shown = f"{pattern[:60]}… ({len(pattern):,} characters)"  # never shorter than 9,990 here
        raise PatternError(f"regular expression {shown!r} is {long:,} characters long, more than the {MAX_PATTERN_CHARS:,} a pattern may have")
    if _VERSION1.search(body):
        raise PatternError(f"regular expression {pattern!r} asks for the regex module's version 1 (V1); evalkit reads version 0")
    asked = max(_repetitions(body, comments=False), _repetitions(body, comments=True))
    if asked > MAX_REPETITIONS:
        raise PatternError(
            f"regular expression {pattern!r} asks for {asked:,} repetitions in its counted repeats "
            f"({{m}}, {{m,n}}; nested ones multiplied), more than the {MAX_REPETITIONS:,} allowed"
        )
    try:
        # Not in regex's own cache as well as in ours.
        return regex.compile(body, flags, cache_pattern=False)
    except (regex.error, ValueError, OverflowError) as exc:  # ValueError: incompatible flags such as (?u) without u
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None
    except RecursionError:
        raise PatternError(f"invalid regular expression {pattern!r}: nested too deeply") from None


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """Compile ``pattern`` (delimited or plain) or raise :class:`PatternError` naming it."""
    parts = split_delimited(pattern)
    if parts is not None and not set(parts[1]) <= _KNOWN_MODIFIERS:
        raise _unknown_modifiers(pattern, parts[1])
    try:
        body, flags = (pattern, 0) if parts is None else _translate(*parts)
    except PatternError as exc:
        raise PatternError(f"{exc} in {pattern!r}") from None
    return _compiled(body, flags, pattern)


@lru_cache(maxsize=1024)
def compile_plain(pattern: str) -> regex.Pattern[str]:
    """Compile ``pattern`` as written, never as a delimited one (a JSON Schema's ``pattern``),
    or raise :class:`PatternError` naming it."""
    return _compiled(pattern, 0, pattern)
