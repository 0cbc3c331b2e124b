"""ClaudeTrust racing a separate process that rewrites ~/.claude.json whole, as Claude Code does,
without taking the-loop's lock (issue 18, item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from adapters.claude.trust import ClaudeTrust
from domain.errors import TrustError

TRUSTS = 60

# The other writer: read-modify-write of its own counter, written whole (temp file + rename) in a
# tight loop. Before each step it checks the file still holds the last value it wrote; when not, a
# change of its was lost (to a writer that renamed a copy read before it) and it goes on from its
# own last value. It stops when the stop file appears, and prints its changes and losses.
WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    path, stop = sys.argv[1], sys.argv[2]
    last = lost = 0
    while not os.path.exists(stop):
        with open(path, encoding="utf-8") as file:
            config = json.load(file)
        if config.get("otherWriterCounter", 0) != last:
            lost += 1
        config["otherWriterCounter"] = last + 1
        temp = f"{path}.other-{last}"
        with open(temp, "w", encoding="utf-8") as file:
            json.dump(config, file, indent=2)
        os.replace(temp, path)
        last += 1
        time.sleep(0.0005)
    with open(path, encoding="utf-8") as file:
        if json.load(file).get("otherWriterCounter", 0) != last:
            lost += 1
    print(json.dumps({"changes": last, "lost": lost}))
    """
)


def _trust_despite_the_other_writer(trust: ClaudeTrust, folder: str) -> None:
    """The other writer loses our record when it renames a copy read before our write (as a running
    Claude Code can; ClaudeTrust's read-back covers that): ask again, as the next spawn would."""
    for _ in range(10):
        try:
            trust.trust(folder)
            return
        except TrustError:
            continue
    trust.trust(folder)


def test_issue18_item5_a_writer_rewriting_the_file_without_our_lock_loses_none_of_its_changes(
    tmp_path: Path,
) -> None:
    config = tmp_path / ".claude.json"
    config.write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {}}), encoding="utf-8")
    stop = tmp_path / "stop"
    other = subprocess.Popen([sys.executable, "-c", WRITER, str(config), str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        trust = ClaudeTrust(config, settle_seconds=0.01)
        folders = [os.path.realpath(tmp_path / f"item-{n}") for n in range(TRUSTS)]
        for folder in folders:
            _trust_despite_the_other_writer(trust, folder)
    finally:
        stop.touch()
        out, _ = other.communicate(timeout=60)
    report = json.loads(out)
    print(f"other writer: {report['changes']} changes, {report['lost']} lost")

    assert report["changes"] > TRUSTS  # it really ran alongside
    assert report["lost"] == 0
