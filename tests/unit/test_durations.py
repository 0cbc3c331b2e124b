"""How seconds read as text: one formatter, in one unit or two."""

from __future__ import annotations

import pytest

from domain.durations import duration


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0, "0s"), (59.9, "59s"), (60, "1m00s"), (125, "2m05s"), (3599, "59m59s"), (7260, "2h01m"), (90000, "1d01h")],
)
def test_two_units_show_the_largest_and_the_next_two_digits_wide(seconds: float, expected: str) -> None:
    assert duration(seconds) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0, "0s"), (7, "7s"), (61, "1m"), (150, "2m"), (7200, "2h"), (7199, "1h"), (3 * 86400 + 5, "3d")],
)
def test_one_unit_shows_the_largest_alone_cut_to_whole(seconds: float, expected: str) -> None:
    assert duration(seconds, parts=1) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"), [(1, "1s"), (119, "119s"), (120, "2m"), (7199, "119m"), (7200, "2h"), (172799, "47h")]
)
def test_a_unit_may_lead_only_from_two_of_it(seconds: float, expected: str) -> None:
    assert duration(seconds, parts=1, least=2) == expected


def test_a_negative_span_reads_as_none_at_all() -> None:
    assert (duration(-5), duration(-5, parts=1)) == ("0s", "0s")


@pytest.mark.parametrize(("seconds", "parts", "expected"), [(5, 1, "5 s"), (150, 1, "2 min"), (125, 2, "2 min 05 s"),
                                                             (7200, 1, "2 h"), (3 * 86400, 1, "3 d")])  # fmt: skip
def test_spoken_units_are_words_a_space_apart(seconds: float, parts: int, expected: str) -> None:
    assert duration(seconds, parts=parts, spoken=True) == expected
