"""The manifest freshness statement (signed_at, freshness_hash, freshness_signature).

It is signed under the manifest's key over its own hash, binds the exact manifest_hash, never
verifies after an edit, and the pinned peer (aigentsy==1.17.2) still accepts the manifest.
"""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.publishing.freshness import sign_freshness
from affidavit.verify.contracts.freshness import check_freshness, freshness_hash, parse_duration

from tests.attest.publishing.test_publish_peer import PEER, _peer_verify
from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    make_manifest,
    other_key,
)
from tests.conftest import raises_code

KEY = demo_key().public_key
SIGNED_AT = "2025-03-01T00:00:00Z"


@pytest.fixture
def manifest() -> dict[str, Any]:
    plain = make_manifest(demo_key(), [make_contract()])
    return sign_freshness(plain, demo_key(), signed_at=SIGNED_AT)


def test_statement_verifies_and_is_deterministic(manifest: dict[str, Any]) -> None:
    report = check_freshness(manifest, KEY)
    assert (report.hash_status, report.signature_status, report.proven) == ("ok", "ok", True)
    assert report.signed_at == datetime.datetime(2025, 3, 1, tzinfo=datetime.UTC)
    again = sign_freshness(manifest, demo_key(), signed_at=SIGNED_AT)
    assert again == manifest
    assert manifest["freshness_hash"] == freshness_hash(manifest)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("signed_at", "2099-01-01T00:00:00Z"),
        ("generated_at", "2099-01-01T00:00:00Z"),
        ("manifest_version", "99"),
    ],
)
def test_edited_time_fields_never_verify(manifest: dict[str, Any], field: str, value: str) -> None:
    tampered = {**manifest, field: value}
    report = check_freshness(tampered, KEY)
    assert report.hash_status == "mismatch"
    assert not report.proven


def test_statement_cannot_move_to_another_manifest(manifest: dict[str, Any]) -> None:
    other = sign_freshness(
        make_manifest(demo_key(), [make_contract("acme.other.v0", "1.0.0")]),
        demo_key(),
        signed_at="2026-01-01T00:00:00Z",
    )
    moved = {
        **manifest,
        **{k: other[k] for k in ("signed_at", "freshness_hash", "freshness_signature")},
    }
    assert not check_freshness(moved, KEY).proven


def test_other_key_and_no_key_prove_nothing(manifest: dict[str, Any]) -> None:
    assert check_freshness(manifest, other_key().public_key).signature_status == "bad"
    assert check_freshness(manifest, None).signature_status == "no_public_key"
    assert not check_freshness(manifest, None).proven


def test_absent_statement_is_absent_not_an_error() -> None:
    report = check_freshness(make_manifest(demo_key(), [make_contract()]), KEY)
    assert (report.hash_status, report.proven) == ("absent", False)
    assert report.age_problem(parse_duration("1d"), datetime.datetime.now(datetime.UTC))


def test_age_and_future_times(manifest: dict[str, Any]) -> None:
    report = check_freshness(manifest, KEY)
    at = datetime.datetime(2025, 3, 1, tzinfo=datetime.UTC)
    assert report.age_problem(parse_duration("1h"), at + datetime.timedelta(minutes=59)) is None
    assert "older than the maximum age of 1 hour" in str(
        report.age_problem(parse_duration("1h"), at + datetime.timedelta(minutes=61))
    )
    assert "in the future" in str(
        report.age_problem(parse_duration("1h"), at - datetime.timedelta(hours=1))
    )


@pytest.mark.parametrize("bad", ["2025-03-01", "2025-03-01T00:00:00+00:00", "x", ""])
def test_signed_at_must_be_utc_z(bad: str) -> None:
    with raises_code("manifest.invalid"):
        sign_freshness(make_manifest(demo_key(), [make_contract()]), demo_key(), signed_at=bad)


@pytest.mark.skipif(PEER is None, reason="the peer CLI aigentsy==1.17.2 is not installed")
def test_the_peer_still_verifies_a_manifest_with_a_statement(
    tmp_path: Path, manifest: dict[str, Any]
) -> None:
    code, report = _peer_verify(tmp_path, copy.deepcopy(manifest))
    assert code == 0, report
    assert report["ok"] is True
