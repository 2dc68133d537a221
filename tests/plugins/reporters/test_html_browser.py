"""The ``html`` reporter opened in a real browser: Debian's Chromium, driven headless by Playwright.

The reports are written by real CLI runs; the page is read from disk (``file://``) with every
network request recorded. The tests assert on the rendered DOM (verdict, rows, filters, that
injected script did not run, nothing overflows at 390 px) and leave screenshots at 1280 and 390
px in ``test-artifacts/html-report/`` (``$EVALKIT_TEST_ARTIFACTS``).

Outside CI the module is skipped, with the reason shown, when no Chromium is installed
(``apt-get install chromium``); in CI (``CI=true``) a missing Chromium fails it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.reports import HOSTILE_ANSWER, HOSTILE_IDS, REPORT_PLUGINS, answer_hostile, artifact_dir

SET = "reportkit.hostile"
WIDTHS = (1280, 390)
RETRIEVAL_FIXTURES = "evalkit-retrieval-fixtures"


class Page:
    """One report opened at one width, with the requests it made and the errors it logged."""

    def __init__(self, browser, path: Path, width: int) -> None:  # noqa: ANN001 - a playwright Browser
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.goto(path.as_uri())
        self.width = width

    def js(self, expression: str) -> object:
        return self.page.evaluate(expression)

    def visible_rows(self) -> list[str]:
        rows = self.page.locator("#case-table tbody tr.case")
        return [rows.nth(i).get_attribute("data-case") for i in range(rows.count()) if rows.nth(i).is_visible()]

    def screenshot(self, name: str) -> Path:
        target = artifact_dir("html-report") / f"{name}-{self.width}.png"
        self.page.screenshot(path=str(target), full_page=True)
        return target

    def close(self) -> None:
        self.context.close()


def assert_fits(page: Page) -> None:
    """Nothing is wider than the window (no sideways scrolling of the page itself)."""
    scroll, inner = page.js("[document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner, f"the page is {scroll} px wide in a {inner} px window"


@pytest.fixture
def cli(evalkit_cli, plugin_dists):  # noqa: ANN001, ANN201
    """``evalkit`` with the report and retrieval test distributions installed."""
    env = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS, RETRIEVAL_FIXTURES)}
    return lambda *args: evalkit_cli(*args, env=env)


def test_a_regressed_prompt_run_in_chromium(cli, project, browser) -> None:
    answer_hostile(project)
    for _ in range(2):  # the first run is the baseline; the second, no better, passes and is not accepted
        assert cli("run", SET, "--provider", "app", "--privacy", "full").code == 0
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    result = cli("run", SET, "--provider", "app", "--privacy", "full", "--label", "prompt v2", "--report", "html:report.html", "--json")
    assert result.code == 0, result.stderr
    run_id = result.json()["run_id"]
    path = project / "report.html"
    html = path.read_text()
    assert "<script>window.__evalkitInjected" not in html and "http://example.invalid" in html

    for width in WIDTHS:
        page = Page(browser, path, width)
        try:
            assert page.page.locator("#verdict").inner_text() == "REGRESSED"
            assert page.page.locator("#run-id").inner_text() == run_id
            assert page.page.locator("#case-table tbody tr.case").count() == len(HOSTILE_IDS)
            assert page.page.locator(".case-id").first.inner_text() == HOSTILE_IDS[0]  # shown as text, whole
            assert page.js("[window.__evalkitInjected, window.__evalkitAnswer, window.__evalkitImg]") == [None, None, None]
            assert page.visible_rows() == list(HOSTILE_IDS)
            page.page.get_by_role("button", name="Failed (2)").click()
            assert page.visible_rows() == list(HOSTILE_IDS[:2])  # passing cases are hidden
            assert page.page.locator("#shown-count").inner_text() == "2 of 6 shown"
            page.page.get_by_role("button", name="Regressed (2)").click()
            assert page.visible_rows() == list(HOSTILE_IDS[:2])
            first = page.page.locator("#case-table tbody tr.case").first
            first.locator("summary").click()
            answer = first.locator("pre.answer").inner_text()
            assert answer == HOSTILE_ANSWER.replace("\x1b", "\\x1b")  # markup and escape shown literally
            page.screenshot("prompts-regressed-filtered")
            page.page.get_by_role("button", name="All (6)").click()
            assert page.visible_rows() == list(HOSTILE_IDS)
            # the trend: three runs, two figures each; the first was accepted as the baseline (the second,
            # as good as the first and no better, was not)
            assert page.page.locator("svg.trend circle.point").count() == 6
            assert page.page.locator("svg.trend circle.point.accepted").count() == 2
            assert page.page.locator("svg.trend circle.point.current").count() == 2
            assert page.page.locator("#figures tbody tr").nth(0).inner_text().split() == ["Pass", "rate", "100.0%", "66.7%", "-33.3", "pp"]
            assert "prompt v2" in page.page.locator(".meta").inner_text()
            assert_fits(page)
            if width < 700:
                assert not page.page.locator("#case-table thead").is_visible()  # rows become cards
            page.screenshot("prompts-regressed")
            assert [url for url in page.requests if not url.startswith("file:")] == []
            assert page.errors == []
        finally:
            page.close()


def test_a_retrieval_run_shows_each_ranking_with_the_expected_ids_highlighted(cli, project, browser) -> None:
    questions = {"json": "deserialize a JSON document", "csv": "read rows of a comma separated values file",
                 "nap": "make the program wait a little", "nothing": "quantum chromodynamics lattice"}  # fmt: skip
    perfect = {questions["json"]: ["doc-json"], questions["csv"]: ["doc-csv"], questions["nap"]: ["doc-sleep", "doc-json"]}
    (project / "evalkit.toml").write_text('[deployments.local.retrievers."fixtures.declaring"]\nanswers = "answers.json"\n')
    (project / "answers.json").write_text(json.dumps(perfect))
    args = ("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "local", "--privacy", "full")
    assert cli(*args).code == 0
    worse = {**perfect, questions["csv"]: ["doc-zip", "doc-copy", "doc-csv"]}
    (project / "answers.json").write_text(json.dumps(worse))
    result = cli(*args, "--report", "html:retrieval.html", "--report", "junit:retrieval.xml", "--json")
    assert result.code == 0, result.stderr
    later = cli("report", result.json()["run_id"], "-o", "later.html")  # the installed set still knows the labels
    assert later.code == 0, later.stderr
    assert '<li class="expected" title="expected">doc-csv</li>' in (project / "later.html").read_text()

    for width in WIDTHS:
        page = Page(browser, project / "retrieval.html", width)
        try:
            assert page.page.locator("#verdict").inner_text() == "REGRESSED"
            assert page.page.locator("#case-table tbody tr.case").count() == 4
            csv = page.page.locator('tr.case[data-case="csv"]')
            assert csv.get_attribute("data-change") == "regressed"
            assert csv.locator("ol.ranking li").all_inner_texts() == ["doc-zip", "doc-copy", "doc-csv"]
            assert csv.locator("li.expected").all_inner_texts() == ["doc-csv"]
            assert "read rows of a comma separated values file" in csv.inner_text()
            nap = page.page.locator('tr.case[data-case="nap"]')
            assert nap.locator("li.expected").all_inner_texts() == ["doc-sleep"]
            assert "nothing in the index answers this question" in page.page.locator('tr.case[data-case="nothing"]').inner_text()
            figures = [row.split("\t")[0] for row in page.page.locator("#figures tbody tr").all_inner_texts()]
            assert figures == ["hit@1", "hit@3", "MRR@10", "nDCG@10"]
            assert page.page.locator("svg.trend circle.point").count() == 8  # two runs, four figures
            page.page.get_by_role("button", name="Regressed (1)").click()
            assert page.visible_rows() == ["csv"]
            page.page.get_by_role("button", name="All (4)").click()
            assert_fits(page)
            page.screenshot("retrieval-regressed")
            assert [url for url in page.requests if not url.startswith("file:")] == []
            assert page.errors == []
        finally:
            page.close()
