"""A GitHub App's private key, read once and checked, and the JWTs it signs.

RS256 is signed by PyJWT over cryptography's RSA: signing code is security code, not written here.
"""

from __future__ import annotations

import os
from pathlib import Path

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from domain.errors import LoopError

BACKDATE = 60  # GitHub's advice: `iat` a minute back, so a clock a little ahead of GitHub's still counts
LIFETIME = 600  # GitHub refuses a JWT whose `exp` is more than ten minutes on
_OTHERS = 0o077  # group and world permission bits


class AppKeyError(LoopError):
    """The App's key file cannot be used; the message names the file, never what it holds."""


class AppKey:
    """The App's id and RSA private key, for signing the JWTs GitHub's App endpoints take."""

    def __init__(self, app_id: int, key: RSAPrivateKey, path: Path) -> None:
        self.app_id = app_id
        self.path = path
        self._key = key

    def __repr__(self) -> str:
        return f"AppKey(app_id={self.app_id}, path={str(self.path)!r})"

    @classmethod
    def read(cls, app_id: int, path: Path) -> AppKey:
        """The key in `path`: a PEM RSA private key without a passphrase, in a file no one but its
        owner may read or write (mode 0600 or 0400)."""
        what = "the GitHub App's private key"
        try:
            with path.open("rb") as file:
                mode = os.fstat(file.fileno()).st_mode & 0o777  # the file opened, not a name raced for
                if mode & _OTHERS:
                    raise AppKeyError(
                        f"{path}: {what} must be readable by its owner only, but its mode is {mode:04o}"
                        f" (chmod 600 {path})"
                    )
                data = file.read()
        except FileNotFoundError:
            raise AppKeyError(f"{path}: no such file ({what})") from None
        except OSError as error:
            raise AppKeyError(f"{path}: cannot read {what}: {error.strerror}") from None
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm):
            # cryptography's reason is not shown: nothing of the file's content may reach a message
            raise AppKeyError(f"{path}: not a PEM private key without a passphrase ({what})") from None
        if not isinstance(key, RSAPrivateKey):
            raise AppKeyError(f"{path}: not an RSA key ({what} is the .pem GitHub generates for the App)")
        return cls(app_id, key, path)

    @property
    def bits(self) -> int:
        return self._key.key_size

    def jwt(self, now: float) -> str:
        """A JWT naming the App (`iss`), issued a minute before `now` and expiring ten minutes after
        that: GitHub takes it on its App endpoints only, to hand out installation tokens."""
        issued = int(now) - BACKDATE
        claims = {"iat": issued, "exp": issued + LIFETIME, "iss": str(self.app_id)}
        return jwt.encode(claims, self._key, algorithm="RS256")
