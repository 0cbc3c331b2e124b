"""The suite's order: the folders whose tests wait on real agents go first, the quick ones last, so a
minute-long test is never the one a side-by-side run ends on alone."""

from __future__ import annotations

from tests.conftest import TESTS, folder_rank


def test_the_real_agent_and_campaign_folders_go_before_the_quick_ones() -> None:
    order = ["unit", "service", "contract", "integration", "opencode", "gemini", "codex", "claude", "e2e"]

    ranked = sorted(order, key=lambda folder: folder_rank(TESTS / folder / "test_x.py"))

    assert ranked == ["e2e", "claude", "codex", "gemini", "opencode", "integration", "contract", "service", "unit"]


def test_a_folder_not_named_goes_between_the_slow_and_the_quick() -> None:
    slowest_quick = folder_rank(TESTS / "contract" / "test_x.py")
    quickest_slow = folder_rank(TESTS / "integration" / "test_x.py")

    assert quickest_slow < folder_rank(TESTS / "newfolder" / "test_x.py") < slowest_quick
