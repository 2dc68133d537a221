"""Regex patterns mean what they look like: which patterns are delimited, and what each modifier does."""

from __future__ import annotations

import pytest
import regex
from evalkit.pcre import (
    MAX_REPETITIONS,
    SUPPORTED_MODIFIERS,
    PatternError,
    compile_pattern,
    compile_plain,
    split_delimited,
)


@pytest.fixture(autouse=True)
def _compiled_afresh() -> None:
    """Each test compiles its own patterns: what it checks never rests on a pattern an earlier test
    left in the compile caches."""
    compile_pattern.cache_clear()
    compile_plain.cache_clear()


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
    ("/docs/guide", "see /docs/guide", True),  # "e" is no flag of any dialect: plain
    ("/a/gX", "/a/gX", True),  # a flag string only when every letter is some dialect's flag: plain
    (r"\/a/g", "/a/g", True),  # a backslash first: the text as written (a bare /a/g is refused, below)
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
    # What PCRE users write and Python's re refused, now read as PCRE reads it (the regex module).
    (r"/^\p{Lu}/u", "Émile", True),
    (r"/^\p{Lu}/u", "émile", False),
    (r"/^\p{L}+$/", "café", False),  # without u, \p{…} is ASCII as \w is
    (r"^\p{L}+$", "café", True),
    (r"^\p{L}+$", "café1", False),
    (r"/^(?>a+)a/", "aaa", False),  # an atomic group gives nothing back
    (r"/^(?:a+)a/", "aaa", True),
    (r"/^a++a/", "aaa", False),  # nor does a possessive quantifier
    (r"/^a++b/", "aaab", True),
    ("/a(?i)b/", "aB", True),  # an inline flag holds from where it stands, as in PCRE
    ("/a(?i)b/", "Ab", False),
    (r"/(?<y>\d{4})-\d\d|\d\d\.(?<y>\d{4})/J", "05.2024", True),  # J: a group name used twice
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
        ("/a/gi", ("a", "gi")),  # another dialect's flags: delimited, and refused when compiled
        ("/docs/guide", None),
        ("/a/gD", None),
    ],
)
def test_which_patterns_are_delimited(pattern: str, parts: tuple[str, str] | None) -> None:
    assert split_delimited(pattern) == parts


def test_without_u_the_classes_are_ascii_and_with_u_unicode() -> None:
    assert compile_pattern("/x/").flags & regex.ASCII
    assert not compile_pattern("/x/u").flags & regex.ASCII
    assert not compile_pattern("x").flags & regex.ASCII


@pytest.mark.parametrize(
    ("pattern", "named"),
    [("/a+/U", "U"), ("/a/X", "X"), ("/a/n", "n"), ("/a/e", "e"), ("/a/iUX", "UX"), ("/a/ADJSUXeimnsux", "UXen")],  # every PCRE modifier at once
)
def test_unsupported_modifiers_are_refused_by_name(pattern: str, named: str) -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    noun = "modifier" if len(named) == 1 else "modifiers"
    assert str(caught.value) == f"unsupported PCRE {noun} {named!r} in {pattern!r}"


@pytest.mark.parametrize(
    ("pattern", "named", "written"),
    [("/paris/gi", " 'g'", "/paris/i"), ("/a/g", " 'g'", "/a/"), ("/x/gmu", " 'g'", "/x/mu"), ("#a#y", " 'y'", "#a#"),
     ("/api/ids", " 'd'", "/api/is"), ("/x/vd", "s 'vd'", "/x/"),
     ("/x/gydvimsxu", "s 'gydv'", "/x/imsxu")],  # every flag of both sets at once is still a flag string
)
def test_another_dialects_flags_are_refused_by_name_not_read_as_text(pattern: str, named: str, written: str) -> None:
    # "/paris/gi" (JavaScript's g) was the plain pattern "/paris/gi": the literal text, which no
    # answer says, so the check failed every answer without a word (this table pinned "/a/g" so)
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value) == (
        f"unknown modifier{named} in {pattern!r} (known: i m s x u D A S J; g, y, d and v are other dialects' flags, "
        f"and a regex check looks for a match anywhere): write {written!r}, or start the pattern with a backslash "
        "to match its text as written"
    )


