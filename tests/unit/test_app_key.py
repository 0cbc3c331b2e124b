"""The GitHub App's key file: refused unless only its owner can read it, and the JWTs it signs."""

from __future__ import annotations

import os
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from adapters.github.app_key import AppKey, AppKeyError

NOW = 1_750_000_000.0


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def write(path: Path, pem: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(pem)
    os.chmod(path, mode)
    return path


def pem_of(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )


def test_a_jwt_is_rs256_issued_a_minute_back_by_the_app_and_lives_at_most_ten_minutes(
    tmp_path: Path, rsa_key: rsa.RSAPrivateKey
) -> None:
    key = AppKey.read(12345, write(tmp_path / "app.pem", pem_of(rsa_key)))
    token = key.jwt(NOW)
    claims = jwt.decode(token, rsa_key.public_key(), algorithms=["RS256"], options={"verify_exp": False})
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    assert claims == {"iat": NOW - 60, "exp": NOW - 60 + 600, "iss": "12345"}
    assert claims["exp"] - NOW <= 600


@pytest.mark.parametrize("mode", [0o640, 0o644, 0o604, 0o660])
def test_a_key_others_can_read_or_write_is_refused_naming_the_file(
    tmp_path: Path, rsa_key: rsa.RSAPrivateKey, mode: int
) -> None:
    path = write(tmp_path / "app.pem", pem_of(rsa_key), mode)
    with pytest.raises(AppKeyError) as refused:
        AppKey.read(1, path)
    assert str(path) in str(refused.value) and f"{mode:04o}" in str(refused.value) and "chmod 600" in str(refused.value)


def test_a_key_only_its_owner_can_read_is_taken(tmp_path: Path, rsa_key: rsa.RSAPrivateKey) -> None:
    assert AppKey.read(1, write(tmp_path / "app.pem", pem_of(rsa_key), 0o400)).app_id == 1


def test_a_missing_key_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AppKeyError, match=r"no-such\.pem: no such file"):
        AppKey.read(1, tmp_path / "no-such.pem")


def test_a_file_that_is_no_pem_key_is_refused_without_showing_what_it_holds(tmp_path: Path) -> None:
    path = write(tmp_path / "app.pem", b"-----BEGIN RSA PRIVATE KEY-----\nsecret-looking-text\n")
    with pytest.raises(AppKeyError) as refused:
        AppKey.read(1, path)
    assert str(path) in str(refused.value) and "secret-looking-text" not in str(refused.value)


def test_a_key_that_is_not_rsa_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "app.pem", pem_of(ec.generate_private_key(ec.SECP256R1())))
    with pytest.raises(AppKeyError, match="not an RSA key"):
        AppKey.read(1, path)


def test_the_key_never_shows_in_a_repr(tmp_path: Path, rsa_key: rsa.RSAPrivateKey) -> None:
    path = write(tmp_path / "app.pem", pem_of(rsa_key))
    shown = repr(AppKey.read(1, path))
    assert "PRIVATE" not in shown and str(path) in shown
