"""The ledger of one work item: which comments are resolved, pending, abandoned — and its rules."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from domain.model import Comment
from domain.refs import WorkItemRef


class Resolution(enum.Enum):
    DELIVERED = "delivered"
    BASELINED = "baselined"
    SKIPPED = "skipped"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class Resolved:
    kind: Resolution
    at: datetime
    attempts: int = 0
    version: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Pending:
    comment: Comment
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class Ledger:
    item: WorkItemRef
    baseline_at: datetime
    resolved: Mapping[str, Resolved] = field(default_factory=dict)
    pending: tuple[Pending, ...] = ()
    abandoned: Mapping[str, Comment] = field(default_factory=dict)
