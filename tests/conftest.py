"""Fixtures shared across folders: the private PostgreSQL server is started once per run."""

from tests.postgres_support import postgres

__all__ = ["postgres"]
