"""Spans of time as people read them: the one way seconds become text (`2m05s`, `2h`)."""

from __future__ import annotations

from itertools import pairwise

_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_SPOKEN = {"d": " d", "h": " h", "m": " min", "s": " s"}  # a page's words: `2 min`, not `2m`


def duration(seconds: float, *, parts: int = 2, least: int = 1, spoken: bool = False) -> str:
    """`seconds`, cut to whole ones and never below none, in its largest unit and the `parts - 1`
    units after it, those two digits wide: `5s`, `2m05s`, `2h00m`, `1d03h`; with `parts=1` the
    largest unit alone: `5s`, `2m`, `2h`, `1d`. A unit leads only from `least` of it: with
    `least=2`, 90 seconds read `90s`, not `1m` (a park's age, at a glance more exact). `spoken`:
    each unit a word apart, for a page: `2 min`, `2 min 05 s`."""
    left = max(0, int(seconds))
    start = next(index for index, (_, size) in enumerate(_UNITS) if left >= least * size or size == 1)
    shown = _UNITS[start : start + parts]
    names = _SPOKEN if spoken else {unit: unit for unit, _ in _UNITS}
    text = f"{left // shown[0][1]}{names[shown[0][0]]}"
    for (_, above), (unit, size) in pairwise(shown):
        text += f"{' ' if spoken else ''}{left % above // size:02d}{names[unit]}"
    return text
