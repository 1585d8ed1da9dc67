"""What a mutation run of ``verify/bundles/verifier.py`` asked of the bundle tests (issue 36).

Each test is a real stamped bundle, changed in one way, whose verdict, failed step, exact code
or reported field would change if the verifier skipped or bent one of its rules (the module
docstring's steps; docs/formats.md §4): the tree head's signer memoized per head, the signer's
validity window (ADR 0011), ``--require-actor-signatures`` only over steps that did not fail
(docs/adr/0008), the proof binding's reported fields, and the source and kind of every result.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles.actor_trust import ActorTrust, TrustedActorKey
from affidavit.verify.bundles.events import sidecar_hash, signing_payload
from affidavit.verify.bundles.hashing import proof_hash
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.crypto.windows import KeyWindow

from tests.verify.bundles.test_bound_inputs import _sign_all
from tests.verify.bundles.test_bundle_support import (
    ACTOR_KEY,
    LOG_KEY,
    OTHER_KEY,
    OUTPUTS,
    edit,
    failed_step,
    reseal,
    stamp,
    verifier,
)

TRUST_ACTOR = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw)])


@pytest.fixture(scope="module")
def foreign() -> dict[str, Any]:
    """A self-consistent bundle whose head is signed by a key the verifier does not trust."""
    return stamp({"foreign": OUTPUTS["accepted"]}, key=OTHER_KEY)["foreign"]


# -- step 6, sth_signature: the signer is remembered per head, never across heads ---------------


def test_one_verifier_judges_each_head_by_its_own_signature(
    plain: dict[str, Any], foreign: dict[str, Any]
) -> None:
    # A shared verifier memoizes the signer of a (message, signature): a head it has not seen
    # is checked afresh, in either order (docs/formats.md §4 "Signed tree head").
    check = verifier()
    assert check.verify(plain).verdict == "verified"
    assert failed_step(check.verify(foreign)) == ("sth_signature", "treehead.signature_bad")
    again = verifier()
    assert failed_step(again.verify(foreign)) == ("sth_signature", "treehead.signature_bad")
    assert again.verify(plain).verdict == "verified"


def test_no_trusted_key_says_why_the_head_is_not_checked(plain: dict[str, Any]) -> None:
    step = BundleVerifier().verify(plain).step("sth_signature")
    assert step is not None
    assert step.status == "not_checked"
    assert "trusted key" in step.message


# -- step 6 under the signer's validity window (ADR 0011) ---------------------------------------


def _windowed(*, signer: Any = LOG_KEY, **bounds: str) -> BundleVerifier:
    window = KeyWindow.parse(bounds)
    assert window is not None
    return BundleVerifier(
        [OTHER_KEY.public_key, LOG_KEY.public_key], key_windows={signer.public_key.raw: [window]}
    )


def test_a_head_dated_outside_its_signers_window_fails(plain: dict[str, Any]) -> None:
    head = plain["signed_tree_head"]
    assert head["timestamp"] == "2026-03-01T12:00:00Z"
    result = _windowed(valid_until="2026-03-01T12:00:00Z").verify(plain)
    assert (result.verdict, result.code) == ("failed", "treehead.key_outside_window")
    step = result.step("sth_signature")
    assert step is not None
    assert (step.status, step.code) == ("failed", "treehead.key_outside_window")
    # the details name the head refused; the message names the key that signed it
    assert step.details == {
        "log_id": head["log_id"],
        "tree_size": head["tree_size"],
        "timestamp": head["timestamp"],
    }
    assert LOG_KEY.public_key.b64 in step.message
    late = _windowed(valid_from="2026-03-01T12:00:01Z").verify(plain)
    assert failed_step(late) == ("sth_signature", "treehead.key_outside_window")


def test_a_head_inside_its_signers_window_verifies(plain: dict[str, Any]) -> None:
    inside = _windowed(valid_from="2026-03-01T12:00:00Z", valid_until="2026-03-01T12:00:01Z")
    result = inside.verify(plain)
    assert result.verdict == "verified", result.to_json()
    step = result.step("sth_signature")
    assert step is not None
    assert step.details["key"] == LOG_KEY.public_key.b64


def test_only_the_signers_window_applies(plain: dict[str, Any]) -> None:
    # a window of another trusted key says nothing about a head LOG_KEY signed
    closed = _windowed(signer=OTHER_KEY, valid_until="2026-01-01T00:00:00Z")
    assert closed.verify(plain).verdict == "verified"


def test_a_windowed_head_with_an_impossible_time_is_malformed(plain: dict[str, Any]) -> None:
    # the head's timestamp is read as a time only under a window (docs/formats.md §4)
    bundle = copy.deepcopy(plain)
    bundle["signed_tree_head"]["timestamp"] = "2026-02-30T12:00:00Z"
    bundle["signed_tree_head"]["signature"] = _resign_head(bundle["signed_tree_head"])
    bundle = reseal(bundle)
    assert verifier().verify(bundle).verdict == "verified"
    result = _windowed(valid_until="2027-01-01T00:00:00Z").verify(bundle)
    assert failed_step(result) == ("sth_signature", "treehead.malformed")


def _resign_head(head: dict[str, Any]) -> str:
    from affidavit.verify.crypto.treehead import parse_sth

    return LOG_KEY.sign_b64(parse_sth(head).message())


# -- step 8 under --require-actor-signatures (docs/adr/0008) ------------------------------------


def _requiring() -> BundleVerifier:
    return BundleVerifier(
        [LOG_KEY.public_key], actor_trust=TRUST_ACTOR, require_actor_signatures=True
    )


def test_a_bad_inline_signature_keeps_its_own_code_under_the_requirement(
    signed: dict[str, Any],
) -> None:
    # key_directory is outside bundle_hash: the signatures no longer verify under it
    bundle = edit(
        signed,
        lambda b: b["key_directory"]["actor-key-1"].update(
            public_key_base64=OTHER_KEY.public_key.b64
        ),
    )
    assert failed_step(_requiring().verify(bundle)) == ("actor_signatures", "event.signature_bad")


def test_a_bad_sidecar_signature_keeps_its_own_code_under_the_requirement(
    plain: dict[str, Any],
) -> None:
    bundle = _sign_all(plain, None)
    sidecar = bundle["actor_signature_sidecar"]
    entry = sidecar["signatures_by_event_hash"][plain["events"][0]["hash"]][0]
    entry["signature_base64"] = ACTOR_KEY.sign_b64(b"another message")
    sidecar["sidecar_hash"] = sidecar_hash(sidecar)
    result = _requiring().verify(bundle)
    assert failed_step(result) == ("actor_signature_sidecar", "event.signature_bad")
    step = result.step("actor_signatures")
    assert step is not None
    assert step.status != "failed"


def test_required_signatures_count_the_untrusted_events(plain: dict[str, Any]) -> None:
    # every event signed in the sidecar, the first under a key the caller does not trust
    bundle = _sign_all(plain, None)
    sidecar = bundle["actor_signature_sidecar"]
    event = plain["events"][0]
    entry = sidecar["signatures_by_event_hash"][event["hash"]][0]
    entry["public_key_base64"] = OTHER_KEY.public_key.b64
    entry["signature_base64"] = OTHER_KEY.sign_b64(signing_payload(event, entry["key_id"]))
    sidecar["sidecar_hash"] = sidecar_hash(sidecar)
    n = len(plain["events"])
    assert n > 2
    result = _requiring().verify(bundle)
    step = result.failed_step
    assert step is not None, result.to_json()
    assert (step.name, step.code) == ("actor_signatures", "bundle.actor_signatures_untrusted")
    assert step.details == {"events": n, "signed_events": n, "trusted_events": n - 1}
    assert f"1 of {n} event(s)" in step.message


# -- step 4, proof_binding: what a failure and a pass report ------------------------------------


def test_an_unbound_proof_list_reports_the_event_and_both_lists(plain: dict[str, Any]) -> None:
    bound = [proof_hash(p) for p in plain["proofs"]]
    assert plain["events"][1]["payload"]["proof_hashes"] == bound
    wrong = ["0" * 64]
    bundle = copy.deepcopy(plain)
    bundle["events"][2]["payload"]["proof_hashes"] = wrong  # a second binder, the wrong list
    result = verifier().verify(reseal(bundle, anchor=True))
    step = result.failed_step
    assert step is not None, result.to_json()
    assert (step.name, step.code) == ("proof_binding", "bundle.proof_unbound")
    assert (step.expected, step.actual, step.details) == (bound, wrong, {"index": 2})
    assert "events[2]" in step.message
    document = step.to_json()
    assert (document["expected"], document["actual"]) == (bound, wrong)


def test_bound_proofs_are_counted(plain: dict[str, Any]) -> None:
    step = verifier().verify(plain).step("proof_binding")
    assert step is not None
    assert (step.status, step.details) == ("ok", {"proofs": len(plain["proofs"])})
    assert step.details["proofs"] == 1


def test_a_wrong_bundle_hash_says_so(plain: dict[str, Any]) -> None:
    step = verifier().verify({**plain, "bundle_hash": "f" * 64}).failed_step
    assert step is not None
    assert (step.name, step.code) == ("bundle_hash", "bundle.hash_mismatch")
    assert "bundle_hash" in step.message


# -- every result names its kind and source ----------------------------------------------------


def test_bytes_keep_their_source_whether_read_or_not(plain: dict[str, Any]) -> None:
    from affidavit.verify.json.canonical import py_compact

    good = verifier().verify_bytes(py_compact(plain), source="good.json")
    assert (good.verdict, good.source) == ("verified", "good.json")
    bad = verifier().verify_bytes(b"{not json", source="bad.json")
    assert (bad.verdict, bad.source) == ("unreadable", "bad.json")
    for result in (good, bad):
        document = result.to_json()
        assert (document["kind"], document["source"]) == ("bundle", result.source)


def test_an_unreadable_bundle_is_still_a_bundle_result() -> None:
    result = verifier().verify([], source="list.json")
    assert (result.verdict, result.code) == ("unreadable", "bundle.malformed")
    assert "object" in result.message
    assert result.to_json()["kind"] == "bundle"


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [("deal_id", 7, "a string"), ("bundle_hash", [], "a string"), ("events", "e", "an array")],
)
def test_a_top_level_refusal_names_the_type_expected(
    plain: dict[str, Any], field: str, value: Any, named: str
) -> None:
    result = verifier().verify({**plain, field: value})
    assert (result.verdict, result.code) == ("unreadable", "bundle.malformed")
    assert f"bundle.{field}" in result.message
    assert named in result.message
