"""Where the pinned peer (``aigentsy-verify`` 1.6.3) is wrong, Affidavit is right: each defect
measured side by side (docs/parity.md, "Peer defects").

Every test runs the peer and Affidavit on the same input and asserts the difference, so a fixed
peer (or a regression here) shows up as a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.crypto.merkle import consistency_proof, leaf_hash, root_of, verify_consistency
from affidavit.verify.results import Result
from aigentsy_verify import VerifierSession
from aigentsy_verify import verify_bundle as peer_verify_bundle
from aigentsy_verify.adapter import replay_policy_decision
from aigentsy_verify.bundle import verify_actor_signature_sidecar
from aigentsy_verify.merkle import verify_consistency as peer_verify_consistency

from tests.conftest import raises_code
from tests.verify.peer_bundle_cases import handmade_cases
from tests.verify.peer_bundle_gen import (
    LOG_ID,
    LOG_KEY,
    OTHER_LOG_KEY,
    Case,
    build_cases,
    deal_events,
    full_directory,
    signed_all,
    write_json,
)
from tests.verify.peer_oracle import OUR_CLI, PEER_CLI, run, write_peer_key

KEY_B64: Final = LOG_KEY.public_key.b64
WRONG_B64: Final = OTHER_LOG_KEY.public_key.b64


def _lexical_window_cases() -> list[Case]:
    """Key windows the peer compares as text (its ``_iso_le``), not as instants."""
    events = deal_events(sign=signed_all)
    half_second_late = {"issued_at": "2026-03-01T12:00:00.500Z"}  # after the 12:00:00Z event
    revoked_earlier = {"revoked_at": "2026-03-01T12:30:00+01:00"}  # = 11:30Z, before it
    return [
        Case("window_fraction", events, "3.0.0", directory=full_directory(buyer=half_second_late)),
        Case("window_offset", events, "3.0.0", directory=full_directory(buyer=revoked_earlier)),
    ]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The handmade cases plus the lexical-window cases, logged under one signed head."""
    folder = tmp_path_factory.mktemp("peer-defects")
    cases = handmade_cases() + _lexical_window_cases()
    with TransparencyLog.create(folder / "log.db", LOG_KEY, LOG_ID) as log:
        build_cases(cases, log)
    return {case.name: case.bundle for case in cases if case.bundle is not None}


def _ours(bundle: dict[str, Any]) -> Result:
    return BundleVerifier([LOG_KEY.public_key]).verify(bundle)


# -- 1. verify_consistency rejects most valid RFC 6962 proofs -------------------------------------


def test_peer_consistency_rejects_valid_proofs() -> None:
    """For every pair 1 <= m <= n <= 40 the proof from Affidavit's RFC 9162 §2.1.4.1 builder is
    valid (our §2.1.4.2 verifier accepts all 820); the peer rejects 741 of them."""
    leaves = [leaf_hash(i.to_bytes(2, "big")) for i in range(40)]
    roots = [root_of(leaves[:n]) for n in range(41)]
    pairs = [(m, n) for n in range(1, 41) for m in range(1, n + 1)]
    rejected = []
    for m, n in pairs:
        proof = consistency_proof(leaves, m, n)
        verify_consistency(m, n, proof, roots[m], roots[n])  # raises if ours rejected it
        if not peer_verify_consistency(
            m, n, roots[m].hex(), roots[n].hex(), [p.hex() for p in proof]
        ):
            rejected.append((m, n))
    assert len(pairs) == 820
    assert len(rejected) == 741
    # what it gets right: equal sizes, and proofs from a one-leaf tree (79 = 40 + 39)
    accepted = set(pairs) - set(rejected)
    assert accepted == {(n, n) for n in range(1, 41)} | {(1, n) for n in range(2, 41)}


# -- 2. VerifierSession caches tree-head results without the key -----------------------------------


def test_peer_session_passes_a_wrong_key(bundles: dict[str, dict[str, Any]]) -> None:
    bundle = bundles["plain"]
    assert peer_verify_bundle(bundle, public_key_base64=WRONG_B64)["verified"] is False
    session = VerifierSession()
    assert session.verify_bundle(bundle, KEY_B64)["verified"] is True
    cached = session.verify_bundle(bundle, WRONG_B64)  # the cache key is (signature, root) only
    assert cached["verified"] is True
    assert cached["steps"]["sth_signature"] == {"passed": True, "skipped": False, "cached": True}
    # Affidavit: a verifier's trusted keys are fixed; its memo is per (message, signature) under
    # those keys, so a verifier given the wrong key never verifies, whatever ran before.
    good = BundleVerifier([LOG_KEY.public_key])
    assert good.verify(bundle).verified
    wrong = BundleVerifier([OTHER_LOG_KEY.public_key])
    result = wrong.verify(bundle)
    assert (result.verdict, result.code) == ("failed", "treehead.signature_bad")


def test_peer_session_drops_actor_signatures_on_cache_hits(
    bundles: dict[str, dict[str, Any]],
) -> None:
    """The cached path recomputes the verdict without the 3.0.0 ``actor_signatures`` step."""
    good, forged = bundles["v3_all_signed"], bundles["v3_signature_does_not_verify"]
    assert good["signed_tree_head"] == forged["signed_tree_head"]  # one head: a cache hit
    assert peer_verify_bundle(forged, public_key_base64=KEY_B64)["verified"] is False
    session = VerifierSession()
    assert session.verify_bundle(good, KEY_B64)["verified"] is True
    assert session.verify_bundle(forged, KEY_B64)["verified"] is True
    verifier = BundleVerifier([LOG_KEY.public_key])
    assert verifier.verify(good).verified
    result = verifier.verify(forged)
    assert (result.verdict, result.code) == ("failed", "event.signature_bad")


