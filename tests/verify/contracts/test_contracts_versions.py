"""Versions and lifecycle pointers: SemVer 2.0.0 §2 core versions, whole-string matching, no
self-pointers, no control characters in anything that is signed (seed 003; docs/formats.md
§2-§3)."""

from __future__ import annotations

from typing import Any

import pytest
from affidavit.verify.contracts.contract import contract_hash, input_schema_hash, lint_contract
from affidavit.verify.contracts.lifecycle import parse_adapter_ref, parse_semver
from affidavit.verify.contracts.manifest import check_entry_text, check_signature
from affidavit.verify.contracts.pin_file import validate_pin_args
from affidavit.verify.contracts.schema import is_semver, schema_issues

from tests.conftest import raises_code
from tests.verify.contracts.schema_reference import reference_issue_codes

HEX = "ab" * 32
LEADING_ZEROS = ["01.0.0", "001.0.0", "1.00.0", "1.0.01", "00.0.0"]
TRAILING = ["1.0.0\n", "1.0.0\r", "1.0.0\x00", " 1.0.0", "1.0.0 "]


def _contract(**extra: Any) -> dict[str, Any]:
    declaration: dict[str, Any] = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": "acme.x.v0",
        "adapter_version": "1.0.0",
        "input_schema_version": "1.0.0",
        "output_fields": ["a"],
        "allowed_policy_fields": ["a"],
        "validator_name": "starter_boolean_validator",
        "validator_version": "1.0.0",
        **extra,
    }
    declaration["input_schema_hash"] = input_schema_hash(declaration)
    declaration["contract_hash"] = contract_hash(declaration)
    return declaration


@pytest.mark.parametrize("version", ["0.0.0", "1.0.0", "10.20.30", "0.10.0", "999.0.1"])
def test_semver_core_versions_are_accepted(version: str) -> None:
    assert is_semver(version)
    assert parse_semver(version) == tuple(int(p) for p in version.split("."))
    assert lint_contract(_contract(adapter_version=version)).ok


@pytest.mark.parametrize("version", LEADING_ZEROS + TRAILING)
def test_leading_zeros_and_trailing_text_are_not_semver_anywhere(version: str) -> None:
    assert not is_semver(version)
    report = lint_contract(_contract(adapter_version=version))
    assert report.error_codes == ("contract.bad_semver",)
    assert reference_issue_codes(_contract(adapter_version=version)) == {"contract.bad_semver"}
    assert [i.code for i in schema_issues(_contract(adapter_version=version))] == [
        "contract.bad_semver"
    ]
    with raises_code("pin.invalid_argument"):
        parse_semver(version)
    with raises_code("pin.invalid_argument") as caught:
        validate_pin_args("acme.x.v0", version, HEX)
    assert caught.value.code == "pin.invalid_argument"
    with raises_code("entry.lifecycle_invalid"):
        parse_adapter_ref(f"acme.x.v0@{version}")
    pointer = lint_contract(_contract(replaced_by=f"acme.y.v0@{version}"))
    assert pointer.error_codes == ("contract.lifecycle_invalid",)
    floor = lint_contract(_contract(min_verifier_version=version))
    assert floor.error_codes == ("contract.lifecycle_invalid",)


@pytest.mark.parametrize("suffix", ["\n", "\r\n", "\x00"])
def test_identifiers_and_hashes_never_match_with_a_trailing_character(suffix: str) -> None:
    with raises_code("pin.invalid_argument"):
        validate_pin_args("acme.x.v0" + suffix, "1.0.0", HEX)
    with raises_code("pin.invalid_argument"):
        validate_pin_args("acme.x.v0", "1.0.0", HEX + suffix)
    with raises_code("entry.lifecycle_invalid"):
        parse_adapter_ref("acme.x.v0" + suffix + "@1.0.0")
    # A signature over "hex\n" is never checked as a signature over the hex digest.
    assert check_signature(None, HEX + suffix, "AAAA") == "no_public_key"
    from affidavit.verify.crypto.keys import Ed25519PublicKey

    key = Ed25519PublicKey.from_b64("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
    assert check_signature(key, HEX + suffix, "AAAA") == "bad"


@pytest.mark.parametrize("field", ["supersedes", "replaced_by"])
def test_a_contract_cannot_name_itself(field: str) -> None:
    report = lint_contract(_contract(**{field: "acme.x.v0@1.0.0"}))
    assert report.error_codes == ("contract.lifecycle_self_reference",)
    with raises_code("contract.lifecycle_self_reference"):
        report.raise_for_errors()
    # The same id at another version is a real pointer.
    assert lint_contract(_contract(**{field: "acme.x.v0@1.0.1"})).ok
    # With a trailing newline it is not a pointer at all (it used to pass as "another" one).
    newline = lint_contract(_contract(**{field: "acme.x.v0@1.0.0\n"}))
    assert newline.error_codes == ("contract.lifecycle_invalid",)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("min_verifier_version", "1.0.0\x00"),
        ("published_at", "2025-01-01T00:00:00\x00"),
        ("published_at", "2025-01-01T00:00:00\x1b"),
        ("distribution_channel", "third_party\x00"),
        ("status", "active\x00"),
    ],
)
def test_control_characters_in_lifecycle_fields_fail_lint(field: str, value: str) -> None:
    report = lint_contract(_contract(**{field: value}))
    assert report.error_codes == ("contract.lifecycle_invalid",)


