"""COSE Receipts of inclusion checked alone (issue 36 mutation campaign; RFC 9942 §5.2,
verify/scitt/receipt.py): which proof and which key a receipt verifies under, what it reports,
and every refusal with its exact code and wire form. Receipts here are signed by the TEST-ONLY
keys of tests/verify/scitt/support.py over small trees built in the test."""

from __future__ import annotations

import hashlib
from typing import Any

import cbor2
import pytest
from affidavit.verify import errors
from affidavit.verify.crypto.merkle import inclusion_proof, leaf_hash, root_from_inclusion_proof
from affidavit.verify.scitt.cbor import encode
from affidavit.verify.scitt.cose import sig_structure
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.receipt import MAX_TREE_SIZE, parse_receipt, verify_receipt
from cryptography.hazmat.primitives.asymmetric import ec

from tests.conftest import raises_code
from tests.verify.scitt.support import LOG_COSE, LOG_KEY, OTHER

ENTRIES = [hashlib.sha256(bytes([i])).digest() for i in range(5)]
LEAVES = [leaf_hash(entry) for entry in ENTRIES]
ENTRY = ENTRIES[3]  # the leaf entry the receipts prove
OTHER_COSE = CoseKey.from_ed25519(OTHER.public_key, "other")
# an ES256 key among the trusted ones: never tried for an EdDSA receipt
P256 = CoseKey.from_p256(ec.derive_private_key(7, ec.SECP256R1()).public_key(), "p256")


def _proof(index: int = 3, size: int = 5, path: list[bytes] | None = None) -> bytes:
    return encode([size, index, inclusion_proof(LEAVES, index, size) if path is None else path])


def _root(size: int = 5) -> bytes:
    return root_from_inclusion_proof(LEAVES[3], 3, size, inclusion_proof(LEAVES, 3, size))


def _receipt(
    proofs: list[bytes] | None = None,
    *,
    root: bytes | None = None,
    claims: Any = None,
    key: Any = LOG_KEY,
    header: dict[int, Any] | None = None,
) -> bytes:
    """A receipt signed by ``key`` over ``root`` (the root of the 5-leaf tree by default), its
    protected header alg EdDSA, vds 1, the CWT ``claims`` (if any) and ``header``."""
    protected: dict[Any, Any] = {1: -8, 395: 1}
    if claims is not None:
        protected[15] = claims
    protected.update(header or {})
    protected_bytes = encode(protected)
    signature = key.sign(sig_structure(protected_bytes, _root() if root is None else root))
    vdp = {396: {-1: [_proof()] if proofs is None else proofs}}
    return encode(cbor2.CBORTag(18, [protected_bytes, vdp, None, signature]))


def test_a_receipt_reports_the_proof_root_and_key_that_verified() -> None:
    receipt = _receipt(
        claims={1: "log.example", 2: "pkg:demo@1", 6: 1}, header={4: LOG_COSE.thumbprint}
    )
    check = verify_receipt(receipt, ENTRY, [OTHER_COSE, P256, LOG_COSE])
    assert check.to_json() == {
        "tree_size": 5,
        "leaf_index": 3,
        "root": _root().hex(),
        "kid": LOG_COSE.thumbprint.hex(),
        "alg": "EdDSA",
        "issuer": "log.example",
        "subject": "pkg:demo@1",
    }
    assert check.key is LOG_COSE


@pytest.mark.parametrize("claims", [None, {1: 7, 2: b"pkg"}, [1, 2]])
def test_claims_that_are_not_text_are_not_reported(claims: Any) -> None:
    check = verify_receipt(_receipt(claims=claims), ENTRY, [LOG_COSE])
    assert (check.issuer, check.subject) == (None, None)


def test_the_first_proof_whose_root_verifies_is_the_result() -> None:
    """RFC 9942 §5.2.1: proof by proof; a proof of another leaf or tree is passed over."""
    other_leaf = _proof(index=1)
    smaller_tree = _proof(size=4)
    receipt = _receipt([other_leaf, smaller_tree, _proof()])
    check = verify_receipt(receipt, ENTRY, [LOG_COSE])
    assert (check.tree_size, check.leaf_index, check.root) == (5, 3, _root())
    signed_small = _receipt([other_leaf, smaller_tree, _proof()], root=_root(4))
    assert verify_receipt(signed_small, ENTRY, [LOG_COSE]).tree_size == 4


def test_sixteen_proofs_are_read_seventeen_are_not() -> None:
    assert len(parse_receipt(_receipt([_proof()] * 16)).proofs) == 16
    with raises_code("scitt.receipt_malformed") as info:
        parse_receipt(_receipt([_proof()] * 17), what="r")
    assert info.value.message == "r: no vdp (396) with 1 to 16 inclusion proofs (-1)"


def test_every_proof_is_checked_before_any_is_used() -> None:
    """A malformed proof after one that verifies still refuses the receipt."""
    with raises_code("scitt.receipt_malformed") as info:
        verify_receipt(_receipt([_proof(), _proof(path=[])]), ENTRY, [LOG_COSE], what="r")
    assert info.value.message.startswith("r: ")


