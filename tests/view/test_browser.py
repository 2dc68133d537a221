"""The viewer in a real browser: Debian's Chromium driven headless by Playwright, against the real
``evalkit view`` server process over a store written by the CLI.

Open a run, filter its regressed cases, open the comparison, search (and a runaway pattern),
follow a running run until its last shard is in, read a retrieval run — asserting on the rendered
page, that no injected script ran, that nothing was loaded from elsewhere and that the browser
logged no error (a Content-Security-Policy violation is one). Screenshots at 1200 and 390 px go to
``test-artifacts/viewer/`` (``$EVALKIT_TEST_ARTIFACTS``).

Outside CI the module is skipped, with the reason, when no Chromium is installed (``apt-get
install chromium``); in CI (``CI=true``) a missing Chromium fails it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.reports import artifact_dir
from tests.view.server_process import Served, serve
from tests.view.store_project import SCRIPT_ID, finish_live_run

#: What the browser is started with: no sandbox (containers), nothing fetched on its own.
WIDE, NARROW = 1200, 390


@pytest.fixture
def server(evalkit_process, stored) -> Iterator[Served]:  # noqa: ANN001
    """``evalkit view --port 0`` over the test's store, in a child process (this test is about it)."""
    served = serve(evalkit_process)
    try:
        yield served
    finally:
        served.stop()


class Tab:
    """One browser page at one width, with the requests it made and the errors it logged."""

    def __init__(self, browser, base: str, width: int = WIDE) -> None:  # noqa: ANN001 - a playwright Browser
        self.base = base
        self.width = width
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)

    def open(self, path: str) -> None:
        self.page.goto(self.base.rstrip("/") + path)

    def rows(self) -> list[str]:
        """The case ids the page lists, as the reader sees them, once the page a click opened has
        loaded (``all_inner_texts`` does not wait: read mid-load, a list was empty)."""
        self.page.wait_for_load_state("load")
        return self.page.locator("tbody.case .case-id, article.compare-case .case-id").all_inner_texts()

    def injected(self) -> list[object]:
        return self.page.evaluate("[window.__evalkitInjected, window.__evalkitAnswer, window.__evalkitImg, window.__evalkitRun]")

    def fits(self) -> bool:
        return self.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    def screenshot(self, name: str) -> Path:
        target = artifact_dir("viewer") / f"{name}-{self.width}.png"
        self.page.screenshot(path=str(target), full_page=True)
        return target

    def close(self) -> None:
        self.context.close()

    def clean(self) -> bool:
        """Nothing loaded from elsewhere, nothing logged as an error."""
        foreign = [url for url in self.requests if not url.startswith(self.base.split("?")[0].rstrip("/")) and not url.startswith("data:")]
        assert foreign == [] and self.errors == [], (foreign, self.errors)
        return True


def test_open_a_run_filter_its_regressions_and_open_the_comparison(browser, server, stored) -> None:
    tab = Tab(browser, server.url)
    try:
        tab.open("/")
        tab.page.get_by_role("link", name="viewkit.review").click()
        assert tab.page.locator("svg.trend circle.point").count() == 6  # three runs, two figures
        tab.screenshot("set")
        tab.page.locator("#run-table a", has_text="v2").first.click()
        assert tab.page.locator("#verdict").inner_text() == "REGRESSED"
        assert tab.page.locator("#run-id").inner_text() == "v2"
        assert len(tab.rows()) == 10
        tab.page.get_by_role("link", name="Regressed (2)").click()
        assert "filter=regressed" in tab.page.url
        assert tab.rows() == ["greeting", SCRIPT_ID]  # the hostile id shown whole, as text
        answer = tab.page.locator('tbody.case[data-case="greeting"] pre.diff.new').inner_text()
        assert answer == "goodbye there, see you"
        assert tab.page.locator('tbody.case[data-case="greeting"] pre.diff.old del').all_inner_texts() == ["hello", "there"]
        hostile = tab.page.locator("tbody.case").nth(1).locator("pre.diff.new").inner_text()
        assert "<script>window.__evalkitAnswer=1</script>" in hostile and "\\x1b[31mred\\x00" in hostile
        assert tab.injected() == [None, None, None, None]
        assert tab.fits()
        tab.screenshot("run-regressed")
        tab.page.get_by_role("link", name="compare the two runs").click()
        assert tab.page.locator("#verdict").inner_text() == "REGRESSED"
        assert tab.rows() == ["greeting", SCRIPT_ID, "flaky-fact", "edited", "added"]
        fixed = tab.page.locator('article.compare-case[data-case="flaky-fact"]')
        assert fixed.locator("del").inner_text() == "Lyon" and fixed.locator("ins").inner_text() == "Paris"
        assert "McNemar" in tab.page.locator("#flips").inner_text()
        tab.screenshot("compare")
        tab.page.get_by_role("link", name="Still failing (1)").click()
        assert tab.rows() == ["always-wrong"]
        assert tab.injected() == [None, None, None, None]
        assert tab.clean()
    finally:
        tab.close()


