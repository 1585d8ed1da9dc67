"""Golden AdapterContract vectors (vectors/contracts/): valid contracts and one per failure kind.

The cases are defined here (the deterministic generator); ``UPDATE_GOLDENS=1`` rewrites the
files, otherwise every file is byte-compared. Expected values are cross-checked against
independent sources each run: both hashes against ``aigentsy_verify.adapter``'s recompute
functions, and ``ok`` against the peer CLI's own lint rules (``aigentsy.cli._lint_declaration``)
except where Affidavit deliberately differs (listed in ``DIVERGES_FROM_PEER``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hashes, lint_contract
from affidavit.verify.json.strict import load_object

from tests.conftest import UPDATE_GOLDENS, VECTORS, assert_golden

FOLDER = VECTORS / "contracts"

# docs/formats.md §2 check value: scaffold --id acme.eval_suite.v0 --version 0.1.0, fields a,b,c.
BASE: dict[str, Any] = {
    "adapter_contract_version": "1.0.0",
    "adapter_id": "acme.eval_suite.v0",
    "adapter_version": "0.1.0",
    "input_schema_version": "1.0.0",
    "output_fields": ["signal_a", "signal_b", "signal_c"],
    "allowed_policy_fields": ["signal_a", "signal_b", "signal_c"],
    "validator_name": "starter_boolean_validator",
    "validator_version": "1.0.0",
}


def sealed(declaration: dict[str, Any]) -> dict[str, Any]:
    """``declaration`` with both hashes recomputed and stored (as scaffold and bump do)."""
    hashes = contract_hashes(declaration)
    return {
        **declaration,
        "input_schema_hash": hashes.input_schema_hash,
        "contract_hash": hashes.contract_hash,
    }


def _without(key: str) -> dict[str, Any]:
    document = sealed(BASE)
    del document[key]
    return document


def _doc(value: Any) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


VALID = sealed(BASE)
# id -> (raw bytes, spec clause, what it pins)
CASES: dict[str, tuple[bytes, str, str]] = {
    "valid-check-value": (_doc(VALID), "docs/formats.md §2", "the documented check value"),
    "valid-comment-keys": (
        _doc({"_comment": "ignored", "_layer_boundary": "also ignored", **VALID}),
        "docs/formats.md §2",
        "'_' keys are outside both hashes and the schema",
    ),
    "valid-lifecycle-deprecated": (
        _doc(
            {
                **VALID,
                "status": "deprecated",
                "replaced_by": "acme.eval_suite.v0@0.2.0",
                "supersedes": "acme.eval_suite.v0@0.0.9",
                "published_at": "2025-01-02T03:04:05Z",
                "min_verifier_version": "1.6.3",
                "distribution_channel": "developer.local",
            }
        ),
        "seed 003 lifecycle table",
        "lifecycle fields are outside both hashes; deprecated is a warning",
    ),
    "valid-lifecycle-revoked": (
        _doc({**VALID, "status": "revoked"}),
        "seed 003 lifecycle table",
        "revoked still lints (warning): replay of old bundles must not depend on status",
    ),
    "valid-unknown-validator": (
        _doc(sealed({**BASE, "validator_name": "acme_numeric_validator"})),
        "seed 003 Lint",
        "an unknown validator is a warning, not an error",
    ),
    "valid-policy-subset": (
        _doc(sealed({**BASE, "allowed_policy_fields": ["signal_b"]})),
        "docs/formats.md §2",
        "allowed_policy_fields may be a strict subset, even empty",
    ),
    "valid-unsorted-fields": (
        _doc(sealed({**BASE, "output_fields": ["signal_c", "signal_a", "signal_b"]})),
        "docs/formats.md §2",
        "arrays are hashed sorted: declaration order does not matter",
    ),
    "reject-not-object": (b"[]\n", "docs/formats.md §2", "a contract is a JSON object"),
    "reject-missing-field": (_doc(_without("validator_version")), "docs/formats.md §2", "required"),
    "reject-bad-semver": (
        _doc(sealed({**BASE, "adapter_version": "1.0"})),
        "docs/formats.md §2",
        "versions are MAJOR.MINOR.PATCH",
    ),
    "reject-bad-adapter-id": (
        _doc(sealed({**BASE, "adapter_id": "Acme-Eval"})),
        "docs/formats.md §2",
        "adapter_id is reverse-DNS",
    ),
    "reject-adapter-id-trailing-newline": (
        _doc(sealed({**BASE, "adapter_id": "acme.eval_suite.v0\n"})),
        "docs/formats.md §2",
        "look-alike id: Python's '$' would accept a trailing newline; ECMA-262 does not",
    ),
    "reject-fields-not-array": (
        _doc(sealed({**BASE, "output_fields": "signal_a"})),
        "docs/formats.md §2",
        "output_fields is an array",
    ),
    "reject-output-fields-empty": (
        _doc(sealed({**BASE, "output_fields": [], "allowed_policy_fields": []})),
        "docs/formats.md §2",
        "at least one output field",
    ),
    "reject-duplicate-field": (
        _doc(
            sealed({**BASE, "output_fields": ["signal_a", "signal_a"], "allowed_policy_fields": []})
        ),
        "docs/formats.md §2",
        "fields are unique",
    ),
    "reject-bad-field-name": (
        _doc(sealed({**BASE, "output_fields": ["Signal-A"], "allowed_policy_fields": []})),
        "docs/formats.md §2",
        "fields are snake_case",
    ),
    "reject-bad-validator-name": (
        _doc(sealed({**BASE, "validator_name": "Boolean Validator"})),
        "docs/formats.md §2",
        "validator_name is snake_case",
    ),
    "reject-bad-hash-format": (
        _doc({**VALID, "contract_hash": VALID["contract_hash"].upper()}),
        "docs/formats.md §2",
        "hashes are lowercase hex",
    ),
    "reject-policy-field-leak": (
        _doc(sealed({**BASE, "allowed_policy_fields": ["signal_a", "secret_score"]})),
        "docs/formats.md §2",
        "a field not declared as output cannot enter policy",
    ),
    "reject-contract-hash-mismatch": (
        _doc({**VALID, "adapter_version": "0.1.1"}),
        "docs/formats.md §2",
        "a hashed field edited without recomputing contract_hash",
    ),
    "reject-input-schema-hash-mismatch": (
        _doc({**VALID, "input_schema_hash": "0" * 64}),
        "docs/formats.md §2",
        "input_schema_hash must be recomputed, never trusted",
    ),
    "reject-lifecycle-invalid": (
        _doc({**VALID, "status": "retired", "replaced_by": "acme.eval_suite.v0"}),
        "seed 003 lifecycle fields",
        "status enum and adapter_id@semver pointers",
    ),
    "reject-semver-leading-zero": (
        _doc(sealed({**BASE, "adapter_version": "00.1.0"})),
        "docs/formats.md §2; SemVer 2.0.0 §2",
        "no leading zeros: 0.1.0 and 00.1.0 would be two versions that compare equal",
    ),
    "reject-lifecycle-self-reference": (
        _doc({**VALID, "status": "deprecated", "replaced_by": "acme.eval_suite.v0@0.1.0"}),
        "seed 003 lifecycle fields",
        "a release cannot be replaced by (or supersede) itself",
    ),
    "reject-lifecycle-control-character": (
        _doc({**VALID, "min_verifier_version": "1.6.3\u0000"}),
        "seed 003 lifecycle fields; docs/formats.md §3",
        "a NUL is never accepted into a value that may be signed",
    ),
    "reject-strict-duplicate-key": (
        b'{"adapter_id": "acme.eval_suite.v0", "adapter_id": "evil.other.v0"}\n',
        "docs/formats.md §1",
        "a document that could be read two ways is never hashed",
    ),
    "reject-strict-nan": (b'{"adapter_version": NaN}\n', "docs/formats.md §1", "NaN literal"),
    "reject-strict-too-deep": (
        b'{"x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n",
        "docs/formats.md §1",
        "10,000-deep nesting",
    ),
}
# Cases where Affidavit's verdict differs from the peer CLI's lint on purpose.
DIVERGES_FROM_PEER = {
    "reject-adapter-id-trailing-newline": "the peer's Python '$' accepts a trailing newline",
    "reject-semver-leading-zero": "the peer's pattern allows leading zeros (SemVer §2 does not)",
    "reject-lifecycle-self-reference": "the peer's lint does not compare pointers with the id",
}


def outcome(raw: bytes) -> dict[str, Any]:
    """The expected outcome of linting ``raw``: a report, or the input error's code."""
    try:
        declaration = load_object(raw, what="adapter contract")
    except errors.AffidavitError as e:
        if e.code != "json.wrong_type":
            return {"cli": {"exit_code": e.exit_code, "error_code": e.code}}
        declaration = json.loads(raw)  # not an object: lint reports contract.not_object
    report = lint_contract(declaration, cache=False)
    # The CLI reads the file as an object first: a non-object is json.wrong_type, exit 2.
    cli = {"exit_code": 0 if report.ok else 1}
    if not isinstance(declaration, dict):
        cli = {"exit_code": 2, "error_code": "json.wrong_type"}
    return {
        "ok": report.ok,
        "cli": cli,
        "error_codes": list(report.error_codes),
        "warning_codes": [issue.code for issue in report.warnings],
        "report": report.to_json(),
    }


