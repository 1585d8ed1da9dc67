"""Fact signatures: Ed25519 over the FactHash hex string, b64url (docs/formats.md §5).

>>> from affidavit.verify.lineage.signing import signing_message
>>> signing_message("ab" * 32)[:8]
b'abababab'

The signature is outside FactHash. A fact is ``signed`` (a trusted key id, and the signature
verifies), ``unsigned`` (none) or ``bad`` (anything else); an empty trusted set is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from affidavit.verify import errors
from affidavit.verify.codes import REFUSED
from affidavit.verify.crypto.keys import Ed25519PublicKey, b64url_encode
from affidavit.verify.crypto.signature import decode_signature_b64url, verify_ed25519
from affidavit.verify.lineage.facts import Fact, FactHash, FactSignature
from affidavit.verify.lineage.walk import SignatureStatus

__all__ = ["TrustedFactKeys", "signed_document", "signing_message"]


def signing_message(fact_hash: str) -> bytes:
    """The bytes a fact signature covers: the UTF-8 FactHash hex string (docs/formats.md §5)."""
    return fact_hash.encode("ascii")


def signed_document(
    document: Mapping[str, Any], *, key_id: str, signature: bytes
) -> dict[str, Any]:
    """A copy of ``document`` with its ``signature`` set to ``{alg, key_id, sig}`` (b64url)."""
    out = dict(document)
    out["signature"] = FactSignature(key_id=key_id, sig=b64url_encode(signature)).to_json()
    return out


class TrustedFactKeys:
    """The keys whose fact signatures count, by key id.

    Raises (on construction):
        ``usage.invalid``: the set is empty ("could not check" is never "verified").
    """

    def __init__(self, keys: Mapping[str, Ed25519PublicKey]) -> None:
        if not keys:
            raise errors.UsageError("the trusted key set is empty: nothing could be verified")
        self.keys: Mapping[str, Ed25519PublicKey] = MappingProxyType(dict(keys))
        self._memo: dict[tuple[FactHash, str, str], SignatureStatus] = {}

    def check(self, fact: Fact) -> SignatureStatus:
        """``signed``, ``unsigned`` or ``bad`` for ``fact`` (see the module docstring)."""
        signature = fact.signature
        if signature is None:
            return "unsigned"
        memo_key = (fact.hash, signature.key_id, signature.sig)
        cached = self._memo.get(memo_key)
        if cached is not None:
            return cached
        status: SignatureStatus = "bad"
        key = self.keys.get(signature.key_id)
        if key is not None:
            try:
                verify_ed25519(
                    key, signing_message(fact.hash), decode_signature_b64url(signature.sig)
                )
                status = "signed"
            except errors.AffidavitError as e:
                if e.exit_code == REFUSED:
                    raise
                status = "bad"
        self._memo[memo_key] = status
        return status
