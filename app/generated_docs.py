"""Writes a generated docs page under a project root: one optional argument, never a flag."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def write_page(argv: list[str], *, page: Path, render: Callable[[], str], module: str) -> int:
    """`python -m MODULE [ROOT]`: a flag (`--help` once wrote a folder named `--help`) or a second
    argument is refused with exit 2 and nothing written."""
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print(f"usage: python -m {module} [PROJECT_ROOT]  (writes PROJECT_ROOT/{page})", file=sys.stderr)
        return 2
    root = Path(argv[0]) if argv else Path.cwd()
    (root / page).parent.mkdir(parents=True, exist_ok=True)
    (root / page).write_text(render(), encoding="utf-8")
    return 0
