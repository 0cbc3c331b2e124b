"""scripts/install_*.py over scripts/pinned_npm.py: each pinned package verified against the registry's
sha512, only what the pin names written, the version's folder whole or absent, other machines named.

Every installer in scripts/ is covered: a new harness's installer is tested by being there."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from adapters.agents import pins

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
INSTALLERS = sorted(SCRIPTS.glob("install_*.py"))
CONTENT = b"\x7fELF a stand-in for the tool"


@pytest.fixture
def npm(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """scripts/pinned_npm.py, on a Linux x86_64 glibc machine whatever this one is."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import pinned_npm

    monkeypatch.setattr(pinned_npm.platform, "system", lambda: "Linux")
    monkeypatch.setattr(pinned_npm.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(pinned_npm, "_is_musl", lambda: False)
    yield pinned_npm


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=INSTALLERS, ids=lambda path: path.stem)
def installer(request: pytest.FixtureRequest, npm: ModuleType) -> ModuleType:
    return load(request.param)


def tarball(path: Path, files: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, to in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, to
            archive.addfile(info)
    return path


def serving(path: Path, calls: list[str]) -> Callable[[str, Path], Path]:
    """A fetch that hands out a copy of `path`, counting its calls."""

    def fetch(spec: str, workdir: Path) -> Path:
        calls.append(spec)
        copy = workdir / path.name
        copy.write_bytes(path.read_bytes())
        return copy

    return fetch


def contents_for(module: ModuleType) -> dict[str, bytes]:
    """A package holding what the pin takes, and something it does not."""
    package = module.PIN.packages["x86_64"]
    if package.member == "package/":
        return {f"package/{module.PIN.executable}": CONTENT, "package/README.md": b"readme"}
    return {package.member: CONTENT, "package/README.md": b"readme"}


def pinned_to(monkeypatch: pytest.MonkeyPatch, npm: ModuleType, module: ModuleType, path: Path) -> None:
    package = module.PIN.packages["x86_64"]
    monkeypatch.setitem(
        module.PIN.packages, "x86_64", npm.Package(package.spec, npm.integrity_of(path), package.member)
    )


def test_a_download_not_matching_the_pinned_integrity_is_refused_and_nothing_is_written(
    installer: ModuleType, npm: ModuleType, tmp_path: Path
) -> None:
    tampered = tarball(tmp_path / "p.tgz", contents_for(installer))
    with pytest.raises(npm.InstallError, match=r"REFUSED: .* does not match the pinned integrity"):
        npm.install(installer.PIN, tmp_path / "repo", fetch=serving(tampered, []))
    assert list((tmp_path / "repo" / ".tools" / installer.PIN.folder).iterdir()) == []


def test_a_verified_download_installs_what_the_pin_names_once_and_executable(
    installer: ModuleType, npm: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tarball(tmp_path / "p.tgz", contents_for(installer))
    pinned_to(monkeypatch, npm, installer, path)
    calls: list[str] = []
    installed = npm.install(installer.PIN, tmp_path / "repo", fetch=serving(path, calls))
    npm.install(installer.PIN, tmp_path / "repo", fetch=serving(path, calls))
    pin = installer.PIN
    assert installed == tmp_path / "repo" / ".tools" / pin.folder / installer.VERSION / pin.executable
    assert installed.read_bytes() == CONTENT and installed.stat().st_mode & 0o777 == 0o755
    version = tmp_path / "repo" / ".tools" / pin.folder / installer.VERSION  # a bundle's executable may lie deeper
    written = sorted(str(p.relative_to(version)) for p in version.rglob("*") if p.is_file())
    tree = pin.packages["x86_64"].member == "package/"
    assert written == sorted([".verified", pin.executable] + (["README.md"] if tree else []))
    assert calls == [pin.packages["x86_64"].spec]  # the second install fetched nothing


def test_check_says_whether_the_pinned_version_is_installed_and_fetches_nothing(
    installer: ModuleType, npm: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    assert npm.main(installer.PIN, ["--check", str(repo)]) == 1
    path = tarball(tmp_path / "p.tgz", contents_for(installer))
    pinned_to(monkeypatch, npm, installer, path)
    npm.install(installer.PIN, repo, fetch=serving(path, []))
    assert npm.main(installer.PIN, ["--check", str(repo)]) == 0
    (repo / ".tools" / installer.PIN.folder / installer.VERSION / ".verified").write_text("sha512-other\n")
    assert npm.main(installer.PIN, ["--check", str(repo)]) == 1


# the version `doctor` checks for each installer's tool (by its folder under .tools/)
DOCTORS_PIN = {
    "claude-code": pins.PINNED_CLAUDE_CODE,
    "codex": pins.PINNED_CODEX,
    "gemini": pins.PINNED_GEMINI_CLI,
    "opencode": pins.PINNED_OPENCODE,
    "copilot": pins.PINNED_COPILOT,
}


def test_each_installer_installs_the_version_doctor_checks_and_every_package_is_of_it(installer: ModuleType) -> None:
    pin = installer.PIN
    assert (pin.folder, pin.version) == (pin.folder, DOCTORS_PIN[pin.folder])
    assert [package.spec for package in pin.packages.values() if pin.version not in package.spec] == []


def test_the_pins_are_sha512_per_machine_and_other_machines_are_refused_by_name(
    installer: ModuleType, npm: ModuleType
) -> None:
    pin = installer.PIN
    if "aarch64" in pin.packages:  # opencode 1.18.33 has no arm64 package in the registry
        assert pin.package_for("Linux", "arm64") == pin.packages["aarch64"]
    assert all(installer.VERSION in package.spec for package in pin.packages.values()) and "x86_64" in pin.packages
    for package in pin.packages.values():
        assert package.integrity.startswith("sha512-") and len(package.integrity) == len("sha512-") + 88
    for system, machine in (("Darwin", "arm64"), ("Linux", "riscv64")):
        with pytest.raises(npm.Unsupported, match=f"this machine is {system} {machine}: unsupported"):
            pin.package_for(system, machine)


def test_claude_codes_glibc_build_is_refused_on_musl(npm: ModuleType) -> None:
    pin = load(SCRIPTS / "install_claude_code.py").PIN
    with pytest.raises(npm.Unsupported, match=r"this machine is Linux x86_64 \(musl\): unsupported"):
        pin.package_for("Linux", "x86_64", musl=True)


def bundle_pin(npm: ModuleType, path: Path) -> object:
    package = npm.Package("bundle@1", npm.integrity_of(path), npm.PACKAGE_ROOT)
    return npm.Pin("Bundle", "bundle", "1", "bundle/tool.js", {"x86_64": package})


def test_a_packages_tree_is_written_whole_under_its_version_with_the_executable_runnable(
    npm: ModuleType, tmp_path: Path
) -> None:
    path = tarball(
        tmp_path / "p.tgz", {"package/bundle/tool.js": b"#!/usr/bin/env node\n", "package/package.json": b"{}"}
    )
    installed = npm.install(bundle_pin(npm, path), tmp_path / "repo", fetch=serving(path, []))
    assert installed == tmp_path / "repo" / ".tools" / "bundle" / "1" / "bundle" / "tool.js"
    assert installed.stat().st_mode & 0o777 == 0o755
    assert (installed.parents[1] / "package.json").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("files", "links", "refusal"),
    [
        ({"package/../escape": b"x"}, {}, "lies outside package/"),
        ({"other/file": b"x"}, {}, "lies outside package/"),
        ({"package/bundle/tool.js": b"x"}, {"package/link": "/etc/passwd"}, "neither a file nor a folder"),
    ],
)
def test_a_packages_tree_with_a_member_outside_it_or_a_link_is_refused_and_nothing_is_written(
    npm: ModuleType, tmp_path: Path, files: dict[str, bytes], links: dict[str, str], refusal: str
) -> None:
    path = tarball(tmp_path / "p.tgz", files, links)
    with pytest.raises(npm.InstallError, match=refusal):
        npm.install(bundle_pin(npm, path), tmp_path / "repo", fetch=serving(path, []))
    assert list((tmp_path / "repo" / ".tools" / "bundle").iterdir()) == []
    assert not (tmp_path / "repo" / "escape").exists()


def test_each_script_exits_non_zero_with_npms_refusal_on_stderr_and_installs_nothing(tmp_path: Path) -> None:
    fake_npm = tmp_path / "bin" / "npm"
    fake_npm.parent.mkdir()
    fake_npm.write_text("#!/bin/sh\necho 'npm: no registry here' >&2\nexit 1\n")
    fake_npm.chmod(0o755)
    for script in INSTALLERS:
        done = subprocess.run(
            [sys.executable, str(script), str(tmp_path / "repo")],
            env={"PATH": f"{fake_npm.parent}:/usr/bin:/bin"},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if done.returncode == 3:  # no package for this machine: said so, by name
            assert "unsupported" in done.stderr
            continue
        assert done.returncode == 1, (script.name, done.stderr)
        assert "npm pack " in done.stderr and "no registry here" in done.stderr, done.stderr
    assert not any(path.is_file() for path in (tmp_path / "repo").rglob("*"))


@pytest.mark.parametrize("script", INSTALLERS, ids=lambda path: path.stem)
def test_the_repository_ignores_what_each_installs(script: Path, npm: ModuleType) -> None:
    pin = load(script).PIN
    folder = pin.target(Path(".")).relative_to(".tools").parts[0]  # its folder: a worktree may link it
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", f".tools/{folder}"],
        cwd=ROOT,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert ignored.returncode == 0
