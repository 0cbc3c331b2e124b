"""The event catalog: its page cannot drift, and nothing is logged that it does not list."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path

from adapters.eventlog.writer import JsonlEventLog
from app.cli.event_docs import DOC_PATH, render_event_catalog
from domain.events import Event, catalog

ROOT = Path(__file__).resolve().parents[2]


def test_docs_events_md_is_exactly_what_the_catalog_generates() -> None:
    on_disk = (ROOT / DOC_PATH).read_text(encoding="utf-8")
    assert on_disk == render_event_catalog(), "docs/events.md is stale: run `python -m app.cli.event_docs`"


def test_docs_events_md_lists_every_catalog_entry_with_its_meaning() -> None:
    page = (ROOT / DOC_PATH).read_text(encoding="utf-8")
    missing = [name for name, meaning in catalog().items() if f"| `{name}` | {meaning} |" not in page]
    assert missing == []


def test_the_event_log_writes_only_names_from_the_catalog(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "events.jsonl", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))
    for event in Event:
        log.emit(event)
    logged = [json.loads(line)["event"] for line in log.path.read_text().splitlines()]
    assert sorted(logged) == sorted(catalog())


def event_expressions(node: ast.expr) -> list[str]:
    # `Event.A if first else Event.B` emits one of two names: check both
    if isinstance(node, ast.IfExp):
        return event_expressions(node.body) + event_expressions(node.orelse)
    return [ast.unparse(node)]


FORWARDERS = {"_emit"}  # small helpers that add common fields and pass their `event` on


def emitted_names(source: str) -> list[str]:
    """The first argument of every `.emit(...)` / `._emit(...)` call, as written (`Event.NAME` or
    otherwise); inside a forwarder, its own pass-through of `event` is not a name."""
    tree = ast.parse(source)
    passthrough = {
        id(call)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef) and fn.name in FORWARDERS
        for call in ast.walk(fn)
        if isinstance(call, ast.Call) and call.args and ast.unparse(call.args[0]) == "event"
    }
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or id(node) in passthrough:
            continue
        if node.func.attr in {"emit", *FORWARDERS}:
            found += event_expressions(node.args[0]) if node.args else ["<no event>"]
    return found


def test_every_emit_in_app_and_adapters_names_a_catalog_member() -> None:
    sources = [p for folder in ("app", "adapters") for p in sorted((ROOT / folder).rglob("*.py"))]
    names = {name for path in sources for name in emitted_names(path.read_text(encoding="utf-8"))}
    members = {f"Event.{member}" for member in Event.__members__}
    assert (names - members, len(names) > 0) == (set(), True)
