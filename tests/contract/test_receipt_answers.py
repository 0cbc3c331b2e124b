"""The answer side of ReceiptPort, the same on FileReceipts and on the fake the service
tests use — an answer given waits for the hook, can be taken back until taken, and a hook's wait
that ended says so."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from adapters.agents.receipt_line import EXPIRED, TAKEN
from adapters.harnesses.claude.hooks import receipt_channel
from adapters.receipts.files import FileReceipts
from domain.asks import AnswerState
from domain.ports import ReceiptPort
from domain.receipts import ReceiptKind, ReceiptMode
from domain.refs import WorkItemRef
from tests.fakes.clock import FakeClock
from tests.fakes.receipts import FakeReceipts
from tests.fakes.tmux import FakeTmux

ITEM = WorkItemRef.parse("github:acme/widgets#3")
SPAWN = "spawn-1"
KEY = "1700000000000000000-42"

# the hook's side, as each implementation plays it: it takes the answer, or its wait ends
Hook = tuple[ReceiptPort, Callable[[], None], Callable[[], None]]


def _files(tmp_path: Path) -> Hook:
    receipts = FileReceipts(tmp_path, channels={"claude": partial(receipt_channel, ask_wait_seconds=60)})
    receipts.prepare(ITEM, SPAWN, mode=ReceiptMode.HOOKS, hooks="claude")
    folder = receipts.folder(ITEM, SPAWN)
    body = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    (folder / f"{KEY}.receipt").write_text(json.dumps(body), encoding="utf-8")

    def take() -> None:
        (folder / f"{KEY}.decision").rename(folder / f"{KEY}{TAKEN}")

    def expire() -> None:
        (folder / f"{KEY}{EXPIRED}").touch()

    return receipts, take, expire


def _fake(tmp_path: Path) -> Hook:
    receipts = FakeReceipts(FakeTmux(), FakeClock())
    receipts.prepare(ITEM, SPAWN, mode=ReceiptMode.HOOKS, hooks="claude")
    receipts.plant(SPAWN, ReceiptKind.BLOCKED, tool="Bash")
    receipts.hook_takes = False

    def take() -> None:
        receipts.hook_takes = True

    def expire() -> None:
        receipts.expired.add(KEY)

    return receipts, take, expire


@pytest.fixture(params=[_files, _fake], ids=["files", "fake"])
def hook(request: pytest.FixtureRequest, tmp_path: Path) -> Hook:
    return request.param(tmp_path)  # type: ignore[no-any-return]


def test_an_answer_given_waits_for_the_hook_and_is_taken(hook: Hook) -> None:
    receipts, take, _ = hook
    assert receipts.answer_state(ITEM, SPAWN, KEY) is AnswerState.NONE
    receipts.give(ITEM, SPAWN, KEY, '{"hookSpecificOutput": {}}')
    assert receipts.answer_state(ITEM, SPAWN, KEY) is AnswerState.GIVEN
    take()
    assert receipts.answer_state(ITEM, SPAWN, KEY) is AnswerState.TAKEN
    assert not receipts.withdraw(ITEM, SPAWN, KEY)  # taken: nothing to take back


def test_an_answer_not_taken_can_be_taken_back(hook: Hook) -> None:
    receipts, _, _ = hook
    receipts.give(ITEM, SPAWN, KEY, "{}")
    assert receipts.withdraw(ITEM, SPAWN, KEY)
    assert receipts.answer_state(ITEM, SPAWN, KEY) is AnswerState.NONE


def test_a_hooks_wait_that_ended_says_expired(hook: Hook) -> None:
    receipts, _, expire = hook
    expire()
    assert receipts.answer_state(ITEM, SPAWN, KEY) is AnswerState.EXPIRED
