"""The property tests (Hypothesis) check what the code does, never how fast: an example that takes
longer than Hypothesis's default 200 ms on a loaded machine is no failure. Speed is measured in
bench/, not asserted here."""

from __future__ import annotations

from hypothesis import settings


def test_a_property_tests_example_has_no_time_limit() -> None:
    assert settings().deadline is None
