"""docs/github-app.md names the permissions and events the-loop needs as the one table of them does
(the table `init --app`, the App's manifest and `doctor` read)."""

from __future__ import annotations

import re
from pathlib import Path

from domain.github_app import EVENTS, PERMISSIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "github-app.md"
ROW = re.compile(r"^\| (?P<title>[A-Z][A-Za-z ]+) \((?P<scope>repository|organization)\) \| (?P<access>[A-Za-z -]+) \|")


def test_the_docs_permission_table_is_the_one_the_code_reads() -> None:
    rows = [match.groups() for line in DOC.read_text(encoding="utf-8").splitlines() if (match := ROW.match(line))]
    assert rows == [
        (permission.title, permission.scope.name.lower(), permission.access.shown) for permission in PERMISSIONS
    ]


def test_the_docs_events_to_subscribe_to_are_the_ones_the_code_reads() -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "**Subscribe to events**: " + ", ".join(f"`{event}`" for event in EVENTS) + "." in text