def test_validate_and_run_refuse_a_javascript_flag(evalkit_cli, project) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "r.yaml").write_text(
        "identifier: a.re\nname: R\nprompts:\n  - id: capital\n    prompt: Capital of France?\n    reference: Paris\n"
        "    assertions:\n      - regex: /paris/gi\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    expected = "evals/r.yaml:8:16: prompt 'capital': assertions[0].regex: unknown modifier 'g' in '/paris/gi'"
    checked = evalkit_cli("validate")
    assert checked.code == 2 and expected in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    ran = evalkit_cli("run", "a.re")
    assert ran.code == 2 and expected in ran.stderr, ran.stderr
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize("pattern", ["/(unclosed", "/(unclosed/", "(a|b", "[0-9", "/a(/D", "/a)/A"])
def test_an_invalid_pattern_is_refused_naming_it(pattern: str) -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value).startswith(f"invalid regular expression {pattern!r}: ")


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [("/x/", regex.ASCII), ("/x/u", regex.UNICODE), ("/x/uDAS", regex.UNICODE), ("/x/i", regex.ASCII | regex.IGNORECASE),
     ("/x/ms", regex.ASCII | regex.MULTILINE | regex.DOTALL), ("/x/xu", regex.UNICODE | regex.VERBOSE), ("x", regex.UNICODE)],
)
def test_modifiers_set_exactly_their_flags(pattern: str, flags: int) -> None:
    assert compile_pattern(pattern).flags & ~regex.VERSION0 == flags  # every pattern is read in version 0


@pytest.mark.parametrize(
    ("pattern", "translated"),
    [("/a$/D", r"a\Z"), ("/a$|[$]b$/D", r"a\Z|[$]b\Z"), ("/a $ # $\n$/Dx", "a \\Z # $\n\\Z"), ("/abc/A", r"\A(?:abc)"),
     ("/(?i)(?s)a/A", r"\A(?:(?i)(?s)a)"), ("/a # c/Ax", "\\A(?:a # c\n)"), ("/a$/Dm", "a$"), ("/a$/", "a$"),
     ("/a[b$]c$/D", r"a[b$]c\Z"), ("/a[^]$]$/D", r"a[^]$]\Z"), ("/a[]b$]$/D", r"a[]b$]\Z"), ("/a\\$b$/D", r"a\$b\Z"),
     ("/a\\\\$/D", r"a\\\Z"), ("/a#$\n$/Dx", "a#$\n\\Z"), ("/a#$/D", r"a#\Z")],
)
def test_the_translated_pattern(pattern: str, translated: str) -> None:
    assert compile_pattern(pattern).pattern == translated


def test_only_the_listed_characters_delimit() -> None:
    assert split_delimited("XaX") is None and split_delimited("aba") is None and split_delimited("[a[") is None
    assert matches("XaX", "XaX") and not matches("XaX", "a")


@pytest.mark.parametrize(
    ("pattern", "asked"),
    [("a{1000000000}", "1,000,000,000"), ("/(?:a{200}){100}/i", "20,000"), ("(?:ab{101}){100}", "10,100"),
     ("x{99999999999999999999999}", "1,000,000,000"), ("(?x) (?:a{101}) {100} # a space before the quantifier", "10,100")],
)
def test_counted_repeats_past_the_limit_are_refused_before_they_take_the_memory(pattern: str, asked: str) -> None:
    # regex builds a compiled pattern as large as its counted repeats ask (a{1000000000}: gigabytes)
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value) == (
        f"regular expression {pattern!r} asks for {asked} repetitions in its counted repeats "
        f"({{m}}, {{m,n}}; nested ones multiplied), more than the {MAX_REPETITIONS:,} allowed"
    )


