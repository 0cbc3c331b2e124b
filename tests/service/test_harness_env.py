"""Every spawn gets its harness's `env` and `passEnv` from the daemon's environment."""

from __future__ import annotations

import json
from dataclasses import replace

from domain.events import Event
from tests.service.world import CLAUDE, World

KEYED = replace(CLAUDE, env=(("ANTHROPIC_BASE_URL", "https://${PROXY}/v1"),), pass_env=("ANTHROPIC_API_KEY",))


def test_each_spawn_gets_the_harness_env_and_pass_env_from_the_daemons_environment() -> None:
    world = World(harnesses={"claude": KEYED}, environ={"PROXY": "p.example", "ANTHROPIC_API_KEY": "sk-hunter2"})
    ref = world.watched()
    world.comment(ref, "go")

    world.cycle()

    env = dict(world.session(ref).env)
    assert env["ANTHROPIC_BASE_URL"] == "https://p.example/v1" and env["ANTHROPIC_API_KEY"] == "sk-hunter2"
    assert world.events.named(Event.SESSION_SPAWNED)
    assert "hunter2" not in json.dumps(world.events.records, default=str)


def test_a_variable_the_daemon_lacks_fails_the_spawn_naming_it_not_starting_on_stale_values() -> None:
    world = World(harnesses={"claude": KEYED}, environ={"PROXY": "p.example"})
    ref = world.watched()
    world.comment(ref, "go")

    world.cycle()

    assert world.spawns() == 0
    (failed, *_) = world.events.named(Event.SESSION_SPAWN_FAILED)
    assert failed["reason"] == (
        "cannot start the harness: harness claude: passEnv ANTHROPIC_API_KEY: not set in the daemon's environment"
    )
