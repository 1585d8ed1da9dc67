"""The handmade differential cases: one bundle per peer check and status (docs/parity.md).

Each case is written with :mod:`tests.verify.peer_bundle_gen` (published ProofPack shapes,
TEST-ONLY keys, logged in Affidavit's own log). ``tags`` name what a case exercises; the
differential test maps some tags to the rows of docs/parity.md where the verdicts differ on
purpose.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from affidavit.attest.keyring import SigningKey
from affidavit.attest.stamp import evaluate_adapter, example_contract
from affidavit.verify.bundles.hashing import bundle_hash

from tests.verify.peer_bundle_gen import (
    ACTORS,
    DROP,
    IDENTITY_A,
    LOG_KEY,
    OTHER_LOG_KEY,
    POLICY_LAYERS,
    SWARM_POLICY_VERSION,
    Case,
    Ev,
    deal_events,
    decision_context,
    directory_entry,
    full_directory,
    py_compact_hash,
    rehash,
    signed_all,
    swarm_policy,
    swarm_snapshot,
    ts,
)

__all__ = ["adapter_cases", "handmade_cases"]

Change = Callable[[dict[str, Any]], None]  # an edit applied to a finished bundle


# -- handmade cases: one per peer check, so each row of docs/parity.md has a bundle ---------


def _set(path: Sequence[str | int], value: Any, *, repair: bool = False) -> Change:
    def change(bundle: dict[str, Any]) -> None:
        target: Any = bundle
        for step in path[:-1]:
            target = target[step]
        if value is DROP:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        if repair:
            rehash(bundle)

    return change


def _flip_proof(bundle: dict[str, Any]) -> None:
    node = bundle["merkle_inclusion"]["proof"][0]
    node["hash"] = ("1" if node["hash"][0] != "1" else "2") + node["hash"][1:]
    bundle["bundle_hash"] = bundle_hash(bundle)


def _unbound_event_fields(bundle: dict[str, Any]) -> None:
    """Unsigned fields beside the logged event's signed ones (issue 35): the event hash and the
    log still hold, bundle_hash is recomputed."""
    bundle["events"][-1].update(decision="auto_reject", payout_usd=900)
    bundle["bundle_hash"] = bundle_hash(bundle)


def _resign_sth(key: SigningKey) -> Change:
    def change(bundle: dict[str, Any]) -> None:
        head = bundle["signed_tree_head"]
        message = f"{head['log_id']}|{head['tree_size']}|{head['root_hash']}|{head['timestamp']}"
        head["signature"] = key.sign_b64(message.encode())

    return change


def _retouch_sidecar(change: Change) -> Change:
    """Edit the sidecar, then recompute its hash (so only the edited property is wrong)."""

    def apply(bundle: dict[str, Any]) -> None:
        sidecar = bundle["actor_signature_sidecar"]
        change(sidecar)
        sidecar["sidecar_hash"] = py_compact_hash(
            {k: v for k, v in sidecar.items() if k != "sidecar_hash"}
        )

    return apply


def _rehash_bundle(bundle: dict[str, Any]) -> None:
    bundle["bundle_hash"] = bundle_hash(bundle)


def _duplicate_last_event(bundle: dict[str, Any]) -> None:
    """Append a copy of the logged event: its leaf now recomputes from two events."""
    bundle["events"].append(dict(bundle["events"][-1]))
    bundle["bundle_hash"] = bundle_hash(bundle)


def handmade_cases() -> list[Case]:
    """The fixed cases: each peer check and status with a bundle that exercises it."""
    cases: list[Case] = []
    add = cases.append
    nested = "nested"

    # -- the five default steps -------------------------------------------------------------
    add(Case("plain", deal_events()))
    add(Case("legacy_no_spec_version", deal_events(), spec_version=None, tags={"legacy"}))
    add(Case("bundle_hash_wrong", deal_events(), post=[_set(["bundle_hash"], "0" * 64)]))
    add(
        Case(
            "event_payload_edited",
            deal_events(),
            post=[_set(["events", 0, "payload", "terms", "amount"], 1)],
            tags={"event_hash"},
        )
    )
    add(
        Case(
            "event_payload_edited_rehashed",
            deal_events(),
            post=[_set(["events", 0, "payload", "terms", "amount"], 1, repair=True)],
            tags={"leaf_unbound"},
        )
    )
    add(
        Case(
            "prev_hash_broken",
            deal_events(),
            post=[
                _set(["events", 1, "prev_hash"], "ab" * 32),
                lambda b: b.__setitem__("bundle_hash", bundle_hash(b)),
            ],
        )
    )
    add(
        Case(
            "first_prev_hash_not_empty",
            deal_events(),
            first_prev_hash="ab" * 32,
            tags={"first_prev_hash"},
        )
    )
    add(
        Case(
            "duplicate_event_id",
            deal_events(),
            event_changes={2: {"event_id": "evt-0"}},
            tags={"duplicate_event_id"},
        )
    )
    add(
        Case(
            "event_deal_id_differs",
            deal_events(),
            event_changes={0: {"deal_id": "deal-other"}},
            tags={"event_deal_mismatch"},
        )
    )
    add(
        Case(
            "event_unbound_fields",
            deal_events(),
            post=[_unbound_event_fields],
            tags={"event_unbound_fields"},
        )
    )
    add(Case("inclusion_proof_flipped", deal_events(), post=[_flip_proof]))
    add(
        Case(
            "no_merkle_inclusion",
            deal_events(),
            post=[
                _set(["merkle_inclusion"], None),
                lambda b: b.__setitem__("bundle_hash", bundle_hash(b)),
            ],
            tags={"no_inclusion"},
        )
    )
    add(
        Case(
            "inclusion_malformed",
            deal_events(),
            post=[
                _set(["merkle_inclusion", "leaf_index"], "0"),
                lambda b: b.__setitem__("bundle_hash", bundle_hash(b)),
            ],
        )
    )
    add(
        Case(
            "inclusion_without_leaf_index",
            deal_events(),
            post=[_set(["merkle_inclusion", "leaf_index"], DROP), _rehash_bundle],
        )
    )
    add(Case("leaf_ambiguous", deal_events(), post=[_duplicate_last_event]))
    add(
        Case(
            "no_signed_tree_head",
            deal_events(),
            post=[_set(["signed_tree_head"], DROP)],
            tags={"no_sth"},
        )
    )
    add(
        Case(
            "sth_root_resigned",
            deal_events(),
            post=[_set(["signed_tree_head", "root_hash"], "cd" * 32), _resign_sth(LOG_KEY)],
        )
    )
    add(Case("unknown_spec_version", deal_events(), "9.0.0", tags={"unknown_spec_version"}))
    add(Case("sth_other_key", deal_events(), post=[_resign_sth(OTHER_LOG_KEY)]))
    add(
        Case(
            "sth_algorithm_not_ed25519",
            deal_events(),
            post=[_set(["signed_tree_head", "algorithm"], "RSA")],
        )
    )
    add(
        Case(
            "sth_root_changed",
            deal_events(),
            post=[_set(["signed_tree_head", "root_hash"], "cd" * 32)],
        )
    )
    add(
        Case(
            "inclusion_log_id_differs",
            deal_events(),
            post=[
                _set(["merkle_inclusion", "log_id"], "another-log"),
                lambda b: b.__setitem__("bundle_hash", bundle_hash(b)),
            ],
            tags={"log_id_mismatch"},
        )
    )
    add(Case("leaf_of_non_finality_event", deal_events(), logged=0, tags={"leaf_not_finality"}))
    add(Case("leaf_after_finality", deal_events(after_finality="payout"), tags={"after_finality"}))
    add(
        Case(
            "second_outcome_after_finality",
            deal_events(after_finality="outcome"),
            logged=2,
            tags={"after_finality"},
        )
    )

    # -- consequence identity (cross_reference.consequence_binding) ---------------------------
    for mode, tags in (
        ("bound", set()),
        ("mismatch", {"consequence_mismatch"}),
        ("not_dispatched", set()),
        ("dispatch_mismatch", {"consequence_mismatch"}),
        ("denied", set()),
    ):
        add(Case(f"consequence_{mode}", deal_events(consequence=mode), tags=tags | {"consequence"}))
    add(
        Case(
            "consequence_mismatch_unanchored",
            deal_events(consequence="mismatch"),
            post=[_set(["signed_tree_head"], DROP)],
            tags={"consequence_mismatch", "no_sth"},
        )
    )

    # -- spec 3.0.0 inline actor signatures --------------------------------------------------
    add(Case("v3_all_signed", deal_events(sign=signed_all), "3.0.0", directory=full_directory()))
    add(
        Case(
            "v3_mixed_signed",
            deal_events(sign=lambda t: "self" if t == "OUTCOME_RECORDED" else None),
            "3.0.0",
            directory=full_directory(),
        )
    )
    add(Case("v3_unsigned", deal_events(), "3.0.0", directory=full_directory()))
    add(
        Case(
            "v3_nested_directory",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(),
            directory_shape=nested,
            tags={"v3_nested_directory"},
        )
    )
    add(Case("v3_key_not_enrolled", deal_events(sign=signed_all), "3.0.0", directory={}))
    add(
        Case(
            "v3_key_revoked_before",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(buyer={"revoked_at": ts(-60), "status": "revoked"}),
        )
    )
    add(
        Case(
            "v3_key_not_yet_issued",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(seller={"issued_at": ts(3600)}),
        )
    )
    add(
        Case(
            "v3_key_of_other_actor",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(buyer={"actor_id": ACTORS["seller"][0]}),
        )
    )
    add(
        Case(
            "v3_attacker_key_in_directory",
            deal_events(sign=lambda t: "intruder" if t == "DEAL_CREATED" else "self"),
            "3.0.0",
            directory={
                **full_directory(),
                ACTORS["intruder"][1]: directory_entry("intruder", actor_id=ACTORS["buyer"][0]),
            },
            tags={"v3_self_asserted_attacker_key"},
        )
    )
    forged = deal_events(sign=signed_all)
    forged[0].sign_as_key_id = ACTORS["buyer"][1]
    forged[0].sign = "intruder"
    add(Case("v3_signature_does_not_verify", forged, "3.0.0", directory=full_directory()))
    add(
        Case(
            "v3_signature_without_key_id",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(),
            post=[_set(["events", 0, "actor_signature", "key_id"], DROP), _rehash_bundle],
        )
    )
    add(
        Case(
            "v3_directory_key_not_base64",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(buyer={"public_key_base64": "not base64!"}),
        )
    )
    add(
        Case(
            "v3_status_revoked_no_revoked_at",
            deal_events(sign=signed_all),
            "3.0.0",
            directory=full_directory(buyer={"status": "revoked"}),
            tags={"inline_inactive_status"},
        )
    )
    add(
        Case(
            "v2_with_bad_inline_signature",
            deal_events(sign=signed_all),
            "2.0.0",
            directory={},
            tags={"v2_inline_signature"},
        )
    )

    # -- actor-signature sidecar -------------------------------------------------------------
    sig = [{"event": 0, "actor": "buyer"}, {"event": 2, "actor": "buyer"}]
    add(Case("sidecar_no_directory", deal_events(), sidecar=sig, tags={"sidecar"}))
    add(
        Case(
            "sidecar_nested_directory",
            deal_events(),
            sidecar=sig,
            directory=full_directory(),
            directory_shape=nested,
            tags={"sidecar"},
        )
    )
    add(
        Case(
            "sidecar_flat_directory",
            deal_events(),
            sidecar=sig,
            directory=full_directory(),
            tags={"sidecar"},
        )
    )
    label = [{"event": 0, "signer": "buyer", "actor": "agent:buyer-label"}]
    for shape in ("none", "flat", nested):
        add(
            Case(
                f"sidecar_label_mismatch_{shape}",
                deal_events(),
                sidecar=label,
                directory=None if shape == "none" else full_directory(),
                directory_shape=shape,
                tags={"sidecar", "sidecar_label_mismatch"},
            )
        )
    for shape in ("flat", nested):
        extra_tags = {"sidecar_flat_directory_checked"} if shape == "flat" else set()
        add(
            Case(
                f"sidecar_revoked_{shape}",
                deal_events(),
                sidecar=sig,
                directory=full_directory(buyer={"revoked_at": ts(-60)}),
                directory_shape=shape,
                tags={"sidecar"} | extra_tags,
            )
        )
        add(
            Case(
                f"sidecar_not_yet_issued_{shape}",
                deal_events(),
                sidecar=sig,
                directory=full_directory(buyer={"issued_at": ts(3600)}),
                directory_shape=shape,
                tags={"sidecar"} | extra_tags,
            )
        )
        add(
            Case(
                f"sidecar_inactive_status_{shape}",
                deal_events(),
                sidecar=sig,
                directory=full_directory(buyer={"status": "suspended"}),
                directory_shape=shape,
                tags={"sidecar", "sidecar_inactive"} | extra_tags,
            )
        )
        add(
            Case(
                f"sidecar_key_differs_from_directory_{shape}",
                deal_events(),
                sidecar=sig,
                directory=full_directory(
                    buyer={"public_key_base64": ACTORS["seller"][2].public_key.b64}
                ),
                directory_shape=shape,
                tags={"sidecar"} | extra_tags,
            )
        )
        add(
            Case(
                f"sidecar_directory_actor_differs_{shape}",
                deal_events(),
                sidecar=sig,
                directory=full_directory(buyer={"actor_id": ACTORS["seller"][0]}),
                directory_shape=shape,
                tags={"sidecar"} | extra_tags,
            )
        )
    add(
        Case(
            "sidecar_key_not_in_nested_directory",
            deal_events(),
            sidecar=[{"event": 0, "signer": "intruder", "actor": "buyer"}],
            directory=full_directory(),
            directory_shape=nested,
            tags={"sidecar", "sidecar_label_mismatch"},
        )
    )
    add(
        Case(
            "sidecar_revoked_no_signed_at",
            deal_events(),
            sidecar=[{"event": 0, "actor": "buyer", "signed_at": DROP}],
            directory=full_directory(buyer={"revoked_at": ts(-60)}),
            directory_shape=nested,
            tags={"sidecar", "sidecar_no_signed_at"},
        )
    )
    add(
        Case(
            "sidecar_hash_tampered",
            deal_events(),
            sidecar=sig,
            post=[_set(["actor_signature_sidecar", "sidecar_hash"], "0" * 64)],
            tags={"sidecar", "sidecar_forged"},
        )
    )
    add(
        Case(
            "sidecar_bad_signature",
            deal_events(),
            sidecar=[
                {
                    "event": 0,
                    "actor": "buyer",
                    "signature_base64": base64.b64encode(bytes(64)).decode(),
                }
            ],
            tags={"sidecar", "sidecar_forged"},
        )
    )
    add(
        Case(
            "sidecar_unknown_event",
            deal_events(),
            sidecar=sig,
            post=[
                _retouch_sidecar(
                    lambda s: s["signatures_by_event_hash"].__setitem__(
                        "ee" * 32, next(iter(s["signatures_by_event_hash"].values()))
                    )
                )
            ],
            tags={"sidecar", "sidecar_forged"},
        )
    )
    add(
        Case(
            "sidecar_missing_field",
            deal_events(),
            sidecar=[{"event": 0, "actor": "buyer", "key_id": ""}],
            tags={"sidecar", "sidecar_forged"},
        )
    )
    add(
        Case(
            "sidecar_unsupported_alg",
            deal_events(),
            sidecar=sig,
            post=[_retouch_sidecar(lambda s: s.__setitem__("signature_alg", "ECDSA"))],
            tags={"sidecar", "sidecar_forged"},
        )
    )
    add(
        Case(
            "sidecar_unsupported_canonicalization",
            deal_events(),
            sidecar=sig,
            post=[_retouch_sidecar(lambda s: s.__setitem__("canonicalization", "jcs"))],
            tags={"sidecar", "sidecar_forged"},
        )
    )

    # -- policy layer (outside bundle_hash; never decides) ------------------------------------
    for i, layer in enumerate(POLICY_LAYERS):
        add(
            Case(
                f"policy_layer_{i}",
                deal_events(),
                extra={"policy_layer": layer},
                tags={"policy_layer"},
            )
        )

    # -- swarm-strict profile -----------------------------------------------------------------
    required = ["CONSEQUENCE_AUTHORIZED", "OUTCOME_RECORDED"]
    swarm_dir = full_directory()

    def swarm_case(name: str, *, tags: set[str] | None = None, **kw: Any) -> Case:
        events_kw = {
            "consequence": "bound",
            "swarm": swarm_policy(
                kw.pop("required", required), version=kw.pop("version", SWARM_POLICY_VERSION)
            ),
            "sign": kw.pop("sign", signed_all),
        }
        events_kw.update(kw.pop("events_kw", {}))
        return Case(
            name,
            deal_events(**events_kw),
            kw.pop("spec_version", "3.0.0"),
            profile="swarm-strict",
            directory=kw.pop("directory", swarm_dir),
            directory_shape=kw.pop("directory_shape", "flat"),
            tags={"swarm"} | (tags or set()),
            **kw,
        )

    add(swarm_case("swarm_all_signed"))
    add(swarm_case("swarm_nested_directory", directory_shape=nested, tags={"v3_nested_directory"}))
    add(swarm_case("swarm_no_designation", events_kw={"swarm": None}))
    add(
        swarm_case(
            "swarm_designation_unsigned", sign=lambda t: None if t == "SWARM_POLICY_SET" else "self"
        )
    )
    add(
        swarm_case(
            "swarm_designated_event_unsigned",
            sign=lambda t: None if t == "OUTCOME_RECORDED" else "self",
        )
    )
    add(swarm_case("swarm_required_type_absent", required=[*required, "SETTLED"]))
    add(swarm_case("swarm_unsupported_policy_version", version="swarm_enforcement/v0"))
    add(
        swarm_case(
            "swarm_actor_not_enrolled",
            directory={k: v for k, v in swarm_dir.items() if k != ACTORS["runtime"][1]},
        )
    )
    add(
        swarm_case(
            "swarm_key_revoked",
            directory=full_directory(buyer={"revoked_at": ts(2), "status": "revoked"}),
        )
    )
    add(
        swarm_case(
            "swarm_key_not_yet_issued", directory=full_directory(runtime={"issued_at": ts(3)})
        )
    )
    add(
        swarm_case(
            "swarm_inactive_without_revoked_at",
            directory=full_directory(buyer={"status": "revoked"}),
            tags={"inline_inactive_status"},
        )
    )
    add(
        swarm_case(
            "swarm_unsigned_v2_bundle", spec_version="2.0.0", directory=None, sign=lambda t: None
        )
    )
    add(swarm_case("swarm_snapshot_ok", extra={"swarm_enforcement": swarm_snapshot(required)}))
    add(
        swarm_case(
            "swarm_snapshot_hash_mismatch",
            extra={"swarm_enforcement": swarm_snapshot(required, tamper_hash=True)},
        )
    )
    add(
        swarm_case(
            "swarm_snapshot_designation_differs",
            extra={"swarm_enforcement": swarm_snapshot(["SETTLED"])},
        )
    )
    designation_id = "evt-1"  # the SWARM_POLICY_SET event (position 1)
    add(
        swarm_case(
            "swarm_decision_context_ok",
            events_kw={"decision_context": decision_context(None, required)},
            tags={"swarm_decision"},
        )
    )
    add(
        swarm_case(
            "swarm_decision_contradiction",
            events_kw={"decision_context": decision_context(None, required, enforcement="off")},
            tags={"swarm_decision"},
        )
    )
    add(
        swarm_case(
            "swarm_decision_digest_missing",
            events_kw={
                "decision_context": {
                    "swarm_decision": decision_context(None, required)["swarm_decision"]
                }
            },
            tags={"swarm_decision"},
        )
    )
    add(
        swarm_case(
            "swarm_decision_names_designation",
            events_kw={"decision_context": decision_context(designation_id, required)},
            tags={"swarm_decision"},
        )
    )
    add(
        swarm_case(
            "swarm_decision_names_unknown_policy_event",
            events_kw={"decision_context": decision_context("evt-99", required)},
            tags={"swarm_decision"},
        )
    )
    late = deal_events(swarm=swarm_policy(["OUTCOME_RECORDED"]), sign=signed_all)
    late_payload = {"identity_hash": IDENTITY_A, "decision": "authorized"}
    late_payload.update(decision_context(None, ["OUTCOME_RECORDED"]))
    late.append(Ev("CONSEQUENCE_AUTHORIZED", "runtime", late_payload, sign="runtime"))
    add(
        Case(
            "swarm_decision_after_finality",
            late,
            "3.0.0",
            profile="swarm-strict",
            directory=swarm_dir,
            tags={"swarm", "swarm_decision", "after_finality"},
        )
    )
    add(
        swarm_case(
            "swarm_consequence_mismatch",
            events_kw={"consequence": "mismatch"},
            tags={"consequence_mismatch"},
        )
    )
    add(
        swarm_case(
            "swarm_after_finality", events_kw={"after_finality": "payout"}, tags={"after_finality"}
        )
    )

    return cases


# -- adapter replay (the peer CLI's additive step) ------------------------------------------------

_RULE = {"conditions": [{"field": "signal_a", "op": "==", "value": True}], "action": "auto_accept"}
_MISSED = {
    "conditions": [{"field": "signal_a", "op": "==", "value": False}],
    "action": "auto_accept",
}
_NOT_IN = {**_RULE, "conditions": [{"field": "signal_a", "op": "not_in", "value": [False]}]}


def _adapter_proof(**changes: Any) -> dict[str, Any]:
    """A proof carrying a real ``adapter_evaluation`` of Affidavit's example contract."""
    output = {"signal_a": True, "signal_b": True}
    evaluation = evaluate_adapter(example_contract(), output)
    evaluation.update(changes)
    evaluation = {k: v for k, v in evaluation.items() if v is not DROP}
    return {
        "proof_id": "prf-1",
        "proof_type": "adapter_evaluation",
        "evidence": {"adapter_evaluation": evaluation, "adapter_output": output},
    }


