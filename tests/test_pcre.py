"""Regex patterns mean what they look like: which patterns are delimited, and what each modifier does."""

from __future__ import annotations

import re

import pytest
from evalkit.pcre import PatternError, compile_pattern, split_delimited


def matches(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


# (pattern, subject, matches?) — plain Python regexes and delimited PCRE patterns side by side.
TABLE = [
    # Paired brackets are not delimiters: these are plain Python regexes.
    ("[0-9]", "7", True),
    ("[0-9]", "seven", False),
    ("(a|b)c", "bc", True),
    ("(a|b)c", "ac", True),
    ("(a|b)c", "cc", False),
    ("<b>", "abc", False),
    ("<b>", "a <b>bold</b>", True),
    ("{^a.b$}s", "a\nb", False),
    ("{a}", "{a}", True),
    (r"\d{3}", "call 555 now", True),
    (r"\bcat\b", "a cat sat", True),
    (r"\bcat\b", "concatenate", False),
    (r"\b4\b", "Result: 4", True),
    (r"\b4\b", "Result: 42", False),
    (r"^\w+$", "café", True),  # plain: Python's Unicode classes
    # Every listed delimiter opens a delimited pattern.
    (r"/\b4\b/", "Result: 4", True),
    (r"/\b4\b/", "Result: five", False),
    (r"/\b4\b/", "Result: 42", False),
    (r"/\bfoo/", "foobar", True),
    (r"/\bfoo/", "afoo", False),
    (r"/9(:00)?\s*(am|–|-)/i", "Monday to Friday, 9AM to 5PM", True),
    (r"/9(:00)?\s*(am|–|-)/i", "Weekdays from 10", False),
    ("#^ok$#m", "first\nok\nlast", True),
    ("#^ok$#", "first\nok\nlast", False),
    ("~a.b~s", "a\nb", True),
    ("~a.b~", "a\nb", False),
    ("!ABC!i", "xabcx", True),
    ("@x@", "axb", True),
    ("%[0-9]+%", "no digits", False),
    ("|a\\|b|", "a|b", True),  # an escaped delimiter is a literal character of the body
    ("+a b+x", "ab", True),
    ("+a b+", "ab", False),
    (",x,", "x", True),
    (";y;", "xyz", True),
    (":z:", "z", True),
    (r"/a\/b/", "a/b", True),
    (r"/^\w+$/", "café", False),  # without u, \w is ASCII as in PCRE
    (r"/^\w+$/u", "café", True),
    # A delimiter that is never closed, or closed by something other than modifiers: plain regex.
    ("/abc", "x/abc", True),
    ("/abc", "abc", False),
    ("/usr/bin", "/usr/bin", True),
    ("/a/b/", "/a/b/", True),  # PHP reads the first "/" as the end: "b/" is no modifier list
    ("/a/g", "a", False),
    ("/a/g", "/a/g", True),
    ("#1 and #2", "#1 and #2", True),
    # D: every $ matches only at the very end, not before a final newline.
    ("/ok$/", "ok\n", True),
    ("/ok$/D", "ok\n", False),
    ("/ok$/D", "ok", True),
    ("/(a$|b$)/", "a\n", True),
    ("/(a$|b$)/D", "a\n", False),
    ("/(a$|b$)/D", "b", True),
    ("/a$|b/D", "a\n", False),
    (r"/a\$/D", "a$", True),  # an escaped $ is a literal dollar
    ("/a[$]/D", "a$", True),  # so is a $ in a character class
    ("/a[]$]/D", "a$", True),
    ("/a[^]$]$/D", "ax", True),
    ("/a[^]$]$/D", "ax\n", False),
    (r"/a\\$/D", "a\\\n", False),  # an escaped backslash, then the anchor
    (r"/a\\$/D", "a\\", True),
    ("/ok$/Dm", "ok\nnext", True),  # with m, D has no effect (as in PCRE)
    ("/ok $ # end\n/Dx", "ok\n", False),
    ("/ok [$] # $ in a comment\n/Dx", "ok$", True),
    # A: anchored at the start of the subject.
    ("/abc/A", "xabc", False),
    ("/abc/A", "abcx", True),
    ("/b|abc/A", "xb", False),
    ("/(?i)abc/A", "ABC", True),
    ("/abc # comment/Ax", "abc", True),
    ("/abc/S", "abc", True),
]


@pytest.mark.parametrize(("pattern", "text", "held"), TABLE)
def test_pattern_table(pattern: str, text: str, held: bool) -> None:
    assert matches(pattern, text) is held


def test_the_table_is_large_and_mixes_both_forms() -> None:
    delimited = [p for p, _, _ in TABLE if split_delimited(p) is not None]
    plain = [p for p, _, _ in TABLE if split_delimited(p) is None]
    assert len(TABLE) >= 30 and len(delimited) >= 15 and len(plain) >= 15


@pytest.mark.parametrize(
    ("pattern", "parts"),
    [
        ("/a/", ("a", "")),
        ("/a/imsxuDAS", ("a", "imsxuDAS")),
        ("//", ("", "")),
        (r"#a\#b#i", (r"a\#b", "i")),
        ("/a/U", ("a", "U")),
        ("[a]", None),
        ("(a)", None),
        ("{a}", None),
        ("<a>", None),
        (" /a/", None),  # leading whitespace: not delimited
        ("a/b/", None),
        ("/a", None),
        ("/", None),
        ("", None),
        ("/a/ i", None),
        ("/a/i1", None),
    ],
)
def test_which_patterns_are_delimited(pattern: str, parts: tuple[str, str] | None) -> None:
    assert split_delimited(pattern) == parts


def test_without_u_the_classes_are_ascii_and_with_u_unicode() -> None:
    assert compile_pattern("/x/").flags & re.ASCII
    assert not compile_pattern("/x/u").flags & re.ASCII
    assert not compile_pattern("x").flags & re.ASCII


@pytest.mark.parametrize(
    ("pattern", "named"), [("/a+/U", "U"), ("/a/X", "X"), ("/a/J", "J"), ("/a/n", "n"), ("/a/e", "e"), ("/a/iUX", "UX")]
)
def test_unsupported_modifiers_are_refused_by_name(pattern: str, named: str) -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value) == f"unsupported PCRE modifier(s) {named!r} in {pattern!r}"