@pytest.mark.parametrize(
    "pattern",
    [r"a{10000}", r"(?:a{100}){100}", r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", r"a{0,1000000000}", r"a{2,}",
     r"[{1000000}]", r"\p{L}{3}\N{EM DASH}{2}", r"(?#{1000000})a", r"a\{1000000}"],
)
def test_repeats_within_the_limit_and_braces_that_are_no_repeat_compile(pattern: str) -> None:
    assert compile_pattern(pattern).pattern


def test_version_1_is_refused_naming_it() -> None:
    with pytest.raises(PatternError, match=r"asks for the regex module's version 1 \(V1\); evalkit reads version 0"):
        compile_pattern("(?V1)[[a-z]--[aeiou]]")


@pytest.mark.parametrize(("pattern", "reason"), [("/(?u)x/", "ASCII, LOCALE and UNICODE flags are mutually incompatible"),
                                                 ("(" * 5000 + ")" * 5000, "nested too deeply")])
def test_what_regex_refuses_otherwise_is_an_invalid_pattern_too(pattern: str, reason: str) -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value) == f"invalid regular expression {pattern!r}: {reason}"


def test_a_plain_pattern_is_never_read_as_delimited() -> None:
    assert compile_plain("/a/i").search("x/a/i") and not compile_plain("/a/i").search("A")
    assert compile_pattern("/a/i").search("A")


def test_every_modifier_said_to_be_supported_compiles_and_they_are_the_documented_ones() -> None:
    assert SUPPORTED_MODIFIERS == frozenset("imsxuDASJ")  # the module docstring's list
    for letter in sorted(SUPPORTED_MODIFIERS):
        assert compile_pattern(f"/a/{letter}").search("a")


def test_a_bracket_first_in_a_class_keeps_the_braces_after_it_in_the_class() -> None:
    # "[]{1000000}]" is one class of "]", "{", "}" and the digits: no counted repeat at all
    assert compile_pattern("[]{1000000}]").fullmatch("{")


def test_ten_thousand_repetitions_are_allowed_and_one_more_is_not() -> None:
    assert compile_pattern("a{10000}").fullmatch("a" * 10_000)
    with pytest.raises(PatternError, match=r"asks for 10,001 repetitions .* more than the 10,000 allowed"):
        compile_pattern("a{10001}")


@pytest.mark.parametrize(("pattern", "asked"), [(r"\X{20000}", "20,000"), (r"\d{20000}", "20,000"), (r"(?:\w{101}){100}", "10,100")])
def test_an_escape_without_a_braced_argument_is_an_item_its_counted_repeat_applies_to(pattern: str, asked: str) -> None:
    # only \p, \P and \N take an argument in braces; \X (a grapheme), \d, \w repeated are counted
    with pytest.raises(PatternError, match=f"asks for {asked} repetitions"):
        compile_pattern(pattern)


@pytest.mark.parametrize(
    ("pattern", "member", "outsider"),
    [
        ("[]{20000}]", "{", "a"),  # "]" first in the class is a member
        ("[^]{20000}]", "a", "{"),  # so it is after "^"
        ("[[:alpha:]{20000}]", "{", "]"),  # "[:alpha:]" is one member: its "]" ends no class
        ("[\\]{20000}]", "]", "a"),  # an escaped "]" is a member
        ("[a{20000}]", "{", "b"),
    ],
)
def test_braces_inside_a_character_class_are_members_not_a_counted_repeat(pattern: str, member: str, outsider: str) -> None:
    compiled = compile_pattern(pattern)
    assert compiled.fullmatch(member) and not compiled.fullmatch(outsider)


