"""The-loop's configuration for the campaign: the sandbox tracker, the agent's harness entry (its
plug's, bench/chaos/agents.py), a private tmux server, a folder per work item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from domain.refs import RepoRef

REPO = RepoRef.parse("sandbox/chaos")
AUTHOR = "demo"


def write_config(root: Path, *, name: str, entry: dict[str, Any], socket: str, hibernate: float | None = None) -> Path:
    """`hibernate`: `routing.hibernateAfterSeconds` (None: off)."""
    source = {"provider": "sandbox", "repos": [str(REPO)], "label": "loop"}
    config = {
        "state": {"root": str(root / "state")},
        "polling": {"intervalSeconds": 1, "sources": [source]},
        "routing": {
            "authorizedUsers": [AUTHOR],
            "defaultHarness": name,
            "harnesses": {name: entry},
            "spawnWorkdir": str(root / "work" / "{slug}"),  # a folder per item: each harness knows its item
            "tmux": {"socketName": socket, "harnessKillGraceSeconds": 2},
        },
    }
    if hibernate is not None:
        config["routing"]["hibernateAfterSeconds"] = hibernate  # type: ignore[index]
    path = root / "loop.json"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
    return path
