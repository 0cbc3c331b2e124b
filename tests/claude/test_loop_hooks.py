"""The-loop's own hooks (adapters/receipts) in the real Claude Code: what its receipts say about a
permission dialog, asked, allowed and declined — real binary, real tmux, offline."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from adapters.receipts.files import FileReceipts
from domain.model import SpawnRequest
from domain.receipts import HarnessState, ReceiptKind, ReceiptMode, harness_state
from domain.refs import RepoRef, TmuxTarget, WorkItemRef
from tests.anthropic_standin.script import Say, UseTool
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.loop import claude_receipts
from tests.claude.rig import ClaudeRig, ClaudeSession
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

ITEM = WorkItemRef(RepoRef.parse("acme/widgets"), 1)
PERMISSION_QUESTION = "Do you want to proceed?"
DIALOG_SETTLE = 1.0  # keys that arrive as a dialog is first drawn are dropped (docs/claude-code.md)
NOTIFICATION_LAG = 6.0  # Claude's permission_prompt notification: ~6 s after the dialog opens


class Spawn:
    """One Claude spawned with the-loop's hooks (FileReceipts.prepare), read back as the-loop reads them."""

    def __init__(self, rig: ClaudeRig, receipts: FileReceipts, *args: str, prompt: str) -> None:
        self.receipts, self.spawn = receipts, uuid.uuid4().hex
        channel = receipts.prepare(ITEM, self.spawn, mode=ReceiptMode.HOOKS, hooks="claude")
        session_id, cwd = str(uuid.uuid4()), rig.folder()
        argv = (str(rig.binary), *channel.args, "--session-id", session_id, *args)
        target = TmuxTarget(f"loop-hooks-{self.spawn[:8]}")
        request = SpawnRequest(target=target, argv=argv, cwd=str(cwd), prompt=prompt, mark=self.spawn)
        self.session = ClaudeSession(target, rig.adapter().spawn(request), session_id, cwd, self.spawn)
        rig.spawned.append(self.session)  # ended with the test

    def kinds(self) -> list[ReceiptKind]:
        return [r.kind for r in self.receipts.read(ITEM, self.spawn)]

    def state(self) -> HarnessState:
        return harness_state(self.receipts.read(ITEM, self.spawn))

    def wait(self, kind: ReceiptKind, *, count: int = 1, timeout: float = 30.0) -> None:
        wait_for(lambda: self.kinds().count(kind) >= count, timeout=timeout, what=f"{count} {kind.value} receipts")


@pytest.fixture
def blocked(claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path) -> Spawn:
    """Claude in the default permission mode, its first turn asking to run a tool: the dialog is on screen."""
    anthropic.script(UseTool(), Say("tool done"), Say("after the dialog"))
    spawn = Spawn(claude, claude_receipts(tmp_path / "receipts"), "--permission-mode", "default", prompt="make x")
    wait_for(lambda: PERMISSION_QUESTION in claude.tmux.screen(spawn.session), what="the dialog on screen")
    time.sleep(DIALOG_SETTLE)
    return spawn


def test_the_loops_receipts_never_accept_a_paste_once_a_permission_dialog_is_drawn(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    """Claude may draw the dialog before PermissionRequest's receipt exists; PreToolUse's is there."""
    anthropic.script(UseTool(), Say("tool done"))
    spawn = Spawn(claude, claude_receipts(tmp_path / "receipts"), "--permission-mode", "default", prompt="make x")
    wait_for(lambda: PERMISSION_QUESTION in claude.tmux.screen(spawn.session), timeout=30, what="the dialog")
    now = SystemClock().now()  # the first moment this test saw the dialog, as the-loop's clock reads it
    state = harness_state(spawn.receipts.read(ITEM, spawn.spawn), now=now)
    assert state in {HarnessState.TOOL, HarnessState.BLOCKED}
    assert not state.accepts_prompts


def test_the_loops_hooks_say_blocked_as_a_permission_dialog_opens_not_6_s_later(blocked: Spawn) -> None:
    receipts = blocked.receipts.read(ITEM, blocked.spawn)
    assert blocked.state() is HarnessState.BLOCKED
    opened = next(r for r in receipts if r.kind is ReceiptKind.BLOCKED)
    assert opened.at is not None
    assert (time.time_ns() / 1e9 - opened.at.timestamp()) < NOTIFICATION_LAG  # before any notification
    assert blocked.kinds().count(ReceiptKind.BLOCKED) == 1


def test_a_permission_dialog_answered_yes_lets_the_harness_go_on_with_its_tool(
    claude: ClaudeRig, blocked: Spawn
) -> None:
    claude.tmux.run("send-keys", "-t", blocked.session.pane, "1")
    blocked.wait(ReceiptKind.WORKING)
    assert (blocked.session.cwd / "x").exists()
    blocked.wait(ReceiptKind.TURN_ENDED)
    assert blocked.state() is HarnessState.IDLE


def test_a_declined_permission_dialog_writes_no_receipt_so_the_harness_stays_blocked_until_someone_types(
    claude: ClaudeRig, anthropic: AnthropicStandIn, blocked: Spawn
) -> None:
    claude.tmux.run("send-keys", "-t", blocked.session.pane, "Escape")
    wait_for(lambda: "What should Claude do instead?" in claude.tmux.screen(blocked.session), what="declined")
    before = blocked.kinds()
    time.sleep(NOTIFICATION_LAG + 1)  # no Stop, no notification, nothing
    assert blocked.kinds() == before
    assert blocked.state() is HarnessState.BLOCKED
    assert not (blocked.session.cwd / "x").exists()
    claude.paste(blocked.session, "do something else")  # the operator, attached, says what instead
    blocked.wait(ReceiptKind.PROMPT, count=2)
    assert blocked.state() in {HarnessState.BUSY, HarnessState.IDLE}
    asked = lambda: [t for r in anthropic.requests(Kind.TURN) for t in r.user_texts()]  # noqa: E731
    wait_for(lambda: "do something else" in asked(), what="the prompt at the model")


def test_a_hook_whose_receipt_folder_is_gone_never_blocks_a_prompt(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    spawn = Spawn(claude, claude_receipts(tmp_path / "receipts"), prompt="hello")
    spawn.wait(ReceiptKind.TURN_ENDED)
    shutil.rmtree(spawn.receipts.folder(ITEM, spawn.spawn))  # the state root moved, or was cleaned
    claude.paste(spawn.session, "after the folder went")
    asked = lambda: [t for r in anthropic.requests(Kind.TURN) for t in r.user_texts()]  # noqa: E731
    wait_for(lambda: "after the folder went" in asked(), what="the prompt at the model")
    assert "blocked by hook" not in claude.tmux.screen(spawn.session)