@pytest.mark.parametrize(
    ("pattern", "asked"),
    [
        ("[a]{20000}", "20,000"),  # a class of one member, repeated
        ("[a[]{20000}", "20,000"),  # "[" inside a class is a member: the class ends at the first "]"
        ("[]]{20000}", "20,000"),  # a "]" first in the class, then the "]" that ends it
        ("[^a]{20000}", "20,000"),
        ("{10001}", "10,001"),  # a repeat with nothing before it counts its own repetitions
        ("a{20000}(b", "20,000"),  # so do the repeats before a group never closed: refused for them first
        ("x#a{20000}", "20,000"),  # outside verbose mode "#" starts no comment: the repeat after it counts
        ("/(?:a{101} # (\n){100}/x", "10,100"),  # in verbose mode a "(" in a comment opens no group
        (r"\p{L}{20000}", "20,000"),  # a property, its argument skipped, then repeated
        (r"[\]]{20000}", "20,000"),  # an escaped "]", then the "]" that ends the class
        ("x{5000}(?:b{101}){100}", "15,100"),  # 5,000, then 101 times 100 for the group
        ("x{5000}(?#c)(?:b{101}){100}", "15,100"),  # an inline comment ends at its ")"
        ("(?#c)a{20000}", "20,000"),
        ("a{9999}b{2}", "10,001"),  # twice is a repeat
    ],
)
def test_counted_repeats_after_classes_comments_and_escapes_count(pattern: str, asked: str) -> None:
    with pytest.raises(PatternError, match=f"asks for {asked} repetitions"):
        compile_pattern(pattern)


def test_a_plain_pattern_is_compiled_with_no_flag_of_its_own() -> None:
    # a JSON Schema's pattern: version 0 with its default, Unicode classes, and nothing else
    assert compile_plain("x").flags & ~regex.VERSION0 == regex.UNICODE


def test_version_1_is_refused_word_for_word() -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern("/(?V1)a/i")
    assert str(caught.value) == (
        "regular expression '/(?V1)a/i' asks for the regex module's version 1 (V1); evalkit reads version 0"
    )


@pytest.mark.parametrize(("pattern", "flags"), [("plain", regex.UNICODE), ("/delimited/", regex.ASCII)])
def test_a_pattern_carries_only_the_flags_its_modifiers_ask_for(pattern: str, flags: int) -> None:
    assert compile_pattern(pattern).flags & ~regex.VERSION0 == flags


def test_an_empty_comment_line_in_verbose_mode_is_skipped() -> None:
    assert compile_pattern("/a #\n b #\n/x").fullmatch("ab")


def test_a_repeat_of_exactly_once_asks_for_nothing_more() -> None:
    # 10,000 repetitions of "a" and one "b": within the limit, as "a{10000}b" is
    assert compile_pattern("a{10000}b{1}").fullmatch("a" * 10_000 + "b")


@pytest.mark.parametrize(
    ("count", "asked"),
    [("999999999", "999,999,999"), ("1000000000", "1,000,000,000"), ("1234567890", "1,000,000,000")],
)
def test_a_count_of_nine_digits_is_read_and_a_longer_one_is_taken_as_a_billion(count: str, asked: str) -> None:
    pattern = "a{" + count + "}"
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value).startswith(f"regular expression {pattern!r} asks for {asked} repetitions")


def test_a_repeat_with_only_a_maximum_compiles() -> None:
    assert compile_pattern("^a{,5}$").fullmatch("aaa") and not compile_pattern("^a{,5}$").fullmatch("aaaaaa")


def test_a_pattern_of_ten_thousand_characters_is_allowed_and_one_more_is_not() -> None:
    from evalkit.pcre import MAX_PATTERN_CHARS

    assert MAX_PATTERN_CHARS == 10_000
    # compiled, not matched: `regex` takes minutes to match a 10,000-character literal on itself
    assert compile_pattern("a" * 10_000).fullmatch("a") is None
    assert compile_plain("/" + "a" * 9_998 + "/").search("/a/") is None
    with pytest.raises(PatternError, match=r"^regular expression '/a{59}… \(10,001 characters\)' is 10,001 characters long"):
        compile_pattern("/" + "a" * 9_999 + "/")
    with pytest.raises(PatternError, match=r"is 10,001 characters long, more than the 10,000 a pattern may have$"):
        compile_plain("b" * 10_001)
