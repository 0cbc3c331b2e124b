"""What an installed wheel holds: every file a package reads at run time, not only its modules."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path


def test_every_file_a_package_reads_at_run_time_is_named_in_the_package_data_a_wheel_ships() -> None:
    root = Path(__file__).resolve().parents[2]
    shipped = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    data = shipped.get("package-data", {})
    unshipped = []
    for top in ("domain", "adapters", "app"):
        for path in (root / top).rglob("*"):
            if not path.is_file() or path.suffix in {".py", ".pyc"} or "__pycache__" in path.parts:
                continue
            package_dir = next(p for p in path.parents if (p / "__init__.py").exists())
            package = ".".join(package_dir.relative_to(root).parts)
            inside = path.relative_to(package_dir).as_posix()
            if not any(fnmatch(inside, pattern) for pattern in data.get(package, [])):
                unshipped.append(f"{package}: {inside}")
    assert unshipped == []
