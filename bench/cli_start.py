"""What starting a read-only command costs: `status`, `sessions list` and `events`, each as a ratio
against a bare interpreter start (`python -c pass`) measured in the same run (the target:
at most 4x).

Run: .venv/bin/python -m bench.cli_start [--rounds N]. Every round runs the bare start and each
command once, in turn, as fresh processes in a folder holding a small configuration
(`./.the-loop/cli-config.yaml`: one repository, a SQLite state with 200 events and no session), so a
busy machine slows them alike; `sessions list` also runs in a second folder whose store records 5
sessions, live in tmux on a private socket, each with three receipts (started, prompted, its turn
ended): its total includes asking tmux (once, for every session) and reading each one's receipts
(work, not start-up), and the line after it is its start-up share
alone (the interpreter and every module that listing imports, nothing run). An unmeasured first run
of each saves the settings snapshot the commands start from (app.config.snapshot, as on an
operator's machine after any command); the last line is `status` where no snapshot can be saved:
the full configuration load, for comparison.
Prints the median wall time and the median CPU time (user + system, steadier than the wall clock on
a shared machine) of each, and each command's ratios to the bare start.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.eventlog.writer import JsonlEventLog
from adapters.sqlite.store import FILE_NAME, SqliteStateStore
from domain.events import Event

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """\
state:
  root: ./state
polling:
  sources:
    - provider: github
      repos: [acme/widgets]
      label: loop
routing:
  authorizedUsers: [alice]
"""
BARE = ("bare start (python -c pass)", ("-c", "pass"))
COMMANDS = (
    ("status", ("-m", "app", "status")),
    ("sessions list", ("-m", "app", "sessions", "list")),
    ("events", ("-m", "app", "events")),
)
# the same command where no settings snapshot can be saved: the full configuration load each time
FULL_LOAD = ("status, full load (no snapshot)", ("-m", "app", "status"))
RECORDED = 5
# each recorded session's receipts: it started, got a prompt, ended its turn (the listing reads them all)
RECEIPTS = (
    {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup"},
    {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "Delivery: d1 (receipt 0123456789abcdef)"},
    {"hook_event_name": "Stop", "session_id": "s"},
)
# in the folder of recorded sessions (the `sessions` folder): the listing, and its imports alone
LISTED = ("sessions list, 5 sessions", ("-m", "app", "sessions", "list"))
LISTED_IMPORTS = (
    "  its start-up (imports)",
    (
        "-c",
        "import runpy, app.cli.main, app.cli.fast_reads, app.cli.lean_listing, app.cli.read_views, "
        "app.usecases.views.session_shown",
    ),
)


def prepare(folder: Path) -> None:
    """The small configuration, a state store, and an event log of 200 lines."""
    (folder / ".the-loop").mkdir()
    (folder / ".the-loop" / "cli-config.yaml").write_text(CONFIG, encoding="utf-8")
    state = folder / "state"
    state.mkdir(mode=0o700)
    SqliteStateStore(state / FILE_NAME).save_meta("bench", "1")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = iter(start + timedelta(seconds=n) for n in range(10_000))
    log = JsonlEventLog(state / "logs" / "events.jsonl", clock=lambda: next(clock))
    for n in range(200):
        log.emit(Event.POLL_CYCLE, items=n % 7, work_item="github:acme/widgets#1")


def prepare_sessions(folder: Path) -> str:
    """A folder like `prepare`'s whose store records RECORDED sessions, each live in tmux on a private
    socket (TMUX_TMPDIR in the folder): the tmux socket's name."""
    from adapters.tmux.commands import MARK_OPTION
    from domain.model import SessionRecord
    from domain.refs import WorkItemRef

    socket = f"bench-{os.getpid()}"
    (folder / "tmux").mkdir(mode=0o700)
    prepare(folder)
    config = folder / ".the-loop" / "cli-config.yaml"
    config.write_text(CONFIG + f"  tmux: {{socketName: {socket}}}\n", encoding="utf-8")
    store = SqliteStateStore(folder / "state" / FILE_NAME)
    for n in range(1, RECORDED + 1):
        item = WorkItemRef.parse(f"github:acme/widgets#{n}")
        name, mark = item.target.name, f"{n:08x}"
        _tmux(folder, socket, "new-session", "-d", "-s", name, "sleep 600")
        pane = _tmux(folder, socket, "list-panes", "-t", f"={name}:", "-F", "#{pane_id}").strip()
        _tmux(folder, socket, "set-option", "-p", "-t", pane, MARK_OPTION, mark)
        store.save_session(SessionRecord(item, "claude", f"conv-{n}", str(folder), pane_id=pane, spawn_id=mark))
        receipts = folder / "state" / "receipts" / item.slug / mark
        receipts.mkdir(parents=True)
        for k, hook in enumerate(RECEIPTS):  # what a Claude Code hook writes, one file each, named by its time
            (receipts / f"{time.time_ns() + k}-{k}.receipt").write_text(json.dumps(hook), encoding="utf-8")
    store.close()
    return socket


