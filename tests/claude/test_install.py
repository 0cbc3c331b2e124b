"""scripts/install_claude_code.py: the pinned package, verified, only the binary written, unsupported machines named."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "scripts" / "install_claude_code.py"
BINARY = b"\x7fELF a stand-in for the native binary"


def installer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("install_claude_code", INSTALLER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def package(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def serving(tarball: Path, calls: list[str]) -> Callable[[str, Path], Path]:
    """A fetch that hands out a copy of `tarball`, counting its calls."""

    def fetch(name: str, workdir: Path) -> Path:
        calls.append(name)
        copy = workdir / tarball.name
        copy.write_bytes(tarball.read_bytes())
        return copy

    return fetch


@pytest.fixture
def module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    loaded = installer()
    monkeypatch.setattr(loaded.platform, "system", lambda: "Linux")
    monkeypatch.setattr(loaded.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(loaded, "_is_musl", lambda: False)
    return loaded


def test_a_download_that_does_not_match_the_pinned_integrity_is_refused_and_nothing_is_written(
    module: ModuleType, tmp_path: Path
) -> None:
    tampered = package(tmp_path / "claude-code-linux-x64.tgz", {"package/claude": BINARY})
    with pytest.raises(module.InstallError, match=r"REFUSED: .* does not match the pinned integrity"):
        module.install(tmp_path / "repo", fetch=serving(tampered, []))
    folder = module.target(tmp_path / "repo").parent
    assert sorted(p.name for p in folder.iterdir()) == []


def test_a_verified_download_installs_only_the_executable_binary(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tarball = package(tmp_path / "p.tgz", {"package/claude": BINARY, "package/README.md": b"readme"})
    monkeypatch.setitem(
        module.PACKAGES, "x86_64", ("@anthropic-ai/claude-code-linux-x64", module.integrity_of(tarball))
    )
    installed = module.install(tmp_path / "repo", fetch=serving(tarball, []))
    assert installed == tmp_path / "repo" / ".tools" / "claude-code" / module.VERSION / "claude"
    assert installed.read_bytes() == BINARY
    assert installed.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in installed.parent.iterdir()) == [".verified", "claude"]


def test_an_installed_binary_is_not_fetched_again(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tarball = package(tmp_path / "p.tgz", {"package/claude": BINARY})
    monkeypatch.setitem(
        module.PACKAGES, "x86_64", ("@anthropic-ai/claude-code-linux-x64", module.integrity_of(tarball))
    )
    calls: list[str] = []
    module.install(tmp_path / "repo", fetch=serving(tarball, calls))
    module.install(tmp_path / "repo", fetch=serving(tarball, calls))
    assert calls == ["@anthropic-ai/claude-code-linux-x64"]


def test_the_package_follows_the_machine_and_the_pins_are_the_registrys_sha512(module: ModuleType) -> None:
    assert module.platform_package("Linux", "x86_64", musl=False)[0] == "@anthropic-ai/claude-code-linux-x64"
    assert module.platform_package("Linux", "aarch64", musl=False)[0] == "@anthropic-ai/claude-code-linux-arm64"
    assert module.platform_package("Linux", "arm64", musl=False)[0] == "@anthropic-ai/claude-code-linux-arm64"
    for _, integrity in module.PACKAGES.values():
        assert integrity.startswith("sha512-") and len(integrity) == len("sha512-") + 88


@pytest.mark.parametrize(
    ("system", "machine", "musl"),
    [("Darwin", "arm64", False), ("Linux", "riscv64", False), ("Linux", "x86_64", True)],
)
def test_other_machines_are_refused_as_unsupported_by_name(
    module: ModuleType, system: str, machine: str, musl: bool
) -> None:
    with pytest.raises(module.Unsupported, match=f"this machine is {system} {machine} .*: unsupported"):
        module.platform_package(system, machine, musl=musl)


def test_the_script_exits_non_zero_with_the_refusal_on_stderr(tmp_path: Path) -> None:
    fake_npm = tmp_path / "bin" / "npm"
    fake_npm.parent.mkdir()
    fake_npm.write_text("#!/bin/sh\necho 'npm: no registry here' >&2\nexit 1\n")
    fake_npm.chmod(0o755)
    env = {"PATH": f"{fake_npm.parent}:/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(INSTALLER), str(tmp_path / "repo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "npm pack @anthropic-ai/claude-code-linux-" in done.stderr and "no registry here" in done.stderr
    assert not (tmp_path / "repo" / ".tools" / "claude-code" / installer().VERSION / "claude").exists()


def test_the_repository_ignores_the_installed_tools() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".tools/claude-code/x/claude"],
        cwd=ROOT,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert ignored.returncode == 0
