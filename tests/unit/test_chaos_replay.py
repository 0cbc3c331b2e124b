"""The kill campaign's replay command (`python -m bench.chaos`, printed first) runs the same
campaign again: its seed and every flag that shapes it."""

from __future__ import annotations

import shlex

import pytest

from bench.chaos.__main__ import arguments, replay


@pytest.mark.parametrize(
    "argv",
    [
        ["--kills", "20"],
        ["--kills", "8", "--receipts", "none"],
        ["--kills", "6", "--harness", "opencode", "--items", "2"],
        ["--kills", "20", "--receipts", "file", "--hibernate", "0.5", "--settle", "90"],
    ],
)
def test_the_replay_command_gives_the_campaign_every_flag_it_ran_with(argv: list[str]) -> None:
    ran = arguments(argv)
    line = replay(ran, 2019260868)
    words = shlex.split(line)
    assert words[:3] == ["python", "-m", "bench.chaos"]
    again = arguments(words[3:])
    assert vars(again) == {**vars(ran), "seed": 2019260868}
