"""Installs OpenAI Codex's native binary at a pinned version into .tools/codex/ (scripts/pinned_npm.py).

`@openai/codex` is a small Node launcher whose platform package (`@openai/codex@<version>-linux-x64`,
an npm alias) carries a static musl binary: only that binary is written, Node never runs it.
"""

from __future__ import annotations

import sys

from pinned_npm import Package, Pin, main, pinned_version

VERSION = pinned_version("PINNED_CODEX")
PIN = Pin(
    title="Codex",
    folder="codex",
    version=VERSION,
    executable="codex",
    packages={
        "x86_64": Package(
            f"@openai/codex@{VERSION}-linux-x64",
            "sha512-o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww==",
            "package/vendor/x86_64-unknown-linux-musl/bin/codex",
        ),
        "aarch64": Package(
            f"@openai/codex@{VERSION}-linux-arm64",
            "sha512-NZ/DaQUpcQmxmqee7Z9uC1rzw3GhSbooawcaTe1LN5Yk+WlinUKGdTXJgClRT/9ogQEEM9TWxYzvxPfj5G/xFg==",
            "package/vendor/aarch64-unknown-linux-musl/bin/codex",
        ),
    },
)

if __name__ == "__main__":
    sys.exit(main(PIN))
