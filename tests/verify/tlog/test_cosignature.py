"""C2SP tlog-cosignature (verify/tlog/cosignature.py): key IDs, vkeys, messages, verification."""

from __future__ import annotations

import base64
import hashlib
import struct

import pytest
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    note_signature_line,
    parse_checkpoint_body,
)
from affidavit.verify.tlog.cosignature import (
    MAX_TIMESTAMP,
    Cosigner,
    cosignature_line,
    cosigner_key_id,
    cosigner_vkey,
    ed25519_cosigned_message,
    ml_dsa_44_available,
    ml_dsa_44_cosigned_message,
    parse_cosigner_vkey,
    verify_cosignatures,
)

from tests.conftest import raises_code
from tests.verify.tlog.proof_fixtures import (
    ED_KEY,
    ED_NAME,
    LOG,
    PQ_NAME,
    TIMESTAMP,
    UNKNOWN_KEY,
    UNKNOWN_NAME,
    ed_cosignature,
    ed_cosigner,
    pq_cosignature,
    pq_cosigner,
    pq_key,
    signed_checkpoint,
    vkey_of,
    with_lines,
)

LEAVES = [merkle.leaf_hash(f"entry {i}".encode()) for i in range(5)]
ROOT = merkle.root_of(LEAVES)
NOTE = signed_checkpoint(len(LEAVES), ROOT)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _line(name: str, key_id: bytes, blob: bytes) -> str:
    return note_signature_line(name, key_id, blob)


# -- key IDs and vkeys (tlog-cosignature "Format", signed-note "Verifier keys") ---------------


def test_key_ids_follow_the_spec_formula() -> None:
    raw = ED_KEY.public_key.raw
    expected = hashlib.sha256(ED_NAME.encode() + b"\n\x04" + raw).digest()[:4]
    assert cosigner_key_id(ED_NAME, "ed25519", raw) == expected
    public = pq_key().public_key().public_bytes_raw()
    expected_pq = hashlib.sha256(PQ_NAME.encode() + b"\n\x06" + public).digest()[:4]
    assert cosigner_key_id(PQ_NAME, "ml-dsa-44", public) == expected_pq
    # the type byte separates the kinds: the same name and key bytes give another ID as a log key
    log_id = hashlib.sha256(ED_NAME.encode() + b"\n\x01" + raw).digest()[:4]
    assert log_id != expected


@pytest.mark.parametrize("kind", ["ed25519", "ml-dsa-44"])
def test_vkey_round_trip(kind: str) -> None:
    cosigner = ed_cosigner() if kind == "ed25519" else pq_cosigner()
    vkey = vkey_of(cosigner)
    name, hex_id, encoded = vkey.split("+", 2)
    assert (name, hex_id) == (cosigner.name, cosigner.key_id.hex())
    blob = base64.b64decode(encoded)
    assert blob[0] == (0x04 if kind == "ed25519" else 0x06)
    assert len(blob) == (33 if kind == "ed25519" else 1313)
    assert parse_cosigner_vkey(vkey) == cosigner
    assert cosigner.label == f"{cosigner.name}+{cosigner.key_id.hex()}"


def _vkey(name: str, blob: bytes, key_id: bytes | None = None) -> str:
    if key_id is None:
        key_id = hashlib.sha256(name.encode() + b"\n" + blob).digest()[:4]
    return f"{name}+{key_id.hex()}+{_b64(blob)}"


def _upper_id(vkey: str) -> str:
    name, hex_id, encoded = vkey.split("+", 2)
    assert hex_id != hex_id.upper()  # the test needs a letter in the ID
    return f"{name}+{hex_id.upper()}+{encoded}"


