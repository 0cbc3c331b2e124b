"""Installs opencode's native binary at a pinned version into .tools/opencode/ (scripts/pinned_npm.py).

`opencode-ai` is a small Node launcher whose platform package (`opencode-linux-x64`) carries one
executable, `package/bin/opencode` (a Bun build, linked against glibc): Node is not needed to run it.
The registry holds no `opencode-linux-arm64` at this version, so only x86_64 is pinned.
"""

from __future__ import annotations

import sys

from pinned_npm import Package, Pin, main, pinned_version

VERSION = pinned_version("PINNED_OPENCODE")
X86_64 = Package(
    f"opencode-linux-x64@{VERSION}",
    "sha512-q/t/3p2CTxOT9y2kvjesb/LZab2+1eqlhhWA02Be6mjTtmYtNBcBsrI5yDo4Fw7ZSPBW2oyMIGMNRqiKQjiAWw==",
    "package/bin/opencode",
)
PIN = Pin(
    title="opencode",
    folder="opencode",
    version=VERSION,
    executable="opencode",
    packages={"x86_64": X86_64},
    glibc_only=True,
)

if __name__ == "__main__":
    sys.exit(main(PIN))
