"""Codes of the crypto room: keys, signatures, tree heads, checkpoints and Merkle proofs.

The family classes that raise them are in :mod:`affidavit.verify.errors`; the exit code is the
code's, not the class's (2 unreadable input, 1 does not verify, 3 refused by policy).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

KEY: Final = (
    Code(
        "key.bad_base64",
        INPUT,
        "Key material is not strict base64 (or hex where hex is expected).",
    ),
    Code(
        "key.insecure_permissions",
        INPUT,
        "A private key file is readable by group or others; refused on request.",
    ),
    Code(
        "key.non_canonical",
        INPUT,
        "The Ed25519 public key is a non-canonical point encoding (RFC 8032 §5.1.3).",
    ),
    Code("key.not_on_curve", INPUT, "The 32 bytes do not decode to a point of edwards25519."),
    Code(
        "key.unrecognized",
        INPUT,
        "A key file is in none of the accepted forms (base64, publisher JSON, PEM).",
    ),
    Code(
        "key.vkey_malformed",
        INPUT,
        "A C2SP verifier key string is not name+hexkeyid+base64(0x01||key).",
    ),
    Code(
        "key.weak",
        INPUT,
        "The Ed25519 public key is a small-order point (accepts forged signatures).",
    ),
    Code(
        "key.window_invalid",
        INPUT,
        "A key document's valid_from/valid_until is not an RFC 3339 date-time with an offset,"
        " or the window is empty.",
    ),
    Code(
        "key.window_unsupported",
        INPUT,
        "A key with a validity window was given to a command that cannot honour it (fail closed).",
    ),
    Code("key.wrong_length", INPUT, "An Ed25519 key must be exactly 32 bytes."),
)

SIGNATURE: Final = (
    Code(
        "checkpoint.malformed",
        INPUT,
        "Not a C2SP signed note / tlog-checkpoint (text, blank line, signature lines).",
    ),
    Code(
        "checkpoint.no_trusted_signature",
        FAILED,
        "No signature line of the note is from a trusted verifier key.",
    ),
    Code(
        "checkpoint.origin_mismatch",
        FAILED,
        "The checkpoint's origin line is not the expected origin.",
    ),
    Code(
        "checkpoint.signature_bad",
        FAILED,
        "A signature line from a trusted key does not verify.",
    ),
    Code(
        "signature.bad",
        FAILED,
        "The Ed25519 signature does not verify under the given key (strict rules).",
    ),
    Code("signature.malformed", INPUT, "A signature is not strict base64 of exactly 64 bytes."),
    Code(
        "treehead.key_outside_window",
        FAILED,
        "The tree head is dated outside the validity window of the trusted key that signed it.",
    ),
    Code(
        "treehead.malformed",
        INPUT,
        "A signed tree head lacks a field or has one of the wrong type or form.",
    ),
    Code(
        "treehead.signature_bad",
        FAILED,
        "The signed tree head's signature does not verify under the given key.",
    ),
)

MERKLE: Final = (
    Code(
        "merkle.bad_hash_length",
        INPUT,
        "A leaf hash, root or proof hash is not exactly 32 bytes.",
    ),
    Code(
        "merkle.bad_proof_length",
        FAILED,
        "The proof has the wrong number of hashes for this index and tree size.",
    ),
    Code(
        "merkle.consistency_from_zero",
        FAILED,
        "A consistency proof from an empty tree proves nothing; refused.",
    ),
    Code("merkle.index_out_of_range", FAILED, "The leaf index is not below the tree size."),
    Code(
        "merkle.root_mismatch",
        FAILED,
        "The root recomputed from the proof differs from the expected root.",
    ),
    Code(
        "merkle.size_order",
        FAILED,
        "A consistency proof needs the first size to be at most the second.",
    ),
)
