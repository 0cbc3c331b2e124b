"""`sessions list|attach|reset|close` on real sessions: the harness simulator on a private tmux
server, the real CLI as subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from contextlib import suppress

from domain.events import Event
from domain.model import Reaction
from tests.e2e.cli import clean_env
from tests.e2e.loop_rig import Loop, loop
from tests.tmux_support import real_tmux, records, wait_for

__all__ = ["loop", "real_tmux"]


def test_sessions_list_json_shows_the_probed_tmux_state(loop: Loop) -> None:
    live, gone = loop.with_sessions(2)
    loop.tmux.run("kill-session", "-t", f"={gone.target.name}")

    listed = loop.json_lines("sessions", "list", "--json")

    assert [(s["work_item"], s["state"], s["harness_state"], s["status"]) for s in listed] == [
        (str(live), "live", "busy", "active"),  # it got its spawn prompt and its turn never ends
        (str(gone), "absent", "dead", "active"),
    ]
    assert listed[0]["target"] == live.target.name and listed[0]["harness"] == "sim"
    assert listed[0]["conversation_id"] and listed[0]["last_event"] == "dispatch.succeeded"
    assert listed[0]["last_receipt"]["kind"] == "prompt" and listed[0]["last_receipt"]["at"]


def test_sessions_list_shows_a_table_for_people(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)

    result = loop.cli("sessions", "list")

    header, row = result.stdout.splitlines()
    assert header.split() == [
        "WORK", "ITEM", "HARNESS", "CONVERSATION", "TARGET", "STATE", "AGENT",
        "LAST", "RECEIPT", "STATUS", "LAST", "EVENT", "ITEM", "STATE", "SPENT",
    ]  # fmt: skip
    cells = row.split()  # the receipt is its kind and its time: two words
    assert cells[:1] + cells[3:7] + cells[8:] == [
        str(ref), ref.target.name, "live", "busy", "prompt", "active", "dispatch.succeeded", "busy", "-"
    ]  # fmt: skip


def test_sessions_reset_dry_run_changes_nothing(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)

    result = loop.cli("sessions", "reset", "--work-item", str(ref), "--dry-run")

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"would reset {ref}: end the harness in {ref.target.name} (live); forget its session record and ledger\n"
    )
    store = loop.store()
    assert store.session(ref) is not None and store.ledger(ref) is not None
    assert loop.pane_dead(ref) == ["0"]
    assert Event.SESSION_RESET not in loop.event_names()


def test_sessions_reset_ends_the_harness_and_forgets_record_and_ledger(loop: Loop) -> None:
    ref, other = loop.with_sessions(2)

    result = loop.cli("sessions", "reset", "--work-item", str(ref))

    assert result.returncode == 0, result.stderr
    store = loop.store()
    assert (store.session(ref), store.ledger(ref)) == (None, None)
    assert store.session(other) is not None
    assert loop.pane_dead(ref) == ["1"] and loop.pane_dead(other) == ["0"]
    (reset,) = [e for e in loop.events() if e["event"] == "session.reset"]
    assert (reset["work_item"], reset["source"], reset["harness_ended"]) == (str(ref), "operator", True)


def test_sessions_reset_of_an_unknown_work_item_exits_1_naming_it_and_changes_nothing(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)

    result = loop.cli("sessions", "reset", "--work-item", str(ref), "--work-item", "github:sandbox/demo#9")

    assert result.returncode == 1
    assert result.stderr.startswith("the-loop: unknown work item github:sandbox/demo#9: no session record or ledger")
    assert loop.store().session(ref) is not None and loop.pane_dead(ref) == ["0"]


def test_sessions_close_by_the_operator_closes_the_record_and_can_kill_tmux(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)

    result = loop.cli("sessions", "close", "--work-item", str(ref), "--kill-tmux")

    reopen_hint = f"closed {ref}; it stays closed until: the-loop sessions reopen --work-item {ref}\n"
    assert (result.returncode, result.stdout) == (0, reopen_hint), result.stderr
    record = loop.store().session(ref)
    assert record is not None and record.status.value == "closed"
    assert not loop.has_session(ref)
    (closed,) = [e for e in loop.events() if e["event"] == "session.closed"]
    assert (closed["reason"], closed["tmux_killed"]) == ("operator", True)


def test_a_closed_session_stays_closed_across_cycles_until_sessions_reopen(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    assert loop.cli("sessions", "close", "--work-item", str(ref), "--kill-tmux").returncode == 0
    loop.comment(ref, "while closed")
    assert loop.cli("poll", "--once").returncode == 0
    still = loop.store().session(ref)

    reopened = loop.cli("sessions", "reopen", "--work-item", str(ref))
    loop.comment(ref, "after the reopen")
    assert loop.cli("poll", "--once").returncode == 0

    assert still is not None and still.status.value == "closed"
    assert (reopened.returncode, reopened.stdout) == (0, f"reopened {ref}\n")
    got = lambda: loop.pasted() + [str(r["prompt"]) for r in records(loop.record) if r["kind"] == "start"]  # noqa: E731
    wait_for(lambda: any("after the reopen" in text for text in got()), what="the comment after the reopen")
    assert not any("while closed" in text for text in got())


def test_sessions_attach_to_a_closed_item_is_forced_read_only(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    assert loop.cli("sessions", "close", "--work-item", str(ref), "--keep-tmux").returncode == 0
    master, slave = os.openpty()
    config, stderr = str(loop.root / "loop.yaml"), loop.root / "attach.err"

    env = clean_env({**loop.tmux.env, "TERM": "xterm"})
    env.pop("TMUX", None)  # a test run inside tmux: attaching is not nesting

    with stderr.open("wb") as sink:
        client = subprocess.Popen(
            [sys.executable, "-m", "app", "--config", config, "sessions", "attach", "--work-item", str(ref)],
            cwd=loop.root,
            stdin=slave,
            stdout=slave,
            stderr=sink,
            env=env,
            start_new_session=True,
        )

    os.close(slave)
    threading.Thread(target=_drain, args=(master,), daemon=True).start()
    try:
        wait_for(lambda: loop.tmux.run("list-clients", "-F", "#{client_readonly}").split(), what="a client")
        assert loop.tmux.run("list-clients", "-F", "#{client_readonly} #{session_name}").split() == [
            "1",
            ref.target.name,
        ]
    finally:
        os.killpg(client.pid, signal.SIGKILL)  # the CLI and the tmux client it runs
        client.wait(timeout=10)
    assert stderr.read_text().splitlines() == [f"{ref} is closed: attaching read-only"]


def _drain(fd: int) -> None:
    """Read the client's screen so tmux never waits on a full terminal."""
    with suppress(OSError):
        while os.read(fd, 65536):
            pass
    os.close(fd)


def test_comments_while_the_operator_keeps_an_item_closed_get_one_notice_and_each_a_failure_reaction(
    loop: Loop,
) -> None:
    (ref,) = loop.with_sessions(1)
    assert loop.cli("sessions", "close", "--work-item", str(ref), "--keep-tmux").returncode == 0
    sandbox = loop.sandbox()
    held = [sandbox.add_comment(ref, f"private words {n}", author="demo") for n in (1, 2)]
    assert loop.cli("poll", "--once").returncode == 0

    notices = [c.body for c in sandbox.posted() if "closed by the operator" in c.body]
    failed = [cid for cid, reaction in sandbox.reactions() if reaction is Reaction.FAILED]
    sandbox.close()
    assert len(notices) == 1 and f"comment {held[0].id}" in notices[0]
    assert "private words" not in notices[0] and failed == [c.id for c in held]
    assert not any("private words" in text for text in loop.pasted())


def test_each_sessions_list_json_line_names_the_config_and_state_root(loop: Loop) -> None:
    loop.with_sessions(1)
    (listed,) = loop.json_lines("sessions", "list", "--json")
    assert (listed["config"], listed["state_root"]) == (str(loop.root / "loop.yaml"), str(loop.state))