# -- 3. --json --strict exits 0 with the head signature skipped -----------------------------------


def test_peer_json_strict_exits_zero_without_a_key(
    bundles: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    path = write_json(tmp_path / "plain.json", bundles["plain"])
    text = run([str(PEER_CLI), "bundle", str(path), "--strict"])
    assert text.returncode == 1, text.stdout  # the text mode honours --strict
    peer = run([str(PEER_CLI), "bundle", str(path), "--json", "--strict"])
    assert peer.returncode == 0, peer.stderr
    document = json.loads(peer.stdout)
    assert document["verified"] is True
    assert document["steps"]["sth_signature"]["skipped"] is True
    ours = run([str(OUR_CLI), "verify", "bundle", str(path), "--json", "--strict"])
    assert ours.returncode == 1, ours.stderr
    (result,) = json.loads(ours.stdout)["results"]
    assert (result["verdict"], result["code"]) == ("unanchored", "bundle.unanchored")


def test_peer_key_document_is_accepted_by_both(
    bundles: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """Scripts carry over: the peer's ``--public-key`` JSON document works with both tools."""
    path = write_json(tmp_path / "plain.json", bundles["plain"])
    key_file = write_peer_key(tmp_path, KEY_B64)
    peer = run(
        [str(PEER_CLI), "bundle", str(path), "--json", "--strict", "--public-key", str(key_file)]
    )
    ours = run(
        [
            str(OUR_CLI),
            "verify",
            "bundle",
            str(path),
            "--json",
            "--strict",
            "--public-key",
            str(key_file),
        ]
    )
    assert (peer.returncode, ours.returncode) == (0, 0), (peer.stderr, ours.stderr)


# -- 4. policy replay treats not_in as never firing ----------------------------------------------


def _snapshot(vertical: str) -> dict[str, Any]:
    condition = {"field": "vertical", "op": "not_in", "value": ["gambling"]}
    rule: dict[str, Any] = {"conditions": [condition], "action": "auto_accept"}
    return {"matched_rule": rule, "evaluated_inputs": {"vertical": vertical}, "rule_index": 0}


def test_policy_not_in_replay() -> None:
    """``not_in`` is in the peer's own allowed ops (conformance_vectors.json,
    programmable_mandate_vectors.allowed_ops), yet its replay never lets it fire: the verdict is
    the same whether or not the input is in the list."""
    firing, not_firing = _snapshot("saas"), _snapshot("gambling")
    mismatch = "matched_rule_does_not_fire_against_evaluated_inputs"
    assert replay_policy_decision(firing)["status"] == mismatch  # wrong: saas is not_in the list
    assert replay_policy_decision(not_firing)["status"] == mismatch
    from affidavit.verify.contracts.policy import replay_snapshot

    assert replay_snapshot(firing).action == "auto_accept"
    with raises_code("policy.replay_mismatch"):
        replay_snapshot(not_firing)


# -- events after the logged finality event (red-team finding) -------------------------------------


def test_events_after_logged_finality(bundles: dict[str, dict[str, Any]]) -> None:
    """Nothing signed covers an event after the logged one: the peer verifies it, we do not."""
    for name, extra in (
        ("leaf_after_finality", "PAYOUT_REQUESTED"),
        ("second_outcome_after_finality", "OUTCOME_RECORDED"),
    ):
        bundle = bundles[name]
        assert bundle["events"][-1]["event_type"] == extra
        peer = peer_verify_bundle(bundle, public_key_base64=KEY_B64)
        assert peer["verified"] is True
        assert peer["steps"]["cross_reference"]["leaf_binding"] == "bound"
        result = _ours(bundle)
        assert (result.verdict, result.code) == ("failed", "bundle.events_after_finality")
        step = result.step("cross_reference")
        assert step is not None
        assert step.details["events_after_finality"] == 1


# -- the peer's CLI never runs its own sidecar check -----------------------------------------------


def test_peer_cli_ignores_a_forged_sidecar(
    bundles: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    bundle = bundles["sidecar_hash_tampered"]
    assert verify_actor_signature_sidecar(bundle)["passed"] is False
    path = write_json(tmp_path / "forged.json", bundle)
    key_file = write_peer_key(tmp_path, KEY_B64)
    peer = run(
        [str(PEER_CLI), "bundle", str(path), "--json", "--strict", "--public-key", str(key_file)]
    )
    assert peer.returncode == 0
    assert "actor_signature_sidecar" not in json.loads(peer.stdout)["steps"]
    result = _ours(bundle)
    assert (result.verdict, result.code) == ("failed", "bundle.sidecar_hash_mismatch")


# -- key windows compared as text ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["window_fraction", "window_offset"])
def test_peer_compares_key_windows_as_text(bundles: dict[str, dict[str, Any]], name: str) -> None:
    """RFC 3339 times with fractions or offsets: the peer's string comparison accepts a key
    outside its window; Affidavit compares instants (docs/formats.md §4: issued_at <= t <
    revoked_at)."""
    bundle = bundles[name]
    peer = peer_verify_bundle(bundle, public_key_base64=KEY_B64)
    assert peer["verified"] is True
    assert peer["steps"]["actor_signatures"]["passed"] is True
    result = _ours(bundle)
    assert (result.verdict, result.code) == ("failed", "event.key_not_valid")
