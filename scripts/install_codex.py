"""Installs OpenAI Codex's native binary at a pinned version into .tools/codex/, verified against a pinned sha512.

`@openai/codex` is a small Node launcher whose platform package (`@openai/codex@<version>-linux-x64`,
an npm alias) carries a static musl binary: only that binary is written, Node never runs it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

VERSION = "0.169.0"
# the registry's dist.integrity of each platform package at VERSION; a download must match it
PACKAGES = {
    "x86_64": (
        f"@openai/codex@{VERSION}-linux-x64",
        "sha512-o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww==",
        "package/vendor/x86_64-unknown-linux-musl/bin/codex",
    ),
    "aarch64": (
        f"@openai/codex@{VERSION}-linux-arm64",
        "sha512-NZ/DaQUpcQmxmqee7Z9uC1rzw3GhSbooawcaTe1LN5Yk+WlinUKGdTXJgClRT/9ogQEEM9TWxYzvxPfj5G/xFg==",
        "package/vendor/aarch64-unknown-linux-musl/bin/codex",
    ),
}
PACKAGES["arm64"] = PACKAGES["aarch64"]
STAMP = ".verified"


class InstallError(Exception):
    """The binary could not be installed; the message says why."""


class Unsupported(InstallError):
    """No pinned package for this machine."""


def target(root: Path, version: str = VERSION) -> Path:
    return root / ".tools" / "codex" / version / "codex"


def platform_package(system: str, machine: str) -> tuple[str, str, str]:
    """The npm package spec, its pinned integrity and the binary's member, or a clear refusal."""
    if system != "Linux" or machine not in PACKAGES:
        raise Unsupported(
            f"Codex {VERSION} is installed here only on Linux x86_64 or arm64; this machine is {system} {machine}: "
            "unsupported"
        )
    return PACKAGES[machine]


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


def extract(tarball: Path, member_name: str, dest: Path) -> None:
    """Writes only the binary, through a temporary name, so a failure leaves nothing half-written."""
    part = dest.with_name(dest.name + ".part")
    with tarfile.open(tarball, "r:gz") as archive:
        member = archive.getmember(member_name)
        source = archive.extractfile(member) if member.isfile() else None
        if source is None:
            raise InstallError(f"{tarball.name}: {member_name} is not a regular file")
        with source, part.open("wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
    part.chmod(0o755)
    part.replace(dest)


def npm_pack(package: str, workdir: Path) -> Path:
    """The package's tarball, fetched by npm from its configured registry; no install, no scripts,
    and a private cache, so no global npm state is touched."""
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("npm is needed to fetch Codex (bootstrap installs it from Debian's packages)")
    argv = [npm, "pack", package, "--json", "--ignore-scripts"]
    argv += ["--pack-destination", str(workdir), "--cache", str(workdir / "npm-cache")]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, check=False)
    if done.returncode != 0:
        raise InstallError(f"npm pack {package} failed:\n{done.stderr.strip()}")
    return workdir / json.loads(done.stdout)[0]["filename"]


def install(root: Path, fetch: Callable[[str, Path], Path] = npm_pack) -> Path:
    dest = target(root)
    package, expected, member = platform_package(platform.system(), platform.machine())
    stamp = dest.with_name(STAMP)
    if dest.is_file() and os.access(dest, os.X_OK) and stamp.is_file() and stamp.read_text().strip() == expected:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as work:
        tarball = fetch(package, Path(work))
        verify(tarball, expected)
        extract(tarball, member, dest)
    stamp.write_text(expected + "\n")
    return dest


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    try:
        path = install(root)
    except Unsupported as error:
        print(f"install_codex: {error}", file=sys.stderr)
        return 3
    except InstallError as error:
        print(f"install_codex: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
