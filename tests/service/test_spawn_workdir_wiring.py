"""The container's dispatch configuration: `spawnWorkdir` as docs/config.md describes it."""

from __future__ import annotations

from pathlib import Path

from app.config.settings import Settings
from app.container import _dispatch_config


def test_a_leading_tilde_in_spawn_workdir_is_the_home_directory() -> None:
    settings = Settings(routing={"spawnWorkdir": "~/work/{slug}"})  # type: ignore[arg-type]

    workdir = _dispatch_config(settings).workdir

    assert workdir == str(Path.home() / "work" / "{slug}")  # the dispatcher substitutes `{slug}` per item
