"""Private Ed25519 keys: generate, store (0600), load, sign; publisher documents.

>>> key = derive_test_key("doctest")          # TEST-ONLY: deterministic from a label
>>> signature = key.sign(b"hello")
>>> from affidavit.verify.crypto.signature import verify_ed25519
>>> verify_ed25519(key.public_key, b"hello", signature)

:func:`generate_key_files` writes ``<key-id>.key`` (unencrypted PKCS#8 PEM, mode 0600),
``<key-id>.pub`` and ``<publisher-id>-publisher.json`` (docs/formats.md §3). Signing goes through
PyNaCl (libsodium); cryptography only reads and writes PEM. Trusted public keys are parsed by
:mod:`affidavit.verify.crypto.trusted_keys`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nacl.bindings
from affidavit.attest.files import create_all, create_exclusive
from affidavit.attest.host import read_key_bytes
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import parse_key_bytes
from affidavit.verify.json.strict import load_object
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey as _CryptoKey

__all__ = [
    "GeneratedKeyFiles",
    "InsecureKeyFileWarning",
    "SigningKey",
    "derive_test_key",
    "generate_key_files",
    "generate_keypair",
    "key_file_is_insecure",
    "load_or_generate_key",
    "load_private_pem",
    "load_public_key",
    "load_signing_key",
    "private_key_pem",
    "public_key_pem",
    "publisher_document",
]

SEED_BYTES = 32
# Identifiers become file names: no separators, no leading dot, bounded length.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class InsecureKeyFileWarning(UserWarning):
    """A private key file is readable by its group or by others (mode should be 0600)."""


@dataclass(frozen=True, slots=True, eq=False)
class SigningKey:
    """An Ed25519 private key with optional ``key_id`` and ``publisher_id`` labels.

    The seed is never shown by ``repr``; keys compare by identity (no timing-dependent ``==``).
    """

    seed: bytes = field(repr=False)
    key_id: str | None = None
    publisher_id: str | None = None
    public_key: Ed25519PublicKey = field(init=False)
    _secret: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.seed) != SEED_BYTES:
            raise errors.KeyMaterialError(
                "key.wrong_length", f"an Ed25519 private key seed is 32 bytes, got {len(self.seed)}"
            )
        public, secret = nacl.bindings.crypto_sign_seed_keypair(bytes(self.seed))
        object.__setattr__(self, "public_key", Ed25519PublicKey(public))
        object.__setattr__(self, "_secret", secret)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message`` (RFC 8032 §5.1.6, deterministic)."""
        signed: bytes = nacl.bindings.crypto_sign(message, self._secret)
        return signed[:64]

    def sign_b64(self, message: bytes) -> str:
        """:meth:`sign`, as standard base64 (docs/formats.md §3)."""
        return base64.b64encode(self.sign(message)).decode("ascii")

    def with_labels(self, *, key_id: str | None, publisher_id: str | None) -> SigningKey:
        """The same key with other ``key_id`` / ``publisher_id`` labels."""
        return SigningKey(self.seed, key_id=key_id, publisher_id=publisher_id)


@dataclass(frozen=True, slots=True)
class GeneratedKeyFiles:
    """What :func:`generate_key_files` wrote."""

    private_key: Path
    public_key_file: Path
    publisher_document: Path
    public_key: Ed25519PublicKey
    key_id: str
    publisher_id: str


def generate_keypair(*, key_id: str | None = None, publisher_id: str | None = None) -> SigningKey:
    """A fresh random Ed25519 key (32 bytes from the OS CSPRNG)."""
    return SigningKey(os.urandom(SEED_BYTES), key_id=key_id, publisher_id=publisher_id)


def derive_test_key(
    label: str, *, key_id: str | None = None, publisher_id: str | None = None
) -> SigningKey:
    """TEST-ONLY: a deterministic key, seed = SHA-256(label), for vectors and tests. Never sign
    anything real with it."""
    seed = hashlib.sha256(label.encode("utf-8")).digest()
    return SigningKey(seed, key_id=key_id, publisher_id=publisher_id)


