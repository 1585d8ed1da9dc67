"""Sign an in-toto Statement into a DSSE envelope (Ed25519).

DSSE protocol.md, "Signature Definition": the signature is over ``PAE(payloadType, payload)``
(:func:`affidavit.verify.dsse.envelope.pae`), never over the payload alone; in-toto attestation
spec v1, envelope.md: ``payloadType`` is ``application/vnd.in-toto+json``.

``keyid`` (DSSE envelope.md: OPTIONAL, an unauthenticated hint) is
:func:`affidavit.verify.dsse.envelope.dsse_keyid` of the public key: lowercase hex SHA-256 of the
canonical ``{"keytype":"ed25519","keyval":{"public":"<hex>"},"scheme":"ed25519"}``, the key ID
securesystemslib computes for the same key. securesystemslib's ``Envelope.verify`` only tries a
key whose keyid equals the signature's, so this keyid lets a consumer verify with nothing but our
public key; Affidavit's own verifier ignores keyids (``verify dsse``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from affidavit.attest.intoto.statement import statement_bytes
from affidavit.attest.keyring import SigningKey
from affidavit.verify.dsse.envelope import (
    IN_TOTO_PAYLOAD_TYPE,
    Envelope,
    Signature,
    dsse_keyid,
    pae,
)

__all__ = ["keyid_of", "sign_statement"]


def keyid_of(key: SigningKey) -> str:
    """The ``keyid`` an envelope signed by ``key`` carries (module docstring)."""
    return dsse_keyid(key.public_key.raw)


def sign_statement(statement: Mapping[str, Any], key: SigningKey) -> Envelope:
    """The DSSE envelope of ``statement``: payload its JCS bytes, one Ed25519 signature by
    ``key`` over ``PAE("application/vnd.in-toto+json", payload)``. Deterministic.

    Raises:
        ``canonical.*``: the Statement has no JCS form.
    """
    payload = statement_bytes(statement)
    signature = key.sign(pae(IN_TOTO_PAYLOAD_TYPE, payload))
    return Envelope(IN_TOTO_PAYLOAD_TYPE, payload, (Signature(keyid_of(key), signature),))