@pytest.mark.parametrize(
    ("vkey", "code"),
    [
        ("no-plus-signs", "tlog.cosigner_key_malformed"),
        ("name+1234567+AA==", "tlog.cosigner_key_malformed"),  # 7 hex digits
        (_vkey("n", b"\x04" + ED_KEY.public_key.raw).replace("+", "+0", 1),  # 9 hex digits
         "tlog.cosigner_key_malformed"),
        ("+00000000+" + _b64(b"\x04" + ED_KEY.public_key.raw), "tlog.cosigner_key_malformed"),
        (_vkey("a b", b"\x04" + ED_KEY.public_key.raw), "tlog.cosigner_key_malformed"),
        ("n+00000000+not base64!", "tlog.cosigner_key_malformed"),
        # a log key (0x01) is not a cosigner key
        (_vkey("n", b"\x01" + ED_KEY.public_key.raw), "tlog.cosigner_key_malformed"),
        (_vkey("n", b"\x04" + ED_KEY.public_key.raw[:31]), "tlog.cosigner_key_malformed"),
        (_vkey("n", b"\x06" + b"\x00" * 1311), "tlog.cosigner_key_malformed"),
        (_vkey("n", b"\x04" + ED_KEY.public_key.raw, key_id=b"\x00\x00\x00\x00"),
         "tlog.cosigner_key_malformed"),
        # the key ID is lowercase hex (signed-note: the hex encoding is lowercase)
        (_upper_id(_vkey("n", b"\x04" + ED_KEY.public_key.raw)), "tlog.cosigner_key_malformed"),
        (_vkey("n", b"\x04" + b"\x01" + b"\x00" * 31), "key.weak"),  # a small-order point
    ],
)  # fmt: skip
def test_malformed_cosigner_keys_are_refused(vkey: str, code: str) -> None:
    with raises_code(code):
        parse_cosigner_vkey(vkey)


def test_ml_dsa_44_is_available_with_the_pinned_cryptography() -> None:
    assert ml_dsa_44_available()


# -- the signed messages --------------------------------------------------------------------------


def test_ed25519_message_is_header_time_and_the_whole_body() -> None:
    body = checkpoint_body("example.com/behind-the-sofa", 20852163, ROOT, ["ext line"])
    message = ed25519_cosigned_message(body, 1679315147)
    assert message == b"cosignature/v1\ntime 1679315147\n" + body.encode()
    assert ed25519_cosigned_message(body, 0).startswith(b"cosignature/v1\ntime 0\n")


def test_ml_dsa_44_message_is_the_cosigned_message_structure() -> None:
    checkpoint = parse_checkpoint_body(checkpoint_body("example.com/log", 7, ROOT, ["ext"]))
    message = ml_dsa_44_cosigned_message("w.example", 1679315147, checkpoint)
    expected = (
        b"subtree/v1\n\x00"
        + bytes([9])
        + b"w.example"
        + struct.pack(">Q", 1679315147)
        + bytes([15])
        + b"example.com/log"
        + struct.pack(">QQ", 0, 7)
        + ROOT
    )
    assert message == expected  # extension lines are not covered


@pytest.mark.parametrize("timestamp", [-1, MAX_TIMESTAMP + 1])
def test_message_builders_refuse_timestamps_out_of_range(timestamp: int) -> None:
    with raises_code("usage.invalid"):
        ed25519_cosigned_message(checkpoint_body("o", 1, ROOT), timestamp)


def test_ml_dsa_44_message_refuses_names_over_255_bytes() -> None:
    checkpoint = parse_checkpoint_body(checkpoint_body("o", 1, ROOT))
    with raises_code("usage.invalid"):
        ml_dsa_44_cosigned_message("n" * 256, 1, checkpoint)


def test_cosignature_line_refuses_wrong_lengths() -> None:
    with raises_code("usage.invalid"):
        cosignature_line(ed_cosigner(), 1, b"\x00" * 63)
    with raises_code("usage.invalid"):
        cosignature_line(pq_cosigner(), 1, b"\x00" * 64)
    with raises_code("usage.invalid"):
        cosignature_line(ed_cosigner(), MAX_TIMESTAMP + 1, b"\x00" * 64)