@pytest.mark.parametrize(
    "field",
    [
        "docs_url",
        "declaration_url",
        "release_notes",
        "publisher_id",
        "publisher_key_id",
        "published_at",
        "adapter_id",
        "replaced_by",
    ],
)
@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85", "\u2028"])
def test_signed_entry_text_refuses_control_characters(field: str, char: str) -> None:
    entry = {"adapter_id": "acme.x.v0", "adapter_version": "1.0.0", field: f"a{char}b"}
    if char == "\u2028":  # a line separator is printable text, not a C0/C1 control
        check_entry_text(entry)
        return
    with raises_code("entry.control_character") as caught:
        check_entry_text(entry)
    assert caught.value.code == "entry.control_character"
    assert caught.value.exit_code == 2


def test_release_notes_may_hold_newlines_and_tabs() -> None:
    check_entry_text({"release_notes": "line one\n\tline two\r\n"})
    with raises_code("entry.control_character"):
        check_entry_text({"docs_url": "https://x.invalid/\n"})


ECMA_SAMPLES = [
    "1.0.0",
    "0.0.0",
    "10.20.30",
    "01.0.0",
    "1.00.0",
    "1.0.0\n",
    "1.0.0\r",
    "\n1.0.0",
    "acme.x.v0",
    "acme.x.v0\n",
    "Acme.x",
    "signal_a",
    "signal_a\n",
    "ab" * 32,
    "ab" * 32 + "\n",
    "AB" * 32,
    "",
]


def test_the_shipped_schema_patterns_mean_the_same_in_ecma262() -> None:
    """JSON Schema `pattern` is ECMA-262 (search semantics, `$` = end of input without the m
    flag). Run each shipped pattern in a real ECMA-262 engine (node) and compare with the
    compiled checker, `not: {pattern: "\\n"}` included."""
    import json
    import shutil
    import subprocess

    from affidavit.specs import read_spec
    from affidavit.verify.contracts.schema import is_adapter_id, is_field_name
    from affidavit.verify.json.forms import is_hex64

    node = shutil.which("node")
    if node is None:
        pytest.skip("node (an ECMA-262 engine) is not installed")
    schema = json.loads(read_spec("adapter-contract.schema.json"))
    definitions = schema["definitions"]
    script = (
        "const [defs, samples] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = {};"
        "for (const [name, d] of Object.entries(defs)) {"
        "  out[name] = samples.map(s => new RegExp(d.pattern, 'u').test(s)"
        "    && !(d.not && new RegExp(d.not.pattern, 'u').test(s)));"
        "}"
        "process.stdout.write(JSON.stringify(out));"
    )
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps([definitions, ECMA_SAMPLES]),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    ecma = json.loads(done.stdout)
    ours = {
        "semver": is_semver,
        "reverse_dns": is_adapter_id,
        "snake_case": is_field_name,
        "sha256_hex": is_hex64,
    }
    assert set(ecma) == set(ours)
    for name, check in ours.items():
        assert ecma[name] == [check(s) for s in ECMA_SAMPLES], name
    # Without the `not` clause ECMA's `$` alone already refuses a trailing newline.
    probe = (
        "const r = new RegExp(process.argv[1]);"
        "process.stdout.write(JSON.stringify([r.test('1.0.0'), r.test('1.0.0\\n')]));"
    )
    bare = subprocess.run(
        [node, "-e", probe, definitions["semver"]["pattern"]],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(bare.stdout) == [True, False]