def private_key_pem(key: SigningKey) -> bytes:
    """``key`` as unencrypted PKCS#8 PEM (the ``.key`` file format)."""
    private = Ed25519PrivateKey.from_private_bytes(key.seed)
    return private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_key_pem(key: Ed25519PublicKey) -> bytes:
    """``key`` as SubjectPublicKeyInfo PEM (``aigentsy-verify bundle --public-key PEMFILE``)."""
    return _CryptoKey.from_public_bytes(key.raw).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def publisher_document(
    public_key: Ed25519PublicKey, publisher_id: str, key_id: str, manifest_url: str | None = None
) -> dict[str, Any]:
    """The publisher document (docs/formats.md §3), ``manifest_url`` only when given."""
    document: dict[str, Any] = {
        "publisher_id": publisher_id,
        "publisher_key_id": key_id,
        "public_key_base64": public_key.b64,
    }
    if manifest_url is not None:
        document["manifest_url"] = manifest_url
    return document


def generate_key_files(
    directory: str | Path, publisher_id: str, key_id: str, manifest_url: str | None = None
) -> GeneratedKeyFiles:
    """Generate a key and write its three files (module docstring), each whole or not at all;
    if any exists, nothing is written.

    Raises:
        ``usage.invalid``: ``publisher_id`` or ``key_id`` is not a safe file-name identifier.
        ``io.exists``: one of the target files exists.
        OSError: the folder cannot be created or written.
    """
    folder, targets = _targets(directory, publisher_id, key_id)
    folder.mkdir(parents=True, exist_ok=True)
    key = generate_keypair(key_id=key_id, publisher_id=publisher_id)
    contents = _contents(key, publisher_id, key_id, manifest_url)
    create_all([(t, data, mode) for t, (data, mode) in zip(targets, contents, strict=True)])
    return GeneratedKeyFiles(*targets, key.public_key, key_id, publisher_id)


def load_or_generate_key(
    directory: str | Path, publisher_id: str, key_id: str, manifest_url: str | None = None
) -> tuple[SigningKey, bool]:
    """The key ``<key-id>.key`` in ``directory``, generated with the files of
    :func:`generate_key_files` when absent; ``(key, True)`` when this call generated it.
    Processes started together on one folder all get the key exactly one of them created
    (:func:`affidavit.attest.files.create_exclusive`). The key file must be owner-only.

    Raises:
        ``usage.invalid``: ``publisher_id`` or ``key_id`` is not a safe file-name identifier.
        ``key.insecure_permissions``, ``key.unrecognized``, ``io.unreadable``: an existing key
            file is readable by others, or not a key.
        OSError: the folder cannot be written.
    """
    _, targets = _targets(directory, publisher_id, key_id)
    private = targets[0]
    if not (private.exists() or private.is_symlink()):
        key = generate_keypair(key_id=key_id, publisher_id=publisher_id)
        contents = _contents(key, publisher_id, key_id, manifest_url)
        try:
            create_exclusive(private, contents[0][0], mode=contents[0][1])
        except FileExistsError:
            pass  # another process made it first: use theirs
        else:
            for target, (data, mode) in zip(targets[1:], contents[1:], strict=True):
                with contextlib.suppress(FileExistsError):
                    create_exclusive(target, data, mode=mode)
            return key, True
    key = load_signing_key(
        private, refuse_world_readable=True, key_id=key_id, publisher_id=publisher_id
    )
    return key, False


def _targets(
    directory: str | Path, publisher_id: str, key_id: str
) -> tuple[Path, tuple[Path, Path, Path]]:
    for what, value in (("publisher id", publisher_id), ("key id", key_id)):
        if not _ID.match(value):
            raise errors.UsageError(
                f"{what} {value!r} must match {_ID.pattern} (it becomes a file name)"
            )
    folder = Path(directory)
    return folder, (
        folder / f"{key_id}.key",
        folder / f"{key_id}.pub",
        folder / f"{publisher_id}-publisher.json",
    )


def _contents(
    key: SigningKey, publisher_id: str, key_id: str, manifest_url: str | None
) -> list[tuple[bytes, int]]:
    """The bytes and mode of the three files (docs/formats.md §3), private key first."""
    document = publisher_document(key.public_key, publisher_id, key_id, manifest_url)
    return [
        (private_key_pem(key), 0o600),
        ((key.public_key.b64 + "\n").encode("ascii"), 0o644),
        ((json.dumps(document, indent=2) + "\n").encode("utf-8"), 0o644),
    ]