def test_search_text_and_a_regex_that_runs_away(browser, server, stored) -> None:
    tab = Tab(browser, server.url)
    try:
        tab.open(f"/run?id={stored.v2}")
        tab.page.get_by_role("searchbox").fill("goodbye")
        tab.page.get_by_role("button", name="Show").click()
        assert tab.rows() == ["greeting", SCRIPT_ID]
        assert "q=goodbye" in tab.page.url
        assert "2 matches" in tab.page.locator("#shown-count").inner_text()
        tab.screenshot("search")
        tab.page.get_by_role("searchbox").fill("capital of france")  # the installed prompt's text
        tab.page.get_by_role("button", name="Show").click()
        assert tab.rows() == ["flaky-fact"]
        tab.page.get_by_role("searchbox").fill("(x|xx)+y")
        tab.page.get_by_label("regular expression").check()
        tab.page.get_by_role("button", name="Show").click()
        assert "the pattern took too long" in tab.page.locator("#search-error").inner_text()
        tab.page.get_by_role("link", name="clear the search").click()
        assert len(tab.rows()) == 10
        assert tab.clean()
    finally:
        tab.close()


def test_a_running_run_refreshes_as_its_cases_arrive(browser, server, stored, viewer_cli) -> None:
    tab = Tab(browser, server.url)
    try:
        tab.open(f"/run?id={stored.live}")
        assert tab.page.locator("#live").is_visible()
        first = len(tab.rows())
        assert 0 < first < 8
        tab.screenshot("live")
        finish_live_run(viewer_cli)
        tab.page.wait_for_selector("#live", state="detached", timeout=60_000)  # the page reloaded itself
        assert len(tab.rows()) == 8
        assert tab.page.locator("#run-status").inner_text().startswith("complete, 8 of 8")
        assert tab.clean()
    finally:
        tab.close()


def test_a_retrieval_run_marks_the_relevant_documents(browser, server, stored) -> None:
    tab = Tab(browser, server.url)
    try:
        tab.open(f"/run?id={stored.retrieval_v2}")
        csv = tab.page.locator('tbody.case[data-case="csv"]')
        assert csv.locator("ol.ranking li").all_inner_texts()[2].startswith("doc-csv")
        assert csv.locator("li.expected .mono").all_inner_texts() == ["doc-csv"]
        assert "read rows of a comma separated values file" in csv.inner_text()
        tab.screenshot("retrieval")
        assert tab.clean()
    finally:
        tab.close()


def test_pages_fit_a_phone(browser, server, stored) -> None:
    tab = Tab(browser, server.url, NARROW)
    try:
        for name, path in (("sets", "/"), ("run", f"/run?id={stored.v2}"), ("compare", f"/compare?base={stored.v1}&run={stored.v2}"),
                           ("case", f"/case?run={stored.v2}&id=big")):  # fmt: skip
            tab.open(path)
            if not tab.fits():
                tab.screenshot(f"too-wide-{name}")
                wide = tab.page.evaluate(
                    "Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)"
                    ".slice(0, 5).map(e => e.tagName + '.' + e.className)"
                )
                raise AssertionError(f"{path} is wider than {NARROW} px: {wide}")
        tab.open(f"/run?id={stored.v2}&filter=regressed")
        assert not tab.page.locator("#case-table thead").is_visible()  # rows become cards
        tab.screenshot("run-regressed")
        assert tab.clean()
    finally:
        tab.close()
