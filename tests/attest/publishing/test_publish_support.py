"""Shared builders for the publication tests (imported by other test modules; holds no tests).

Keys here are TEST-ONLY: derived from fixed labels with ``derive_test_key``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from affidavit.attest.keyring import SigningKey, derive_test_key, private_key_pem
from affidavit.attest.keyring import publisher_document as make_publisher_document
from affidavit.attest.publishing.publish import attest_document, build_manifest
from affidavit.verify.contracts.contract import contract_hash, input_schema_hash

DEMO_PUBLISHER_ID = "demo.publisher"
DEMO_KEY_ID = "demo-k1"
DEMO_KEY_LABEL = "affidavit TEST-ONLY demo publisher key v1"
OTHER_KEY_LABEL = "affidavit TEST-ONLY other key v1"
FIXED_TIME = "2025-01-01T00:00:00Z"


def demo_key() -> SigningKey:
    """TEST-ONLY demo publisher key (seed = SHA-256 of a fixed label)."""
    return derive_test_key(DEMO_KEY_LABEL, key_id=DEMO_KEY_ID, publisher_id=DEMO_PUBLISHER_ID)


def other_key() -> SigningKey:
    """TEST-ONLY key that is not the publisher's."""
    return derive_test_key(OTHER_KEY_LABEL, key_id=DEMO_KEY_ID, publisher_id=DEMO_PUBLISHER_ID)


def make_contract(
    adapter_id: str = "acme.eval_suite.v0", adapter_version: str = "0.1.0", **extra: Any
) -> dict[str, Any]:
    """A schema-valid AdapterContract with its two hashes."""
    declaration: dict[str, Any] = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": adapter_id,
        "adapter_version": adapter_version,
        "input_schema_version": "1.0.0",
        "validator_name": "starter_boolean_validator",
        "validator_version": "1.0.0",
        "output_fields": ["signal_a", "signal_b", "signal_c"],
        "allowed_policy_fields": ["signal_a", "signal_b"],
    }
    declaration["input_schema_hash"] = input_schema_hash(declaration)
    declaration["contract_hash"] = contract_hash(declaration)
    declaration.update(extra)
    return declaration


def make_entry(
    key: SigningKey | None, declaration: dict[str, Any], **fields: str
) -> dict[str, Any]:
    """The attest document of ``declaration`` by the demo publisher at the fixed time."""
    return attest_document(
        declaration,
        publisher_id=DEMO_PUBLISHER_ID,
        publisher_key_id=DEMO_KEY_ID,
        published_at=FIXED_TIME,
        signing_key=key,
        **fields,
    )


def make_manifest(key: SigningKey, declarations: list[dict[str, Any]]) -> dict[str, Any]:
    """A signed manifest over ``declarations`` (each attested unsigned first)."""
    entries = [make_entry(None, d)["entry"] for d in declarations]
    return build_manifest(
        entries,
        key,
        publisher_id=DEMO_PUBLISHER_ID,
        publisher_key_id=DEMO_KEY_ID,
        generated_at=FIXED_TIME,
    )


def write_json(path: Path, document: Any) -> Path:
    """Write ``document`` as indented JSON; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def write_key_files(folder: Path, key: SigningKey) -> tuple[Path, Path]:
    """The key as ``<key-id>.key`` (0600) and its publisher document; returns both paths."""
    folder.mkdir(parents=True, exist_ok=True)
    key_path = folder / f"{DEMO_KEY_ID}.key"
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(key))
    document = make_publisher_document(key.public_key, DEMO_PUBLISHER_ID, DEMO_KEY_ID)
    doc_path = write_json(folder / f"{DEMO_PUBLISHER_ID}-publisher.json", document)
    return key_path, doc_path
