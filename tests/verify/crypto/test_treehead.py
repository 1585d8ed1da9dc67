"""Tree heads: verify/crypto/treehead.py (AiGentsy STH), verify/crypto/checkpoint.py (C2SP notes,
checkpoints)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    NoteVerifier,
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
    verify_note,
)
from affidavit.verify.crypto.treehead import (
    parse_sth,
    sth_message,
    verify_sth,
)
from affidavit.verify.crypto.windows import KeyWindow

from tests.conftest import raises_code

KEY = derive_test_key("TEST-ONLY treehead log key")
OTHER = derive_test_key("TEST-ONLY treehead other key")
ROOT_HEX = "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"


def _sth(**changes: Any) -> dict[str, Any]:
    timestamp = "2026-01-02T03:04:05Z"
    message = sth_message("affidavit-test-log", 8, ROOT_HEX, timestamp)
    document: dict[str, Any] = {
        "log_id": "affidavit-test-log",
        "tree_size": 8,
        "root_hash": ROOT_HEX,
        "timestamp": timestamp,
        "signature": KEY.sign_b64(message),
        "key_id": "test-key",
        "algorithm": "Ed25519",
    }
    document.update(changes)
    return document


# --- AiGentsy STH -----------------------------------------------------------------------------


def test_sth_message_format() -> None:
    # docs/formats.md §4: "{log_id}|{tree_size}|{root_hash}|{timestamp}"
    assert sth_message("L", 3, "ab", "T") == b"L|3|ab|T"


def test_sth_verifies() -> None:
    sth = verify_sth(_sth(), KEY.public_key)
    assert sth.tree_size == 8
    assert sth.root == bytes.fromhex(ROOT_HEX)
    assert sth.key_id == "test-key"


def test_sth_without_algorithm_is_ed25519() -> None:
    document = _sth()
    del document["algorithm"]
    assert verify_sth(document, KEY.public_key).algorithm == "Ed25519"


def test_sth_peer_accepts_ours() -> None:
    peer = pytest.importorskip("aigentsy_verify.merkle")
    assert peer.verify_sth_signature(_sth(), KEY.public_key.b64) is True
    assert peer.verify_sth_signature(_sth(tree_size=9), KEY.public_key.b64) is False


@pytest.mark.parametrize(
    "change",
    [
        {"log_id": "another-log"},
        {"tree_size": 9},
        {"root_hash": "0" * 64},
        {"timestamp": "2026-01-02T03:04:06Z"},
    ],
)
def test_sth_tampered_field_fails(change: dict[str, Any]) -> None:
    with raises_code("treehead.signature_bad") as caught:
        verify_sth(_sth(**change), KEY.public_key)
    assert caught.value.code == "treehead.signature_bad"


def test_sth_wrong_key_fails() -> None:
    with raises_code("treehead.signature_bad"):
        verify_sth(_sth(), OTHER.public_key)


@pytest.mark.parametrize(
    "change",
    [
        {"log_id": "a|b"},
        {"log_id": ""},
        {"log_id": 5},
        {"tree_size": -1},
        {"tree_size": True},
        {"tree_size": "8"},
        {"root_hash": ROOT_HEX.upper()},
        {"root_hash": ROOT_HEX[:-2]},
        {"root_hash": ROOT_HEX + "\n"},
        {"timestamp": "2026-01-02T03:04:05Z\n"},
        {"timestamp": "2026-01-02 03:04:05"},
        {"timestamp": "2026-01-02T03:04:05.123Z"},
        {"algorithm": "ECDSA"},
        {"key_id": 7},
        {"signature": "!!"},
        {"signature": base64.b64encode(b"x" * 63).decode()},
    ],
)
def test_sth_malformed(change: dict[str, Any]) -> None:
    with raises_code("treehead.malformed") as caught:
        parse_sth(_sth(**change))
    assert caught.value.code == "treehead.malformed"
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("missing", ["log_id", "tree_size", "root_hash", "timestamp", "signature"])
def test_sth_missing_field(missing: str) -> None:
    document = _sth()
    del document[missing]
    with raises_code("treehead.malformed", match=missing):
        parse_sth(document)


def test_sth_not_an_object() -> None:
    with raises_code("treehead.malformed"):
        parse_sth([])  # type: ignore[arg-type]


# --- C2SP signed notes ------------------------------------------------------------------------


def _example(peer_vectors: Path) -> dict[str, str]:
    document = json.loads((peer_vectors / "c2sp" / "signed_note_example.json").read_text())
    assert isinstance(document, dict)
    return document


def test_c2sp_example_verifies(peer_vectors: Path) -> None:
    example = _example(peer_vectors)
    assert example["expected"] == "valid"
    verifier = parse_verifier_key(example["verifier_key"])
    result = verify_note(example["note"], [verifier])
    assert result.text == "This is an example message.\n"
    assert result.verified_by == ("example.com/foo+530d903a",)
    assert verifier_key_string(verifier.name, verifier.key) == example["verifier_key"]


def test_c2sp_example_tampered_text_fails(peer_vectors: Path) -> None:
    example = _example(peer_vectors)
    verifier = parse_verifier_key(example["verifier_key"])
    with raises_code("checkpoint.signature_bad") as caught:
        verify_note(example["note"].replace("example", "exampel", 1), [verifier])
    assert caught.value.code == "checkpoint.signature_bad"


def test_c2sp_example_other_key_is_not_trusted(peer_vectors: Path) -> None:
    example = _example(peer_vectors)
    # Same name, different key (so different key ID): the signature is ignored, nothing verifies.
    stranger = parse_verifier_key(verifier_key_string("example.com/foo", OTHER.public_key))
    with raises_code("checkpoint.no_trusted_signature") as caught:
        verify_note(example["note"], [stranger])
    assert caught.value.code == "checkpoint.no_trusted_signature"


def _signed(text: str, *signers: tuple[str, Any]) -> str:
    lines = [
        note_signature_line(name, key.public_key.key_id_c2sp(name), key.sign(text.encode()))
        for name, key in signers
    ]
    return format_note(text, lines)


def _verifier(name: str, key: Any) -> NoteVerifier:
    return parse_verifier_key(verifier_key_string(name, key.public_key))


def test_unknown_signatures_are_ignored() -> None:
    note = _signed("hello\n", ("witness.example", OTHER), ("log.example", KEY))
    result = verify_note(note, [_verifier("log.example", KEY)])
    assert result.verified_by == ("log.example+" + KEY.public_key.key_id_c2sp("log.example").hex(),)
    assert result.ignored_signatures == 1


def test_two_trusted_signatures() -> None:
    note = _signed("hello\n", ("a.example", OTHER), ("b.example", KEY))
    result = verify_note(note, [_verifier("a.example", OTHER), _verifier("b.example", KEY)])
    assert len(result.verified_by) == 2


def test_bad_signature_from_trusted_key_rejects_the_note() -> None:
    good = _signed("hello\n", ("log.example", KEY))
    # A second line under the same trusted key with a broken signature: whole note rejected.
    key_id = KEY.public_key.key_id_c2sp("log.example")
    bad_line = note_signature_line("log.example", key_id, b"\x00" * 64)
    with raises_code("checkpoint.signature_bad"):
        verify_note(good.replace("\n\n", "\n\n" + bad_line), [_verifier("log.example", KEY)])


def test_a_signature_line_repeated_byte_for_byte_counts_once() -> None:
    # issue 38: the identical repeat is one signature (Go's note.Open drops it), not a second one
    good = _signed("hello\n", ("log.example", KEY))
    doubled = good + good.split("\n\n", 1)[1]
    result = verify_note(doubled, [_verifier("log.example", KEY)])
    assert result.verified_by == verify_note(good, [_verifier("log.example", KEY)]).verified_by
    assert len(result.verified_by) == 1


def test_a_parsed_note_is_verified_without_parsing_it_again() -> None:
    # issue 38: the witness splits the note once and verifies what it split
    good = _signed("hello\n", ("log.example", KEY))
    trusted = [_verifier("log.example", KEY)]
    assert verify_note(parse_note(good), trusted) == verify_note(good, trusted)
    with raises_code("checkpoint.no_trusted_signature"):
        verify_note(parse_note(good), [_verifier("other.example", KEY)])


def test_empty_trust_set_is_a_usage_error() -> None:
    with pytest.raises(errors.UsageError):
        verify_note(_signed("hello\n", ("log.example", KEY)), [])


def test_text_may_contain_blank_lines() -> None:
    note = _signed("a\n\nb\n", ("log.example", KEY))
    assert parse_note(note).text == "a\n\nb\n"
    assert verify_note(note.encode(), [_verifier("log.example", KEY)]).text == "a\n\nb\n"


@pytest.mark.parametrize(
    "note",
    [
        "no blank line\n— a AAAAAAA=\n",
        "text\n\n— a AAAAAAA=",  # no final newline
        "text\n\n- a AAAAAAA=\n",  # hyphen, not em dash
        "text\n\n— a+b AAAAAAA=\n",  # '+' in name
        "text\n\n— a AAAA\n",  # shorter than key ID + 1
        "text\n\n— a AAAAAAA\n",  # not canonical base64
        "text\n\n— a AAAAAAA= extra\n",
        "te\txt\n\n— a AAAAAAA=\n",  # control character
        "te\x1fxt\n\n— a AAAAAAA=\n",  # the last control character
        "te\ud800xt\n\n— a AAAAAAA=\n",  # a lone surrogate: not UTF-8
        "text\n\n\n",  # empty signature line
    ],
)
def test_malformed_notes(note: str) -> None:
    with raises_code("checkpoint.malformed") as caught:
        parse_note(note)
    assert caught.value.exit_code == 2


def test_invalid_utf8_note() -> None:
    with raises_code("checkpoint.malformed"):
        parse_note(b"\xff\n\n\xe2\x80\x94 a AAAAAAA=\n")


def test_too_many_signatures() -> None:
    with raises_code("checkpoint.malformed"):
        parse_note("t\n\n" + "— a AAAAAAA=\n" * 101)


@pytest.mark.parametrize(
    "vkey",
    [
        "onlyname",
        "name+530d903a",
        "na me+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
        "example.com/foo+530d903+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
        "example.com/foo+630d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",  # ID mismatch
        "example.com/foo+530d903a+AukyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",  # type 0x02
        "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2",
        "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2kAA==",
    ],
)
def test_malformed_verifier_keys(vkey: str) -> None:
    with raises_code("key.vkey_malformed") as caught:
        parse_verifier_key(vkey)
    assert caught.value.code == "key.vkey_malformed"


def test_weak_key_in_verifier_key() -> None:
    blob = base64.b64encode(b"\x01" + bytes.fromhex("01" + "00" * 31)).decode()
    with raises_code("key.weak"):
        parse_verifier_key(f"weak.example+00000000+{blob}")


def test_note_builders_refuse_bad_input() -> None:
    with pytest.raises(errors.UsageError):
        note_signature_line("a b", b"\x00" * 4, b"")
    with pytest.raises(errors.UsageError):
        note_signature_line("a", b"\x00" * 3, b"")
    with pytest.raises(errors.UsageError):
        format_note("no newline", ["— a AAAAAAA=\n"])
    with pytest.raises(errors.UsageError):
        format_note("t\n", [])


# --- C2SP tlog-checkpoint ---------------------------------------------------------------------


def test_checkpoint_round_trip() -> None:
    root = bytes.fromhex(ROOT_HEX)
    body = checkpoint_body("log.example/1", 20852163, root, ["ext one"])
    assert body.split("\n")[:3] == ["log.example/1", "20852163", base64.b64encode(root).decode()]
    note = _signed(body, ("log.example/1", KEY), ("witness.example", OTHER))
    result = verify_checkpoint(note, [_verifier("log.example/1", KEY)], origin="log.example/1")
    assert result.checkpoint.tree_size == 20852163
    assert result.checkpoint.root_hash == root
    assert result.checkpoint.extensions == ("ext one",)
    assert result.ignored_signatures == 1


def test_checkpoint_origin_mismatch() -> None:
    note = _signed(checkpoint_body("log.example/1", 1, b"\x00" * 32), ("log.example/1", KEY))
    with raises_code("checkpoint.origin_mismatch") as caught:
        verify_checkpoint(note, [_verifier("log.example/1", KEY)], origin="log.example/2")
    assert caught.value.code == "checkpoint.origin_mismatch"


def test_tlog_checkpoint_spec_example_body() -> None:
    # The body from c2sp.org/tlog-checkpoint's example.
    body = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    checkpoint = parse_checkpoint_body(body)
    assert checkpoint.origin == "example.com/behind-the-sofa"
    assert checkpoint.tree_size == 20852163
    assert len(checkpoint.root_hash) == 32


@pytest.mark.parametrize(
    "body",
    [
        "origin\n5\n",  # too few lines
        "origin\n05\n" + base64.b64encode(b"\x00" * 32).decode() + "\n",  # leading zero
        "origin\n-5\n" + base64.b64encode(b"\x00" * 32).decode() + "\n",
        "origin\n5\n" + base64.b64encode(b"\x00" * 31).decode() + "\n",  # short root
        "origin\n5\nnot base64\n",
        "origin\n5\n" + base64.b64encode(b"\x00" * 32).decode() + "\n\n",  # empty extension
        "origin\n5\n" + base64.b64encode(b"\x00" * 32).decode(),  # no final newline
        "origin\n" + "9" * 21 + "\n" + base64.b64encode(b"\x00" * 32).decode() + "\n",
        "origin\n18446744073709551616\n" + base64.b64encode(b"\x00" * 32).decode() + "\n",
    ],
)
def test_malformed_checkpoint_bodies(body: str) -> None:
    with raises_code("checkpoint.malformed"):
        parse_checkpoint_body(body)


def test_checkpoint_body_refuses_bad_input() -> None:
    with pytest.raises(errors.UsageError):
        checkpoint_body("", 1, b"\x00" * 32)
    with pytest.raises(errors.UsageError):
        checkpoint_body("o", 1, b"\x00" * 31)
    with pytest.raises(errors.UsageError):
        checkpoint_body("o", -1, b"\x00" * 32)


# --- issue 36: what the first mutation run showed no test judged -------------------------------


def _head(
    log_id: str = "affidavit-test-log",
    tree_size: int = 8,
    root_hash: str = ROOT_HEX,
    timestamp: str = "2026-01-02T03:04:05Z",
) -> dict[str, Any]:
    message = sth_message(log_id, tree_size, root_hash, timestamp)
    return {
        "log_id": log_id,
        "tree_size": tree_size,
        "root_hash": root_hash,
        "timestamp": timestamp,
        "signature": KEY.sign_b64(message),
    }


def test_a_log_id_with_a_space_and_an_empty_tree_verify() -> None:
    # docs/formats.md §4: only '|' and control characters are refused in log_id; size 0 is
    # the empty tree, whose root is SHA-256 of nothing
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    sth = verify_sth(_head("my log", 0, empty), KEY.public_key)
    assert (sth.log_id, sth.tree_size, sth.root_hash, sth.key_id) == ("my log", 0, empty, None)
    with raises_code("treehead.malformed"):
        parse_sth(_head("my\x1flog"))


@pytest.mark.parametrize(
    "document",
    [
        [],
        {**_head(), "log_id": "a|b"},
        {**_head(), "log_id": 5},
        {**_head(), "tree_size": -1},
        {**_head(), "root_hash": ROOT_HEX.upper()},
        {**_head(), "timestamp": "2026-01-02 03:04:05"},
        {**_head(), "algorithm": "ECDSA"},
        {**_head(), "key_id": 7},
        {**_head(), "signature": "!!"},
    ],
)
def test_every_malformed_head_says_why(document: Any) -> None:
    with raises_code("treehead.malformed") as caught:
        parse_sth(document)
    assert isinstance(caught.value.message, str)
    assert caught.value.message


def test_a_bad_head_signature_names_the_log_and_size() -> None:
    with raises_code("treehead.signature_bad") as caught:
        verify_sth(_head(tree_size=9) | {"signature": _head()["signature"]}, KEY.public_key)
    assert caught.value.details == {"log_id": "affidavit-test-log", "tree_size": 9}
    assert isinstance(caught.value.message, str)
    assert caught.value.message


def test_a_windowed_key_verifies_only_heads_dated_inside_its_window() -> None:
    # docs/adr/0011: the window is half-open, [valid_from, valid_until)
    window = KeyWindow.parse(
        {"valid_from": "2026-01-01T00:00:00Z", "valid_until": "2026-02-01T00:00:00Z"}
    )
    assert window is not None
    inside = verify_sth(_head(timestamp="2026-01-31T23:59:59Z"), KEY.public_key, windows=[window])
    assert inside.timestamp == "2026-01-31T23:59:59Z"
    for timestamp in ("2026-02-01T00:00:00Z", "2025-12-31T23:59:59Z"):
        with raises_code("treehead.key_outside_window") as caught:
            verify_sth(_head(timestamp=timestamp), KEY.public_key, windows=[window])
        assert caught.value.details == {
            "log_id": "affidavit-test-log",
            "tree_size": 8,
            "timestamp": timestamp,
        }
        assert KEY.public_key.b64 in caught.value.message  # which trusted key's window
        assert caught.value.exit_code == 1
    # no window: trusted at every time
    assert verify_sth(_head(timestamp="2030-01-01T00:00:00Z"), KEY.public_key, windows=()).tree_size
