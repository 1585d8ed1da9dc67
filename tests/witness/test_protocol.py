"""The add-checkpoint body and decision (pure): every refusal with its status, in order."""

from __future__ import annotations

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto.checkpoint import parse_verifier_key
from affidavit.verify.crypto.merkle import EMPTY_ROOT
from affidavit.witness.protocol import (
    Refusal,
    Stored,
    SubmittedCheckpoint,
    authenticate,
    check_against,
    origin_hash,
    parse_request,
    trusted_by_origin,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.witness.helpers import ORIGIN, Tree

TREE = Tree(40)
TRUSTED = trusted_by_origin([parse_verifier_key(TREE.vkey)])


def _status(fn: object, *args: object) -> int:
    try:
        fn(*args)  # type: ignore[operator]
    except Refusal as refusal:
        return refusal.status
    return 200


def test_parse_a_body_with_a_proof() -> None:
    parsed = parse_request(TREE.body(8, 13))
    assert parsed.old_size == 8
    assert list(parsed.proof) == TREE.proof(8, 13)
    assert parsed.note == TREE.note(13)


def test_parse_a_body_without_a_proof() -> None:
    parsed = parse_request(TREE.body(0, 5))
    assert (parsed.old_size, parsed.proof, parsed.note) == (0, (), TREE.note(5))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"old 0\n",  # no empty line
        b"old 0\n\n",  # no checkpoint
        b"old 01\n\n" + TREE.note(1).encode(),  # leading zero
        b"old -1\n\n" + TREE.note(1).encode(),
        b"old  1\n\n" + TREE.note(1).encode(),
        b"Old 1\n\n" + TREE.note(1).encode(),
        b"old 1 \n\n" + TREE.note(1).encode(),
        b"old 18446744073709551616\n\n" + TREE.note(1).encode(),  # 2^64
        b"old 9223372036854775808\n\n" + TREE.note(1).encode(),  # 2^63: SQLite's INTEGER is signed
        b"old 1\r\n\r\n" + TREE.note(1).encode(),
        b"old 1\nnot base64!\n\n" + TREE.note(1).encode(),
        b"old 1\nAAAA\n\n" + TREE.note(1).encode(),  # 3 bytes, not a hash
        b"\xff\xfe",
        b"old 0\n\n" + TREE.note(1).encode()[:-1],  # no final newline
    ],
)
def test_malformed_bodies_are_400(body: bytes) -> None:
    with pytest.raises(Refusal) as caught:
        parse_request(body)
    assert caught.value.status == 400


def test_more_than_63_proof_lines_is_400() -> None:
    hashes = [EMPTY_ROOT] * 64
    with pytest.raises(Refusal, match="63") as caught:
        parse_request(TREE.body(1, 2, proof=hashes))
    assert caught.value.status == 400
    assert len(parse_request(TREE.body(1, 2, proof=hashes[:63])).proof) == 63


def test_a_non_canonical_base64_proof_line_is_400() -> None:
    line = "A" * 42 + "B="  # decodes, but its last bits are not zero
    with pytest.raises(Refusal) as caught:
        parse_request(f"old 1\n{line}\n\n{TREE.note(2)}".encode())
    assert caught.value.status == 400


def test_malformed_checkpoint_is_400() -> None:
    bad = SubmittedCheckpoint(0, (), "example.com/test-log\n01\nAAAA\n\n— x AAAAAAA=\n")
    assert _status(authenticate, bad, TRUSTED) == 400


def test_old_size_above_the_checkpoint_is_400_before_the_origin_is_looked_up() -> None:
    other = Tree(3, origin="other.example/log")
    assert _status(authenticate, parse_request(other.body(3, 2, proof=[])), TRUSTED) == 400


def test_unknown_origin_is_404() -> None:
    other = Tree(3, origin="other.example/log")
    assert _status(authenticate, parse_request(other.body(0, 2)), TRUSTED) == 404


