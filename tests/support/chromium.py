"""Debian's Chromium driven headless by Playwright, for the tests of pages (the HTML report, the
viewer): never downloaded, the system's own. Registered for every test by the root conftest
(``pytest_plugins``): a test module takes the ``browser`` fixture by name.

Outside CI a test that asks for it is skipped, with the reason shown, when no Chromium is installed
(``apt-get install chromium``); in CI (``CI=true``) a missing Chromium fails it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["CHROMIUM_ARGS", "browser", "chromium_path"]

#: What the headless browser is started with: no sandbox (root in a container), nothing reaching out.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]  # fmt: skip


def chromium_path() -> str | None:
    """Debian's Chromium (``$EVALKIT_CHROMIUM`` wins), or ``None``."""
    for candidate in (os.environ.get("EVALKIT_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium for the module (never downloaded: the system one)."""
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but Chromium is not installed: .ci/run must apt-get install chromium")
        pytest.skip("no Chromium installed (apt-get install chromium): pages are not checked in a browser")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
