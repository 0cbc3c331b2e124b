"""Reading a spawn's receipt folder: where it is and what its files say. `FileReceipts` reads
through these; so does the lean `sessions list`, which is why this imports only
the hooks' reader and the domain's receipts and refs."""

from __future__ import annotations

import os
from pathlib import Path

from adapters.agents.receipt_line import SUFFIX
from adapters.receipts.hook_json import receipt_of
from domain.receipts import Receipt
from domain.refs import Naming, WorkItemRef


def spawn_folder(root: Path, item: WorkItemRef, spawn: str) -> Path:
    """The folder of `spawn`'s receipts under `root`. A spawn made before slugs were injective writes
    under the old slug; a spawn id is unique, so the folder of that id there is this spawn's."""
    folder = root / item.slug / spawn
    if not folder.is_dir():
        folder = root / item.slug_by(Naming.LEGACY) / spawn
    return folder


def receipt_names(folder: Path) -> list[str]:
    """The receipt files of `folder`, in the order they were written (none when it cannot be listed)."""
    try:
        return sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(SUFFIX))
    except OSError:
        return []


def parse(path: Path, name: str) -> Receipt | None:
    """One receipt file; None when it cannot be read or says nothing the-loop acts on."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return receipt_of(name.removesuffix(SUFFIX), text)


def read_folder(folder: Path) -> list[Receipt]:
    """Every receipt of `folder`, in order."""
    return [receipt for name in receipt_names(folder) if (receipt := parse(folder / name, name)) is not None]
