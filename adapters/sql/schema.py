"""A store's tables as one version, and the migrations that bring an older store there: the shape
the SQLite files and the PostgreSQL schema share (each in its own SQL)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Schema:
    """What a store holds (`label` names it in errors), the tables of `version` (a new store is
    created with them), and the steps that bring an older one there: `migrations[n - 1]` takes
    version n to n + 1. Bump the version with a migration, never silently."""

    version: int
    tables: tuple[str, ...]
    migrations: tuple[tuple[str, ...], ...] = ()
    label: str = "state store"

    def __post_init__(self) -> None:
        if len(self.migrations) != self.version - 1:
            raise ValueError(f"{self.label}: version {self.version} needs {self.version - 1} migrations")