def _manifest() -> bytes:
    entries = []
    for case_id, (raw, clause, pins) in CASES.items():
        result = outcome(raw)
        entry: dict[str, Any] = {"id": case_id, "clause": clause, "pins": pins}
        entry["input"] = f"{case_id}.json"
        entry["sha256_input"] = __import__("hashlib").sha256(raw).hexdigest()
        if "report" in result:
            entry["expected"] = {k: v for k, v in result.items() if k != "report"}
            entry["expected"]["report"] = f"{case_id}.lint.json"
        else:
            entry["expected"] = result
        entries.append(entry)
    document = {
        "description": (
            "AdapterContract lint vectors (docs/formats.md §1-2, seed 003). Generated by "
            "tests/verify/contracts/test_contract_golden.py; rewrite with UPDATE_GOLDENS=1."
        ),
        "vectors": entries,
    }
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def test_golden_manifest() -> None:
    assert_golden(FOLDER / "manifest.json", _manifest())


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_golden_vector_files(case_id: str) -> None:
    raw = CASES[case_id][0]
    assert_golden(FOLDER / f"{case_id}.json", raw)
    result = outcome(raw)
    if "report" in result:
        report_bytes = (json.dumps(result["report"], indent=2) + "\n").encode()
        assert_golden(FOLDER / f"{case_id}.lint.json", report_bytes)


