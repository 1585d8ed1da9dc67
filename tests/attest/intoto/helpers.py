"""Shared fixtures of the in-toto tests: sources, keys, schema checks, third-party parsers."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.verify.dsse.envelope import Envelope, dsse_keyid, envelope_json

ROOT = Path(__file__).resolve().parents[3]
BUNDLES = ROOT / "vectors" / "bundles"
ENTRY_FILE = ROOT / "vectors" / "publication" / "entries"
PREDICATE_SCHEMAS = ROOT / "specs" / "predicates"

KEY: SigningKey = derive_test_key("intoto tests", key_id="intoto-test")  # TEST-ONLY


def bundle(name: str = "stamped-accepted-3.0.0.json") -> dict[str, Any]:
    """A stamped bundle of vectors/bundles (a fresh copy)."""
    document: dict[str, Any] = json.loads((BUNDLES / name).read_text(encoding="utf-8"))
    return document


def entry_document() -> dict[str, Any]:
    """The first signed entry of vectors/publication/entries (``adapter attest`` shape)."""
    path = sorted(ENTRY_FILE.glob("*.json"))[0]
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def flat_entry() -> dict[str, Any]:
    """The same entry as a manifest's ``contracts`` item."""
    document = entry_document()
    return {
        **document["entry"],
        "entry_hash": document["entry_hash"],
        "entry_signature": document["entry_signature"],
    }


CLEAN_REPORT: dict[str, Any] = {
    "ok": True,
    "facts": 3,
    "findings": [],
    "info": [],
    "signatures": None,
}
FINDINGS_REPORT: dict[str, Any] = {
    "ok": False,
    "facts": 2,
    "findings": [
        {
            "code": "lineage.fact_hash_mismatch",
            "severity": "error",
            "where": "line 2",
            "fact": "b" * 64,
            "message": "the content does not hash to its key",
            "details": {},
        }
    ],
    "info": [
        {
            "code": "lineage.dangling_reference",
            "severity": "info",
            "where": "line 1",
            "fact": "a" * 64,
            "message": "derived_from names an absent fact",
            "details": {"reference": "c" * 64},
        },
        {
            "code": "lineage.dangling_reference",
            "severity": "info",
            "where": "line 3",
            "fact": "b" * 64,
            "message": "derived_from names an absent fact",
            "details": {},
        },
    ],
    "signatures": {"signed": 1, "unsigned": 1, "bad": 0},
}


def report(kind: str = "findings") -> dict[str, Any]:
    """A facts audit --json report (a fresh copy)."""
    return copy.deepcopy(FINDINGS_REPORT if kind == "findings" else CLEAN_REPORT)


def assert_predicate_schema(name: str, predicate: Any) -> None:
    """Validate ``predicate`` against specs/predicates/<name>.schema.json (2020-12)."""
    schema = json.loads((PREDICATE_SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(predicate)


def payload_of(envelope: dict[str, Any]) -> Any:
    """The Statement a standard-JSON envelope carries."""
    return json.loads(base64.b64decode(envelope["payload"]))


def sslib_verify(envelope: Envelope | dict[str, Any], public_raw: bytes) -> None:
    """securesystemslib 1.6.0's DSSE verification with nothing but the Ed25519 public key."""
    from securesystemslib.dsse import Envelope as SslibEnvelope
    from securesystemslib.signer import SSlibKey

    document = envelope_json(envelope) if isinstance(envelope, Envelope) else envelope
    key = SSlibKey(
        keyid=dsse_keyid(public_raw),
        keytype="ed25519",
        scheme="ed25519",
        keyval={"public": public_raw.hex()},
    )
    verified = SslibEnvelope.from_dict(document).verify([key], 1)
    assert list(verified) == [key.keyid]