def key_file_is_insecure(path: str | Path) -> bool:
    """True when the file at ``path`` is readable or writable by its group or by others."""
    return bool(os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO))


def load_signing_key(
    path: str | Path,
    *,
    refuse_world_readable: bool = False,
    key_id: str | None = None,
    publisher_id: str | None = None,
) -> SigningKey:
    """Load a private key from a PKCS#8 PEM file. ``key_id`` defaults to the file name without
    ``.key``, ``publisher_id`` to that of the one ``*-publisher.json`` beside it naming this key.
    A key file readable by others warns (:class:`InsecureKeyFileWarning`) or, with
    ``refuse_world_readable``, raises.

    Raises:
        ``io.unreadable``: the file cannot be read.
        ``key.insecure_permissions``: insecure mode and ``refuse_world_readable``.
        ``key.unrecognized``: not an unencrypted PKCS#8 PEM Ed25519 private key (a public key
            file, in any form the trusted-key loader reads, is said to be one).
    """
    target = Path(path)
    data = read_key_bytes(target)
    try:  # what the file is comes first: a public key is one error, never a permission warning
        seed = _seed_from_pem(data, target)
    except errors.KeyMaterialError as not_private:
        try:
            parse_key_bytes(data, source=str(target))
        except errors.AffidavitError:
            raise not_private from None
        raise errors.KeyMaterialError(
            "key.unrecognized",
            f"{target}: a public key, not a private key (give the private .key file)",
        ) from None
    if key_file_is_insecure(target):
        message = f"{target}: private key file is readable by group or others (chmod 600 it)"
        if refuse_world_readable:
            raise errors.KeyMaterialError(
                "key.insecure_permissions", message, details={"path": str(target)}
            )
        warnings.warn(message, InsecureKeyFileWarning, stacklevel=2)
    key = SigningKey(seed, key_id=key_id or target.name.removesuffix(".key"))
    if publisher_id is None:
        publisher_id = _publisher_beside(target.parent, key)
    return key.with_labels(key_id=key.key_id, publisher_id=publisher_id)


def _seed_from_pem(data: bytes, target: Path) -> bytes:
    private = load_private_pem(data, target)
    if not isinstance(private, Ed25519PrivateKey):
        raise errors.KeyMaterialError("key.unrecognized", f"{target}: not an Ed25519 private key")
    return private.private_bytes_raw()


def load_private_pem(data: bytes, target: str | Path) -> object:
    """The private key (any algorithm) of an unencrypted PKCS#8 PEM file's bytes.

    Raises:
        ``key.unrecognized``: not PEM, encrypted, or unreadable (the message names ``target``).
    """
    if b"-----BEGIN" not in data:
        raise errors.KeyMaterialError(
            "key.unrecognized", f"{target}: not a PEM private key (expected PKCS#8 PEM)"
        )
    try:
        return serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise errors.KeyMaterialError(
            "key.unrecognized", f"{target}: encrypted private keys are not supported"
        ) from None
    except (ValueError, UnsupportedAlgorithm) as e:
        raise errors.KeyMaterialError(
            "key.unrecognized", f"{target}: unreadable PEM private key: {e}"
        ) from None


def _publisher_beside(folder: Path, key: SigningKey) -> str | None:
    """The publisher id of the one publisher document in ``folder`` naming this key, if any."""
    found: set[str] = set()
    for candidate in sorted(folder.glob("*-publisher.json")):
        try:
            document = load_object(read_key_bytes(candidate), what="publisher document")
        except errors.ParseError:
            continue
        if (
            document.get("publisher_key_id") == key.key_id
            and document.get("public_key_base64") == key.public_key.b64
            and isinstance(document.get("publisher_id"), str)
        ):
            found.add(document["publisher_id"])
    return found.pop() if len(found) == 1 else None


def load_public_key(path: str | Path) -> Ed25519PublicKey:
    """The key of a trusted public key file, in any form
    :func:`affidavit.verify.crypto.trusted_keys.parse_key_bytes` reads.

    Raises:
        ``io.unreadable``: the file cannot be read. ``key.*``, ``json.*``: not a key.
    """
    return parse_key_bytes(read_key_bytes(path), source=os.fspath(path)).key
