"""The-loop's configuration for the campaign: the sandbox tracker, the recording harness with
resumable conversations, a private tmux server, a folder per work item."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from domain.refs import RepoRef

SIM = Path(__file__).resolve().parents[2] / "tests" / "harness_sim.py"
REPO = RepoRef.parse("sandbox/chaos")
AUTHOR = "demo"
REMEMBER = ("--remember", "--peers")  # resumable conversations; a harness says what else ran at its start


def write_config(root: Path, *, receipts: str, socket: str, record: Path) -> Path:
    quick = receipts == "none"  # without receipts a confirmation is a wait: keep it short
    sim = {
        "binary": sys.executable,
        "args": [str(SIM), "--record", str(record), "--known-ids", str(root / "known-ids"), *REMEMBER],
        "sessionIdArgs": ["--session-id", "{session_id}"],
        "resumeArgs": ["--resume", "{session_id}"],
        "receipts": receipts,
        "readySeconds": 1 if quick else 10,
        "confirmSeconds": 1 if quick else 5,
    }
    source = {"provider": "sandbox", "repos": [str(REPO)], "label": "loop"}
    config = {
        "state": {"root": str(root / "state")},
        "polling": {"intervalSeconds": 1, "sources": [source]},
        "routing": {
            "authorizedUsers": [AUTHOR],
            "defaultHarness": "sim",
            "harnesses": {"sim": sim},
            "spawnWorkdir": str(root / "work" / "{slug}"),  # a folder per item: each harness knows its item
            "tmux": {"socketName": socket, "harnessKillGraceSeconds": 2},
        },
    }
    path = root / "loop.json"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
    return path
