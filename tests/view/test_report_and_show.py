"""Answers where you look (issue 38, item 2): the HTML report and `evalkit show` give the prompt,
the reference, the answer and, beside a regressed or edited case, the baseline's answer — over the
viewer's store (written by `evalkit run`), whose answers and case ids are hostile."""

from __future__ import annotations

import html
from itertools import takewhile
from pathlib import Path

from tests.view.store_project import HOSTILE_ANSWER, SCRIPT_ID


def _case_row(page: str, case_id: str) -> str:
    start = page.index(f'data-case="{html.escape(case_id)}"')
    return page[start : page.index("</tr>", start)]


def test_the_html_report_gives_prompt_reference_answer_and_the_baseline_answer(viewer_cli, stored, project: Path) -> None:
    result = viewer_cli("report", stored.v2, "--format", "html", "-o", "v2.html")
    assert result.code == 0, result.stderr
    page = (project / "v2.html").read_text()
    greeting = _case_row(page, "greeting")  # regressed
    assert '<pre class="prompt">Say hello to the user.</pre>' in greeting
    assert '<pre class="reference">hello</pre>' in greeting
    assert '<pre class="answer">goodbye there, see you</pre>' in greeting
    assert f"baseline answer (run {stored.v1})" in greeting and '<pre class="baseline-answer">hello there</pre>' in greeting
    edited = _case_row(page, "edited")  # the installed set holds v2's version: the one answered
    assert '<pre class="prompt">Name two colours.</pre>' in edited and '<pre class="baseline-answer">blue</pre>' in edited
    assert "baseline-answer" not in _case_row(page, "always-wrong")  # still failing: not beside the baseline
    hostile = _case_row(page, SCRIPT_ID)
    assert "<script>window.__evalkitAnswer" not in hostile and "&lt;script&gt;window.__evalkitAnswer=1&lt;/script&gt;" in hostile
    assert "\x1b" not in page and "\\x1b[31mred\\x00" in hostile


def test_the_html_report_of_a_metadata_run_says_its_answers_are_not_stored(viewer_cli, stored, project: Path) -> None:
    assert viewer_cli("report", stored.v3, "--format", "html", "-o", "v3.html").code in (0, 1)
    row = _case_row((project / "v3.html").read_text(), "greeting")
    assert "answer not stored (privacy metadata)" in row and '<pre class="prompt">Say hello to the user.</pre>' in row


def test_show_prints_prompt_reference_and_the_baseline_answer_under_each_answer(viewer_cli, stored) -> None:
    result = viewer_cli("show", stored.v2)
    assert result.code == 0, result.stderr
    out = result.stdout
    block = out[out.index("  greeting: goodbye there, see you") :].splitlines()[:4]
    assert block == [
        "  greeting: goodbye there, see you",
        "    prompt: Say hello to the user.",
        "    reference: hello",
        f"    baseline answer (run {stored.v1}): hello there",
    ]
    still_failing = list(takewhile(lambda line: line.startswith("    "), out[out.index("  always-wrong: 41") :].splitlines()[1:]))
    assert still_failing == ["    prompt: What is 6 times 7?", "    reference: 42"]  # no baseline answer: it did not regress
    assert "\x1b" not in out and "<script>window.__evalkitAnswer=1</script>" in out  # shown as text, controls escaped
    assert "\\x1b[31mred\\x00" in out and HOSTILE_ANSWER not in out
