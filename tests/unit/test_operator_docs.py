"""What an operator reads first stays true: the README's top, docs/operating.md, and the production
doc against the built-in Claude profile; every relative link in the docs leads somewhere."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from app.cli.main import build_parser
from app.cli.starter import BUILT_IN_PERMISSION_MODE
from app.config.harnesses import BUILTIN_HARNESSES
from app.web.states import STATES

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
OPERATING = ROOT / "docs" / "operating.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _top(text: str) -> str:
    return text.split("\n## ", 1)[0]


def test_the_readme_starts_with_the_demo_and_the_test_commands_both_real_scripts() -> None:
    commands = [
        line.split("#")[0].strip() for line in _top(README.read_text()).splitlines() if line.startswith("scripts/")
    ]
    assert commands[:2] == ["scripts/demo.sh", "scripts/test.sh"]
    assert all((ROOT / command).is_file() for command in commands[:2])
    assert "exec scripts/test.sh" in (ROOT / ".ci" / "run").read_text()  # CI runs the second one


def test_the_readmes_top_is_short_and_sends_an_operator_to_docs_operating_md() -> None:
    top = _top(README.read_text())
    assert len(top.splitlines()) <= 30, len(top.splitlines())
    assert "docs/operating.md" in top


def test_operating_md_says_what_every_state_of_the_page_means() -> None:
    text = OPERATING.read_text()
    missing = [shown.label for shown in STATES.values() if f"**{shown.label}**" not in text]
    assert missing == []


def test_every_the_loop_command_in_operating_md_parses() -> None:
    # the code blocks' lines; `the-loop resume` in a sentence is a comment's verb, not a command
    commands = re.findall(r"^(the-loop .*?)(?:\s+# .*)?$", OPERATING.read_text(), flags=re.MULTILINE)
    assert len(commands) >= 6, commands
    parser = build_parser()
    for line in commands:
        parser.parse_args(shlex.split(line)[1:])  # a usage error raises


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
