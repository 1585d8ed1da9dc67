"""Trusted public keys from the files a caller names: the one strict loader of every command.

>>> loaded = parse_key_bytes(b"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\\n", source="log.pub")
>>> (loaded.form, loaded.key.b64)
('base64', '11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=')

Trust comes only from the caller (docs/adr/0002); which files are keys, and the caller's whole
trust, are :mod:`affidavit.verify.trust`'s (docs/adr/0016): nothing here opens a file. A key file
holds at most 64 KiB, one key in one of four forms, told by its content (never its name), with
nothing else but surrounding whitespace:

- **JSON**: a strict JSON object with a string ``public_key_base64`` (docs/formats.md §3): a
  publisher document, aigentsy-verify's key file, an actor key file; named fields well formed
  (:func:`key_from_document`), ``valid_from``/``valid_until`` a validity window
  (:mod:`affidavit.verify.crypto.windows`), other fields the caller's.
- **PEM**: one ``PUBLIC KEY`` block (RFC 7468 §13) whose DER is exactly the RFC 8410 §4 prefix
  and the 32 key bytes (unique: the algorithm has no parameters). Read without cryptography.
- **base64**: canonical standard base64 of the 32 key bytes (a ``.pub`` file).
- **C2SP verifier key**: ``name+keyid+base64(0x01 || key)`` (docs/formats.md §6).

On the ``verify bundle`` path (docs/adr/0003-cold-start.md): no pathlib, no dataclasses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.crypto.keys import ED25519_KEY_BYTES, Ed25519PublicKey, b64decode_strict
from affidavit.verify.crypto.windows import KeyWindow, merge_windows
from affidavit.verify.json.strict import load_object

if TYPE_CHECKING:
    from affidavit.verify.crypto.checkpoint import NoteVerifier

__all__ = [
    "MAX_KEY_FILE_BYTES",
    "TrustedKey",
    "key_from_base64",
    "key_from_document",
    "key_windows",
    "parse_key_bytes",
]

MAX_KEY_FILE_BYTES: Final = 64 * 1024
# RFC 8410 §4: SEQUENCE { SEQUENCE { OID 1.3.101.112 (id-Ed25519) }, BIT STRING (0 unused bits) }.
_SPKI_ED25519_PREFIX: Final = bytes.fromhex("302a300506032b6570032100")
_PEM_LABEL: Final = re.compile(rb"-----BEGIN ([A-Z0-9 ]*)-----")
# The shape of a verifier key (docs/formats.md §6); parse_verifier_key checks the rest.
_VKEY_SHAPE: Final = re.compile(rb"[^+\s]+\+[0-9A-Fa-f]{8}\+[A-Za-z0-9+/=]+")
_PUBLISHER_ID_FIELDS: Final = ("publisher_id", "publisher_key_id")


class TrustedKey(NamedTuple):
    """A key the caller trusts, where it was read and in which ``form`` (``json``, ``pem``,
    ``base64``, ``vkey``), with the JSON ``document``, the parsed ``verifier`` of a vkey, and the
    ``window`` a document names (None: valid at every time)."""

    key: Ed25519PublicKey
    source: str
    form: str
    document: dict[str, Any] | None = None
    verifier: NoteVerifier | None = None
    window: KeyWindow | None = None


def key_windows(loaded: Iterable[TrustedKey]) -> dict[bytes, tuple[KeyWindow, ...]]:
    """``{raw key: its windows}`` for keys trusted only within windows
    (:func:`affidavit.verify.crypto.windows.merge_windows`)."""
    return merge_windows((trusted.key.raw, trusted.window) for trusted in loaded)


def parse_key_bytes(data: bytes, *, source: str, windows: bool = False) -> TrustedKey:
    """Read the content of a key file; ``source`` names it in errors. ``windows``: the caller
    honours a JSON document's validity window (else a windowed key is ``key.window_unsupported``).

    Raises:
        ``key.unrecognized``: in no form, too large for a key file, or a bad JSON field.
        ``key.*``, ``json.*``, ``manifest.publisher_document_invalid``: the key or its document.
        ``key.window_invalid``, ``key.window_unsupported``: as :func:`key_from_document`.
    """
    if len(data) > MAX_KEY_FILE_BYTES:
        raise _unrecognized(f"{source}: too large for a key file")
    text = data.strip()
    if text.startswith(b"{"):
        try:
            document = load_object(data, what="public key document")
        except errors.ParseError as e:
            e.message = f"{source}: {e.message}"
            raise
        key = key_from_document(document, source=source, windows=windows)
        window = KeyWindow.parse(document, source=source)
        return TrustedKey(key, source, "json", document, window=window)
    if text.startswith(b"-----BEGIN"):
        return TrustedKey(_key_from_pem(text, source), source, "pem")
    try:
        raw = b64decode_strict(text)
    except ValueError:
        raw = None
    if raw is not None and len(raw) == ED25519_KEY_BYTES:
        return TrustedKey(_named(source, Ed25519PublicKey, raw), source, "base64")
    if _VKEY_SHAPE.fullmatch(text):
        verifier = _verifier(text, source)
        return TrustedKey(verifier.key, source, "vkey", verifier=verifier)
    # Not a key in any form: the base64 parser says why (bad_base64, wrong_length).
    return TrustedKey(_named(source, Ed25519PublicKey.from_b64, text), source, "base64")


def key_from_base64(text: str) -> Ed25519PublicKey:
    """A key given as base64 text on a command line (surrounding whitespace ignored).

    Raises:
        ``key.*``: see :class:`~affidavit.verify.crypto.keys.Ed25519PublicKey`.
    """
    return Ed25519PublicKey.from_b64(text.strip())


def key_from_document(
    document: Mapping[str, Any], *, source: str | None = None, windows: bool = False
) -> Ed25519PublicKey:
    """The key of a JSON key document (docs/formats.md §3); a windowed one only when the caller
    honours ``windows``.

    Raises:
        ``key.unrecognized``: no string ``public_key_base64``, an ``algorithm`` not ``"Ed25519"``,
            a ``key_id`` that is not a non-empty string.
        ``manifest.publisher_document_invalid``: a ``publisher_id`` or ``publisher_key_id`` not a
            non-empty string, a ``manifest_url`` neither a string nor null.
        ``key.window_invalid``, ``key.window_unsupported``: a malformed window, or one the
            caller cannot honour.
        ``key.*``: the key itself.
    """
    where = f"{source}: " if source else ""
    value = document.get("public_key_base64")
    if not isinstance(value, str):
        raise _unrecognized(f"{where}JSON document has no string public_key_base64")
    key = _named(source, Ed25519PublicKey.from_b64, value)
    algorithm = document.get("algorithm", "Ed25519")
    if algorithm != "Ed25519":
        raise _unrecognized(f"{where}algorithm is {algorithm!r}, not 'Ed25519'")
    if "key_id" in document and not (isinstance(document["key_id"], str) and document["key_id"]):
        raise _unrecognized(f"{where}key_id must be a non-empty string")
    for field in _PUBLISHER_ID_FIELDS:
        if field in document and not (isinstance(document[field], str) and document[field]):
            raise errors.ContractError(
                "manifest.publisher_document_invalid",
                f"{where}publisher document: {field} must be a non-empty string",
            )
    manifest_url = document.get("manifest_url")
    if manifest_url is not None and not isinstance(manifest_url, str):
        raise errors.ContractError(
            "manifest.publisher_document_invalid",
            f"{where}publisher document: manifest_url must be a string",
        )
    if KeyWindow.parse(document, source=source) is not None and not windows:
        raise errors.KeyMaterialError(
            "key.window_unsupported",
            f"{where}the key has a validity window (valid_from/valid_until) and this command "
            "cannot check it: refused rather than trusted at every time (windows apply to "
            "signed tree heads: verify bundle)",
        )
    return key


def _unrecognized(message: str) -> errors.KeyMaterialError:
    return errors.KeyMaterialError("key.unrecognized", message)


def _key_from_pem(text: bytes, source: str) -> Ed25519PublicKey:
    """The key of one ``PUBLIC KEY`` PEM block holding an Ed25519 SubjectPublicKeyInfo."""
    lines = [line.strip() for line in text.splitlines()]
    label = _PEM_LABEL.fullmatch(lines[0])
    kind = label.group(1).decode("ascii") if label else ""
    if kind != "PUBLIC KEY":
        hint = " (give the public key, never the private one)" if "PRIVATE" in kind else ""
        raise _unrecognized(f"{source}: a PEM {kind or 'block'}, not a PUBLIC KEY{hint}")
    body = lines[1:-1]
    if (
        len(lines) < 3
        or lines[-1] != b"-----END PUBLIC KEY-----"
        or any(line.startswith(b"-----") for line in body)
    ):
        raise _unrecognized(
            f"{source}: not exactly one PEM PUBLIC KEY block and nothing else (RFC 7468)"
        )
    try:
        der = b64decode_strict(b"".join(body))
    except ValueError as e:
        raise _unrecognized(f"{source}: unreadable PEM public key: {e}") from None
    if len(der) != len(_SPKI_ED25519_PREFIX) + ED25519_KEY_BYTES or not der.startswith(
        _SPKI_ED25519_PREFIX
    ):
        raise _unrecognized(
            f"{source}: not an Ed25519 public key (RFC 8410 §4 SubjectPublicKeyInfo)"
        )
    return _named(source, Ed25519PublicKey, der[len(_SPKI_ED25519_PREFIX) :])


def _verifier(text: bytes, source: str) -> NoteVerifier:
    from affidavit.verify.crypto.checkpoint import parse_verifier_key  # noqa: PLC0415 - dataclasses off the bundle path (ADR 0003)

    try:
        return parse_verifier_key(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise errors.KeyMaterialError(
            "key.vkey_malformed", f"{source}: verifier key is not UTF-8"
        ) from None
    except errors.KeyMaterialError as e:
        e.message = f"{source}: {e.message}"
        raise


def _named(source: str | None, build: Any, value: Any) -> Ed25519PublicKey:
    """``build(value)``, its key error messages starting with ``source``."""
    try:
        key: Ed25519PublicKey = build(value)
    except errors.KeyMaterialError as e:
        if source:
            e.message = f"{source}: {e.message}"
        raise
    return key
