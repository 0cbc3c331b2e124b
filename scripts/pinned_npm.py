"""Installs a tool from npm at a pinned version into `.tools/<folder>/<version>/`, verified against
the registry's sha512 of the exact package, for the tests that run the real agents.

Each `scripts/install_<tool>.py` declares one `Pin`, at the version adapters/agents/pins.py names
(`pinned_version`: the one place `doctor` reads it too), and calls `main(PIN)`. `npm pack` fetches the
package's tarball (no install, no scripts, a private cache); nothing is written unless it matches the
pinned integrity, and the version's folder appears whole or not at all. Exit codes: 0 installed (its
path printed), 1 refused or failed, 3 no package for this machine. `--check` exits 0 only when the
pinned version is installed and verified, fetching nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import runpy
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

PINS = Path(__file__).resolve().parent.parent / "adapters" / "agents" / "pins.py"
STAMP = ".verified"
PACKAGE_ROOT = "package/"


class InstallError(Exception):
    """The tool could not be installed; the message says why."""


class Unsupported(InstallError):
    """No pinned package for this machine."""


@dataclass(frozen=True)
class Package:
    """One platform's package: what npm fetches, the registry's `dist.integrity` of it, and what of
    it is written: one member (a native binary, written as the pin's executable) or, with
    `member=PACKAGE_ROOT`, the package's whole tree (a bundle that Node runs)."""

    spec: str
    integrity: str
    member: str


@dataclass(frozen=True)
class Pin:
    title: str  # as the tool calls itself, for messages
    folder: str  # under .tools/
    version: str
    executable: str  # its path inside the version's folder
    packages: Mapping[str, Package]  # by platform.machine(): "x86_64", "aarch64" (also read for "arm64")
    glibc_only: bool = False

    def target(self, root: Path) -> Path:
        return root / ".tools" / self.folder / self.version / self.executable

    def package_for(self, system: str, machine: str, *, musl: bool = False) -> Package:
        """The package for this machine, or a clear refusal."""
        known = self.packages.get({"arm64": "aarch64"}.get(machine, machine))
        if system != "Linux" or known is None or (musl and self.glibc_only):
            libc = " (glibc)" if self.glibc_only else ""
            raise Unsupported(
                f"{self.title} {self.version} is installed here only on Linux{libc} {' or '.join(self.packages)}; "
                f"this machine is {system} {machine}{' (musl)' if musl else ''}: unsupported"
            )
        return known


def pinned_version(name: str) -> str:
    """The version `name` in adapters/agents/pins.py, run as a file of its own: nothing else of the project
    is imported (the installers run with the system Python, before the project is installed)."""
    version = runpy.run_path(str(PINS)).get(name)
    if not isinstance(version, str):
        raise InstallError(f"{PINS}: no version {name}")
    return version


def integrity_of(path: Path) -> str:
    digest = hashlib.sha512()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def verify(tarball: Path, expected: str) -> None:
    actual = integrity_of(tarball)
    if actual != expected:
        raise InstallError(
            f"REFUSED: {tarball.name} does not match the pinned integrity\n  expected {expected}\n  got      {actual}"
        )


def extract(tarball: Path, package: Package, folder: Path, executable: str) -> None:
    """Writes the package's member (or its tree) into `folder`; regular files and folders only, never
    outside it. The executable is made 0755."""
    with tarfile.open(tarball, "r:gz") as archive:
        if package.member == PACKAGE_ROOT:
            for member in archive.getmembers():
                _extract_tree_member(archive, member, tarball.name, folder)
        else:
            _write(archive, archive.getmember(package.member), tarball.name, folder / executable)
    (folder / executable).chmod(0o755)


def _extract_tree_member(archive: tarfile.TarFile, member: tarfile.TarInfo, name: str, folder: Path) -> None:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or path.parts[:1] != (PACKAGE_ROOT.rstrip("/"),):
        raise InstallError(f"{name}: {member.name} lies outside {PACKAGE_ROOT}")
    inside = folder.joinpath(*path.parts[1:])
    if member.isdir():
        inside.mkdir(parents=True, exist_ok=True)
    elif member.isfile():
        _write(archive, member, name, inside)
    else:
        raise InstallError(f"{name}: {member.name} is neither a file nor a folder")


def _write(archive: tarfile.TarFile, member: tarfile.TarInfo, name: str, dest: Path) -> None:
    source = archive.extractfile(member) if member.isfile() else None
    if source is None:
        raise InstallError(f"{name}: {member.name} is not a regular file")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with source, dest.open("wb") as out:
        shutil.copyfileobj(source, out, 1 << 20)
    dest.chmod(0o644)


def npm_pack(spec: str, workdir: Path) -> Path:
    """The package's tarball, fetched by npm from its configured registry; no install, no scripts,
    and a private cache, so no global npm state is touched."""
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("npm is needed to fetch the pinned tools (bootstrap installs it from Debian's packages)")
    argv = [npm, "pack", spec, "--json", "--ignore-scripts"]
    argv += ["--pack-destination", str(workdir), "--cache", str(workdir / "npm-cache")]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, check=False)
    if done.returncode != 0:
        raise InstallError(f"npm pack {spec} failed:\n{done.stderr.strip()}")
    return workdir / json.loads(done.stdout)[0]["filename"]


def installed(pin: Pin, root: Path, package: Package) -> bool:
    dest = pin.target(root)
    stamp = root / ".tools" / pin.folder / pin.version / STAMP
    return (
        dest.is_file()
        and os.access(dest, os.X_OK)
        and stamp.is_file()
        and stamp.read_text().strip() == package.integrity
    )


def install(pin: Pin, root: Path, fetch: Callable[[str, Path], Path] = npm_pack) -> Path:
    """The pinned tool's executable, installed once: fetched, verified, extracted into a fresh folder
    that takes the version folder's place only when whole."""
    package = pin.package_for(platform.system(), platform.machine(), musl=_is_musl())
    if installed(pin, root, package):
        return pin.target(root)
    versions = root / ".tools" / pin.folder
    versions.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=versions, prefix=f".{pin.version}.") as work:
        tarball = fetch(package.spec, Path(work))
        verify(tarball, package.integrity)
        staged = Path(work) / "staged"
        staged.mkdir()
        extract(tarball, package, staged, pin.executable)
        (staged / STAMP).write_text(package.integrity + "\n")
        final = versions / pin.version
        if final.exists():
            shutil.rmtree(final)
        staged.replace(final)
    return pin.target(root)


def _is_musl() -> bool:
    return platform.libc_ver()[0] != "glibc" and any(Path("/lib").glob("ld-musl-*"))


def main(pin: Pin, argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    rest = [arg for arg in args if arg != "--check"]
    root = Path(rest[0]) if rest else Path(__file__).resolve().parent.parent
    name = f"install {pin.folder}"
    try:
        if check:
            package = pin.package_for(platform.system(), platform.machine(), musl=_is_musl())
            return 0 if installed(pin, root, package) else 1
        path = install(pin, root)
    except Unsupported as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 3
    except InstallError as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0
