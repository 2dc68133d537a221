"""The CLI's one output filter: what a plugin, set, endpoint or store says is shown as itself."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from evalkit.cli.console import literal
from evalkit.cli.json_output import print_json
from evalkit.privacy import remember_secret_holder, secrets_remembered_within
from rich.console import Console


@pytest.fixture(autouse=True)
def forget_remembered_secrets() -> Iterator[None]:
    """What a test here remembers as a secret is forgotten after it: the CLI runs in this process too."""
    with secrets_remembered_within():
        yield


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("[/]", "[/]"),
        ("[bold red]x[/]", "[bold red]x[/]"),
        ("trailing backslash \\", "trailing backslash \\"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("cr\rnul\x00del\x7f c1\x9b", "cr\\x0dnul\\x00del\\x7f c1\\x9b"),
        ("bidi\u202eiso\u2066sep\u2028", "bidi\\u202eiso\\u2066sep\\u2028"),
        ("surrogate \udcff", "surrogate \\udcff"),
        ("tab\tand\nnewline", "tab\\x09and\\x0anewline"),
        ("zero\u200bwidth \U000e0001tag", "zero\\u200bwidth \\U000e0001tag"),
        (":warning: ✓ é 漢", ":warning: ✓ é 漢"),
    ],
)
def test_rich_prints_the_text_itself(text: str, shown: str) -> None:
    out = io.StringIO()
    Console(file=out, width=200, no_color=True, highlight=False, emoji=False).print(f"[bold]{literal(text)}[/bold]")
    assert out.getvalue() == shown + "\n"
    assert literal(text, markup=False) == shown


def test_multiline_text_keeps_its_lines_and_tabs_only() -> None:
    assert literal("line 1\n\tline 2\r\x1b[2J", multiline=True) == "line 1\n\tline 2\\x0d\\x1b[2J"


def test_a_long_value_is_cut_in_its_middle_as_one_line_and_each_line_of_a_multiline_one() -> None:
    """Every value entering the terminal is cut where it enters (literal): a template's value too,
    which rich would otherwise wrap into as many terminal lines as it takes."""
    from evalkit.shapes import MAX_MESSAGE_LINE

    wide = "[start] " + "\n".join(["w" * 999] * 12) + " [end]"
    shown = literal(wide)
    assert shown.startswith("\\[start] ") and shown.endswith(" \\[end]") and "characters cut" in shown
    assert "\n" not in shown and len(shown) < MAX_MESSAGE_LINE + 100
    lines = literal(wide, multiline=True).split("\n")
    assert len(lines) == 12 and all(len(line) < MAX_MESSAGE_LINE for line in lines)
    assert literal("x" * MAX_MESSAGE_LINE, markup=False) == "x" * MAX_MESSAGE_LINE


def test_output_line_cuts_each_value_it_is_given_on_a_terminal_as_in_a_log() -> None:
    from evalkit.cli.console import Output

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream in (io.StringIO(), Terminal()):
        out = Output(stream)
        out.line("[red]error:[/red] {problem}", problem="provider p: " + "P" * 12_000 + " the reason")
        written = stream.getvalue()
        assert "".join(written.split()).endswith("Pthereason")
        assert len("".join(written.split())) < 2_100 and "characters cut" in " ".join(written.split())


def test_a_secret_astride_the_cut_is_scrubbed_before_it_is_cut() -> None:
    remember_secret_holder(_Holder())
    from evalkit.cli.console import Output

    text = "a" * 985 + " render-test-secret-1234 " + "z" * 2_000
    message = io.StringIO()
    Output(message).message(text)  # an error message: its lines were cut before the secrets went
    for shown in (literal(text), literal(text, multiline=True), message.getvalue()):
        assert "render-test" not in shown and "secret-1234" not in shown and "test-secr" not in shown
        assert "characters cut" in shown


def test_json_output_parses_to_the_same_text(capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "\x1b[31m \x9b \u202e \u2028 \udcff \U000e0001 [/] \n"
    print_json({"text": hostile})
    out = capsys.readouterr().out
    assert json.loads(out) == {"text": hostile}
    assert out.isascii() or all(ch.isprintable() or ch in "\n " for ch in out)


class _Holder:
    def secret_values(self) -> tuple[str, ...]:
        return ("render-test-secret-1234", "short")


@pytest.mark.parametrize("compact", [False, True])
def test_declared_secrets_are_scrubbed_from_text_and_json(capsys: pytest.CaptureFixture[str], compact: bool) -> None:
    holder = _Holder()
    remember_secret_holder(holder)
    assert literal("key render-test-secret-1234 in a short text") == "key *** in a short text"
    print_json({"error": "key render-test-secret-1234", "list": ["render-test-secret-1234\x9b"]}, compact=compact)
    out = capsys.readouterr().out
    assert json.loads(out) == {"error": "key ***", "list": ["***\x9b"]}
    assert out.count("\n") == (1 if compact else 6)


class _QuotingHolder:
    def secret_values(self) -> tuple[str, ...]:
        return ('quote"and\\backslash-secret',)


def test_a_secret_json_escapes_is_scrubbed_too(capsys: pytest.CaptureFixture[str]) -> None:
    holder = _QuotingHolder()
    remember_secret_holder(holder)
    print_json({"detail": 'got quote"and\\backslash-secret back'}, compact=True)
    assert json.loads(capsys.readouterr().out) == {"detail": "got *** back"}


def test_case_documents_of_shared_and_distinct_checks_are_each_cases_own_data() -> None:
    """``case_document`` reuses the check data of cases that share one tuple of checks; each case
    still prints exactly its own checks, whatever came before it."""
    from evalkit.cli.render import case_document
    from evalkit.convert import unstructure
    from evalkit.grading import Check
    from evalkit.runs import CaseResult

    shared = (Check("contains", True), Check("within_length", True))
    other = (Check("contains", False, detail="no 'Paris'"),)
    equal_but_separate = tuple(Check(c.name, c.passed) for c in shared)
    cases = [
        CaseResult(case_id=name, passed=all(c.passed for c in checks), score=1.0, checks=checks)
        for name, checks in [("a", shared), ("b", other), ("c", shared), ("d", equal_but_separate), ("e", ())]
    ]
    documents = [case_document(case) for case in cases]
    assert [d["checks"] for d in documents] == [[unstructure(c) for c in case.checks] for case in cases]
    assert documents[0]["checks"] is documents[2]["checks"]
    assert documents[1]["checks"] == [{"name": "contains", "passed": False, "error": None, "detail": "no 'Paris'"}]


def test_case_documents_keep_only_a_few_check_lists_alive() -> None:
    """Cases whose checks are never shared (long plugin messages are not cached by the store) do
    not pile up: only the last few check lists printed are remembered."""
    from evalkit.cli import render
    from evalkit.grading import Check
    from evalkit.runs import CaseResult

    for n in range(200):
        checks = (Check("cites_sources", False, error=f"unresolved: doc-{n} " + "x" * 10_000),)
        document = render.case_document(CaseResult(case_id=f"c{n}", passed=False, score=0.0, checks=checks))
        assert document["checks"][0]["error"].startswith(f"unresolved: doc-{n} ")
    assert len(render._CHECK_DOCUMENTS) <= render._CHECK_DOCUMENTS_KEPT


def _hostile_cases() -> list[Any]:
    """Cases with every kind of value ``case_json`` must write as ``json.dumps`` would."""
    import collections
    import math

    from evalkit.answers import ServingIdentity
    from evalkit.grading import AGREEMENT_CHECK, Check
    from evalkit.runs import CaseResult

    class Label(str):
        """A ``str`` subclass, as a plugin could hand over."""

    identity = ServingIdentity("inst\u202e", "alias\x00", "rep\udcff")
    shared = (Check("contains", True), Check("matches_pattern", False, detail='quote " and \\ and \n'))
    unstable = (Check(AGREEMENT_CHECK, False, detail="2 of 3"), Check("judge", True))
    return [
        CaseResult(case_id="plain", passed=True, score=1.0, checks=shared, latency_s=0.0123456, identity=identity),
        CaseResult(case_id="again", passed=True, score=1.0, checks=shared, latency_s=1e-9, identity=identity),
        CaseResult(case_id=Label("sub"), passed=False, score=0, checks=unstable, error="boom\x00\x1b[31m", yardstick="judge:x"),
        CaseResult(case_id="nan", passed=False, score=math.nan, latency_s=math.inf, answer_text="\udcff\ud800 not UTF-8"),
        CaseResult(case_id="neg-inf", passed=False, score=-math.inf, checks=(), answer_text="\u2028\u0085\x7f" * 3),
        CaseResult(case_id="big", passed=True, score=10**30, answer_text="é" * 100_000, detail={"k": [1, 2.5, None, {"x": "\x00"}]}),
        CaseResult(case_id="odd detail", passed=True, score=0.5, detail=collections.OrderedDict(b=object(), a=(1, 2))),
        CaseResult(case_id="mapping", passed=True, score=0.25, detail=types_mapping()),
    ]


def types_mapping() -> Any:
    """A read-only mapping (not a dict): ``json.dumps`` writes it through ``default=str``."""
    import types

    return types.MappingProxyType({"a": 1})


def test_case_json_is_exactly_the_compact_text_of_the_case_document() -> None:
    """``case_json`` writes the scalars itself and shared parts once; the text must be byte for
    byte what evalkit's one JSON writer (``jsontext.document_text``: ``json.dumps``, compact, with
    null for NaN and the infinities, which JSON has not) writes for ``case_document`` (hostile
    strings, NaN, infinities, a ``str`` subclass, an int score, mappings that are not dicts),
    repeated cases included."""
    from evalkit.cli.render import case_document, case_json
    from evalkit.jsontext import document_text

    for case in _hostile_cases() * 2:
        expected = document_text(case_document(case))
        assert case_json(case) == expected, case.case_id
        json.loads(expected, parse_constant=lambda name: pytest.fail(f"{name} in a case's JSON"))


def test_case_json_keeps_only_a_few_shared_texts_alive() -> None:
    from evalkit.answers import ServingIdentity
    from evalkit.cli import render
    from evalkit.grading import Check
    from evalkit.runs import CaseResult

    for n in range(200):
        checks = (Check("cites_sources", False, error=f"unresolved: doc-{n} " + "x" * 10_000),)
        case = CaseResult(case_id=f"c{n}", passed=False, score=0.0, checks=checks, identity=ServingIdentity("i", f"a{n}", "r"))
        assert json.loads(render.case_json(case))["checks"][0]["error"].startswith(f"unresolved: doc-{n} ")
    assert len(render._CHECK_TEXTS) <= render._CHECK_DOCUMENTS_KEPT
    assert len(render._IDENTITY_TEXTS) <= render._CHECK_DOCUMENTS_KEPT
