"""Builders for the DSSE tests: Statements, envelopes signed with test keys, their JSON bytes.

Envelopes are built from :mod:`affidavit.verify.dsse.envelope` and signed with
:class:`affidavit.attest.keyring.SigningKey` over ``pae()`` (never through an exporter), so these
tests depend on nothing but the verifier and the key.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.verify.dsse.envelope import (
    IN_TOTO_PAYLOAD_TYPE,
    Envelope,
    Signature,
    envelope_json,
    pae,
)

ALICE = derive_test_key("affidavit dsse test key alice")  # TEST-ONLY
BOB = derive_test_key("affidavit dsse test key bob")  # TEST-ONLY
CAROL = derive_test_key("affidavit dsse test key carol")  # TEST-ONLY
MALLORY = derive_test_key("affidavit dsse test key mallory")  # TEST-ONLY

DIGEST = "a" * 64
PREDICATE_TYPE = "https://example.com/test-predicate/v1"


def statement(**overrides: Any) -> dict[str, Any]:
    """A valid in-toto Statement v1; ``overrides`` replace (or, with None, drop) fields."""
    document: dict[str, Any] = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "artifact", "digest": {"sha256": DIGEST}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {"result": "PASSED"},
    }
    for key, value in overrides.items():
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    return document


def payload_of(document: Any) -> bytes:
    """The JSON bytes of a Statement (compact, key order kept)."""
    return json.dumps(document, separators=(",", ":")).encode("utf-8")


def sign(
    payload: bytes,
    keys: Iterable[SigningKey],
    *,
    payload_type: str = IN_TOTO_PAYLOAD_TYPE,
    keyid: str | None = None,
) -> Envelope:
    """An envelope over ``payload`` with one signature per key, each over ``PAE(type, payload)``."""
    message = pae(payload_type, payload)
    signatures = tuple(
        Signature(keyid=keyid if keyid is not None else (key.key_id or ""), sig=key.sign(message))
        for key in keys
    )
    return Envelope(payload_type=payload_type, payload=payload, signatures=signatures)


def envelope_bytes(envelope: Envelope | Mapping[str, Any]) -> bytes:
    """The JSON bytes of an envelope (or of an envelope dict, for tampered shapes)."""
    document = envelope_json(envelope) if isinstance(envelope, Envelope) else envelope
    return json.dumps(document, indent=2).encode("utf-8")


def signed_statement(document: Any = None, keys: Iterable[SigningKey] = (ALICE,)) -> Envelope:
    """An envelope carrying ``document`` (default :func:`statement`) signed by ``keys``."""
    return sign(payload_of(statement() if document is None else document), keys)


def b64(raw: bytes) -> str:
    """Standard base64 with padding."""
    return base64.b64encode(raw).decode("ascii")
