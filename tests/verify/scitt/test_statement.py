"""Signed and Transparent Statements, receipts and the report (verify/scitt): what verifies, and
every single change refused with its exact code."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.scitt.cbor import decode, encode
from affidavit.verify.scitt.keys import CoseKey, parse_issuer_binding
from affidavit.verify.scitt.receipt import parse_receipt, verify_receipt
from affidavit.verify.scitt.report import verify_transparent_statement
from affidavit.verify.scitt.statement import parse_statement

from tests.verify.scitt.support import (
    ISSUER_COSE,
    LOG_COSE,
    OTHER,
    edit,
    statement,
    transparent,
    with_receipts,
)

OTHER_COSE = CoseKey.from_ed25519(OTHER.public_key, "other")


def verify(data: bytes, *, issuer: bool = True) -> Any:
    return verify_transparent_statement(
        data, log_keys=[LOG_COSE], issuer_keys=[ISSUER_COSE] if issuer else [], source="ts"
    )


def test_a_transparent_statement_verifies_and_its_leaf_is_recomputable() -> None:
    signed = statement()
    ts, _ = transparent(signed)
    report = verify(ts)
    assert report.verdict == "verified", report.to_json()
    assert [s.status for s in report.steps] == ["ok", "ok", "ok"]
    parsed = parse_statement(ts)
    # the leaf entry is SHA-256 of the statement as registered: unprotected header emptied
    assert parsed.registered_bytes == signed
    assert parsed.leaf_entry == hashlib.sha256(signed).digest()
    check = report.subject["receipts"][0]
    assert (check["tree_size"], check["leaf_index"]) == (6, 3)
    assert report.to_json()["statement"]["entry_id"] == hashlib.sha256(signed).hexdigest()


def test_without_an_issuer_key_the_receipt_alone_is_relied_on() -> None:
    ts, _ = transparent()
    report = verify(ts, issuer=False)
    assert report.verdict == "verified"
    assert report.steps[1].status == "not_checked"


def test_statement_signature_under_another_key_fails() -> None:
    ts, _ = transparent()
    report = verify_transparent_statement(ts, log_keys=[LOG_COSE], issuer_keys=[OTHER_COSE])
    assert report.verdict == "failed"
    assert report.steps[1].code == "scitt.signature_invalid"
    assert report.exit_code == 1


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@pytest.mark.parametrize(
    ("name", "change", "step", "code"),
    [
        (
            "payload",
            lambda p: p.__setitem__(2, b'{"artefact": 2}'),
            "statement_signature",
            "scitt.signature_invalid",
        ),
        (
            "signature",
            lambda p: p.__setitem__(3, _flip(p[3], 5)),
            "statement_signature",
            "scitt.signature_invalid",
        ),
        (
            "subject",
            lambda p: p[0][15].__setitem__(2, "pkg:other@1"),
            "statement_signature",
            "scitt.signature_invalid",
        ),
    ],
)
def test_a_changed_statement_fails_both_signature_and_leaf(
    name: str, change: Any, step: str, code: str
) -> None:
    ts, _ = transparent()
    tampered = edit(ts, change)
    report = verify(tampered)
    assert report.verdict == "failed", name
    failed = {s.name: s.code for s in report.steps if s.status == "failed"}
    assert failed[step] == code
    # the leaf moved too: the receipt no longer proves it (with or without the issuer key)
    assert failed["receipts"] == "scitt.receipt_signature_invalid"
    assert verify(tampered, issuer=False).exit_code == 1


def _receipt_edit(change: Any) -> bytes:
    ts, receipt = transparent()
    return with_receipts(edit(ts, lambda p: None), [edit(receipt, change)])


def _proof_edit(change: Any) -> Any:
    def apply(parts: list[Any]) -> None:
        proof = decode(parts[1][396][-1][0], what="proof")
        change(proof)
        parts[1][396][-1][0] = encode(proof)

    return apply


@pytest.mark.parametrize(
    ("name", "change", "code"),
    [
        (
            "receipt signature",
            lambda p: p.__setitem__(3, _flip(p[3], 0)),
            "scitt.receipt_signature_invalid",
        ),
        (
            "a path hash",
            _proof_edit(lambda q: q[2].__setitem__(0, _flip(q[2][0], 31))),
            "scitt.receipt_signature_invalid",
        ),
        (
            "the leaf index",
            _proof_edit(lambda q: q.__setitem__(1, q[1] - 1)),
            "scitt.receipt_signature_invalid",
        ),
        # 6 -> 9: the path no longer fits (RFC 9162 §2.1.3.2); 6 -> 7 would rebuild the same
        # root (the size is bound only as far as it shapes the path: docs/formats.md "SCITT")
        (
            "the tree size",
            _proof_edit(lambda q: q.__setitem__(0, q[0] + 3)),
            "scitt.receipt_malformed",
        ),
        ("a path hash dropped", _proof_edit(lambda q: q[2].pop()), "scitt.receipt_malformed"),
        (
            "the root attached",
            lambda p: p.__setitem__(2, b"\x00" * 32),
            "scitt.receipt_payload_attached",
        ),
        ("vds", lambda p: p[0].__setitem__(395, 2), "scitt.receipt_vds_unsupported"),
        ("the kid", lambda p: p[0].__setitem__(4, b"\x01" * 32), "scitt.receipt_key_untrusted"),
        (
            "the issued-at claim",
            lambda p: p[0][15].__setitem__(6, 1),
            "scitt.receipt_signature_invalid",
        ),
        ("alg", lambda p: p[0].__setitem__(1, -35), "scitt.alg_unsupported"),
        ("alg a float", lambda p: p[0].__setitem__(1, -8.0), "scitt.alg_unsupported"),
        ("a critical header", lambda p: p[0].update({2: [99], 99: 1}), "scitt.crit_unsupported"),
        ("no proofs", lambda p: p[1].__setitem__(396, {-1: []}), "scitt.receipt_malformed"),
    ],
)
def test_a_changed_receipt_is_refused_with_its_code(name: str, change: Any, code: str) -> None:
    report = verify(_receipt_edit(change))
    assert report.verdict == "failed", name
    assert report.steps[-1].name == "receipts"
    assert report.steps[-1].code == code, name
    assert report.exit_code == 1


def test_a_receipt_under_an_untrusted_key_is_not_verified() -> None:
    ts, _ = transparent()
    report = verify_transparent_statement(ts, log_keys=[OTHER_COSE], issuer_keys=[ISSUER_COSE])
    assert report.verdict == "failed"
    assert report.steps[-1].code == "scitt.receipt_key_untrusted"


@pytest.mark.parametrize("bound", [("https://acme.example",), ()])
def test_an_issuer_key_bound_to_other_issuers_is_a_mismatch(bound: tuple[str, ...]) -> None:
    # RFC 9943 §5.1.1.1: the key of the issuer the statement names (https://issuer.example);
    # the signature verifies under this key, which is not bound to that iss
    ts, _ = transparent()
    other = ISSUER_COSE.bound_to(bound)
    report = verify_transparent_statement(ts, log_keys=[LOG_COSE], issuer_keys=[other])
    assert (report.verdict, report.exit_code) == ("failed", 1)
    assert report.steps[1].code == "scitt.issuer_mismatch"
    # the same key bound to it as well, beside the other: verified
    both = [other, ISSUER_COSE]
    assert verify_transparent_statement(ts, log_keys=[LOG_COSE], issuer_keys=both).verified


def test_a_binding_is_read_strictly() -> None:
    assert parse_issuer_binding(b"https://a.example\nvendor\n", source="k.iss") == (
        "https://a.example",
        "vendor",
    )
    for data in (b"", b"a", b"a\n\n", b"a\na\n", b" a\n", b"a\t\n", b"\xff\n"):
        with pytest.raises(errors.UsageError):
            parse_issuer_binding(data, source="k.iss")


def test_no_trusted_log_key_is_usage_not_a_pass() -> None:
    ts, _ = transparent()
    with pytest.raises(errors.UsageError):
        verify_transparent_statement(ts, log_keys=[])


def test_the_receipt_proves_the_leaf_in_the_root() -> None:
    signed = statement()
    _, receipt = transparent(signed)
    check = verify_receipt(receipt, hashlib.sha256(signed).digest(), [LOG_COSE])
    parsed = parse_receipt(receipt)
    assert parsed.proofs[0].tree_size == check.tree_size
    assert leaf_hash(hashlib.sha256(signed).digest()) != check.root


@pytest.mark.parametrize(
    ("name", "change", "code"),
    [
        ("no claims", lambda p: p[0].pop(15), "scitt.claims_missing"),
        ("no sub", lambda p: p[0][15].pop(2), "scitt.claims_missing"),
        ("iss not text", lambda p: p[0][15].__setitem__(1, 7), "scitt.claims_missing"),
        ("alg ES384", lambda p: p[0].__setitem__(1, -35), "scitt.alg_unsupported"),
        ("no alg", lambda p: p[0].pop(1), "scitt.alg_unsupported"),
        ("alg a float", lambda p: p[0].__setitem__(1, -8.0), "scitt.alg_unsupported"),
        ("crit unknown", lambda p: p[0].update({2: [77], 77: 0}), "scitt.crit_unsupported"),
        ("crit absent label", lambda p: p[0].update({2: [78]}), "scitt.crit_unsupported"),
        ("crit unprotected", lambda p: p[1].update({2: [1]}), "scitt.crit_unsupported"),
        ("label in both", lambda p: p[1].update({1: -8}), "scitt.cose_malformed"),
        ("kid not bytes", lambda p: p[0].__setitem__(4, "k"), "scitt.header_invalid"),
        ("receipts not bstr", lambda p: p[1].update({394: [1]}), "scitt.header_invalid"),
        ("signature not bytes", lambda p: p.__setitem__(3, "sig"), "scitt.cose_malformed"),
    ],
)
def test_an_unreadable_statement_is_refused_with_its_code(
    name: str, change: Any, code: str
) -> None:
    bad = edit(statement(), change)
    with pytest.raises(errors.ScittError) as caught:
        parse_statement(bad)
    assert caught.value.code == code, name
    report = verify(bad)
    assert (report.verdict, report.steps[0].code, report.exit_code) == ("unreadable", code, 2)


def _duplicate_alg(parts: list[Any]) -> None:
    """The protected map with alg (1: -8) once more at its end: one more entry, same key."""
    header = encode(parts[0])
    parts[0] = bytes([header[0] + 1]) + header[1:] + b"\x01\x27"


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("untagged", lambda s: s[1:], "scitt.cose_malformed"),
        ("trailing", lambda s: s + b"\x00", "cbor.trailing_bytes"),
        ("duplicate protected key", lambda s: edit(s, _duplicate_alg), "cbor.duplicate_key"),
        (
            "indefinite unprotected",
            lambda s: s.replace(b"\xa0", b"\xbf\xff", 1),
            "cbor.indefinite_length",
        ),
    ],
)
def test_strict_cbor_refusals_are_unreadable(name: str, data: Any, code: str) -> None:
    bad = data(statement())
    report = verify(bad)
    assert report.verdict == "unreadable", name
    assert report.steps[0].code == code, name
