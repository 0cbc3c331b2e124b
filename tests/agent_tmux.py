"""A real agent in a private tmux server, the-loop's way: the server started with the agent's
environment, spawns and pastes through the-loop's own tmux adapter, the receipts a spawn's hooks
wrote, and the end of what a spawn started. Each agent's rig is made of these."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from adapters.agents.receipt_line import SUFFIX
from adapters.receipts.hook_json import receipt_of
from adapters.tmux.screen import ShTmuxScreen
from domain.model import SpawnRequest
from domain.receipts import Receipt, ReceiptKind
from domain.refs import TmuxTarget
from tests.processes import gone, group_members
from tests.tmux_support import RealTmux, wait_for

S = TypeVar("S")


class Spawned(Protocol):
    """A pane the-loop's spawn started: its session, the pane, and the pane's mark."""

    @property
    def target(self) -> TmuxTarget: ...
    @property
    def pane(self) -> str: ...
    @property
    def mark(self) -> str: ...


@dataclass
class AgentTmux(RealTmux):
    """A private tmux server started with an agent's environment: panes inherit the server's
    environment, not the client's."""

    server_env: dict[str, str] = field(default_factory=dict)

    def start(self, env: dict[str, str]) -> None:
        self.server_env = env
        conf = self.tmpdir / "tmux.conf"
        # stays up with no session; panes wide enough that an agent's lines are not wrapped
        conf.write_text("set -g exit-empty off\nset -g default-size 160x50\n", encoding="utf-8")
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(conf), "start-server"],
            env={**env, **self.env},
            check=True,
            timeout=10,
        )

    def global_env(self) -> dict[str, str]:
        rows = self.run("show-environment", "-g").splitlines()
        return dict(row.split("=", 1) for row in rows if "=" in row and not row.startswith("-"))

    def screen(self, session: Spawned) -> str:
        return ShTmuxScreen(socket_name=self.socket, env=self.env).text(session.target)


@dataclass(frozen=True, slots=True)
class AgentSession:
    """One agent process in its own tmux session, its hooks writing receipts into `receipts`."""

    target: TmuxTarget
    pane: str
    cwd: Path
    receipts: Path
    mark: str


def receipts_folder(root: Path) -> Path:
    """A new folder under `root/receipts` for one spawn's hooks to write into."""
    folder = root / "receipts" / uuid.uuid4().hex[:8]
    folder.mkdir(parents=True)
    return folder


def paste(tmux: RealTmux, session: Spawned, text: str, *, submit_delay_ms: int = 0) -> None:
    """The-loop's delivery: a bracketed paste of `text`, then a carriage return unbracketed."""
    delivery = f"fact-{uuid.uuid4().hex[:6]}"
    tmux.adapter().deliver(
        session.target,
        text,
        delivery_id=delivery,
        pane=session.pane,
        mark=session.mark,
        submit_delay_ms=submit_delay_ms,
    )


def pane_text(tmux: RealTmux, session: AgentSession) -> str:
    return tmux.run("capture-pane", "-p", "-t", session.pane, check=False)


def pane_pid(tmux: RealTmux, pane: str) -> int:
    """The pane's process (0 once tmux no longer knows the pane)."""
    return int(tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}", check=False).strip() or 0)


def receipts(session: AgentSession) -> list[Receipt]:
    """The receipts the session's hooks have written so far, in the order of their names."""
    names = sorted(p.name for p in session.receipts.iterdir() if p.name.endswith(SUFFIX))
    found = [receipt_of(n.removesuffix(SUFFIX), (session.receipts / n).read_text()) for n in names]
    return [r for r in found if r is not None]


def wait_for_receipts(
    tmux: RealTmux, session: AgentSession, kind: ReceiptKind, count: int = 1, timeout: float = 60.0
) -> list[Receipt]:
    """The session's receipts of `kind`, once there are `count` of them (the screen shown on a timeout)."""
    return list(
        wait_for(
            lambda: (r := [x for x in receipts(session) if x.kind is kind])[count - 1 :] and r,
            timeout=timeout,
            what=f"{count} {kind.value} receipt(s); screen:\n{pane_text(tmux, session)}",
        )
    )


def end_process(tmux: RealTmux, session: AgentSession, agent: str) -> None:
    """Close its tmux session and wait for the agent's process to exit."""
    pid = pane_pid(tmux, session.pane)
    if pid and not gone(pid):
        os.kill(pid, signal.SIGHUP)
    tmux.run("kill-session", "-t", session.target.exact, check=False)
    if pid:
        wait_for(lambda: gone(pid), timeout=20, what=f"{agent} {pid} exited")


def end_group(tmux: RealTmux, session: AgentSession) -> None:
    """Close its tmux session and end what is left of the pane's process group (an agent may outlive it)."""
    pid = pane_pid(tmux, session.pane)
    tmux.run("kill-session", "-t", session.target.exact, check=False)
    if pid:
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 10
            while group_members(pid) and time.monotonic() < deadline:
                time.sleep(0.05)


def end_since(spawned: list[S], end: Callable[[S], None], since: int = 0) -> None:
    """End the sessions spawned since the `since`th (all by default) and forget them."""
    for session in spawned[since:]:
        end(session)
    del spawned[since:]


class RigSessions:
    """What every agent's rig does with the sessions it spawns on its tmux server: start one, paste
    into it, read its screen and receipts, wait for a receipt, end those spawned since a count. A rig (a
    dataclass with these fields) takes it as its one base, never another agent's rig, and says how
    its agent ends (`kill`)."""

    tmux: AgentTmux
    spawned: list[AgentSession]

    def kill(self, session: AgentSession) -> None:
        raise NotImplementedError

    def start(
        self,
        prefix: str,
        argv: tuple[str, ...],
        *,
        cwd: Path,
        prompt: str,
        receipts: Path,
        env: tuple[tuple[str, str], ...] = (),
    ) -> AgentSession:
        """`argv` in a new tmux session named `prefix-…`, the prompt its last argument, its dead pane
        kept, as the-loop's spawn does it; the rig ends it (`close`)."""
        target = TmuxTarget(f"{prefix}-{uuid.uuid4().hex[:8]}")
        mark = uuid.uuid4().hex
        request = SpawnRequest(
            target=target, argv=argv, cwd=str(cwd), prompt=prompt, mark=mark, remain_on_exit=True, env=env
        )
        session = AgentSession(target, self.tmux.adapter().spawn(request), cwd, receipts, mark)
        self.spawned.append(session)
        return session

    def paste(self, session: AgentSession, text: str) -> None:
        paste(self.tmux, session, text)

    def screen(self, session: AgentSession) -> str:
        return pane_text(self.tmux, session)

    def receipts(self, session: AgentSession) -> list[Receipt]:
        return receipts(session)

    def wait(self, session: AgentSession, kind: ReceiptKind, count: int = 1, timeout: float = 60.0) -> list[Receipt]:
        return wait_for_receipts(self.tmux, session, kind, count, timeout)

    def close(self, since: int = 0) -> None:
        end_since(self.spawned, self.kill, since)