def test_no_trusted_signature_is_403() -> None:
    # signed by another key under the same origin: ignored, so no trusted signature at all
    impostor = derive_test_key("witness tests: impostor")
    body = b"old 0\n\n" + TREE.note(2, key=impostor).encode()
    assert _status(authenticate, parse_request(body), TRUSTED) == 403


def test_a_bad_signature_from_the_trusted_key_is_403() -> None:
    note = TREE.note(2)
    tampered = note.replace(f"\n{2}\n", "\n3\n", 1)  # the size changes, the signature stays
    assert tampered != note
    body = b"old 0\n\n" + tampered.encode()
    assert _status(authenticate, parse_request(body), TRUSTED) == 403


def test_signatures_of_unknown_keys_are_ignored() -> None:
    other = derive_test_key("witness tests: unrelated")
    extra = Tree(40, key=other).note(5).split("\n\n", 1)[1]
    body = b"old 0\n\n" + (TREE.note(5) + extra).encode()
    request = authenticate(parse_request(body), TRUSTED)
    assert request.checkpoint.tree_size == 5
    assert len(request.log_signatures) == 1  # only the trusted key's line is kept


def _check(old: int, new: int, stored: Stored | None, **kwargs: object) -> int:
    request = authenticate(parse_request(TREE.body(old, new, **kwargs)), TRUSTED)  # type: ignore[arg-type]
    return _status(check_against, request, stored)


def test_409_carries_the_stored_size() -> None:
    request = authenticate(parse_request(TREE.body(0, 5)), TRUSTED)
    with pytest.raises(Refusal) as caught:
        check_against(request, Stored(3, TREE.root(3)))
    assert (caught.value.status, caught.value.conflict_size, caught.value.signed) == (409, 3, True)
    with pytest.raises(Refusal) as caught:
        check_against(authenticate(parse_request(TREE.body(4, 5)), TRUSTED), None)
    assert (caught.value.status, caught.value.conflict_size) == (409, 0)


def test_the_409_comes_before_the_422_checks() -> None:
    assert _check(0, 5, Stored(3, TREE.root(3)), proof=[EMPTY_ROOT]) == 409


def test_size_zero_needs_the_empty_root() -> None:
    assert _check(0, 0, None) == 200
    body = b"old 0\n\n" + TREE.note(0, root=b"\x01" * 32).encode()
    request = authenticate(parse_request(body), TRUSTED)
    assert _status(check_against, request, None) == 422


def test_a_proof_from_size_zero_is_422() -> None:
    assert _check(0, 5, None, proof=[TREE.root(1)]) == 422


def test_consistency() -> None:
    stored = Stored(8, TREE.root(8))
    assert _check(8, 13, stored) == 200
    assert _check(8, 13, stored, proof=TREE.proof(8, 13)[:-1]) == 422
    assert _check(8, 13, Stored(8, TREE.root(7))) == 422  # the witness saw another tree at 8
    assert _check(8, 8, stored) == 200
    assert _check(8, 8, Stored(8, TREE.root(7))) == 422  # same size, another root
    assert _check(8, 8, stored, proof=[TREE.root(8)]) == 422  # equal sizes take no proof


def test_origin_hash_is_lowercase_hex_sha256() -> None:
    assert origin_hash("a") == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    assert origin_hash(ORIGIN) == origin_hash(ORIGIN).lower()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_a_consistent_request_is_accepted_only_from_the_stored_size(
    stored_size: int, old: int, new: int
) -> None:
    """Against a model: with the right proof, 200 iff old == stored and old <= new."""
    stored = Stored(stored_size, TREE.root(stored_size)) if stored_size else None
    if old > new:
        assert _status(authenticate, parse_request(TREE.body(old, new, proof=[])), TRUSTED) == 400
        return
    expected = 200 if old == stored_size else 409
    assert _check(old, new, stored) == expected