# -- verification ---------------------------------------------------------------------------------


def test_ed25519_and_ml_dsa_44_cosignatures_verify() -> None:
    note = with_lines(NOTE, [ed_cosignature(NOTE), pq_cosignature(NOTE, timestamp=TIMESTAMP + 1)])
    found = verify_cosignatures(note, [ed_cosigner(), pq_cosigner()])
    assert [(v.cosigner.name, v.timestamp) for v in found] == [
        (ED_NAME, TIMESTAMP),
        (PQ_NAME, TIMESTAMP + 1),
    ]
    assert verify_cosignatures(note.encode(), [pq_cosigner()])[0].cosigner == pq_cosigner()


def test_no_named_cosigner_gives_nothing_not_an_error() -> None:
    assert verify_cosignatures(NOTE, []) == ()
    assert verify_cosignatures(with_lines(NOTE, [ed_cosignature(NOTE)]), [pq_cosigner()]) == ()


def test_unknown_cosigners_are_ignored() -> None:
    unknown = ed_cosignature(NOTE, UNKNOWN_KEY, UNKNOWN_NAME)
    # same name as a trusted cosigner, other key (so another key ID): ignored, even if garbage
    same_name = ed_cosignature(NOTE, UNKNOWN_KEY, ED_NAME)
    # same key ID as the trusted cosigner, other name: ignored
    same_id = _line("other.example", ed_cosigner().key_id, b"\x00" * 72)
    note = with_lines(NOTE, [unknown, same_name, same_id, ed_cosignature(NOTE)])
    (found,) = verify_cosignatures(note, [ed_cosigner()])
    assert found.cosigner == ed_cosigner()


def test_the_log_signature_is_not_a_cosignature() -> None:
    log_as_witness = ed_cosigner(LOG, "vectors.affidavit.test/tlog")
    assert verify_cosignatures(NOTE, [log_as_witness]) == ()  # type 0x01 vs 0x04 key IDs


@pytest.mark.parametrize("kind", ["ed25519", "ml-dsa-44"])
def test_a_cosignature_over_another_body_is_bad(kind: str) -> None:
    other = signed_checkpoint(len(LEAVES) - 1, merkle.root_of(LEAVES[:-1]))
    line = ed_cosignature(other) if kind == "ed25519" else pq_cosignature(other)
    cosigner = ed_cosigner() if kind == "ed25519" else pq_cosigner()
    with raises_code("tlog.cosignature_bad") as caught:
        verify_cosignatures(with_lines(NOTE, [line]), [cosigner])
    assert caught.value.details == {"cosigner": cosigner.label}


@pytest.mark.parametrize("kind", ["ed25519", "ml-dsa-44"])
def test_a_tampered_timestamp_is_bad(kind: str) -> None:
    line = ed_cosignature(NOTE) if kind == "ed25519" else pq_cosignature(NOTE)
    cosigner = ed_cosigner() if kind == "ed25519" else pq_cosigner()
    name, encoded = line[2:-1].split(" ")
    blob = bytearray(base64.b64decode(encoded))
    blob[4:12] = struct.pack(">Q", TIMESTAMP + 1)
    tampered = _line(name, bytes(blob[:4]), bytes(blob[4:]))
    with raises_code("tlog.cosignature_bad"):
        verify_cosignatures(with_lines(NOTE, [tampered]), [cosigner])


def test_ed25519_covers_extension_lines_and_ml_dsa_44_does_not() -> None:
    body = checkpoint_body("vectors.affidavit.test/tlog", len(LEAVES), ROOT, ["ext one"])
    signed = signed_checkpoint(len(LEAVES), ROOT)  # same first three lines, no extension
    note_ext = signed.replace(
        checkpoint_body("vectors.affidavit.test/tlog", len(LEAVES), ROOT), body, 1
    )
    # an ML-DSA cosignature of the plain checkpoint still verifies with an extension line added
    pq = pq_cosignature(signed)
    assert verify_cosignatures(with_lines(note_ext, [pq]), [pq_cosigner()])
    # an Ed25519 cosignature of the plain checkpoint does not
    with raises_code("tlog.cosignature_bad"):
        verify_cosignatures(with_lines(note_ext, [ed_cosignature(signed)]), [ed_cosigner()])


