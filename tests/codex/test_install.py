"""scripts/install_codex.py: the pinned platform package, verified, only the binary written."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "scripts" / "install_codex.py"
BINARY = b"\x7fELF a stand-in for the native binary"
MEMBER = "package/vendor/x86_64-unknown-linux-musl/bin/codex"


@pytest.fixture
def module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("install_codex", INSTALLER)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    monkeypatch.setattr(loaded.platform, "system", lambda: "Linux")
    monkeypatch.setattr(loaded.platform, "machine", lambda: "x86_64")
    return loaded


def package(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def serving(tarball: Path, calls: list[str]) -> Callable[[str, Path], Path]:
    def fetch(name: str, workdir: Path) -> Path:
        calls.append(name)
        copy = workdir / tarball.name
        copy.write_bytes(tarball.read_bytes())
        return copy

    return fetch


def test_issue21_item6_a_download_not_matching_the_pinned_integrity_is_refused_and_nothing_is_written(
    module: ModuleType, tmp_path: Path
) -> None:
    tampered = package(tmp_path / "codex-linux-x64.tgz", {MEMBER: BINARY})
    with pytest.raises(module.InstallError, match=r"REFUSED: .* does not match the pinned integrity"):
        module.install(tmp_path / "repo", fetch=serving(tampered, []))
    assert list(module.target(tmp_path / "repo").parent.iterdir()) == []


def test_issue21_item6_a_verified_download_installs_only_the_binary_once(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tarball = package(
        tmp_path / "p.tgz", {MEMBER: BINARY, "package/vendor/x86_64-unknown-linux-musl/codex-path/rg": b"rg"}
    )
    spec, _, member = module.PACKAGES["x86_64"]
    monkeypatch.setitem(module.PACKAGES, "x86_64", (spec, module.integrity_of(tarball), member))
    calls: list[str] = []
    installed = module.install(tmp_path / "repo", fetch=serving(tarball, calls))
    module.install(tmp_path / "repo", fetch=serving(tarball, calls))
    assert installed == tmp_path / "repo" / ".tools" / "codex" / module.VERSION / "codex"
    assert installed.read_bytes() == BINARY and installed.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in installed.parent.iterdir()) == [".verified", "codex"]
    assert calls == [f"@openai/codex@{module.VERSION}-linux-x64"]  # the second install fetched nothing


def test_issue21_item6_the_pins_are_sha512_per_machine_and_other_machines_are_refused(module: ModuleType) -> None:
    assert module.platform_package("Linux", "arm64")[0].endswith("-linux-arm64")
    for _, integrity, member in module.PACKAGES.values():
        assert integrity.startswith("sha512-") and len(integrity) == len("sha512-") + 88
        assert member.endswith("/bin/codex")
    with pytest.raises(module.Unsupported, match="this machine is Darwin arm64: unsupported"):
        module.platform_package("Darwin", "arm64")


def test_issue21_item6_the_repository_ignores_the_installed_codex() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", ".tools/codex/x/codex"], cwd=ROOT, check=False, timeout=30)
    assert ignored.returncode == 0