def _with_decision(rule: dict[str, Any] | None) -> list[Ev]:
    events = deal_events()
    snapshot = {
        "matched_rule": rule,
        "evaluated_inputs": {"signal_a": True, "signal_b": True} if rule else None,
        "rule_index": 0,
    }
    decision = Ev(
        "AUTO_GO_APPROVED", "runtime", {"decision": "auto_accept", "policy_snapshot": snapshot}
    )
    events.insert(len(events) - 1, decision)
    return events


def adapter_cases() -> list[Case]:
    """Adapter evaluations and policy snapshots, valid and tampered (before logging)."""
    leak = {"normalized_policy_inputs": {"signal_a": True, "signal_b": True, "secret": 1}}
    return [
        Case("adapter_ok", _with_decision(_RULE), proofs=[_adapter_proof()], tags={"adapter"}),
        Case(
            "adapter_inputs_not_allowed",
            deal_events(),
            proofs=[_adapter_proof(**leak)],
            tags={"adapter"},
        ),
        Case(
            "adapter_contract_hash_differs",
            deal_events(),
            proofs=[_adapter_proof(contract_hash="ab" * 32)],
            tags={"adapter"},
        ),
        Case(
            "adapter_validator_inconsistent",
            deal_events(),
            proofs=[_adapter_proof(validation_result="rejected")],
            tags={"adapter"},
        ),
        Case(
            "adapter_evaluation_without_id",
            deal_events(),
            proofs=[_adapter_proof(adapter_id="")],
            tags={"adapter"},
        ),
        Case(
            "adapter_schema_fail",
            deal_events(),
            proofs=[
                _adapter_proof(adapter_contract={**example_contract(), "adapter_version": "1.0"})
            ],
            tags={"adapter"},
        ),
        Case(
            "adapter_input_schema_hash_differs",
            deal_events(),
            proofs=[_adapter_proof(input_schema_hash="cd" * 32)],
            tags={"adapter"},
        ),
        Case(
            "adapter_names_another_validator",
            deal_events(),
            proofs=[_adapter_proof(validator_name="other_validator")],
            tags={"adapter", "adapter_names_another_validator"},
        ),
        Case(
            "adapter_id_not_the_contracts",
            deal_events(),
            proofs=[_adapter_proof(adapter_id="other.adapter.v1")],
            tags={"adapter", "adapter_id_not_the_contracts"},
        ),
        Case(
            "adapter_version_not_the_contracts",
            deal_events(),
            proofs=[_adapter_proof(adapter_version="9.9.9")],
            tags={"adapter", "adapter_version_not_the_contracts"},
        ),
        Case(
            "adapter_evaluation_without_contract",
            deal_events(),
            proofs=[_adapter_proof(adapter_contract=DROP)],
            tags={"adapter", "adapter_without_contract"},
        ),
        Case(
            "policy_rule_does_not_fire",
            _with_decision(_MISSED),
            proofs=[_adapter_proof()],
            tags={"adapter"},
        ),
        Case(
            "policy_not_in_fires",
            _with_decision(_NOT_IN),
            proofs=[_adapter_proof()],
            tags={"adapter", "policy_not_in"},
        ),
        Case(
            "policy_rule_withheld",
            _with_decision(None),
            proofs=[_adapter_proof()],
            tags={"adapter", "policy_rule_withheld"},
        ),
        Case(
            "policy_rule_does_not_fire_no_adapter",
            _with_decision(_MISSED),
            tags={"adapter", "policy_snapshot_without_adapter"},
        ),
    ]
