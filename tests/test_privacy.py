"""A declared secret is removed from text in every form an endpoint may echo it back in."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

import pytest
from evalkit.privacy import MIN_SECRET_LENGTH, REDACTION, remove_secrets, scrub, secret_pattern

KEY = "sk-abc/def+ghi=jkl0123456789"


def _unicode_escaped(text: str, upper: bool = False) -> str:
    return "".join((f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}") for c in text)


FORMS = {
    "literal": KEY,
    "JSON as json.dumps writes it": json.dumps(KEY)[1:-1],
    "JSON with a slash escaped": KEY.replace("/", "\\/"),
    "JSON with \\u002f": KEY.replace("/", "\\u002f"),
    "JSON with \\u002F": KEY.replace("/", "\\u002F"),
    "JSON with every character escaped": _unicode_escaped(KEY),
    "JSON with every character escaped, upper-case hex": _unicode_escaped(KEY, upper=True),
    "percent-encoded, upper-case hex": urllib.parse.quote(KEY, safe=""),
    "percent-encoded, lower-case hex": re.sub("%[0-9A-F]{2}", lambda pair: pair.group().lower(), urllib.parse.quote(KEY, safe="")),
    "percent-encoded, every character": "".join(f"%{b:02x}" for b in KEY.encode()),
    "base64 of the key": base64.b64encode(KEY.encode()).decode(),
    "base64 of user:key (Basic)": base64.b64encode(f"user:{KEY}".encode()).decode(),
    "base64 of a:key": base64.b64encode(f"a:{KEY}".encode()).decode(),
    "base64 of ab:key": base64.b64encode(f"ab:{KEY}".encode()).decode(),
    "URL-safe base64 of user:key": base64.urlsafe_b64encode(f"user:{KEY}".encode()).decode(),
}


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_every_echoed_form_of_a_secret_is_replaced_whole(form: str) -> None:
    assert remove_secrets(f"you sent {form}, thanks", (KEY,)) == f"you sent {REDACTION}, thanks"


def test_a_basic_authorization_header_is_replaced_with_its_padding() -> None:
    header = "Basic " + base64.b64encode(f"svc:{KEY}".encode()).decode()
    assert remove_secrets(f"echo: Authorization: {header}.", [KEY]) == f"echo: Authorization: Basic {REDACTION}."


def test_characters_a_secret_shares_with_text_are_left_alone() -> None:
    text = "sk-abc and def+ghi are ordinary words; 50% of %2F is fine; c2stYWJj"
    assert remove_secrets(text, (KEY,)) == text


def test_a_secret_holding_another_is_replaced_whole_and_short_values_are_kept() -> None:
    inner = "token-12345678"
    outer = f"{inner}-and-more"
    assert remove_secrets(f"[{outer}] [{inner}]", (inner, outer)) == f"[{REDACTION}] [{REDACTION}]"
    short = "x" * (MIN_SECRET_LENGTH - 1)
    assert remove_secrets(f"text {short}", (short,)) == f"text {short}"
    assert secret_pattern((short,)) is None


def test_non_ascii_secrets_and_escapes_of_their_surrogate_pairs() -> None:
    secret = "päss-wörd-€-😀-0123"
    escaped = json.dumps(secret)[1:-1]  # ensure_ascii: \u00e4, \u20ac, \ud83d\ude00
    assert "\\ud83d\\ude00" in escaped
    for form in (secret, escaped, urllib.parse.quote(secret), base64.b64encode(f"me:{secret}".encode()).decode()):
        assert remove_secrets(f"<{form}>", [secret]) == f"<{REDACTION}>", form


def test_the_pattern_is_compiled_once_per_set_of_secrets() -> None:
    assert secret_pattern((KEY, "another-secret-value")) is secret_pattern(("another-secret-value", KEY, KEY))


def test_an_html_escaped_secret_is_replaced() -> None:
    secret = "p&ss<w>rd\"0123'"
    escaped = secret.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;")
    assert remove_secrets(f"<td>{escaped}</td>", [secret]) == f"<td>{REDACTION}</td>"


def test_scrub_removes_declared_secrets_in_their_echoed_forms_too() -> None:
    echoed = " ".join((KEY.replace("/", "%2F"), KEY.replace("/", "\\/")))
    assert scrub(f"echo {echoed}", (KEY,)) == f"echo {REDACTION} {REDACTION}"


def test_escaped_forms_are_found_wherever_they_sit_among_other_escapes() -> None:
    """The pattern runs only near escape characters: forms far apart, side by side, at either end
    of a long text, among lone escapes, are all found (compared with scanning the whole text)."""
    import random

    rng = random.Random(34)
    forms = list(FORMS.values())
    pattern = secret_pattern((KEY,))
    for _ in range(200):
        pieces = []
        for _ in range(rng.randint(1, 6)):
            pieces.append("".join(rng.choices("abc %&\\\n", k=rng.randint(0, 3000))))
            pieces.append(rng.choice(forms))
        text = "".join(pieces) + rng.choice(["", "%", "\\", "tail"])
        scrubbed = remove_secrets(text, (KEY,))
        assert not any(form in scrubbed for form in forms)
        assert pattern.search(scrubbed) is None


def test_a_text_shorter_than_every_secret_is_returned_as_it_is() -> None:
    text = "sk-abc\\/d"
    assert remove_secrets(text, (KEY,)) is text


def test_e_mail_addresses_are_scrubbed_and_a_megabyte_word_is_read_once() -> None:
    # The e-mail pattern's parts are bounded (64, 63): unbounded, a search started at each of a
    # long word's characters and read to its end — a million-character answer took about an hour.
    assert scrub("mail alice.private+x@mail.example.co.uk now") == f"mail {REDACTION} now"
    assert scrub("x" * 1_000_000) == "x" * 1_000_000
    assert scrub("x" * 1_000_000 + "@example.com") == "x" * (1_000_000 - 64) + REDACTION
    assert scrub("a@" + "b" * 1_000_000) == "a@" + "b" * 1_000_000
