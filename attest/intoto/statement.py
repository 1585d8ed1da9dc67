"""in-toto Statement v1 documents and their payload bytes.

in-toto attestation spec v1, statement.md::

    {"_type": "https://in-toto.io/Statement/v1", "subject": [ResourceDescriptor, ...],
     "predicateType": "<URI>", "predicate": {...}}

The payload a DSSE envelope carries is the Statement's RFC 8785 (JCS) bytes
(:func:`affidavit.verify.json.canonical.jcs`, docs/formats.md §1): one Statement has one byte
form, so exporting the same source twice gives the same payload and, Ed25519 being deterministic
(RFC 8032 §5.1.6), the same envelope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from affidavit.verify.dsse.statement import STATEMENT_V1
from affidavit.verify.json.canonical import jcs

__all__ = ["STATEMENT_V1", "build_statement", "statement_bytes"]


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
