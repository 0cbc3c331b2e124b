"""Installs GitHub Copilot CLI's native binary at a pinned version into .tools/copilot/ (scripts/pinned_npm.py).

`@github/copilot` is a small Node launcher whose platform package (`@github/copilot-linux-x64`, glibc;
musl builds are packages of their own) carries one executable, `package/copilot`: a Node single
executable that unpacks its JavaScript and native runtime into `$COPILOT_CACHE_HOME` (else
`~/.cache/copilot/pkg/`) on its first run. Node is not needed to run it.
"""

from __future__ import annotations

import sys

from pinned_npm import Package, Pin, main, pinned_version

VERSION = pinned_version("PINNED_COPILOT")
PIN = Pin(
    title="GitHub Copilot CLI",
    folder="copilot",
    version=VERSION,
    executable="copilot",
    packages={
        "x86_64": Package(
            f"@github/copilot-linux-x64@{VERSION}",
            "sha512-eGHPbsP0p2QgfVZCjtbGBFZPBOJQ0DN7xIbBRAo7oG8b1zfLirQIdfI4h8Iy68Dv2cKJGJZg2/EO7W7KpIMJOw==",
            "package/copilot",
        ),
        "aarch64": Package(
            f"@github/copilot-linux-arm64@{VERSION}",
            "sha512-5rO0B2/AduCekrE+aUzipySKZxZY2b/tVRZ8Suy8ymPFNC0Q7HQiQ8DZhxj+3RhHR8rU2Z8KOJVAbtMlROX6+A==",
            "package/copilot",
        ),
    },
    glibc_only=True,
)

if __name__ == "__main__":
    sys.exit(main(PIN))
