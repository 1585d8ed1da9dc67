"""affidavit.verify: the root of trust. Parse strictly, encode canonically, hash, verify. Offline.

>>> from affidavit.verify import loads, jcs, sha256_hex
>>> sha256_hex(jcs(loads(b'{"b": 1.0, "a": true}')))
'a3f44886ecd0b8667b0c6a4652d41e1f9e8205fb8d35d299fd20577f5268adb6'

``__all__`` is the library's public API (docs/architecture.md, "Public API"), with
``affidavit.verify.errors`` and ``affidavit.verify.codes``; the rooms below are internal (issue 32,
docs/adr/0019-public-surface.md). Nothing here reads the network, the environment or the clock on
its own (tests/verify/test_offline_imports.py); names load on first use (PEP 562,
docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from affidavit.verify.anchor.receipt import verify_anchor_receipt
    from affidavit.verify.bundles.attestation import verify_attestation
    from affidavit.verify.bundles.hashing import bundle_hash
    from affidavit.verify.bundles.verifier import BundleVerifier, verify_bundle
    from affidavit.verify.contracts.contract import (
        ContractReport,
        contract_hash,
        input_schema_hash,
        lint_contract,
    )
    from affidavit.verify.contracts.manifest import ManifestReport, verify_entry, verify_manifest
    from affidavit.verify.contracts.pin_file import parse_pin_file
    from affidavit.verify.contracts.pins import PinCheckReport, check_pins
    from affidavit.verify.crypto.checkpoint import parse_verifier_key, verify_checkpoint
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.crypto.merkle import verify_consistency, verify_inclusion
    from affidavit.verify.errors import AffidavitError
    from affidavit.verify.json.canonical import (
        canonical_bytes,
        jcs,
        py_compact,
        py_spaced,
        sha256_hex,
    )
    from affidavit.verify.json.strict import load_object, loads
    from affidavit.verify.lineage.audit import AuditReport, audit
    from affidavit.verify.lineage.facts import fact_hash_of, parse_fact
    from affidavit.verify.lineage.walk import MemoryFactSource, WalkLimits, WalkResult, walk
    from affidavit.verify.results import Result, StepResult

# name -> the module (below affidavit.verify) that defines it, written by module.
_HOME = {
    name: home
    for home, names in {
        "anchor.receipt": ("verify_anchor_receipt",),
        "bundles.attestation": ("verify_attestation",),
        "bundles.hashing": ("bundle_hash",),
        "bundles.verifier": ("BundleVerifier", "verify_bundle"),
        "contracts.contract": (
            "ContractReport",
            "contract_hash",
            "input_schema_hash",
            "lint_contract",
        ),
        "contracts.manifest": ("ManifestReport", "verify_entry", "verify_manifest"),
        "contracts.pin_file": ("parse_pin_file",),
        "contracts.pins": ("PinCheckReport", "check_pins"),
        "crypto.checkpoint": ("parse_verifier_key", "verify_checkpoint"),
        "crypto.keys": ("Ed25519PublicKey",),
        "crypto.merkle": ("verify_consistency", "verify_inclusion"),
        "errors": ("AffidavitError",),
        "json.canonical": ("canonical_bytes", "jcs", "py_compact", "py_spaced", "sha256_hex"),
        "json.strict": ("load_object", "loads"),
        "lineage.audit": ("AuditReport", "audit"),
        "lineage.facts": ("fact_hash_of", "parse_fact"),
        "lineage.walk": ("MemoryFactSource", "WalkLimits", "WalkResult", "walk"),
        "results": ("Result", "StepResult"),
    }.items()
    for name in names
}

__all__ = [
    "AffidavitError",
    "AuditReport",
    "BundleVerifier",
    "ContractReport",
    "Ed25519PublicKey",
    "ManifestReport",
    "MemoryFactSource",
    "PinCheckReport",
    "Result",
    "StepResult",
    "WalkLimits",
    "WalkResult",
    "audit",
    "bundle_hash",
    "canonical_bytes",
    "check_pins",
    "contract_hash",
    "fact_hash_of",
    "input_schema_hash",
    "jcs",
    "lint_contract",
    "load_object",
    "loads",
    "parse_fact",
    "parse_pin_file",
    "parse_verifier_key",
    "py_compact",
    "py_spaced",
    "sha256_hex",
    "verify_anchor_receipt",
    "verify_attestation",
    "verify_bundle",
    "verify_checkpoint",
    "verify_consistency",
    "verify_entry",
    "verify_inclusion",
    "verify_manifest",
    "walk",
]  # the same names as _HOME (a test checks)


def _lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's PEP 562 ``__getattr__`` and ``__dir__``: each name of ``homes`` (name -> the
    module below ``package`` that defines it) is imported from there on first access and kept,
    so importing a package costs one small module (docs/adr/0003-cold-start.md). The front
    doors load their public names so; the rooms of ``affidavit.verify`` do not use it."""
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *homes})

    return load, names


__getattr__, __dir__ = _lazy_names(__name__, _HOME)
