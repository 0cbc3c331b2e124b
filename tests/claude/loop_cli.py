"""The-loop's real CLI (`python -m app poll --once`) driving real Claude Code on the rig's tmux
server, against the sandbox tracker; its tmux reached through a wrapper that can SIGKILL it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from adapters.clock import SystemClock
from adapters.sandbox.tracker import SandboxTracker
from adapters.sqlite.store import SqliteStateStore
from domain.model import Comment
from domain.refs import RepoRef, WorkItemRef
from tests.claude.rig import ClaudeRig
from tests.e2e.cli import clean_env

REPO = RepoRef.parse("sandbox/demo")

# tmux as the-loop runs it, logging each paste; once armed, it waits after the paste until a
# receipt holds $CRASH_LINE, then SIGKILLs the-loop (its parent) before it can record anything
WRAPPER = """#!/bin/sh
"$REAL_TMUX" "$@"
status=$?
case " $* " in
*" paste-buffer "*)
  echo paste >> "$PASTE_LOG"
  if [ -e "$CRASH_ARMED" ]; then
    rm -f "$CRASH_ARMED"
    n=0
    until grep -rqsF -- "$CRASH_LINE" "$CRASH_RECEIPTS"; do
      n=$((n + 1)); [ "$n" -gt 600 ] && break
      sleep 0.05
    done
    kill -KILL "$PPID"
  fi
  ;;
esac
exit $status
"""


@dataclass
class LoopCli:
    rig: ClaudeRig
    base: Path

    @property
    def state(self) -> Path:
        return self.base / "state"

    @property
    def receipts(self) -> Path:
        return self.state / "receipts"

    @property
    def pastes(self) -> int:
        log = self.base / "pastes.log"
        return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0

    def config(self) -> Path:
        config = {
            "state": {"root": str(self.state)},
            "polling": {"sources": [{"provider": "sandbox", "repos": [str(REPO)], "label": "loop"}]},
            "routing": {
                "authorizedUsers": ["demo"],
                "defaultHarness": "claude",
                "harnesses": {"claude": {"binary": str(self.rig.binary)}},
                "spawnWorkdir": str(self.base / "work" / "{slug}"),  # never trusted before
                "tmux": {"socketName": self.rig.tmux.socket},
            },
        }
        path = self.base / "loop.yaml"
        path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
        return path

    def poll_once(self, *, crash_after_paste_of: str = "") -> subprocess.CompletedProcess[str]:
        """`poll --once`; with `crash_after_paste_of`, SIGKILLed right after the paste whose receipt
        holds that line has been written."""
        bin_dir = self.base / "bin"
        bin_dir.mkdir(exist_ok=True)
        wrapper = bin_dir / "tmux"
        wrapper.write_text(WRAPPER, encoding="utf-8")
        wrapper.chmod(0o755)
        armed = self.base / "crash.armed"
        if crash_after_paste_of:
            armed.touch()
        env = {
            **self.rig.tmux.env,
            "HOME": str(self.rig.home.path),  # the ~/.claude.json the-loop records trust in
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "REAL_TMUX": shutil.which("tmux") or "tmux",
            "PASTE_LOG": str(self.base / "pastes.log"),
            "CRASH_ARMED": str(armed),
            "CRASH_LINE": crash_after_paste_of,
            "CRASH_RECEIPTS": str(self.receipts),
        }
        return subprocess.run(
            [sys.executable, "-m", "app", "--config", str(self.config()), "poll", "--once"],
            cwd=self.base,
            env=clean_env(env),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    def sandbox(self) -> SandboxTracker:
        self.state.mkdir(parents=True, exist_ok=True)
        return SandboxTracker(self.state / "sandbox.sqlite3", clock=SystemClock().now)

    def item(self) -> WorkItemRef:
        sandbox = self.sandbox()
        try:
            return sandbox.create_item(REPO, "crash recovery", labels=("loop",))
        finally:
            sandbox.close()

    def comment(self, ref: WorkItemRef, body: str) -> Comment:
        sandbox = self.sandbox()
        try:
            return sandbox.add_comment(ref, body)
        finally:
            sandbox.close()

    def store(self) -> SqliteStateStore:
        return SqliteStateStore(self.state / "state.sqlite3")

    def events(self) -> list[dict[str, object]]:
        log = self.state / "logs" / "events.jsonl"
        lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        return [json.loads(line) for line in lines]

    def prompts_holding(self, text: str) -> int:
        """UserPromptSubmit receipts, of every spawn, whose prompt holds `text`."""
        found = 0
        for path in self.receipts.rglob("*.receipt"):
            hook = json.loads(path.read_text(encoding="utf-8"))
            found += hook.get("hook_event_name") == "UserPromptSubmit" and text in hook.get("prompt", "")
        return found
