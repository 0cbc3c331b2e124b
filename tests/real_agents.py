"""What the tests of every real agent share (tests/claude/, tests/codex/, tests/gemini/, tests/opencode/):
the pinned binary or a loud skip, a stand-in and a rig for a fixture's lifetime, a private tmux server,
never-seen folders to spawn in."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from domain.refs import WorkItemRef
from tests.agent_tmux import AgentTmux
from tests.pinned_tools import required
from tests.service.world import World
from tests.tmux_support import require_tmux


class _StandIn(Protocol):
    def reset(self) -> None: ...
    def release(self) -> None: ...
    def close(self) -> None: ...


class _Rig(Protocol):
    spawned: list[Any]

    def close(self, since: int = 0) -> None: ...


S = TypeVar("S", bound=_StandIn)
R = TypeVar("R", bound=_Rig)


def binary_fixture(name: str, tool: str) -> Any:
    """A session fixture `name`: the pinned executable of scripts/install_<tool>.py, as `required` gives it."""

    @pytest.fixture(scope="session", name=name)
    def binary() -> Path:
        return required(tool)

    return binary


def standin_fixture(name: str, kind: Callable[[], _StandIn]) -> Any:
    """A module fixture `name`: a stand-in of `kind` serving the module's tests."""

    @pytest.fixture(scope="module", name=name)
    def standin() -> Iterator[_StandIn]:
        yield from serving(kind())

    return standin


def serving(standin: S) -> Iterator[S]:
    """A stand-in for a fixture's lifetime."""
    try:
        yield standin
    finally:
        standin.close()


def private_tmux(folder: Path, env: dict[str, str]) -> AgentTmux:
    """A tmux server of its own under `folder`, started with the agent's environment."""
    tmux = AgentTmux(folder)
    tmux.tmpdir.mkdir()
    tmux.start(env)
    return tmux


def running(rig: R, tmux: AgentTmux) -> Iterator[R]:
    """A rig for a fixture's lifetime: what it spawned closed, then its tmux server gone."""
    try:
        yield rig
    finally:
        rig.close()
        tmux.kill_server()


def for_one_test(rig: R, standin: _StandIn) -> Iterator[R]:
    """A rig for one test: the stand-in's script reset, what the test spawned closed after it."""
    standin.reset()
    before = len(rig.spawned)
    try:
        yield rig
    finally:
        standin.release()
        rig.close(since=before)


def rig_base(factory: pytest.TempPathFactory, name: str) -> Path:
    """A module's folder for a rig on real tmux (which the rig needs)."""
    require_tmux()
    return factory.mktemp(name)


def git_folder(root: Path) -> Path:
    """A never-seen git repository under `root` (the-loop's workspaces are git worktrees)."""
    folder = root / uuid.uuid4().hex[:8]
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
    return folder


def worktree(base: Path, slug: str) -> Path:
    """A git worktree of a new repository, as the-loop's workspaces are: no agent has seen either."""
    main = base / "repos" / slug
    subprocess.run(["git", "init", "-q", str(main)], check=True, timeout=30)
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "init"],
        check=True,
        timeout=30,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
        },
    )
    folder = base / "work" / slug
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(folder)], check=True, timeout=30)
    return folder


def first_spawn(
    world_in: Callable[[Path], World],
    factory: pytest.TempPathFactory,
    standin: _StandIn,
    *,
    before: Callable[[Path], None] = lambda folder: None,
) -> tuple[World, WorkItemRef, Path]:
    """A module's world (`world_in` a new folder), its item 1 in a never-seen git worktree (`before`
    looks at it first), the item's harness spawned by a cycle; the stand-in's script reset first."""
    standin.reset()
    base = factory.mktemp("loop")
    world = world_in(base)
    ref = world.item(1)
    folder = worktree(base, ref.slug)
    before(folder)
    world.cycle()
    return world, ref, folder
