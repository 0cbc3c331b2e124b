"""Fixtures shared across folders: the private PostgreSQL server is started once per run. And the
run's order: the folders whose tests wait on real agents and processes first."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.postgres_support import postgres

__all__ = ["postgres"]

# a property test checks what the code does, not how fast: Hypothesis's default limit of 200 ms an
# example failed such tests on a loaded machine (speed is measured in bench/)
settings.register_profile("the-loop", deadline=None)
settings.load_profile("the-loop")


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The settings snapshots a command run in-process saves (app.config.snapshot) go to this run's own
    folder, never the operator's ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


TESTS = Path(__file__).parent
# Side by side (pytest-xdist), a run ends when its slowest worker does: a real agent's minute-long
# test taken last holds the end alone while the other workers have nothing left. So the folders
# whose tests wait on real agents, processes and campaigns go first, and the quick ones fill in
# behind them. Folders not named here go between the two.
SLOW_FIRST = ("e2e", "claude", "codex", "gemini", "opencode", "copilot", "integration")
QUICK_LAST = ("contract", "service", "unit")


def folder_rank(path: Path) -> int:
    """Where a test file's folder under tests/ goes in the run: lower first."""
    try:
        folder = path.relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return len(SLOW_FIRST)
    if folder in SLOW_FIRST:
        return SLOW_FIRST.index(folder)
    if folder in QUICK_LAST:
        return len(SLOW_FIRST) + 1 + QUICK_LAST.index(folder)
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: folder_rank(item.path))  # stable: a module's tests stay together, in order
