"""in-toto Statement v1 documents, signed into DSSE envelopes (Ed25519).

in-toto attestation spec v1, statement.md::

    {"_type": "https://in-toto.io/Statement/v1", "subject": [ResourceDescriptor, ...],
     "predicateType": "<URI>", "predicate": {...}}

The payload is the Statement's RFC 8785 (JCS) bytes (docs/formats.md §1): one Statement has one
byte form, so exporting the same source twice gives the same payload and, Ed25519 being
deterministic (RFC 8032 §5.1.6), the same envelope. DSSE protocol.md, "Signature Definition": the
signature is over ``PAE(payloadType, payload)``, never over the payload alone; envelope.md:
``payloadType`` is ``application/vnd.in-toto+json``.

``keyid`` (an unauthenticated hint) is the key ID securesystemslib computes for the same key
(docs/formats.md §8, "The keyid Affidavit writes"), so a consumer verifies with nothing but our
public key; Affidavit's own verifier ignores keyids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from affidavit.attest.keyring import SigningKey
from affidavit.verify.dsse.envelope import (
    IN_TOTO_PAYLOAD_TYPE,
    Envelope,
    Signature,
    dsse_keyid,
    pae,
)
from affidavit.verify.dsse.statement import STATEMENT_V1
from affidavit.verify.json.canonical import jcs

__all__ = ["STATEMENT_V1", "build_statement", "keyid_of", "sign_statement", "statement_bytes"]


def build_statement(
    subjects: Sequence[Mapping[str, Any]], predicate_type: str, predicate: Mapping[str, Any]
) -> dict[str, Any]:
    """A Statement v1 dict (statement.md): ``subjects`` (each a ResourceDescriptor with a
    ``digest``, statement.md "subject ... MUST be set"), the predicate type URI and the
    predicate object."""
    return {
        "_type": STATEMENT_V1,
        "subject": [dict(subject) for subject in subjects],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


def statement_bytes(statement: Mapping[str, Any]) -> bytes:
    """The payload bytes of ``statement``: its JCS form (RFC 8785), deterministic.

    Raises:
        ``canonical.*``: a value has no JCS form (e.g. a non-finite number).
    """
    return jcs(statement)


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