def test_golden_manifest_lists_every_kind_of_failure() -> None:
    from affidavit.verify import errors

    if UPDATE_GOLDENS:
        pytest.skip("rewriting")
    manifest = json.loads((FOLDER / "manifest.json").read_bytes())
    seen = {code for v in manifest["vectors"] for code in v["expected"].get("error_codes", [])}
    contract_codes = {
        entry.code
        for entry in errors.ContractError.codes.values()
        if entry.code.startswith("contract.")
        and entry.exit_code == 1
        and entry.code != "contract.schema_invalid"
    }
    assert contract_codes <= seen, contract_codes - seen


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_golden_vector_agrees_with_peer(case_id: str) -> None:
    from aigentsy.cli import _lint_declaration
    from aigentsy_verify.adapter import recompute_contract_hash, recompute_input_schema_hash

    raw = CASES[case_id][0]
    result = outcome(raw)
    if "report" not in result:
        return  # strict-JSON rejections: the peer's json.loads is not strict (see the CLI test)
    declaration = json.loads(raw)
    if isinstance(declaration, dict):
        body = {k: v for k, v in declaration.items() if not k.startswith("_")}
        report = result["report"]
        assert report["recomputed_contract_hash"] == recompute_contract_hash(body)
        assert report["recomputed_input_schema_hash"] == recompute_input_schema_hash(body)
        peer_errors, _ = _lint_declaration(body)
        expected_ok = not peer_errors
        if case_id in DIVERGES_FROM_PEER:
            assert result["ok"] is not expected_ok
        else:
            assert result["ok"] is expected_ok, peer_errors