def test_the_largest_tree_a_proof_may_name() -> None:
    """RFC 9162 §2.1.3.2: leaf_index < tree_size <= 2^63 - 1 (docs/formats.md "SCITT")."""
    size = MAX_TREE_SIZE
    path = [bytes([i]) * 32 for i in range(63)]  # the last leaf of 2^63 - 1 needs 62 or 63
    for length in (62, 63):
        try:
            root = root_from_inclusion_proof(LEAVES[3], size - 1, size, path[:length])
        except errors.ProofError:
            continue
        proof = encode([size, size - 1, path[:length]])
        check = verify_receipt(_receipt([proof], root=root), ENTRY, [LOG_COSE])
        assert (check.tree_size, check.leaf_index) == (size, size - 1)
        too_big = encode([size + 1, size - 1, path[:length]])
        with raises_code("scitt.receipt_malformed") as info:
            parse_receipt(_receipt([too_big]), what="r")
        assert info.value.message == f"r: leaf index {size - 1} is not in a tree of size {size + 1}"
        break
    else:
        pytest.fail("no path length fits the last leaf of a tree of 2^63 - 1")


@pytest.mark.parametrize(
    ("proof", "message"),
    [
        (encode([True, 0, []]), "tree_size and leaf_index are unsigned integers"),
        (encode([2, False, [LEAVES[1]]]), "tree_size and leaf_index are unsigned integers"),
        (encode([5, 3, "path"]), "the inclusion path is not an array of 32-byte hashes"),
        (encode([5, 3, [1, 2, 3]]), "the inclusion path is not an array of 32-byte hashes"),
        (encode([5, 3]), "an inclusion proof is not [tree_size, leaf_index, path]"),
        (encode({5: 3}), "an inclusion proof is not [tree_size, leaf_index, path]"),
        ("text", "an inclusion proof is not a byte string"),
        (encode([5, 5, []]), "leaf index 5 is not in a tree of size 5"),
    ],
)
def test_a_malformed_proof_is_refused_with_what_is_wrong(proof: Any, message: str) -> None:
    with raises_code("scitt.receipt_malformed") as info:
        parse_receipt(_receipt([proof]), what="r")
    assert info.value.message == f"r: {message}"


@pytest.mark.parametrize("vdp", [{-1: "proofs"}, [1], {-2: [b"x"]}])
def test_no_inclusion_proofs_is_malformed(vdp: Any) -> None:
    protected_bytes = encode({1: -8, 395: 1})
    data = encode(cbor2.CBORTag(18, [protected_bytes, {396: vdp}, None, b"\x00" * 64]))
    with raises_code("scitt.receipt_malformed"):
        parse_receipt(data)


@pytest.mark.parametrize(
    ("vds", "details"), [(True, {"vds": True}), ("1", {"vds": "1"}), ([1], {"vds": None})]
)
def test_only_the_rfc9162_vds_is_read(vds: Any, details: dict[str, Any]) -> None:
    with raises_code("scitt.receipt_vds_unsupported") as info:
        parse_receipt(_receipt(header={395: vds}), what="r")
    assert info.value.to_json() == {
        "code": "scitt.receipt_vds_unsupported",
        "message": f"r: vds {vds!r} is not RFC9162_SHA256 (1)",
        "details": details,
    }


def test_an_attached_root_is_refused() -> None:
    protected_bytes = encode({1: -8, 395: 1})
    body = [protected_bytes, {396: {-1: [_proof()]}}, _root(), b"\x00" * 64]
    with raises_code("scitt.receipt_payload_attached") as info:
        parse_receipt(encode(cbor2.CBORTag(18, body)), what="r")
    assert info.value.message.startswith("r: the payload is attached")


def test_a_kid_naming_no_trusted_key_is_untrusted() -> None:
    receipt = _receipt(key=OTHER, header={4: OTHER_COSE.thumbprint})
    with raises_code("scitt.receipt_key_untrusted") as info:
        verify_receipt(receipt, ENTRY, [LOG_COSE, P256], what="r")
    kid = OTHER_COSE.thumbprint.hex()
    assert info.value.to_json() == {
        "code": "scitt.receipt_key_untrusted",
        "message": f"r: signed by kid {kid}, none of the 2 trusted key(s)",
        "details": {"kid": kid},
    }


@pytest.mark.parametrize(
    ("kid", "signer"),
    [
        (None, OTHER),  # no kid: nothing names a key
        (LOG_COSE.thumbprint, OTHER),  # the kid names a trusted key that did not sign it
    ],
)
def test_a_signature_no_trusted_key_made_is_invalid(kid: bytes | None, signer: Any) -> None:
    header = {} if kid is None else {4: kid}
    with raises_code("scitt.receipt_signature_invalid") as info:
        verify_receipt(_receipt(key=signer, header=header), ENTRY, [LOG_COSE], what="r")
    assert info.value.message == (
        "r: no inclusion proof rebuilds a root whose signature verifies under a trusted key"
    )


