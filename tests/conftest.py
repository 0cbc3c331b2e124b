"""Fixtures shared across folders: the private PostgreSQL server is started once per run."""

from collections.abc import Iterator

import pytest

from tests.postgres_support import postgres

__all__ = ["postgres"]


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The settings snapshots a command run in-process saves (app.config.snapshot) go to this run's own
    folder, never the operator's ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield
