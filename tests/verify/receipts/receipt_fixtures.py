"""Shared pieces of the receipt tests: keys, sources, and receipts made (or forged) from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.attest.receipts import make_receipt, sign_receipt_body
from affidavit.verify.receipts.format import receipt_body

ADAPTER = derive_test_key("TEST-ONLY affidavit receipts: adapter key")
OTHER = derive_test_key("TEST-ONLY affidavit receipts: another adapter key")
TS = "2026-01-01T00:00:00Z"
LOSSY = ("newline_normalize", "whitespace_trim")
SOURCE = b"  first line\r\nsecond line\r\n\r\nthird\r\n  \n"


def lossy(source: bytes) -> bytes:
    """What newline_normalize then whitespace_trim make of ``source`` (the reference here)."""
    return source.replace(b"\r\n", b"\n").replace(b"\r", b"\n").strip()


CONTENT = lossy(SOURCE)


def receipt(
    source: bytes = SOURCE,
    content: bytes | None = CONTENT,
    *,
    transformations: tuple[str, ...] = LOSSY,
    chunks: list[bytes] | None = None,
    uri: str | None = "notes/a.txt",
    key: Any = ADAPTER,
) -> dict[str, Any]:
    """A receipt made the checked way (replayed, then signed)."""
    return make_receipt(
        source,
        content,
        adapter="demo-lossy",
        adapter_version="1.0.0",
        transformations=transformations,
        key=key,
        chunks=chunks,
        source_uri=uri,
        issued_at=TS,
    )


def forged(
    source: bytes,
    content: bytes,
    transformations: tuple[str, ...],
    *,
    key: Any = ADAPTER,
    **kw: Any,
) -> dict[str, Any]:
    """A receipt signed WITHOUT the replay check: it may lie (replay mismatch cases)."""
    body = receipt_body(
        source=source,
        content=content,
        adapter="demo-lossy",
        adapter_version="1.0.0",
        transformations=transformations,
        issued_at=TS,
        **kw,
    )
    return sign_receipt_body(body, key)


def write_json(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def write_key(folder: Path, key: Any = ADAPTER, name: str = "adapter") -> Path:
    """The private key as PKCS#8 PEM (mode 0600) and its .pub beside it; the .key path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.key"
    path.write_bytes(private_key_pem(key))
    path.chmod(0o600)
    (folder / f"{name}.pub").write_text(key.public_key.b64 + "\n")
    return path
