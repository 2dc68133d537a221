"""Which serving identities are evidence: the original's rules for instance, alias and reported model."""

from __future__ import annotations

import pytest
from evalkit.answers import ServingIdentity
from evalkit.identity import identity_problems
from evalkit.runner import run_identity
from evalkit.runs import CaseResult

GOOD = ServingIdentity("internal-openai", "gpt-4o", "gpt-4o-2024-08-06")


@pytest.mark.parametrize(
    "identity",
    [GOOD, ServingIdentity("a", "b", "c"), ServingIdentity("x" * 100, "m" * 150, "org/model:v1@2024+b_1.0-rc"),
     ServingIdentity("my_instance.eu-1", "claude-3-5-sonnet@20240620", "llama3:8b"),
     ServingIdentity("lmstudio", "C:\\models\\judge.gguf", "C:\\models\\judge.gguf")],  # a Windows server's model file
)
def test_well_formed_identities_have_no_problem(identity: ServingIdentity) -> None:
    assert identity_problems(identity) == []


@pytest.mark.parametrize(
    ("identity", "problem"),
    [
        (ServingIdentity("", "a", "b"), 'provider instance "" is empty'),
        (ServingIdentity("x" * 101, "a", "b"), f'provider instance "{"x" * 57}..." is longer than 100 characters'),
        (ServingIdentity("a", "m" * 151, "b"), f'model alias "{"m" * 57}..." is longer than 150 characters'),
        (ServingIdentity("a/b", "a", "b"), 'provider instance "a/b" may only use ASCII letters, digits and _ . -'),
        (ServingIdentity("a:b", "a", "b"), 'provider instance "a:b" may only use ASCII letters, digits and _ . -'),
        (ServingIdentity("a", "a b", "b"), 'model alias "a b" may only use ASCII letters, digits and _ . / \\ : @ + -'),
        (ServingIdentity("a", "a", "über-v1"), 'reported model "über-v1" may only use ASCII letters, digits and _ . / \\ : @ + -'),
        (ServingIdentity("a", "a", "[bold]x"), 'reported model "[bold]x" may only use ASCII letters, digits and _ . / \\ : @ + -'),
        (ServingIdentity("a", "a", "x\n"), 'reported model "x\\x0a" contains control or invisible characters (the first: U+000A, character 2)'),
        (ServingIdentity("a", "a", "x\u200b"), 'reported model "x\\u200b" contains control or invisible characters (the first: U+200B ZERO WIDTH SPACE, character 2)'),
        # a typed backslash doubled: the typed text \u202e (a backslash is allowed) never reads as the character
        (ServingIdentity("a", "a", "C:\\models\\j\u202e.gguf"),
         'reported model "C:\\\\models\\\\j\\u202e.gguf" contains control or invisible characters (the first: U+202E RIGHT-TO-LEFT OVERRIDE, character 12)'),
        (ServingIdentity("a", "a", "C:\\models\\j\\u202e x"), 'reported model "C:\\\\models\\\\j\\\\u202e x" may only use ASCII letters, digits and _ . / \\ : @ + -'),
        (ServingIdentity("a", "a", 'a"b'), 'reported model "a\\"b" may only use ASCII letters, digits and _ . / \\ : @ + -'),
        (ServingIdentity("a", "a", "\u202e" * 40), 'reported model "' + "\\u202e" * 9 + '..." contains control or invisible characters (the first: U+202E RIGHT-TO-LEFT OVERRIDE, character 1)'),
        (ServingIdentity("a", "a", "C:\\Program Files\\j.gguf"), 'reported model "C:\\\\Program Files\\\\j.gguf" may only use ASCII letters, digits and _ . / \\ : @ + -'),
        (ServingIdentity("a", "a", "http://evil host\nx"), 'reported model "http://evil host\\x0ax" contains control or invisible characters (the first: U+000A, character 17)'),
        (ServingIdentity("a", "a", "http://host/v1"), 'reported model "http://host/v1" is a URL'),
        (ServingIdentity("a", "git+ssh://h", "b"), 'model alias "git+ssh://h" is a URL'),
        (ServingIdentity("a", "a", "sk-abcdefghijklmnopqrstuv"), 'reported model "***" looks like a credential or an e-mail address'),
        (ServingIdentity("a", "a", "me@example.com"), 'reported model "***" looks like a credential or an e-mail address'),
        (ServingIdentity("a", None, "b"), 'model alias "None" is NoneType, not text'),  # type: ignore[arg-type]
    ],
)
def test_each_rule_names_the_part_and_shows_the_value_safely(identity: ServingIdentity, problem: str) -> None:
    assert identity_problems(identity) == [problem]


def test_every_bad_part_is_listed() -> None:
    assert len(identity_problems(ServingIdentity("", "a b", "c\n"))) == 3


def case(case_id: str, identity: ServingIdentity | None, error: str | None = None) -> CaseResult:
    return CaseResult(case_id, True, 1.0, identity=identity, error=error)


def test_a_run_with_one_malformed_case_identity_is_not_verified() -> None:
    bad = ServingIdentity("app", "app-v1", "x y")
    identity, note = run_identity([case("a", GOOD), case("b", bad), case("c", GOOD)], True)
    assert identity is None
    assert note == (
        "1 case carries a serving identity that is not well formed, so it is no evidence of who answered: "
        'reported model "x y" may only use ASCII letters, digits and _ . / \\ : @ + -'
    )


def test_an_errored_case_is_not_looked_at_and_good_cases_verify() -> None:
    assert run_identity([case("a", GOOD), case("b", ServingIdentity("", "", ""), error="boom")], True) == (GOOD, None)


def test_disagreeing_identities_are_shown_with_escapes() -> None:
    other = ServingIdentity("internal-openai", "gpt-4o", "gpt-4o-2024-11-20")
    identity, note = run_identity([case("a", GOOD), case("b", other), case("c", other)], True)
    assert identity is None and note is not None
    assert note.endswith("gpt-4o-2024-11-20 via internal-openai/gpt-4o (2 cases), gpt-4o-2024-08-06 via internal-openai/gpt-4o (1 case)")
