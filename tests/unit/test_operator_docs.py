"""What an operator reads stays true: the production doc against the built-in Claude profile;
every relative link in the docs leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.cli.starter import BUILT_IN_PERMISSION_MODE
from app.config.harnesses import BUILTIN_HARNESSES

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_production_doc_names_the_permission_mode_the_built_in_claude_profile_has() -> None:
    built_in = BUILTIN_HARNESSES["claude"].permission_mode
    assert built_in == BUILT_IN_PERMISSION_MODE  # what init writes and says is the built-in
    text = (ROOT / "docs" / "claude-code-production.md").read_text()
    assert f"`permissionMode: {built_in}`" in text
    assert "default permission mode" not in text  # the built-in is not Claude Code's `default`


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.MULTILINE)
    named = re.findall(r'<a id="([^"]+)"', page.read_text())  # an anchor of its own, in the middle of a paragraph
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings} | set(named)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in _anchors(linked)):
            broken.append(target)
    assert broken == []
