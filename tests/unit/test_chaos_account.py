"""The kill campaign's accounting (bench/chaos): each count must see what it names, from the
harnesses' own lines and the tracker's notices alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.chaos.account import Sent, Tally, count_comments, count_deaths
from bench.chaos.records import HarnessRun, JsonlTail, harness_runs

A, B = Sent("11", "CHAOS00000x"), Sent("12", "CHAOS00001x")
NONE: set[int] = set()
NOTICE = "<!-- the-loop:agent-comment -->\nYour [comment 12](https://x/12) was **not delivered** to the agent"


def run(pid: int, *lines: dict[str, Any], cwd: str = "/agents/a", server: int = 900) -> HarnessRun:
    harness = HarnessRun(pid)
    for line in ({"kind": "start", "cwd": cwd, "server": server}, *lines):
        harness.take(line)
    return harness.finish()


def ready() -> dict[str, Any]:
    return {"kind": "ready"}


def argv(pid: int, prompt: str, *lines: dict[str, Any]) -> HarnessRun:
    harness = HarnessRun(pid)
    for line in ({"kind": "start", "cwd": "/agents/a", "prompt": prompt}, *lines):
        harness.take(line)
    return harness.finish()


def pasted(text: str) -> list[dict[str, Any]]:
    return [{"kind": "paste", "text": text}, {"kind": "submit"}]


def comments(*runs: HarnessRun, notices: tuple[str, ...] = ()) -> Tally:
    tally = Tally()
    count_comments([A, B], runs, notices, tally)
    return tally


def deaths(*runs: HarnessRun, alive: set[int], pids: set[int] = NONE, servers: set[int] = NONE) -> Tally:
    tally = Tally()
    count_deaths(runs, alive=alive.__contains__, killed_pids=pids, killed_servers=servers, tally=tally)
    return tally


def test_a_comment_taken_once_is_delivered_and_one_never_taken_nor_noticed_is_lost() -> None:
    tally = comments(run(1, ready(), *pasted(f"x {A.token} y")))
    assert (tally.delivered, len(tally.lost), tally.lost[0].startswith(B.token)) == (1, 1, True)


def test_a_comment_never_taken_but_named_by_a_notice_is_abandoned_not_lost() -> None:
    tally = comments(run(1, ready(), *pasted(A.token)), notices=(NOTICE,))
    assert (tally.delivered, tally.abandoned, tally.lost) == (1, 1, [])


def test_a_comment_taken_by_two_harnesses_of_its_item_is_duplicated() -> None:
    first = argv(1, f"spawned with {A.token}", ready())
    second = run(2, ready(), *pasted(f"{A.token} again"), *pasted(B.token))
    (entry,) = comments(first, second).duplicated
    assert entry.startswith(A.token) and entry.endswith("taken 2 times, by 2 harnesses")


def test_a_comment_pasted_twice_into_one_harness_is_duplicated_too() -> None:
    (entry,) = comments(run(1, ready(), *pasted(A.token), *pasted(A.token), *pasted(B.token))).duplicated
    assert entry.startswith(A.token) and entry.endswith("by one harness")


def test_a_comment_two_notices_name_is_reported() -> None:
    tally = comments(run(1, ready(), *pasted(A.token)), notices=(NOTICE, NOTICE))
    assert (tally.abandoned, [entry.split()[0] for entry in tally.noticed_twice]) == (1, [B.token])


def test_an_argv_prompt_counts_only_once_its_harness_said_it_is_ready() -> None:
    never_ready = argv(1, f"spawned with {A.token}")  # killed before it listened
    assert comments(never_ready, run(2, ready(), *pasted(A.token), *pasted(B.token))).duplicated == []


def test_a_paste_never_submitted_was_not_taken() -> None:
    cut = run(1, ready(), {"kind": "paste", "text": A.token})  # died before the carriage return
    tally = comments(cut, run(2, ready(), *pasted(A.token), *pasted(B.token)))
    assert (tally.duplicated, tally.unsubmitted) == ([], 1)


def test_a_delivered_comment_a_notice_calls_abandoned_is_reported_as_such() -> None:
    tally = comments(run(1, ready(), *pasted(A.token), *pasted(B.token)), notices=(NOTICE,))
    assert [entry.split()[0] for entry in tally.misreported] == [B.token]


def test_a_harness_gone_without_the_campaigns_hand_or_its_own_is_a_live_session_killed() -> None:
    assert len(deaths(run(1, ready(), {"kind": "signal", "signum": 1}), alive=NONE).killed) == 1


def test_harnesses_the_campaign_killed_or_whose_server_it_killed_or_that_exited_are_not() -> None:
    killed, on_killed_server = run(1, ready()), run(2, ready(), server=77)
    exited = run(3, {"kind": "exit", "status": 1})
    assert deaths(killed, on_killed_server, exited, run(4, ready()), alive={4}, pids={1}, servers={77}).killed == []


def test_a_harness_starting_while_another_of_its_item_runs_counts_unless_that_one_was_doomed() -> None:
    second = run(2, {"kind": "peers", "pids": [1]})
    assert len(deaths(run(1), second, alive={1, 2}).killed) == 1
    assert deaths(run(1), second, alive={2}, pids={1}).killed == []


def test_lines_of_several_harnesses_in_one_file_are_told_apart_and_a_torn_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "record.jsonl"
    lines = [{"kind": "start", "pid": 1}, {"kind": "start", "pid": 2}, {"kind": "ready", "pid": 2}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"kind": "rea', encoding="utf-8")
    tail = JsonlTail(path)
    assert len(tail.new()) == 3
    with path.open("a", encoding="utf-8") as file:
        file.write('dy", "pid": 1}\n')
    assert tail.new() == [{"kind": "ready", "pid": 1}]
    assert [(r.pid, r.ready) for r in harness_runs(path)] == [(1, True), (2, True)]


def test_the_last_line_reads_as_the_issue_says() -> None:
    tally = Tally(lost=["a"], duplicated=["b", "c"])
    assert tally.line(20) == "20 kills: 1 lost, 2 duplicated, 0 live sessions killed"


def test_a_harness_the_loop_ended_as_hung_in_its_start_is_no_live_session_killed() -> None:
    """opencode now and then hangs in its start (a blank screen, forever): the-loop ends it and
    starts it again, saying so (`session.not_ready`, naming its spawn). One that said it was ready
    is a live session, whatever an event says."""
    spawn = "0123456789abcdef0123456789abcdef"
    env = [f"/tmp/c/state/receipts/github-sandbox-chaos-1/{spawn}/tui.json"]
    hung = HarnessRun(7)
    hung.take({"kind": "start", "cwd": "/agents/a", "server": 900, "env": env})
    hung.finish()
    tally = Tally()
    count_deaths([hung], alive=lambda pid: False, killed_pids=NONE, killed_servers=NONE, tally=tally, hung={spawn})
    assert tally.killed == []
    hung.take({"kind": "ready"})
    tally = Tally()
    count_deaths([hung], alive=lambda pid: False, killed_pids=NONE, killed_servers=NONE, tally=tally, hung={spawn})
    assert len(tally.killed) == 1
