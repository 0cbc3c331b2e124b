"""A self-signed certificate for localhost, made at test time with the openssl CLI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def self_signed(directory: Path) -> tuple[Path, Path]:
    """Write cert.pem and key.pem (EC P-256, localhost and 127.0.0.1) into `directory`."""
    if shutil.which("openssl") is None:
        raise RuntimeError("openssl is needed to make the stand-in's certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
