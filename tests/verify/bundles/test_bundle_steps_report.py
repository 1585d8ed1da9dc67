"""What ``BundleVerifier`` reports, step by step, for real stamped bundles (issue 36).

verify/bundles/verifier.py (the module docstring's fifteen steps) and docs/formats.md §4: the top
level is read strictly (``bundle.malformed``, ``bundle.unsupported_version``: unreadable, exit 2,
the bundle's fields null); a broken chain reports every later step ``not_checked`` with its
reason; the tree head is checked only under trusted keys; ``--require-actor-signatures`` counts
signed and trusted events across inline and sidecar signatures; proofs bound by no event are a
warning; the result carries the bundle's ``deal_id``, ``spec_version``, ``bundle_hash``,
``warnings`` (each once) and ``profile``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.bundles.actor_trust import ActorTrust, TrustedActorKey
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.bundles.verifier import BundleVerifier, verify_bundle

from tests.verify.bundles.test_bound_inputs import _sign_all
from tests.verify.bundles.test_bundle_support import (
    ACTOR_KEY,
    LOG_KEY,
    OTHER_KEY,
    reseal,
    verifier,
)

AFTER_CHAIN = (
    "proof_binding",
    "cross_reference",
    "actor_signatures",
    "actor_signature_sidecar",
    "adapter_replay",
)


_DROP: Any = object()


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("deal_id", _DROP, "bundle.malformed"),
        ("deal_id", 7, "bundle.malformed"),
        ("proofs", {}, "bundle.malformed"),
        ("proofs", _DROP, "bundle.malformed"),
        ("events", {}, "bundle.malformed"),
        ("bundle_hash", None, "bundle.malformed"),
        ("bundle_hash", _DROP, "bundle.malformed"),
        ("merkle_inclusion", [], "bundle.malformed"),
        ("merkle_inclusion", "proof", "bundle.malformed"),
        ("spec_version", "4.0.0", "bundle.unsupported_version"),
        ("spec_version", None, "bundle.unsupported_version"),
    ],
)
def test_a_top_level_field_of_the_wrong_type_is_unreadable(
    plain: dict[str, Any], field: str, value: Any, code: str
) -> None:
    bundle = copy.deepcopy(plain)
    if value is _DROP:
        del bundle[field]
    else:
        bundle[field] = value
    result = verifier().verify(bundle, source="b.json")
    assert (result.verdict, result.code, result.exit_code) == ("unreadable", code, 2)
    assert [(s.name, s.status, s.code) for s in result.steps] == [("parse", "failed", code)]
    assert field in result.steps[0].message
    document = result.to_json()
    assert (document["source"], document["deal_id"], document["bundle_hash"]) == (
        "b.json",
        None,
        None,
    )
    assert (document["spec_version"], document["warnings"], document["profile"]) == (
        None,
        [],
        "default",
    )


@pytest.mark.parametrize("version", ["1.0.0", "2.0.0", "3.0.0", _DROP])
def test_each_spec_version_is_read(plain: dict[str, Any], version: Any) -> None:
    bundle = copy.deepcopy(plain)
    if version is _DROP:
        del bundle["spec_version"]
    else:
        bundle["spec_version"] = version
    bundle["bundle_hash"] = bundle_hash(bundle)
    result = verifier().verify(bundle)
    assert result.step("parse") is not None
    assert result.verdict != "unreadable", result.to_json()
    step = result.step("bundle_hash")
    assert step is not None
    assert step.status == "ok", result.to_json()
    form = "py-spaced (legacy)" if version is _DROP else "py-compact"
    assert step.details["form"] == form


def test_the_result_names_the_bundle(plain: dict[str, Any]) -> None:
    document = verifier().verify(plain, source="in.json").to_json()
    assert (document["verdict"], document["source"]) == ("verified", "in.json")
    assert (document["deal_id"], document["spec_version"], document["bundle_hash"]) == (
        plain["deal_id"],
        plain["spec_version"],
        plain["bundle_hash"],
    )
    assert (document["profile"], document["warnings"]) == ("default", [])
    assert [s["name"] for s in document["steps"]][:4] == [
        "parse",
        "bundle_hash",
        "event_chain",
        "proof_binding",
    ]


def test_a_wrong_bundle_hash_reports_both(plain: dict[str, Any]) -> None:
    bundle = {**plain, "bundle_hash": "0" * 64}
    result = verifier().verify(bundle)
    step = result.failed_step
    assert step is not None
    assert (step.name, step.code) == ("bundle_hash", "bundle.hash_mismatch")
    assert (step.expected, step.actual) == (plain["bundle_hash"], "0" * 64)


@pytest.mark.parametrize("profile", ["default", "swarm-strict"])
def test_a_broken_chain_leaves_every_later_step_not_checked(
    plain: dict[str, Any], profile: str
) -> None:
    bundle = copy.deepcopy(plain)
    bundle["events"][1]["payload"]["edited"] = True
    bundle["bundle_hash"] = bundle_hash(bundle)
    result = BundleVerifier([LOG_KEY.public_key], profile=profile).verify(bundle)
    assert result.failed_step is not None
    assert (result.verdict, result.failed_step.name) == ("failed", "event_chain")
    swarm = ("swarm_coverage", "swarm_snapshot", "swarm_decision")
    later = AFTER_CHAIN + (swarm if profile == "swarm-strict" else ())
    for name in later:
        step = result.step(name)
        assert step is not None, name
        assert (step.status, step.message) == ("not_checked", "the event chain did not verify")
    # merkle_inclusion and sth_signature read no event: computed and reported all the same
    names = [s.name for s in result.steps]
    assert names[:5] == ["parse", "bundle_hash", "event_chain", "merkle_inclusion", "sth_signature"]
    assert [s.status for s in result.steps[3:5]] == ["ok", "ok"]
    assert result.to_json()["profile"] == profile


def test_a_tree_head_is_checked_only_under_trusted_keys(plain: dict[str, Any]) -> None:
    for keys in ((), (OTHER_KEY.public_key,)):
        result = BundleVerifier(keys).verify(plain)
        step = result.step("sth_signature")
        assert step is not None
        if keys:
            assert (result.verdict, step.code) == ("failed", "treehead.signature_bad")
            assert step.message
        else:
            assert (result.verdict, step.status) == ("unanchored", "not_checked")
            assert result.code == "bundle.unanchored"
    both = BundleVerifier([OTHER_KEY.public_key, LOG_KEY.public_key]).verify(plain)
    step = both.step("sth_signature")
    assert step is not None
    assert both.verdict == "verified"
    assert step.details == {
        "key": LOG_KEY.public_key.b64,
        "key_id": plain["signed_tree_head"]["key_id"],
    }


def test_no_tree_head_is_not_checked_and_unanchored(plain: dict[str, Any]) -> None:
    bundle = {k: v for k, v in plain.items() if k != "signed_tree_head"}
    bundle["bundle_hash"] = bundle_hash(bundle)
    result = verifier().verify(bundle)
    step = result.step("sth_signature")
    assert step is not None
    assert (result.verdict, step.status) == ("unanchored", "not_checked")
    assert "signed_tree_head" in step.message
    malformed = {**plain, "signed_tree_head": {"log_id": 7}}
    malformed["bundle_hash"] = bundle_hash(malformed)
    step = verifier().verify(malformed).step("sth_signature")
    assert step is not None
    assert step.status == "failed"
    assert step.code is not None


def _requiring(trust: ActorTrust) -> BundleVerifier:
    return BundleVerifier([LOG_KEY.public_key], actor_trust=trust, require_actor_signatures=True)


TRUST_ACTOR = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw)])
TRUST_OTHER = ActorTrust([TrustedActorKey(OTHER_KEY.public_key.raw)])


def test_required_signatures_count_inline_events(signed: dict[str, Any]) -> None:
    n = len(signed["events"])
    ok = _requiring(TRUST_ACTOR).verify(signed).step("actor_signatures")
    assert ok is not None
    assert (ok.status, ok.details) == (
        "ok",
        {"trust": "caller_trusted", "events": n, "signed_events": n, "trusted_events": n},
    )
    result = _requiring(TRUST_OTHER).verify(signed)
    step = result.failed_step
    assert step is not None
    assert (step.name, step.code) == ("actor_signatures", "bundle.actor_signatures_untrusted")
    assert step.details == {"events": n, "signed_events": n, "trusted_events": 0}
    assert f"{n} of {n}" in step.message


def test_required_signatures_count_sidecar_events(plain: dict[str, Any]) -> None:
    n = len(plain["events"])
    bundle = _sign_all(plain, None)
    ok = _requiring(TRUST_ACTOR).verify(bundle)
    assert ok.verdict == "verified", ok.to_json()
    step = ok.step("actor_signatures")
    assert step is not None
    assert step.details["signed_events"] == n
    assert step.details["trusted_events"] == n
    partial = copy.deepcopy(bundle)
    first = plain["events"][0]["hash"]
    del partial["actor_signature_sidecar"]["signatures_by_event_hash"][first]
    from affidavit.verify.bundles.events import sidecar_hash

    partial["actor_signature_sidecar"]["sidecar_hash"] = sidecar_hash(
        partial["actor_signature_sidecar"]
    )
    result = _requiring(TRUST_ACTOR).verify(partial)
    failed = result.failed_step
    assert failed is not None, result.to_json()
    assert (failed.name, failed.code) == ("actor_signatures", "bundle.actor_signatures_missing")
    assert failed.details == {"events": n, "signed_events": n - 1, "trusted_events": n - 1}
    assert f"1 of {n}" in failed.message


def test_unsigned_events_are_missing_before_untrusted(plain: dict[str, Any]) -> None:
    result = _requiring(TRUST_OTHER).verify(plain)
    step = result.failed_step
    assert step is not None
    assert (step.name, step.code) == ("actor_signatures", "bundle.actor_signatures_missing")
    assert step.details["signed_events"] == 0


def test_self_asserted_signatures_warn_once(signed: dict[str, Any]) -> None:
    result = verifier().verify(signed)
    assert result.verdict == "verified"
    warnings = result.to_json()["warnings"]
    assert len(warnings) == 1
    assert warnings[0].startswith("bundle.actor_keys_self_asserted")
    trusted = BundleVerifier([LOG_KEY.public_key], actor_trust=TRUST_ACTOR).verify(signed)
    assert trusted.to_json()["warnings"] == []


def test_proofs_bound_by_no_event_are_a_warning(plain: dict[str, Any]) -> None:
    bundle = copy.deepcopy(plain)
    for event in bundle["events"]:
        event["payload"].pop("proof_hashes", None)
    result = verifier().verify(reseal(bundle, anchor=True))
    step = result.step("proof_binding")
    assert step is not None
    assert (result.verdict, step.status) == ("verified", "not_checked")
    assert "proof_hashes" in step.message
    assert result.to_json()["warnings"] == [
        "proofs are covered by bundle_hash only; no event binds them"
    ]


def test_an_unknown_profile_is_a_usage_error() -> None:
    with pytest.raises(errors.UsageError) as caught:
        BundleVerifier([LOG_KEY.public_key], profile="lenient")
    assert caught.value.code == "usage.invalid"
    assert "lenient" in str(caught.value)


def test_the_one_shot_verifier_passes_its_options(signed: dict[str, Any]) -> None:
    result = verify_bundle(signed, [LOG_KEY.public_key], source="s", actor_trust=TRUST_ACTOR)
    step = result.step("actor_signatures")
    assert step is not None
    assert (result.verdict, result.source, step.status) == ("verified", "s", "ok")
    strict = verify_bundle(signed, [LOG_KEY.public_key], profile="swarm-strict")
    assert strict.to_json()["profile"] == "swarm-strict"
    assert strict.step("swarm_coverage") is not None
