"""Anchor receipts: the peer's checks (its verify_anchor_receipt is the oracle), and ours beyond.

Receipt-level checks need no TSA; the token checks use a real local TSA (openssl).
"""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.anchor.receipt import RECEIPT_FIELDS, STH_FIELDS, verify_anchor_receipt
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.verify.anchor_tsa import (
    LOG_KEY,
    OPENSSL,
    LocalTsa,
    TestCa,
    receipt_for,
    signed_sth,
    sth_bytes,
)

aigentsy_verify = pytest.importorskip("aigentsy_verify")


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCa:
    if OPENSSL is None:
        pytest.skip("the openssl CLI is not installed")
    return TestCa(tmp_path_factory.mktemp("anchor-pki"))


@pytest.fixture(scope="module")
def tsa(ca: TestCa) -> LocalTsa:
    return ca.tsa("anchor-tsa")


def _peer(receipt: dict[str, Any]) -> bool:
    ok, _details = aigentsy_verify.verify_anchor_receipt(copy.deepcopy(receipt))
    return bool(ok)


def _receipt(**overrides: Any) -> dict[str, Any]:
    return receipt_for(signed_sth(), b"not checked without a TSA certificate", **overrides)


# -- the peer's checks ------------------------------------------------------------------------


def _without(field: str) -> dict[str, Any]:
    receipt = _receipt()
    del receipt[field]
    return receipt


def _without_sth(field: str) -> dict[str, Any]:
    receipt = _receipt()
    del receipt["sth"][field]
    return receipt


PEER_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("well-formed", _receipt(), "anchor.token_unchecked"),
    *[(f"no {f}", _without(f), "anchor.malformed") for f in RECEIPT_FIELDS],
    *[(f"no sth.{f}", _without_sth(f), "anchor.malformed") for f in STH_FIELDS],
    ("sha-512 named", _receipt(sth_digest_algorithm="SHA-512"),
     "anchor.digest_algorithm_unsupported"),
    ("sha256 lowercase", _receipt(sth_digest_algorithm="sha256"),
     "anchor.digest_algorithm_unsupported"),
    ("digest changed", _receipt(sth_digest="0" * 64), "anchor.digest_mismatch"),
    ("digest uppercase", _receipt(sth_digest=_receipt()["sth_digest"].upper()),
     "anchor.digest_mismatch"),
    ("status rejection", _receipt(tsa_status="rejection"), "anchor.tsa_not_granted"),
    ("status waiting", _receipt(tsa_status="waiting"), "anchor.tsa_not_granted"),
    ("no token", receipt_for(signed_sth(), None), "anchor.token_unchecked"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("receipt", "code"), [c[1:] for c in PEER_CASES], ids=[c[0] for c in PEER_CASES]
)
def test_peer_checks_and_ours_agree(receipt: dict[str, Any], code: str) -> None:
    """Every receipt the peer refuses is refused here (own code); none it accepts is verified
    here without a TSA certificate (fail closed: ``unanchored``)."""
    result = verify_anchor_receipt(receipt)
    assert result.code == code
    assert not result.verified
    peer_ok = _peer(receipt)
    assert peer_ok is (result.verdict == "unanchored")
    assert result.exit_code == (2 if code == "anchor.malformed" else 1)
    if result.verdict != "unreadable":
        _, details = aigentsy_verify.verify_anchor_receipt(copy.deepcopy(receipt))
        ours = result.subject["peer"]
        for key in ("fields_present", "sth_digest_match", "tsa_granted", "tsr_present"):
            if key in details:
                assert ours[key] is details[key], key


def test_receipt_that_is_not_an_object_is_unreadable() -> None:
    values: list[object] = [[], "receipt", None, 3]
    for value in values:
        result = verify_anchor_receipt(value)
        assert (result.verdict, result.code) == ("unreadable", "anchor.malformed")


@pytest.mark.parametrize("field", ["sth_digest", "sth_digest_algorithm", "tsa_status"])
def test_mistyped_fields_are_malformed(field: str) -> None:
    assert verify_anchor_receipt(_receipt(**{field: 1})).code == "anchor.malformed"
    assert verify_anchor_receipt(_receipt(tsr_base64=7)).code == "anchor.malformed"
    sth_not_object = _receipt(sth=["tree_size"])
    assert verify_anchor_receipt(sth_not_object).code == "anchor.malformed"


def test_every_failing_step_is_reported_not_only_the_first() -> None:
    result = verify_anchor_receipt(_receipt(sth_digest="0" * 64, tsa_status="rejection"))
    failed = [(s.name, s.code) for s in result.steps if s.status == "failed"]
    assert failed == [
        ("sth_digest", "anchor.digest_mismatch"),
        ("tsa_status", "anchor.tsa_not_granted"),
    ]
    assert result.code == "anchor.digest_mismatch"


def test_expected_sth_must_be_the_anchored_one() -> None:
    receipt = _receipt()
    same = verify_anchor_receipt(receipt, expected_sth=signed_sth()).step("sth_match")
    assert same is not None
    assert same.status == "ok"
    other = verify_anchor_receipt(receipt, expected_sth=signed_sth(tree_size=8))
    assert other.code == "anchor.sth_mismatch"


