"""ClaudeTrust racing a separate process that rewrites ~/.claude.json whole, as Claude Code does:
under Claude Code's own lock (`~/.claude.json.lock`, a directory) as a running Claude writes it,
and without any lock, as a Claude writes it on its way out (docs/claude-code.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from adapters.harnesses.claude.trust import ClaudeTrust
from domain.errors import TrustError

TRUSTS = 60

# The other writer: read-modify-write of its own counter, written whole (temp file + rename) in a
# tight loop. Before each step it checks the file still holds the last value it wrote; when not, a
# change of its was lost (to a writer that renamed a copy read before it) and it goes on from its
# own last value. With `locked`, each step runs under Claude Code's lock, taken as Claude takes it
# (mkdir of `<file>.lock`; one older than 10 s is stale and removed), and holds it from the read to
# the rename for a few milliseconds, as a Claude does. It stops when the stop file appears, and
# prints its changes and losses.
WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    path, stop, locked = sys.argv[1], sys.argv[2], sys.argv[3] == "locked"
    lock = path + ".lock"
    last = lost = 0

    def take():
        while True:
            try:
                os.mkdir(lock)
                return
            except FileExistsError:
                try:
                    if os.stat(lock).st_mtime < time.time() - 10:
                        os.rmdir(lock)
                        continue
                except FileNotFoundError:
                    continue
                time.sleep(0.0005)

    while not os.path.exists(stop):
        if locked:
            take()
        with open(path, encoding="utf-8") as file:
            config = json.load(file)
        if config.get("otherWriterCounter", 0) != last:
            lost += 1
        config["otherWriterCounter"] = last + 1
        temp = f"{path}.other-{last}"
        with open(temp, "w", encoding="utf-8") as file:
            json.dump(config, file, indent=2)
        if locked:
            time.sleep(0.002)
        os.replace(temp, path)
        if locked:
            os.rmdir(lock)
        last += 1
        time.sleep(0.0005)
    with open(path, encoding="utf-8") as file:
        if json.load(file).get("otherWriterCounter", 0) != last:
            lost += 1
    print(json.dumps({"changes": last, "lost": lost}))
    """
)


def _racing(config: Path, *, locked: bool) -> subprocess.Popen[str]:
    stop = config.with_name("stop")
    argv = [sys.executable, "-c", WRITER, str(config), str(stop), "locked" if locked else "unlocked"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)


def _report(other: subprocess.Popen[str], config: Path) -> dict[str, int]:
    config.with_name("stop").touch()
    out, _ = other.communicate(timeout=60)
    report: dict[str, int] = json.loads(out)
    print(f"other writer: {report['changes']} changes, {report['lost']} lost")
    return report


def _projects(config: Path) -> dict[str, dict[str, object]]:
    projects: dict[str, dict[str, object]] = json.loads(config.read_text(encoding="utf-8"))["projects"]
    return projects


def _config(tmp_path: Path) -> Path:
    config = tmp_path / ".claude.json"
    config.write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {}}), encoding="utf-8")
    return config


def test_a_writer_taking_claude_codes_lock_and_our_trusts_lose_none_of_each_others_changes(tmp_path: Path) -> None:
    config = _config(tmp_path)
    folders = [os.path.realpath(tmp_path / f"item-{n}") for n in range(TRUSTS)]
    other = _racing(config, locked=True)
    try:
        trust = ClaudeTrust(config, settle_seconds=0.01)
        written = [trust.trust(folder) for folder in folders]
    finally:
        report = _report(other, config)

    assert written == [True] * TRUSTS
    assert report["changes"] > TRUSTS  # it really ran alongside
    assert report["lost"] == 0
    assert all(_projects(config)[folder]["hasTrustDialogAccepted"] is True for folder in folders)
    assert not config.with_name(".claude.json.lock").exists()  # never left behind


def _trust_despite_the_other_writer(trust: ClaudeTrust, folder: str) -> None:
    """A writer without the lock writes over our record when it renames a copy read before our
    write (ClaudeTrust's read-back covers that a few times): ask again, as the next spawn would."""
    for _ in range(10):
        try:
            trust.trust(folder)
            return
        except TrustError:
            continue
    trust.trust(folder)


def test_a_writer_without_the_lock_loses_at_most_one_change_in_a_hundred(tmp_path: Path) -> None:
    """As a Claude writes on its way out. Nothing makes this zero without the other writer's
    cooperation: between our swap and our swap back (microseconds) a reader sees our file without
    its latest change. Measured on a loaded machine: 0 or 1 lost in 1,200 to 4,100 changes; a
    writer of ours that renamed without comparing lost about 1 in 12."""
    config = _config(tmp_path)
    folders = [os.path.realpath(tmp_path / f"item-{n}") for n in range(TRUSTS)]
    other = _racing(config, locked=False)
    try:
        trust = ClaudeTrust(config, settle_seconds=0.01)
        for folder in folders:
            _trust_despite_the_other_writer(trust, folder)
    finally:
        report = _report(other, config)

    assert report["changes"] > TRUSTS  # it really ran alongside
    assert report["lost"] * 100 <= report["changes"]
