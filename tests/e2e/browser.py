"""Headless Chromium from Debian's packages, driven by Playwright (no downloaded browser)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("THE_LOOP_CHROMIUM", "/usr/bin/chromium")
# without the background-networking flags Chromium keeps calling out and a closed network refuses it
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = "THE_LOOP_UI_SCREENSHOTS"  # set: the test writes its screenshots into docs/ui/ (never in CI)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "ui"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright: pip install -e '.[dev]'")
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"no {CHROMIUM}: scripts/bootstrap.sh --tests installs Debian's chromium")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


def screenshot(page: Any, name: str, *, part: str = "") -> None:
    """docs/ui/NAME.png, only when asked (`THE_LOOP_UI_SCREENSHOTS=1`): CI leaves the tree clean.
    The whole page; or only the element `part` selects."""
    if not os.environ.get(SHOTS):
        return
    path = str(DOCS / f"{name}.png")
    if part:
        page.locator(part).screenshot(path=path)
    else:
        page.screenshot(path=path, full_page=True)
