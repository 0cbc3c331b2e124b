"""Installs Google's Gemini CLI at a pinned version into .tools/gemini/ (scripts/pinned_npm.py).

`@google/gemini-cli` is a bundle (`bin: bundle/gemini.js`, no hard dependencies; node-pty and keytar
are optional and left out): its whole `package/` tree is written, and Node (>= 20) runs it.
"""

from __future__ import annotations

import sys

from pinned_npm import PACKAGE_ROOT, Package, Pin, main, pinned_version

VERSION = pinned_version("PINNED_GEMINI_CLI")
# the same package on every machine: the bundle is JavaScript
_PACKAGE = Package(
    f"@google/gemini-cli@{VERSION}",
    "sha512-dbQ9A0qBtFJNi6XBkHvfZ6Azpn6PNgH/P8h2MZ67RLlX8hSAVjup39CRWqdRxZv7YXIuhrFaytr8y0jKnkoxnQ==",
    PACKAGE_ROOT,
)
PIN = Pin(
    title="Gemini CLI",
    folder="gemini",
    version=VERSION,
    executable="bundle/gemini.js",
    packages={"x86_64": _PACKAGE, "aarch64": _PACKAGE},
)

if __name__ == "__main__":
    sys.exit(main(PIN))