def test_log_key_checks_the_tree_head_signature() -> None:
    receipt = _receipt()
    good = verify_anchor_receipt(receipt, log_key=LOG_KEY.public_key)
    assert good.step("sth_signature").status == "ok"  # type: ignore[union-attr]
    stranger = derive_test_key("TEST-ONLY someone else").public_key
    bad = verify_anchor_receipt(receipt, log_key=stranger)
    assert bad.code == "treehead.signature_bad"
    no_log_id = copy.deepcopy(receipt)
    del no_log_id["sth"]["log_id"]
    step = verify_anchor_receipt(no_log_id, log_key=LOG_KEY.public_key).step("sth_signature")
    assert step is not None
    assert step.code == "treehead.malformed"


def test_importing_anchor_does_not_import_cryptography() -> None:
    """The bundle path may import affidavit.verify.anchor.receipt: it must stay light
    (docs/adr/0003)."""
    code = (
        "import sys, affidavit.verify.anchor.receipt as a; "
        "a.verify_anchor_receipt({}); "
        "print(sorted(m for m in sys.modules if m.startswith(('cryptography', "
        "'affidavit.verify.anchor.rfc3161'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


# -- the token, with a real TSA ---------------------------------------------------------------


def test_real_receipt_verifies_and_the_peer_agrees(tsa: LocalTsa) -> None:
    sth = signed_sth()
    receipt = receipt_for(sth, tsa.stamp(sth_bytes(sth)))
    assert _peer(receipt)
    result = verify_anchor_receipt(
        receipt,
        tsa_certs=[tsa.cert.read_bytes()],
        ca_certs=[tsa.ca.cert.read_bytes()],
        log_key=LOG_KEY.public_key,
        expected_sth=sth,
    )
    assert result.verified, result.to_json()
    assert result.exit_code == 0
    assert result.subject["token"]["gen_time"].endswith("Z")
    assert [s.status for s in result.steps] == ["ok"] * 6
    assert result.to_json()["token"]["chained_to"] == "CN=Affidavit Test CA"


def test_without_tsa_cert_a_real_receipt_is_unanchored(tsa: LocalTsa) -> None:
    sth = signed_sth()
    result = verify_anchor_receipt(receipt_for(sth, tsa.stamp(sth_bytes(sth))))
    assert (result.verdict, result.code, result.exit_code) == (
        "unanchored",
        "anchor.token_unchecked",
        1,
    )
    assert result.step("timestamp_token").status == "not_checked"  # type: ignore[union-attr]


def test_token_over_another_tree_head_fails_though_the_peer_passes(tsa: LocalTsa) -> None:
    """The receipt's sth and sth_digest are consistent, but the TSA stamped another head."""
    stamped, claimed = signed_sth(tree_size=7), signed_sth(tree_size=9)
    receipt = receipt_for(claimed, tsa.stamp(sth_bytes(stamped)))
    assert _peer(receipt)  # the peer never opens the token
    result = verify_anchor_receipt(receipt, tsa_certs=[tsa.cert.read_bytes()])
    assert result.code == "anchor.imprint_mismatch"


def test_receipt_checks_still_fail_with_a_good_token(tsa: LocalTsa) -> None:
    sth = signed_sth()
    receipt = receipt_for(sth, tsa.stamp(sth_bytes(sth)), tsa_status="rejection")
    result = verify_anchor_receipt(receipt, tsa_certs=[tsa.cert.read_bytes()])
    assert result.code == "anchor.tsa_not_granted"
    assert result.step("timestamp_token").status == "ok"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("tsr", "code"),
    [
        (None, "anchor.token_absent"),
        ("", "anchor.token_absent"),
        ("not base64!", "anchor.token_malformed"),
        (base64.b64encode(b"\x30\x00").decode(), "anchor.token_malformed"),
    ],
)
def test_token_absent_or_unreadable(tsa: LocalTsa, tsr: str | None, code: str) -> None:
    receipt = receipt_for(signed_sth(), None)
    if tsr is not None:
        receipt["tsr_base64"] = tsr
    result = verify_anchor_receipt(receipt, tsa_certs=[tsa.cert.read_bytes()])
    assert result.code == code


def test_result_json_round_trips(tsa: LocalTsa) -> None:
    sth = signed_sth()
    result = verify_anchor_receipt(
        receipt_for(sth, tsa.stamp(sth_bytes(sth))), tsa_certs=[tsa.cert.read_bytes()]
    )
    document = json.loads(json.dumps(result.to_json()))
    assert document["verdict"] == "verified"
    assert document["peer"] == {
        "fields_present": True,
        "sth_digest_match": True,
        "tsa_granted": True,
        "tsr_present": True,
    }


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.sampled_from([*RECEIPT_FIELDS, "tsr_base64"]), _JSON, max_size=10))
@settings(max_examples=200, deadline=None)
def test_any_receipt_shape_gives_a_verdict_never_an_exception(receipt: dict[str, Any]) -> None:
    result = verify_anchor_receipt(receipt)
    assert result.verdict in ("unanchored", "failed", "unreadable")
    assert result.code is not None
    assert result.code.startswith("anchor.")
    json.dumps(result.to_json())