def test_a_receipt_of_another_leaf_is_invalid() -> None:
    with raises_code("scitt.receipt_signature_invalid"):
        verify_receipt(_receipt(), ENTRIES[2], [LOG_COSE])
    with raises_code("scitt.receipt_signature_invalid"):
        verify_receipt(_receipt(), LEAVES[3], [LOG_COSE])  # the leaf hash is not the entry


def test_an_es256_receipt_is_tried_under_es256_keys_only() -> None:
    with raises_code("scitt.receipt_signature_invalid"):
        verify_receipt(_receipt(header={1: -7}), ENTRY, [LOG_COSE])


def test_no_trusted_key_is_a_usage_error() -> None:
    with raises_code("usage.invalid"):
        verify_receipt(_receipt(), ENTRY, [])


def test_a_parsed_receipt_verifies_as_its_bytes_do() -> None:
    parsed = parse_receipt(_receipt())
    assert verify_receipt(parsed, ENTRY, [LOG_COSE]) == verify_receipt(
        _receipt(), ENTRY, [LOG_COSE]
    )


def test_the_first_leaf_is_proven_too() -> None:
    """leaf_index 0 is an unsigned integer like any other (RFC 9942 §5.2)."""
    root = root_from_inclusion_proof(LEAVES[0], 0, 5, inclusion_proof(LEAVES, 0, 5))
    check = verify_receipt(_receipt([_proof(index=0)], root=root), ENTRIES[0], [LOG_COSE])
    assert (check.tree_size, check.leaf_index) == (5, 0)


def test_without_a_kid_every_trusted_key_is_tried() -> None:
    check = verify_receipt(_receipt(), ENTRY, [OTHER_COSE, P256, LOG_COSE])
    assert check.key is LOG_COSE


@pytest.mark.parametrize(
    ("proof", "code", "message"),
    [
        (encode(cbor2.CBORTag(18, [5, 3, []])), "cbor.malformed",
         "r inclusion proof: tag 18 is not one this reader uses"),
        (b"\xff", "cbor.malformed", "r inclusion proof: a break or reserved item (RFC 8949 §3)"),
        (encode([5, 3, [LEAVES[0]]]), "scitt.receipt_malformed",
         "r: proof has 1 hashes, expected 3"),
    ],
)  # fmt: skip
def test_a_proof_that_cannot_be_read_is_refused_with_its_code(
    proof: bytes, code: str, message: str
) -> None:
    with raises_code(code) as info:
        parse_receipt(_receipt([proof]), what="r")
    assert info.value.message == message


@pytest.mark.parametrize(
    ("data", "code", "message"),
    [
        (lambda: _receipt()[1:], "scitt.cose_malformed",
         "{what}: not a COSE_Sign1 tagged 18 (RFC 9052 §2)"),
        (lambda: _receipt(header={395: 2}), "scitt.receipt_vds_unsupported",
         "{what}: vds 2 is not RFC9162_SHA256 (1)"),
    ],
)  # fmt: skip
def test_a_refusal_names_the_receipt(data: Any, code: str, message: str) -> None:
    with raises_code(code) as info:
        parse_receipt(data())
    assert info.value.message == message.format(what="receipt")
    with raises_code(code) as info:
        verify_receipt(data(), ENTRY, [LOG_COSE])
    assert info.value.message == message.format(what="receipt")
    with raises_code(code) as info:
        verify_receipt(data(), ENTRY, [LOG_COSE], what="ts receipt 1")
    assert info.value.message == message.format(what="ts receipt 1")


def test_an_unsupported_alg_names_the_receipt() -> None:
    with raises_code("scitt.alg_unsupported") as info:
        verify_receipt(_receipt(header={1: -35}), ENTRY, [LOG_COSE], what="r")
    assert info.value.message == "r: alg -35 is not EdDSA (-8) or ES256 (-7) (RFC 9053)"


def test_crit_may_name_the_headers_a_receipt_reader_processes() -> None:
    receipt = _receipt(header={2: [395, 4], 4: LOG_COSE.thumbprint})
    assert verify_receipt(receipt, ENTRY, [LOG_COSE]).leaf_index == 3
    with raises_code("scitt.crit_unsupported"):
        parse_receipt(_receipt(header={2: [99], 99: 1}))


def test_a_long_kid_is_cut_in_the_refusal() -> None:
    """The kid is the sender's bytes: the message shows 32 bytes of it, the details 64."""
    kid = bytes(range(100))
    with raises_code("scitt.receipt_key_untrusted") as info:
        verify_receipt(_receipt(key=OTHER, header={4: kid}), ENTRY, [LOG_COSE], what="r")
    assert info.value.to_json() == {
        "code": "scitt.receipt_key_untrusted",
        "message": f"r: signed by kid {kid[:32].hex()}, none of the 1 trusted key(s)",
        "details": {"kid": kid[:64].hex()},
    }


def test_no_trusted_key_says_why() -> None:
    with raises_code("usage.invalid") as info:
        verify_receipt(_receipt(), ENTRY, [])
    assert info.value.message == "a receipt verifies only under a trusted key (fail closed)"
