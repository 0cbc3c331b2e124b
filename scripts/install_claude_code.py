"""Installs Claude Code's native binary at a pinned version into .tools/claude-code/ (scripts/pinned_npm.py).

The platform package carries one executable, `package/claude`: Node is not needed to run it.
"""

from __future__ import annotations

import sys

from pinned_npm import Package, Pin, main, pinned_version

VERSION = pinned_version("PINNED_CLAUDE_CODE")
PIN = Pin(
    title="Claude Code",
    folder="claude-code",
    version=VERSION,
    executable="claude",
    packages={
        "x86_64": Package(
            f"@anthropic-ai/claude-code-linux-x64@{VERSION}",
            "sha512-KuzL+dBHgDCFTHJxwW+xuBJdVKfBsesGx2BBcTOG9sYDGoAD7b1hUV8rsTS4xjoJsB2SmeGraGjBiFuhrYuC9w==",
            "package/claude",
        ),
        "aarch64": Package(
            f"@anthropic-ai/claude-code-linux-arm64@{VERSION}",
            "sha512-zeWsClzx/rli8q6RsngKisu5BnuZ41J7Htp0qgsdZomaJCINiksf+mewQ/gyaylKajBZCoE9Z8R+OkLMjIkJig==",
            "package/claude",
        ),
    },
    glibc_only=True,
)

if __name__ == "__main__":
    sys.exit(main(PIN))
