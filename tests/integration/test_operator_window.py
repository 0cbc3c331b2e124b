"""The reviewer's scenario on real tmux 3.3: an operator attaches and opens a window of their
own (`tmux new-window`); the next comment, delivered by the poll cycle, lands in the harness
and the operator's window receives nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.integration.test_poll_real_tmux import _ready, _starts, _world
from tests.tmux_support import RealTmux, kinds, pasted, real_tmux, records, sim_argv, wait_for

__all__ = ["real_tmux"]
pytestmark = pytest.mark.tmux


def test_a_comment_after_an_operator_opened_a_window_lands_in_the_harness_not_the_operators_shell(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path)
    ref = world.watched()
    _ready(tmp_path, 1)
    operator = tmp_path / "operator.jsonl"  # stands in for the operator's shell, recording what it gets
    real_tmux.run("new-window", "-t", f"{ref.target.exact}:", *sim_argv(operator))
    wait_for(lambda: "ready" in kinds(operator), what="the operator's window")
    world.comment(ref, "git status\nrm -rf build")

    world.cycle()

    harness = tmp_path / "record.jsonl"
    wait_for(lambda: "submit" in kinds(harness), what="the harness to receive the comment")
    assert any("rm -rf build" in text for text in pasted(harness))
    assert [r["kind"] for r in records(operator)] == ["start", "ready"]


def test_a_record_without_a_proven_pane_never_types_into_the_operators_shell(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path)
    ref = world.watched()
    _ready(tmp_path, 1)
    real_tmux.run("new-window", "-t", f"{ref.target.exact}:", "sh")  # an operator's shell, now the active pane
    record = world.record(ref)
    world.store.save_session(replace(record, spawn_id="", pane_id=""))  # a record the old code could leave
    owned = tmp_path / "owned"
    world.comment(ref, f"touch {owned}")

    world.cycle()

    wait_for(lambda: len(_starts(tmp_path)) >= 2, what="the harness in a window of its own")
    assert not owned.exists()  # the shell got nothing to run
    assert f"touch {owned}" in str(_starts(tmp_path)[-1]["prompt"])  # the harness got it, on its argv
