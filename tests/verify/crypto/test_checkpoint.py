"""C2SP signed notes and checkpoints (verify/crypto/checkpoint.py): the limits and the fields a
caller reads (issue 36: each test is a note or checkpoint whose verdict, code or reported field
a changed check would alter)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto.checkpoint import (
    MAX_NOTE_BYTES,
    MAX_NOTE_SIGNATURES,
    NoteVerifier,
    check_checkpoint,
    check_key_name,
    checkpoint_body,
    format_note,
    is_key_name,
    note_signature_line,
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
    verify_note,
)
from affidavit.verify.crypto.keys import key_id_c2sp

from tests.conftest import raises_code

KEY = derive_test_key("TEST-ONLY checkpoint log key")
OTHER = derive_test_key("TEST-ONLY checkpoint other key")
ROOT = bytes(range(32))
ORIGIN = "log.example/1"


def _line(name: str, key: Any, text: str) -> str:
    return note_signature_line(name, key.public_key.key_id_c2sp(name), key.sign(text.encode()))


def _signed(text: str, *signers: tuple[str, Any]) -> str:
    return format_note(text, [_line(name, key, text) for name, key in signers])


def _verifier(name: str, key: Any) -> NoteVerifier:
    return parse_verifier_key(verifier_key_string(name, key.public_key))


def _label(name: str, key: Any) -> str:
    return f"{name}+{key.public_key.key_id_c2sp(name).hex()}"


# --- key names and verifier keys --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("log.example/1", True),
        ("a", True),
        ("é.example", True),  # non-ASCII text is a name
        ("", False),
        ("a+b", False),
        ("a b", False),
        ("a\u00a0b", False),  # a Unicode space
        ("a\tb", False),
        ("a\udcffb", False),  # a lone surrogate (PEP 383): no UTF-8 form
    ],
)
def test_key_names(name: str, ok: bool) -> None:
    assert is_key_name(name) is ok
    if ok:
        assert check_key_name(name) == name
    else:
        with raises_code("usage.invalid") as caught:
            check_key_name(name)
        assert caught.value.message


def test_verifier_key_round_trips_and_accepts_an_uppercase_key_id() -> None:
    vkey = verifier_key_string(ORIGIN, KEY.public_key)
    name, hex_id, encoded = vkey.split("+", 2)
    parsed = parse_verifier_key(f"{name}+{hex_id.upper()}+{encoded}")
    assert parsed == NoteVerifier(ORIGIN, bytes.fromhex(hex_id), KEY.public_key)
    assert parsed.key_id == KEY.public_key.key_id_c2sp(ORIGIN)


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.replace(v.split("+")[1], v.split("+")[1] + "0"),  # 9 hex digits
        lambda v: v.replace(v.split("+")[1], "0x" + v.split("+")[1][2:]),  # not hex
        lambda v: "+".join(v.split("+", 2)[:2]) + "+" + base64.b64encode(b"\x01" * 32).decode(),
        lambda v: v.replace("+", "+ ", 1),  # a space before the key ID
        lambda v: v.split("+", 1)[0] + "+" + v.split("+", 1)[1].replace("+", "+x", 1),
    ],
)
def test_malformed_verifier_keys_are_vkey_malformed(change: Any) -> None:
    with raises_code("key.vkey_malformed") as caught:
        parse_verifier_key(change(verifier_key_string(ORIGIN, KEY.public_key)))
    assert caught.value.message


def test_verifier_key_of_a_bad_name_is_refused() -> None:
    with raises_code("usage.invalid"):
        verifier_key_string("a b", KEY.public_key)


# --- signed notes -----------------------------------------------------------------------------


def _note_of_length(length: int, measure: Callable[[str], int]) -> str:
    line = _line(ORIGIN, KEY, "x\n")
    text = "x" * (length - measure("\n\n" + line)) + "\n"
    note = text + "\n" + line
    assert measure(note) == length
    return note


def test_a_note_at_the_size_limit_is_read_and_one_byte_more_is_not() -> None:
    # text: its characters count; bytes: its bytes (the em dash is 3 bytes, 1 character)
    for measure, form in ((len, str), (lambda n: len(n.encode()), str.encode)):
        note = _note_of_length(MAX_NOTE_BYTES, measure)
        assert parse_note(form(note)).text == note.split("\n\n")[0] + "\n"
        with raises_code("checkpoint.malformed") as caught:
            parse_note(form("x" + note))
        assert caught.value.message


def test_the_signature_limit_is_inclusive() -> None:
    lines = "— a AAAAAAA=\n" * MAX_NOTE_SIGNATURES
    assert len(parse_note("t\n\n" + lines).signatures) == MAX_NOTE_SIGNATURES
    with raises_code("checkpoint.malformed") as caught:
        parse_note("t\n\n" + lines + "— a AAAAAAA=\n")
    assert caught.value.message


def test_a_signature_line_is_split_into_name_key_id_and_signature() -> None:
    # the shortest line: a 4-byte key ID and one signature byte
    note = parse_note("text\n\n— a " + base64.b64encode(b"\x01\x02\x03\x04\x05").decode() + "\n")
    assert note.text == "text\n"
    (line,) = note.signatures
    assert (line.name, line.key_id, line.signature) == ("a", b"\x01\x02\x03\x04", b"\x05")
    with raises_code("checkpoint.malformed"):
        parse_note("text\n\n— a " + base64.b64encode(b"\x01\x02\x03\x04").decode() + "\n")


@pytest.mark.parametrize(
    "note",
    [
        "te\x00xt\n\n— a AAAAAAA=\n",  # NUL
        "te\x0dxt\n\n— a AAAAAAA=\n",  # carriage return
        "text\n\n—a AAAAAAA=\n",  # no space after the em dash
        "text\n\n— a  AAAAAAA=\n",  # two spaces
        "text\n\n—  AAAAAAA=\n",  # no name
        "text\n\n— a AAAAAAA=\n\n",  # an empty line after the signatures
        "text\n\n— a ÿÿÿÿ\n",  # not ASCII base64
    ],
)
def test_more_malformed_notes(note: str) -> None:
    with raises_code("checkpoint.malformed") as caught:
        parse_note(note)
    assert caught.value.message
    assert caught.value.exit_code == 2


def test_non_utf8_bytes_are_malformed_with_a_reason() -> None:
    with raises_code("checkpoint.malformed") as caught:
        parse_note(b"t\xff\n\n\xe2\x80\x94 a AAAAAAA=\n")
    assert caught.value.message


def test_verified_note_fields() -> None:
    note = _signed("hello\n", ("witness.example", OTHER), (ORIGIN, KEY), ("other", KEY))
    result = verify_note(note, [_verifier(ORIGIN, KEY)])
    assert (result.text, result.verified_by, result.ignored_signatures) == (
        "hello\n",
        (_label(ORIGIN, KEY),),
        2,
    )


def test_a_name_or_key_id_alone_does_not_make_a_signature_trusted() -> None:
    text = "hello\n"
    key_id = KEY.public_key.key_id_c2sp(ORIGIN)
    # the trusted name with another key ID, and the trusted key ID under another name
    lines = [
        note_signature_line(ORIGIN, b"\x00\x00\x00\x00", KEY.sign(text.encode())),
        note_signature_line("other", key_id, KEY.sign(text.encode())),
    ]
    with raises_code("checkpoint.no_trusted_signature") as caught:
        verify_note(format_note(text, lines), [_verifier(ORIGIN, KEY)])
    assert caught.value.details == {"signatures": [f"{ORIGIN}+00000000", f"other+{key_id.hex()}"]}
    assert caught.value.message


def test_two_different_signatures_by_one_trusted_key_are_malformed() -> None:
    text = "hello\n"
    key_id = KEY.public_key.key_id_c2sp(ORIGIN)
    good = note_signature_line(ORIGIN, key_id, KEY.sign(text.encode()))
    other = note_signature_line(ORIGIN, key_id, KEY.sign(b"something else"))
    with raises_code("checkpoint.malformed") as caught:
        verify_note(format_note(text, [good, other]), [_verifier(ORIGIN, KEY)])
    assert caught.value.message


def test_a_bad_trusted_signature_names_the_key() -> None:
    text = "hello\n"
    bad = note_signature_line(ORIGIN, KEY.public_key.key_id_c2sp(ORIGIN), b"\x01" * 64)
    with raises_code("checkpoint.signature_bad") as caught:
        verify_note(format_note(text, [bad]), [_verifier(ORIGIN, KEY)])
    assert caught.value.details == {"key": _label(ORIGIN, KEY)}
    assert caught.value.message
    # a signature of the wrong length from a trusted key is a bad signature too
    short = note_signature_line(ORIGIN, KEY.public_key.key_id_c2sp(ORIGIN), b"\x01" * 10)
    with raises_code("checkpoint.signature_bad"):
        verify_note(format_note(text, [short]), [_verifier(ORIGIN, KEY)])


def test_an_empty_trust_set_is_refused_for_any_note() -> None:
    with raises_code("usage.invalid") as caught:
        verify_note("not even a note", [])
    assert caught.value.message
    with raises_code("usage.invalid"):
        check_checkpoint("not even a note", iter([]))


def test_note_builders() -> None:
    key_id = b"\x01\x02\x03\x04"
    assert note_signature_line("a", key_id, b"\x05") == "— a AQIDBAU=\n"
    assert format_note("t\n", ["— a AQIDBAU=\n", "— b AQIDBAU=\n"]) == (
        "t\n\n— a AQIDBAU=\n— b AQIDBAU=\n"
    )
    calls: tuple[Callable[[], object], ...] = (
        lambda: note_signature_line("a", b"\x00" * 5, b""),
        lambda: format_note("t", ["— a AQIDBAU=\n"]),
    )
    for call in calls:
        with raises_code("usage.invalid") as caught:
            call()
        assert caught.value.message


# --- checkpoints ------------------------------------------------------------------------------


def test_checkpoint_body_is_the_spec_text() -> None:
    encoded = base64.b64encode(ROOT).decode()
    assert checkpoint_body(ORIGIN, 0, ROOT) == f"{ORIGIN}\n0\n{encoded}\n"
    assert checkpoint_body(ORIGIN, 7, ROOT, ["a", "b c"]) == f"{ORIGIN}\n7\n{encoded}\na\nb c\n"
    calls: tuple[Callable[[], object], ...] = (
        lambda: checkpoint_body("o\n", 1, ROOT),
        lambda: checkpoint_body("o", 1, ROOT, [""]),
        lambda: checkpoint_body("o", 1, ROOT, ["a\nb"]),
        lambda: checkpoint_body("o", 1, ROOT + b"\x00"),
    )
    for call in calls:
        with raises_code("usage.invalid") as caught:
            call()
        assert caught.value.message


def test_checkpoint_sizes_up_to_2_64_minus_1() -> None:
    encoded = base64.b64encode(ROOT).decode()
    top = (1 << 64) - 1
    assert parse_checkpoint_body(f"o\n{top}\n{encoded}\n").tree_size == top
    assert parse_checkpoint_body(f"o\n0\n{encoded}\n").tree_size == 0
    assert parse_checkpoint_body(f"o\n10\n{encoded}\nx\n").tree_size == 10
    for size in (str(1 << 64), "1" + "0" * 20, "+1", " 1", "1 ", "0x1", "00"):
        with raises_code("checkpoint.malformed") as caught:
            parse_checkpoint_body(f"o\n{size}\n{encoded}\n")
        assert caught.value.message


def test_checkpoint_body_fields() -> None:
    encoded = base64.b64encode(ROOT).decode()
    body = parse_checkpoint_body(f"{ORIGIN}\n5\n{encoded}\next one\next two\n")
    assert (body.origin, body.tree_size, body.root_hash, body.extensions) == (
        ORIGIN,
        5,
        ROOT,
        ("ext one", "ext two"),
    )
    for text in (
        f"{ORIGIN}\n5\n{encoded}",
        f"{ORIGIN}\n5\n",
        f"\n5\n{encoded}\n",
        f"{ORIGIN}\n5\n{encoded[:-4]}\n",
        f"{ORIGIN}\n5\n{encoded}x\n",
    ):
        with raises_code("checkpoint.malformed") as caught:
            parse_checkpoint_body(text)
        assert caught.value.message


def test_verify_checkpoint_fields_and_origin_pin() -> None:
    note = _signed(checkpoint_body(ORIGIN, 5, ROOT, ["e"]), ("w", OTHER), (ORIGIN, KEY))
    verified = verify_checkpoint(note, [_verifier(ORIGIN, KEY)])
    assert verified.verified_by == (_label(ORIGIN, KEY),)
    assert verified.ignored_signatures == 1
    assert verified.checkpoint.origin == ORIGIN
    assert verify_checkpoint(note, [_verifier(ORIGIN, KEY)], origin=ORIGIN) == verified
    with raises_code("checkpoint.origin_mismatch") as caught:
        verify_checkpoint(note, [_verifier(ORIGIN, KEY)], origin="log.example/2")
    assert caught.value.details == {"expected": "log.example/2", "actual": ORIGIN}
    assert caught.value.message


def test_a_signed_note_that_is_not_a_checkpoint_is_malformed() -> None:
    note = _signed("just text\n", (ORIGIN, KEY))
    with raises_code("checkpoint.malformed"):
        verify_checkpoint(note, [_verifier(ORIGIN, KEY)])


def test_check_checkpoint_document() -> None:
    body = checkpoint_body(ORIGIN, 5, ROOT, ["e"])
    note = _signed(body, ("w", OTHER), (ORIGIN, KEY))
    result = check_checkpoint(note, [_verifier(ORIGIN, KEY)], origin=ORIGIN, source="c.txt")
    assert result.to_json() == {
        "kind": "checkpoint",
        "source": "c.txt",
        "verdict": "verified",
        "verified": True,
        "origin": ORIGIN,
        "tree_size": 5,
        "root_hash": ROOT.hex(),
        "root_hash_base64": base64.b64encode(ROOT).decode(),
        "extensions": ["e"],
        "verified_by": [_label(ORIGIN, KEY)],
        "ignored_signatures": 1,
        "steps": [
            {"name": "note", "status": "ok", "details": {"signatures": 2}},
            {
                "name": "signature",
                "status": "ok",
                "details": {"verified_by": [_label(ORIGIN, KEY)]},
            },
            {"name": "checkpoint", "status": "ok"},
        ],
    }


@pytest.mark.parametrize(
    ("note", "verdict", "code", "failed_step"),
    [
        ("no note at all", "unreadable", "checkpoint.malformed", "note"),
        ("bad", "failed", "checkpoint.signature_bad", "signature"),
        ("untrusted", "failed", "checkpoint.no_trusted_signature", "signature"),
        ("not a checkpoint", "unreadable", "checkpoint.malformed", "checkpoint"),
        ("other origin", "failed", "checkpoint.origin_mismatch", "checkpoint"),
    ],
)
def test_check_checkpoint_failures(note: str, verdict: str, code: str, failed_step: str) -> None:
    body = checkpoint_body("log.example/2" if note == "other origin" else ORIGIN, 5, ROOT)
    key_id = KEY.public_key.key_id_c2sp(ORIGIN)
    text = {
        "no note at all": "no note at all",
        "bad": format_note(body, [note_signature_line(ORIGIN, key_id, b"\x01" * 64)]),
        "untrusted": _signed(body, ("w", OTHER)),
        "not a checkpoint": _signed("text\n", (ORIGIN, KEY)),
        "other origin": _signed(body, (ORIGIN, KEY)),
    }[note]
    result = check_checkpoint(text, [_verifier(ORIGIN, KEY)], origin=ORIGIN)
    document = result.to_json()
    assert (document["kind"], document["source"]) == ("checkpoint", None)
    assert (result.verdict, result.code, result.failed_step.name) == (  # type: ignore[union-attr]
        verdict,
        code,
        failed_step,
    )
    assert "tree_size" not in document


# --- issue 36: refusals the first run left unjudged ------------------------------------------


@pytest.mark.parametrize("name", ["a b", "", "a\u00a0b"])
def test_a_verifier_key_whose_name_is_not_a_key_name_is_refused(name: str) -> None:
    # the key ID is the right one for that name: only the name rule refuses it
    raw = KEY.public_key.raw
    encoded = base64.b64encode(b"\x01" + raw).decode()
    vkey = f"{name}+{key_id_c2sp(name, raw).hex()}+{encoded}"
    with raises_code("key.vkey_malformed") as caught:
        parse_verifier_key(vkey)
    assert caught.value.message


def test_every_malformed_verifier_key_says_why() -> None:
    vkey = verifier_key_string(ORIGIN, KEY.public_key)
    name, hex_id, encoded = vkey.split("+", 2)
    other_id = KEY.public_key.key_id_c2sp("other").hex()
    for bad in (f"{name}+{hex_id}", f"{name}+{other_id}+{encoded}"):
        with raises_code("key.vkey_malformed") as caught:
            parse_verifier_key(bad)
        assert isinstance(caught.value.message, str)
        assert caught.value.message


def test_a_note_whose_text_is_one_empty_line_is_read() -> None:
    # signed-note splits at the last blank line: "\n\n— ..." is the text "\n" and a signature
    # (Go's note.Open reads it so); it is no checkpoint, which the body parse then refuses
    note = parse_note("\n\n— a AAAAAAA=\n")
    assert (note.text, len(note.signatures)) == ("\n", 1)
    signed = _signed("\n", (ORIGIN, KEY))
    assert verify_note(signed, [_verifier(ORIGIN, KEY)]).text == "\n"
    with raises_code("checkpoint.malformed"):
        verify_checkpoint(signed, [_verifier(ORIGIN, KEY)])


@pytest.mark.parametrize(
    "note",
    [
        "text\n",  # no blank line at all
        "text\n\n— a AQIDBA==\n",  # a key ID and no signature byte
        "text\n\n— a AAAAAAA=",  # no final newline
    ],
)
def test_malformed_notes_say_why(note: str) -> None:
    with raises_code("checkpoint.malformed") as caught:
        parse_note(note)
    assert isinstance(caught.value.message, str)
    assert caught.value.message


def test_check_checkpoint_keeps_the_source_of_a_failed_note() -> None:
    note = _signed(checkpoint_body(ORIGIN, 5, ROOT), ("w", OTHER))
    document = check_checkpoint(note, [_verifier(ORIGIN, KEY)], source="c.txt").to_json()
    assert (document["verdict"], document["source"]) == ("failed", "c.txt")
    unreadable = check_checkpoint("no note", [_verifier(ORIGIN, KEY)], source="c.txt").to_json()
    assert (unreadable["verdict"], unreadable["source"]) == ("unreadable", "c.txt")
    with raises_code("usage.invalid") as caught:
        check_checkpoint(note, [], source="c.txt")
    assert isinstance(caught.value.message, str)
    assert caught.value.message