def _tmux(folder: Path, socket: str, *args: str) -> str:
    env = {**os.environ, "TMUX_TMPDIR": str(folder / "tmux")}
    return subprocess.run(["tmux", "-L", socket, *args], env=env, capture_output=True, text=True, check=True).stdout


def environment(folder: Path) -> dict[str, str]:
    """The project importable, no THE_LOOP_ variable, no user configuration: the folder's file is read."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("THE_LOOP_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["XDG_CONFIG_HOME"] = str(folder / "no-user-config")
    env["XDG_CACHE_HOME"] = str(folder / "cache")  # the settings snapshot: the unmeasured first run saves it
    env["TMUX_TMPDIR"] = str(folder / "tmux")  # the recorded sessions' private tmux server
    return env


def no_snapshot(env: dict[str, str]) -> dict[str, str]:
    """A cache that cannot be created (a file stands in its way): every run loads the configuration in full."""
    return {**env, "XDG_CACHE_HOME": os.devnull}


def run_once(argv: tuple[str, ...], folder: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=folder, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode in (1, 2):  # status says 3 (not running): a result, not a failure
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace').strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def measure(rounds: int, folder: Path, sessions: Path) -> dict[str, list[tuple[float, float]]]:
    env = environment(folder)
    envs = {name: env for name, _ in (BARE, *COMMANDS)} | {FULL_LOAD[0]: no_snapshot(env)}
    envs |= {LISTED[0]: environment(sessions), LISTED_IMPORTS[0]: environment(sessions)}
    where = {name: folder for name in envs} | {LISTED[0]: sessions, LISTED_IMPORTS[0]: sessions}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
    every = (BARE, *COMMANDS, LISTED, LISTED_IMPORTS, FULL_LOAD)
    for name, argv in every:  # warm the file cache, __pycache__ and snapshot, unmeasured
        run_once(argv, where[name], envs[name])
    for _ in range(rounds):
        for name, argv in every:
            runs[name].append(run_once(argv, where[name], envs[name]))
    return runs


def report(runs: dict[str, list[tuple[float, float]]]) -> list[str]:
    def medians(name: str) -> tuple[float, float]:
        return statistics.median(w for w, _ in runs[name]), statistics.median(c for _, c in runs[name])

    bare_wall, bare_cpu = medians(BARE[0])
    lines = [f"{BARE[0]:<28} wall {bare_wall:7.1f} ms   cpu {bare_cpu:7.1f} ms"]
    for name, _ in (*COMMANDS, LISTED, LISTED_IMPORTS, FULL_LOAD):
        wall, cpu = medians(name)
        lines.append(
            f"{name:<28} wall {wall:7.1f} ms   cpu {cpu:7.1f} ms   "
            f"ratio {wall / bare_wall:.2f}x (cpu {cpu / bare_cpu:.2f}x)"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="runs of each, alternating (default 21)")
    rounds = parser.parse_args().rounds
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        folder, sessions = Path(tmp) / "plain", Path(tmp) / "sessions"
        folder.mkdir()
        sessions.mkdir()
        prepare(folder)
        socket = prepare_sessions(sessions)
        try:
            print(f"{rounds} rounds, {sys.executable}; the issue's bound: each ratio at most 4x")
            print("\n".join(report(measure(rounds, folder, sessions))))
        finally:
            subprocess.run(
                ["tmux", "-L", socket, "kill-server"], env=environment(sessions), capture_output=True, check=False
            )


if __name__ == "__main__":
    main()
