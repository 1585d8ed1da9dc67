"""Golden anchor receipts (vectors/anchor/): real RFC 3161 tokens, frozen, for a user's clone.

The receipts were made once by a local openssl TSA (``UPDATE_ANCHOR_VECTORS=1`` with this file
makes a new set: fresh keys, fresh genTime, so the bytes change; that is why it is not part of
``UPDATE_GOLDENS``). Checking them needs neither openssl nor the network; the checks are
time-independent because validity is judged at the token's genTime. Each vector names the code
that must catch it, and whether the peer (aigentsy-verify 1.6.3) accepts the receipt.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify.anchor.receipt import verify_anchor_receipt
from affidavit.verify.anchor.rfc3161 import parse_token

from tests.conftest import VECTORS
from tests.verify.anchor_tsa import LOG_KEY, TestCa, receipt_for, signed_sth, sth_bytes

FOLDER = VECTORS / "anchor"
UPDATE = os.environ.get("UPDATE_ANCHOR_VECTORS") == "1"
SHA256_OID = bytes.fromhex("0609608648016503040201")
SHA512_256_OID = bytes.fromhex("0609608648016503040206")


def _manifest() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FOLDER / "manifest.json").read_text())
    return document


def _cases() -> list[dict[str, Any]]:
    if UPDATE or not (FOLDER / "manifest.json").exists():
        return []
    return list(_manifest()["vectors"])


@pytest.mark.parametrize("vector", _cases(), ids=lambda v: v["id"])
def test_anchor_vector(vector: dict[str, Any]) -> None:
    receipt = json.loads((FOLDER / vector["input"]).read_text())
    result = verify_anchor_receipt(
        receipt,
        tsa_certs=[(FOLDER / p).read_bytes() for p in vector["tsa_certs"]],
        ca_certs=[(FOLDER / p).read_bytes() for p in vector["ca_certs"]],
        source=vector["input"],
    )
    expected = vector["expected"]
    if expected == "verified":
        assert result.verified, result.to_json()
        assert result.subject["token"]["gen_time"] == vector["gen_time"]
    else:
        assert result.code == expected, result.to_json()
        assert not result.verified
    aigentsy_verify = pytest.importorskip("aigentsy_verify")
    peer_ok, _ = aigentsy_verify.verify_anchor_receipt(copy.deepcopy(receipt))
    assert peer_ok is vector["peer_ok"]


def test_anchor_vectors_are_listed() -> None:
    if UPDATE:
        pytest.skip("regenerating")
    manifest = _manifest()
    listed = {v["input"] for v in manifest["vectors"]}
    on_disk = {p.name for p in FOLDER.glob("receipt-*.json")}
    assert listed == on_disk
    assert {v["expected"] for v in manifest["vectors"]} >= {
        "verified", "anchor.token_unchecked", "anchor.digest_mismatch", "anchor.tsa_not_granted",
        "anchor.imprint_mismatch", "anchor.tsa_signature_invalid", "anchor.tsa_cert_mismatch",
        "anchor.message_digest_mismatch", "anchor.imprint_algorithm_unsupported",
        "anchor.tsa_chain_invalid", "anchor.malformed", "anchor.token_malformed",
        "anchor.token_absent",
    }  # fmt: skip


# -- the generator (UPDATE_ANCHOR_VECTORS=1) ---------------------------------------------------


@pytest.mark.generator
@pytest.mark.skipif(not UPDATE, reason="set UPDATE_ANCHOR_VECTORS=1 to make a new vector set")
def test_generate_anchor_vectors(tmp_path: Path) -> None:
    ca = TestCa(tmp_path / "ca")
    tsa = ca.tsa("Affidavit Test TSA")
    tsa_ec = ca.tsa("Affidavit Test TSA (EC)", key="ec", ess="sha1")
    stranger = TestCa(tmp_path / "stranger", name="Stranger CA")
    other = stranger.tsa("Stranger TSA")
    if FOLDER.exists():
        shutil.rmtree(FOLDER)
    FOLDER.mkdir(parents=True)
    for name, path in (("ca.pem", ca.cert), ("tsa.pem", tsa.cert), ("tsa-ec.pem", tsa_ec.cert),
                       ("stranger-ca.pem", stranger.cert)):  # fmt: skip
        shutil.copyfile(path, FOLDER / name)
    sth = signed_sth(tree_size=42)
    data = sth_bytes(sth)
    good = tsa.stamp(data)
    vectors: list[dict[str, Any]] = []

    def add(vid: str, receipt: dict[str, Any], expected: str, *, certs: tuple[str, ...] = (
            "tsa.pem",), cas: tuple[str, ...] = ("ca.pem",), clause: str) -> None:  # fmt: skip
        name = f"receipt-{vid}.json"
        (FOLDER / name).write_text(json.dumps(receipt, indent=2) + "\n")
        result = verify_anchor_receipt(
            receipt,
            tsa_certs=[(FOLDER / c).read_bytes() for c in certs],
            ca_certs=[(FOLDER / c).read_bytes() for c in cas],
        )
        assert (result.code or "verified") == expected, (vid, result.to_json())
        import aigentsy_verify

        entry = {"id": vid, "input": name, "tsa_certs": list(certs), "ca_certs": list(cas),
                 "expected": expected, "peer_ok": aigentsy_verify.verify_anchor_receipt(
                     copy.deepcopy(receipt))[0], "clause": clause}  # fmt: skip
        if result.verified:
            entry["gen_time"] = result.subject["token"]["gen_time"]
        vectors.append(entry)

    add("valid-rsa-sha256", receipt_for(sth, good), "verified", clause="RFC 3161 §2.4.2")
    add("valid-ec-sha384-essv1-carried-cert",
        receipt_for(sth, tsa_ec.stamp(data, digest="sha384", with_cert=True)), "verified",
        certs=("tsa-ec.pem",), clause="RFC 3161 §2.4.2, RFC 2634 §5.4")  # fmt: skip
    add("valid-without-tsa-cert", receipt_for(sth, good), "anchor.token_unchecked", certs=(),
        cas=(), clause="docs/adr/0010-rfc3161-tokens.md (fail closed)")  # fmt: skip
    add("no-token", receipt_for(sth, None), "anchor.token_absent", clause="RFC 3161 §2.4.2")
    add("digest-mismatch", receipt_for(sth, good, sth_digest="0" * 64), "anchor.digest_mismatch",
        clause="docs/formats.md §1 (py-compact)")  # fmt: skip
    add("tsa-status-rejection", receipt_for(sth, good, tsa_status="rejection"),
        "anchor.tsa_not_granted", clause="RFC 3161 §2.4.2 PKIStatus")  # fmt: skip
    claimed = signed_sth(tree_size=43)
    add("imprint-other-tree-head", receipt_for(claimed, good), "anchor.imprint_mismatch",
        clause="RFC 3161 §2.4.2 messageImprint")  # fmt: skip
    token = parse_token(good)
    signature_at = good.index(token.signature) + len(token.signature) // 2
    flipped = good[:signature_at] + bytes([good[signature_at] ^ 1]) + good[signature_at + 1 :]
    add("signature-flipped", receipt_for(sth, flipped), "anchor.tsa_signature_invalid",
        clause="RFC 5652 §5.4")  # fmt: skip
    add("other-tsa", receipt_for(sth, other.stamp(data)), "anchor.tsa_cert_mismatch",
        clause="RFC 5652 §5.3, RFC 5816")  # fmt: skip
    relabelled = good.replace(
        token.tst_info, token.tst_info.replace(SHA256_OID, SHA512_256_OID)
    )  # the imprint's hash algorithm, inside the signed TSTInfo
    add("imprint-relabelled-sha512-256", receipt_for(sth, relabelled),
        "anchor.message_digest_mismatch", clause="RFC 5652 §5.4 messageDigest")  # fmt: skip
    add(
        "sha1-imprint",
        receipt_for(sth, tsa.stamp(data, digest="sha1")),
        "anchor.imprint_algorithm_unsupported",
        clause="docs/adr/0010-rfc3161-tokens.md",
    )
    add("chain-to-stranger-ca", receipt_for(sth, good), "anchor.tsa_chain_invalid",
        cas=("stranger-ca.pem",), clause="RFC 5280 §6")  # fmt: skip
    missing = receipt_for(sth, good)
    del missing["anchored_at"]
    add("missing-anchored-at", missing, "anchor.malformed", clause="aigentsy-verify 1.6.3 fields")
    add("token-garbage", receipt_for(sth, b"\x30\x03\x02\x01\x00"), "anchor.token_malformed",
        clause="RFC 3161 §2.4.2")  # fmt: skip
    manifest = {
        "description": "Anchor receipts with real RFC 3161 tokens from a local openssl TSA "
        "(test CA and TSA certificates here; no private keys). Generated by "
        "tests/verify/anchor/test_anchor_vectors.py with UPDATE_ANCHOR_VECTORS=1; checked offline "
        "at the token's genTime. peer_ok is aigentsy-verify 1.6.3's verify_anchor_receipt.",
        "log_key_base64": LOG_KEY.public_key.b64,
        "vectors": vectors,
    }
    (FOLDER / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
