"""COSE Receipts of inclusion for RFC9162_SHA256 (RFC 9942 §5.2), verified offline.

A receipt is a tagged COSE_Sign1: protected ``alg`` and ``vds`` (395) = 1, unprotected ``vdp``
(396) whose ``-1`` holds the inclusion proofs ``[+ bstr .cbor [tree_size, leaf_index, [+ bstr]]]``.

The payload, the Merkle root, is detached: the verifier rebuilds it from the leaf and the proof
(§4.4), and refuses an attached one. :func:`verify_receipt` follows RFC 9942 §5.2.1: every proof
is checked against its tree before any is used; then the first proof whose rebuilt root verifies
under a trusted key is the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.merkle import leaf_hash, root_from_inclusion_proof
from affidavit.verify.scitt.cbor import decode
from affidavit.verify.scitt.cose import HEADER_ALG, HEADER_CRIT, HEADER_KID, Sign1, parse_sign1
from affidavit.verify.scitt.keys import ALG_NAMES, CoseKey, check_alg, kid_first
from affidavit.verify.scitt.statement import CLAIM_ISS, CLAIM_SUB, HEADER_CWT_CLAIMS

__all__ = [
    "HEADER_VDP",
    "HEADER_VDS",
    "VDP_INCLUSION",
    "VDS_RFC9162_SHA256",
    "InclusionProof",
    "ParsedReceipt",
    "ReceiptCheck",
    "parse_receipt",
    "verify_receipt",
]

HEADER_VDS: Final = 395  # RFC 9942 §2
HEADER_VDP: Final = 396
VDS_RFC9162_SHA256: Final = 1  # RFC 9942 §5.1
VDP_INCLUSION: Final = -1  # RFC 9942 §5.2
MAX_PROOFS: Final = 16
MAX_TREE_SIZE: Final = 2**63 - 1
UNDERSTOOD: Final = frozenset({HEADER_ALG, HEADER_CRIT, HEADER_KID, HEADER_CWT_CLAIMS, HEADER_VDS})


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """One RFC9162_SHA256 inclusion proof of a receipt (RFC 9942 §5.2)."""

    tree_size: int
    leaf_index: int
    path: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class ParsedReceipt:
    """A receipt read and shaped right; not verified."""

    sign1: Sign1
    proofs: tuple[InclusionProof, ...]

    def claim(self, label: int) -> Any:
        """A CWT claim of the protected header (15), or None."""
        claims = self.sign1.protected.get(HEADER_CWT_CLAIMS)
        return claims.get(label) if isinstance(claims, dict) else None


@dataclass(frozen=True, slots=True)
class ReceiptCheck:
    """A verified receipt: the proof whose root verified, the root, and the key that signed it."""

    tree_size: int
    leaf_index: int
    root: bytes
    key: CoseKey
    issuer: str | None
    subject: str | None

    def to_json(self) -> dict[str, Any]:
        """``{tree_size, leaf_index, root, kid, alg, issuer, subject}`` (hex for bytes)."""
        return {
            "tree_size": self.tree_size,
            "leaf_index": self.leaf_index,
            "root": self.root.hex(),
            "kid": self.key.thumbprint.hex(),
            "alg": ALG_NAMES[self.key.alg],
            "issuer": self.issuer,
            "subject": self.subject,
        }


def _bad(what: str, message: str) -> errors.ScittError:
    return errors.ScittError("scitt.receipt_malformed", f"{what}: {message}")


def _parse_proof(blob: object, what: str) -> InclusionProof:
    """``bstr .cbor [tree_size: uint, leaf_index: uint, inclusion_path: [+ bstr]]``."""
    if not isinstance(blob, bytes):
        raise _bad(what, "an inclusion proof is not a byte string")
    value = decode(blob, what=f"{what} inclusion proof", tags=frozenset())
    if not isinstance(value, list) or len(value) != 3:
        raise _bad(what, "an inclusion proof is not [tree_size, leaf_index, path]")
    size, index, path = value
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (size, index)):
        raise _bad(what, "tree_size and leaf_index are unsigned integers")
    if not isinstance(path, list) or not all(isinstance(h, bytes) and len(h) == 32 for h in path):
        raise _bad(what, "the inclusion path is not an array of 32-byte hashes")
    if not index < size <= MAX_TREE_SIZE:  # RFC 9162 §2.1.3.2: leaf_index < tree_size
        raise _bad(what, f"leaf index {index} is not in a tree of size {size}")
    proof = InclusionProof(size, index, tuple(path))
    try:  # the path's length must fit (index, size) before anything is trusted
        root_from_inclusion_proof(bytes(32), index, size, proof.path)
    except errors.ProofError as e:
        raise _bad(what, e.message) from None
    return proof


def parse_receipt(data: bytes, *, what: str = "receipt") -> ParsedReceipt:
    """The receipt in ``data``, shaped as the module docstring says; nothing verified.

    Raises:
        ``cbor.*``, ``scitt.cose_malformed``, ``scitt.crit_unsupported``: not a COSE_Sign1.
        ``scitt.receipt_vds_unsupported``: vds is not RFC9162_SHA256.
        ``scitt.receipt_payload_attached``: the payload is attached.
        ``scitt.receipt_malformed``: no usable inclusion proofs.
    """
    sign1 = parse_sign1(data, what=what, understood=UNDERSTOOD)
    vds = sign1.protected.get(HEADER_VDS)  # read from the protected header only (RFC 9942 §5.2.1)
    if vds != VDS_RFC9162_SHA256 or isinstance(vds, bool):
        raise errors.ScittError(
            "scitt.receipt_vds_unsupported",
            f"{what}: vds {vds!r} is not RFC9162_SHA256 (1)",
            details={"vds": vds if isinstance(vds, int | str) else None},
        )
    if sign1.payload is not None:
        raise errors.ScittError(
            "scitt.receipt_payload_attached",
            f"{what}: the payload is attached; a receipt's root is detached (RFC 9942 §4.4)",
        )
    vdp = sign1.unprotected.get(HEADER_VDP)
    proofs = vdp.get(VDP_INCLUSION) if isinstance(vdp, dict) else None
    if not isinstance(proofs, list) or not proofs or len(proofs) > MAX_PROOFS:
        raise _bad(what, f"no vdp (396) with 1 to {MAX_PROOFS} inclusion proofs (-1)")
    return ParsedReceipt(sign1, tuple(_parse_proof(blob, what) for blob in proofs))


def verify_receipt(
    data: bytes | ParsedReceipt,
    leaf_entry: bytes,
    keys: Sequence[CoseKey],
    *,
    what: str = "receipt",
) -> ReceiptCheck:
    """Prove ``leaf_entry`` in the tree a trusted key signed (module docstring).

    Raises:
        ``usage.invalid``: no trusted key.
        Everything :func:`parse_receipt` raises.
        ``scitt.receipt_key_untrusted``: the kid names none of ``keys`` and none verifies.
        ``scitt.receipt_signature_invalid``: no proof's root verifies under a trusted key.
        ``scitt.alg_unsupported``: the receipt's alg is not EdDSA or ES256.
    """
    if not keys:
        raise errors.UsageError("a receipt verifies only under a trusted key (fail closed)")
    receipt = data if isinstance(data, ParsedReceipt) else parse_receipt(data, what=what)
    alg = check_alg(receipt.sign1.alg, what)
    leaf = leaf_hash(leaf_entry)  # RFC 9162 §2.1.1: SHA-256(0x00 || entry)
    candidates = [key for key in kid_first(keys, receipt.sign1.kid) if key.alg == alg]
    for proof in receipt.proofs:  # RFC 9942 §5.2.1: first the proof, then the signature
        root = root_from_inclusion_proof(leaf, proof.leaf_index, proof.tree_size, proof.path)
        tbs = receipt.sign1.to_be_signed(root)
        for key in candidates:
            try:
                key.verify(alg, tbs, receipt.sign1.signature)
            except errors.ScittError:
                continue
            issuer, subject = receipt.claim(CLAIM_ISS), receipt.claim(CLAIM_SUB)
            return ReceiptCheck(
                proof.tree_size,
                proof.leaf_index,
                root,
                key,
                issuer if isinstance(issuer, str) else None,
                subject if isinstance(subject, str) else None,
            )
    kid = receipt.sign1.kid
    if kid is not None and all(key.thumbprint != kid for key in keys):
        raise errors.ScittError(
            "scitt.receipt_key_untrusted",
            f"{what}: signed by kid {kid.hex()[:64]}, none of the {len(keys)} trusted key(s)",
            details={"kid": kid.hex()[:128]},
        )
    raise errors.ScittError(
        "scitt.receipt_signature_invalid",
        f"{what}: no inclusion proof rebuilds a root whose signature verifies under a trusted key",
    )
