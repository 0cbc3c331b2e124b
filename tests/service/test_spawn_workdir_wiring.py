"""The container's spawn folder: `spawnWorkdir` as docs/config.md describes it."""

from __future__ import annotations

from pathlib import Path

from app.config.settings import Settings
from app.container import _workdir
from domain.model import WorkItem
from domain.refs import WorkItemRef


def test_a_leading_tilde_in_spawn_workdir_is_the_home_directory_and_slug_is_the_items() -> None:
    settings = Settings(
        routing={"spawnWorkdir": "~/work/{slug}", "workspaces": {"api": {"spawnWorkdir": "~/api/{slug}"}}}  # type: ignore[arg-type]
    )
    item = WorkItem(WorkItemRef.parse("github:acme/widgets#7"), "t", "alice", frozenset())

    assert _workdir(settings)(item, "") == str(Path.home() / "work" / "github-acme-widgets-7")
    assert _workdir(settings)(item, "api") == str(Path.home() / "api" / "github-acme-widgets-7")