@pytest.mark.parametrize("pattern", ["/(unclosed", "/(unclosed/", "(a|b", "[0-9", "/a(/D", "/a)/A"])
def test_an_invalid_pattern_is_refused_naming_it(pattern: str) -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value).startswith(f"invalid regular expression {pattern!r}: ")


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [("/x/", re.ASCII), ("/x/u", re.UNICODE), ("/x/uDAS", re.UNICODE), ("/x/i", re.ASCII | re.IGNORECASE),
     ("/x/ms", re.ASCII | re.MULTILINE | re.DOTALL), ("/x/xu", re.UNICODE | re.VERBOSE), ("x", re.UNICODE)],
)
def test_modifiers_set_exactly_their_flags(pattern: str, flags: int) -> None:
    assert compile_pattern(pattern).flags == flags


@pytest.mark.parametrize(
    ("pattern", "translated"),
    [("/a$/D", r"a\Z"), ("/a$|[$]b$/D", r"a\Z|[$]b\Z"), ("/a $ # $\n$/Dx", "a \\Z # $\n\\Z"), ("/abc/A", r"\A(?:abc)"),
     ("/(?i)(?s)a/A", r"(?i)(?s)\A(?:a)"), ("/a # c/Ax", "\\A(?:a # c\n)"), ("/a$/Dm", "a$"), ("/a$/", "a$"),
     ("/a[b$]c$/D", r"a[b$]c\Z"), ("/a[^]$]$/D", r"a[^]$]\Z"), ("/a[]b$]$/D", r"a[]b$]\Z"), ("/a\\$b$/D", r"a\$b\Z"),
     ("/a\\\\$/D", r"a\\\Z"), ("/a#$\n$/Dx", "a#$\n\\Z"), ("/a#$/D", r"a#\Z")],
)
def test_the_translated_pattern(pattern: str, translated: str) -> None:
    assert compile_pattern(pattern).pattern == translated


def test_only_the_listed_characters_delimit() -> None:
    assert split_delimited("XaX") is None and split_delimited("aba") is None and split_delimited("[a[") is None
    assert matches("XaX", "XaX") and not matches("XaX", "a")
