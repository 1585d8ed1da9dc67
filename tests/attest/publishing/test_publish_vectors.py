"""Golden vectors for publication (vectors/publication/, .well-known/): regenerate, byte-compare.

``UPDATE_GOLDENS=1 make vectors`` rewrites them. Every key here is TEST-ONLY, derived from a fixed
label with ``derive_test_key``. Each case's expected statuses are written down from the case's
construction (what was changed), not computed by the verifier under test.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from affidavit.verify.contracts.manifest import ENTRY_HASH_FIELDS, verify_manifest

from tests.attest.publishing.test_publish_support import (
    DEMO_KEY_ID,
    DEMO_KEY_LABEL,
    DEMO_PUBLISHER_ID,
    demo_key,
    make_contract,
    make_entry,
    make_manifest,
)
from tests.conftest import ROOT, VECTORS, assert_golden

OUT = VECTORS / "publication"
OK3 = ("ok", "ok", "ok")


def _bytes(document: Any) -> bytes:
    return (json.dumps(document, indent=2) + "\n").encode("ascii")


def _contracts() -> list[dict[str, Any]]:
    return [
        make_contract(),
        make_contract("acme.eval_suite.v0", "0.10.0", status="active"),
        make_contract(
            "acme.other.v0", "1.0.0", status="deprecated", replaced_by="acme.other.v0@2.0.0"
        ),
    ]


def _case(
    case_id: str,
    document: dict[str, Any],
    clause: str,
    manifest_statuses: tuple[str, str],
    entry0: tuple[str, str, str] = OK3,
) -> tuple[dict[str, Any], bytes]:
    path = f"cases/{case_id}.json"
    row = {
        "id": case_id,
        "input": path,
        "expected": {
            "ok": manifest_statuses == ("ok", "ok") and entry0 == OK3,
            "manifest_hash_status": manifest_statuses[0],
            "manifest_signature_status": manifest_statuses[1],
            "entry0": dict(
                zip(("entry_hash_status", "entry_signature_status", "note"), entry0, strict=True)
            ),
        },
        "clause": clause,
    }
    return row, _bytes(document)


def _flip_b64(signature: str) -> str:
    raw = bytearray(base64.b64decode(signature))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode("ascii")


def generate() -> dict[str, bytes]:
    """Every vector file, path relative to the repository root -> bytes."""
    key = demo_key()
    contracts = _contracts()
    manifest = make_manifest(key, contracts)
    files: dict[str, bytes] = {}
    publisher = {
        "publisher_id": DEMO_PUBLISHER_ID,
        "publisher_key_id": DEMO_KEY_ID,
        "public_key_base64": key.public_key.b64,
        "manifest_url": "https://publisher.example/specs/adapter-contracts.manifest.json",
        "_note": "TEST-ONLY demo publisher: the private key is SHA-256 of a public label.",
    }
    files[f".well-known/{DEMO_PUBLISHER_ID}-publisher.json"] = _bytes(publisher)
    files["vectors/publication/demo-publisher-key.json"] = _bytes(
        {
            "_warning": "TEST-ONLY. Anyone can derive this private key; never trust it.",
            "derivation": "seed = SHA-256(UTF-8 label); affidavit.attest.keyring.derive_test_key",
            "label": DEMO_KEY_LABEL,
            "publisher_id": DEMO_PUBLISHER_ID,
            "publisher_key_id": DEMO_KEY_ID,
            "public_key_base64": key.public_key.b64,
        }
    )
    for declaration in contracts:
        name = f"{declaration['adapter_id']}@{declaration['adapter_version']}"
        files[f"vectors/publication/contracts/{name}.json"] = _bytes(declaration)
        files[f"vectors/publication/entries/{name}.attest.json"] = _bytes(
            make_entry(key, declaration)
        )
    rows = []
    row, data = _case("valid", manifest, "docs/formats.md §3", ("ok", "ok"))
    rows.append((row, data))
    for field in ENTRY_HASH_FIELDS:
        tampered = copy.deepcopy(manifest)
        value = tampered["contracts"][0][field]
        tampered["contracts"][0][field] = value + "x" if value else "x"
        rows.append(
            _case(
                f"tamper-entry-{field}",
                tampered,
                "docs/formats.md §3 entry_hash (15 keys)",
                ("ok", "ok"),
                ("mismatch", "ok", f"{field} changed after signing"),
            )
        )
    reordered = copy.deepcopy(manifest)
    reordered["contracts"][0], reordered["contracts"][1] = (
        reordered["contracts"][1],
        reordered["contracts"][0],
    )
    rows.append(
        _case(
            "tamper-entry-order",
            reordered,
            "docs/formats.md §3 ordered_entry_hashes",
            ("mismatch", "ok"),
        )
    )
    rehashed = {**manifest, "manifest_hash": "0" * 64}
    rows.append(
        _case(
            "tamper-manifest-hash",
            rehashed,
            "docs/formats.md §3 manifest_hash",
            ("mismatch", "bad"),
        )
    )
    resigned = {**manifest, "manifest_signature": _flip_b64(manifest["manifest_signature"])}
    rows.append(
        _case("tamper-manifest-signature", resigned, "docs/formats.md §3 signatures", ("ok", "bad"))
    )
    entry_sig = copy.deepcopy(manifest)
    entry_sig["contracts"][0]["entry_signature"] = _flip_b64(
        entry_sig["contracts"][0]["entry_signature"]
    )
    rows.append(
        _case(
            "tamper-entry-signature",
            entry_sig,
            "docs/formats.md §3 signatures",
            ("ok", "ok"),
            ("ok", "bad", "entry_signature bit flipped"),
        )
    )
    for row, data in rows:
        files[f"vectors/publication/{row['input']}"] = data
    files["vectors/publication/manifest.json"] = _bytes(
        {
            "_note": "Publication vectors. Verify each input with the key in "
            "demo-publisher-key.json. Regenerate: UPDATE_GOLDENS=1 make vectors.",
            "public_key_base64": key.public_key.b64,
            "cases": [row for row, _ in rows],
        }
    )
    return files


def test_publication_vectors_golden() -> None:
    for relative, data in generate().items():
        assert_golden(ROOT / relative, data)


def test_publication_vectors_verify_as_expected() -> None:
    index = json.loads((OUT / "manifest.json").read_text())
    key = demo_key().public_key
    assert index["public_key_base64"] == key.b64
    assert len(index["cases"]) == 20
    for case in index["cases"]:
        document = json.loads((OUT / case["input"]).read_text())
        report = verify_manifest(document, public_key=key)
        expected = case["expected"]
        assert report.ok is expected["ok"], case["id"]
        assert report.manifest_hash_status == expected["manifest_hash_status"], case["id"]
        assert report.manifest_signature_status == expected["manifest_signature_status"], case["id"]
        first = report.entries[0]
        assert first.entry_hash_status == expected["entry0"]["entry_hash_status"], case["id"]
        assert first.entry_signature_status == expected["entry0"]["entry_signature_status"], case[
            "id"
        ]
