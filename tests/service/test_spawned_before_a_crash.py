"""Found by the kill campaign with the real Claude Code (`bench.chaos --harness claude`, seed
3446521696): a poller killed right after it spawned a harness with the comment on its command line
left a harness still starting — Claude Code says the prompt was submitted one to two seconds after
its start. The next poller's look for the comment's receipt came too soon: it pasted the comment
again into that same harness (taken twice), or, when every attempt had been cut so, gave it up with
a notice saying it was not delivered although the harness took it. A retry whose comment rides on
the running spawn's command line waits for that spawn's receipt, as the spawn itself would have."""

from __future__ import annotations

import contextlib

from domain.events import Event
from domain.ledger import Resolution
from tests.fakes.tmux import FakePane
from tests.service.world import World


def crash_once_resumed(world: World) -> None:
    """The poller SIGKILLed the instant tmux started the resumed harness: before it judged the
    resume, before anything was recorded of the paste."""

    def crash(what: str, pane: FakePane, text: str) -> None:
        if what == "spawn" and "--resume" in pane.argv:
            raise KeyboardInterrupt

    world.tmux.listeners.append(crash)  # type: ignore[attr-defined]
    with contextlib.suppress(KeyboardInterrupt):
        world.poll.run()
    world.tmux.listeners.remove(crash)  # type: ignore[attr-defined]
    world.restart(version=world.version)


def test_a_comment_on_the_argv_of_a_harness_spawned_before_a_crash_is_not_pasted_again() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)  # the next comment respawns its harness, the comment on its command line
    comment = world.comment(ref, "please look at TOKEN-1")
    crash_once_resumed(world)  # the harness runs, still starting: no receipt yet

    world.cycle()

    took = [p.count("TOKEN-1") for p in (world.session(ref).prompt, *world.session(ref).received)]
    assert sum(took) == 1, took
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.events.named(Event.DISPATCH_CONFIRMED)[-1]["confirmed_by"] == "receipt-on-retry"
    assert world.tracker.posted == []
