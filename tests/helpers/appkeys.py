"""GitHub App private keys for tests: a fresh RSA key, its PEM text, and the key file the
CLI reads (``--app-private-key``)."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key: rsa.RSAPrivateKey) -> str:
    """The key as GitHub hands it out (PKCS#1, ``-----BEGIN RSA PRIVATE KEY-----``)."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


def key_file(folder: Path, key: rsa.RSAPrivateKey) -> Path:
    path = folder / "app.pem"
    path.write_text(pem(key))
    return path