@pytest.mark.parametrize(
    ("kind", "length"),
    [("ed25519", 8 + 63), ("ed25519", 8 + 65), ("ed25519", 8), ("ml-dsa-44", 8 + 64)],
)
def test_a_cosignature_of_the_wrong_length_is_malformed(kind: str, length: int) -> None:
    cosigner = ed_cosigner() if kind == "ed25519" else pq_cosigner()
    line = _line(cosigner.name, cosigner.key_id, b"\x00" * length)
    with raises_code("tlog.cosignature_malformed"):
        verify_cosignatures(with_lines(NOTE, [line]), [cosigner])


def test_a_cosigner_signing_twice_is_malformed() -> None:
    first = ed_cosignature(NOTE)
    second = ed_cosignature(NOTE, timestamp=TIMESTAMP + 5)
    with raises_code("tlog.cosignature_malformed"):
        verify_cosignatures(with_lines(NOTE, [first, second]), [ed_cosigner()])


@pytest.mark.parametrize("timestamp", [MAX_TIMESTAMP + 1, 2**64 - 1])
def test_a_timestamp_above_2_63_minus_1_is_malformed(timestamp: int) -> None:
    cosigner = ed_cosigner()
    line = _line(cosigner.name, cosigner.key_id, struct.pack(">Q", timestamp) + b"\x00" * 64)
    with raises_code("tlog.cosignature_malformed"):
        verify_cosignatures(with_lines(NOTE, [line]), [cosigner])


def test_the_largest_timestamp_is_accepted() -> None:
    line = ed_cosignature(NOTE, timestamp=MAX_TIMESTAMP)
    (found,) = verify_cosignatures(with_lines(NOTE, [line]), [ed_cosigner()])
    assert found.timestamp == MAX_TIMESTAMP


def test_ml_dsa_44_timestamp_zero_is_a_valid_cosignature() -> None:
    (found,) = verify_cosignatures(
        with_lines(NOTE, [pq_cosignature(NOTE, timestamp=0)]), [pq_cosigner()]
    )
    assert found.timestamp == 0


def test_a_malformed_note_is_refused() -> None:
    with raises_code("checkpoint.malformed"):
        verify_cosignatures("no blank line\n", [ed_cosigner()])
    bad_body = NOTE.replace(f"\n{len(LEAVES)}\n", f"\n0{len(LEAVES)}\n", 1)
    with raises_code("checkpoint.malformed"):
        verify_cosignatures(bad_body, [ed_cosigner()])


def test_cosigner_is_a_value() -> None:
    again = Cosigner(ED_NAME, ed_cosigner().key_id, "ed25519", ED_KEY.public_key.raw)
    assert again == ed_cosigner()
    assert len({again, ed_cosigner()}) == 1


def test_an_over_long_origin_is_a_bad_cosignature_not_a_usage_error() -> None:
    origin = "o/" + "a" * 300
    note = signed_checkpoint(1, ROOT, origin=origin)
    line = cosignature_line(pq_cosigner(), 5, b"\x00" * 2420)
    with raises_code("tlog.cosignature_bad"):
        verify_cosignatures(with_lines(note, [line]), [pq_cosigner()])


def test_an_ml_dsa_cosigner_name_over_255_bytes_is_refused() -> None:
    name = "w/" + "n" * 300
    public = pq_cosigner().public_key
    with raises_code("tlog.cosigner_key_malformed"):
        parse_cosigner_vkey(cosigner_vkey(name, "ml-dsa-44", public))
