"""Differential tests: each generated bundle gets the same verified / not-verified decision from
the pinned peer (``aigentsy-verify`` 1.6.3) and from Affidavit, or docs/parity.md says why not.

Bundles are written from the published formats (docs/formats.md §4) by
:mod:`tests.verify.peer_bundle_gen`, signed by TEST-ONLY keys and logged in Affidavit's own log,
so the tree head verifies under the log key both verifiers are given. The peer decides through
its own command line (``--json --strict --public-key``, plus its library sidecar check, see
:mod:`tests.verify.peer_oracle`); Affidavit through ``affidavit verify bundle --json``.

:data:`DELIBERATE` is the short, explicit list of differences that are on purpose. Each names
the docs/parity.md row that says why, the verdict each side must give, and (when the peer is the
one refusing) the only peer steps allowed to fail; any other difference fails the test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from aigentsy_verify.anchor import verify_anchor_receipt as peer_anchor
from aigentsy_verify.policy_layer import parse_policy_layer

from tests.verify.peer_bundle_cases import adapter_cases, handmade_cases
from tests.verify.peer_bundle_gen import (
    ANCHOR_RECEIPT_NAMES,
    LOG_ID,
    LOG_KEY,
    Case,
    anchor_receipts,
    build_cases,
    generated_cases,
    write_json,
)
from tests.verify.peer_oracle import (
    OUR_CLI,
    PEER_CLI,
    PeerVerdict,
    our_verdicts,
    peer_verdict,
    run,
    write_peer_key,
)

SEEDS: Final = (11, 23, 47, 89)
PER_SEED: Final = 40
KEY_B64: Final = LOG_KEY.public_key.b64


@dataclass(frozen=True)
class Deliberate:
    """A difference on purpose: ``tag`` on the case, the docs/parity.md ``row`` saying why."""

    tag: str
    row: str
    peer_verified: bool
    ours: frozenset[str]  # our acceptable outcome: "verified" or the failing code
    peer_may_fail: frozenset[str] = frozenset()  # peer steps allowed to fail (peer refuses)

    def explains(self, case: Case, peer: PeerVerdict, outcome: str) -> bool:
        """Whether this entry accounts for the observed pair of verdicts on ``case``."""
        if self.tag not in case.tags or peer.verified != self.peer_verified:
            return False
        if outcome not in self.ours:
            return False
        return self.peer_verified or peer.failing_steps <= self.peer_may_fail


_KEY_CODES: Final = frozenset(
    {
        "event.key_not_valid",
        "event.key_inactive",
        "event.key_lifecycle_malformed",
        "event.key_mismatch",
        "event.actor_mismatch",
        "event.key_unknown",
    }
)
DELIBERATE: Final = (
    Deliberate("first_prev_hash", "B-05", True, frozenset({"event.chain_broken"})),
    Deliberate("duplicate_event_id", "B-06", True, frozenset({"event.duplicate_id"})),
    Deliberate("event_deal_mismatch", "B-06", True, frozenset({"event.deal_mismatch"})),
    Deliberate("event_unbound_fields", "B-26", True, frozenset({"event.malformed"})),
    Deliberate("no_inclusion", "B-08", True, frozenset({"bundle.unanchored"})),
    Deliberate("no_sth", "B-10", True, frozenset({"bundle.unanchored"})),
    Deliberate("unknown_spec_version", "B-25", True, frozenset({"bundle.unsupported_version"})),
    Deliberate("log_id_mismatch", "B-12", True, frozenset({"bundle.root_not_signed"})),
    Deliberate("leaf_not_finality", "B-14", True, frozenset({"bundle.leaf_unbound"})),
    Deliberate("after_finality", "B-15", True, frozenset({"bundle.events_after_finality"})),
    Deliberate(
        "v3_nested_directory",
        "B-19",
        False,
        frozenset({"verified"}),
        frozenset({"actor_signatures"}),
    ),
    Deliberate("v2_inline_signature", "B-21", True, frozenset({"event.key_unknown"})),
    Deliberate(
        "inline_inactive_status",
        "B-22",
        True,
        frozenset({"event.key_lifecycle_malformed", "event.key_inactive"}),
    ),
    Deliberate("sidecar_flat_directory_checked", "S-12", True, _KEY_CODES),
    Deliberate("sidecar_no_signed_at", "S-13", True, frozenset({"event.key_not_valid"})),
    Deliberate(
        "policy_not_in", "A-09", False, frozenset({"verified"}), frozenset({"adapter_replay"})
    ),
    Deliberate(
        "policy_rule_withheld",
        "A-11",
        True,
        frozenset({"adapter.matched_rule_does_not_fire"}),
    ),
    Deliberate("adapter_id_not_the_contracts", "A-14", True, frozenset({"adapter.shape_invalid"})),
    Deliberate(
        "adapter_version_not_the_contracts", "A-16", True, frozenset({"adapter.shape_invalid"})
    ),
    Deliberate(
        "adapter_names_another_validator",
        "A-15",
        True,
        frozenset({"adapter.validator_declaration_missing"}),
    ),
    Deliberate("adapter_without_contract", "A-12", True, frozenset({"adapter.shape_invalid"})),
    Deliberate(
        "policy_snapshot_without_adapter",
        "A-10",
        True,
        frozenset({"adapter.matched_rule_does_not_fire"}),
    ),
)


# -- building and running everything once per module ---------------------------------------------


@dataclass
class Outcome:
    """Both verdicts on one case."""

    case: Case
    peer: PeerVerdict
    ours: dict[str, Any]

    @property
    def our_outcome(self) -> str:
        """``verified``, or the code that stopped it (``unreadable`` keeps its code too)."""
        if self.ours.get("verdict") == "verified":
            return "verified"
        return str(self.ours.get("code") or self.ours.get("verdict"))

    @property
    def agree(self) -> bool:
        """Same decision: verified by both, or by neither."""
        return self.peer.verified == (self.our_outcome == "verified")

    def explanation(self) -> Deliberate | None:
        """The deliberate difference that accounts for a disagreement, if any."""
        return next(
            (d for d in DELIBERATE if d.explains(self.case, self.peer, self.our_outcome)), None
        )

    def describe(self) -> str:
        """One line: the case, the peer's verdict and reasons, ours and its code."""
        reasons = "; ".join(self.peer.reasons()[:4]) or "-"
        return (
            f"{self.case.describe()}: peer verified={self.peer.verified} ({reasons}); "
            f"affidavit {self.ours.get('verdict')} {self.ours.get('code') or ''}".rstrip()
        )


def _all_cases() -> list[Case]:
    cases = handmade_cases() + adapter_cases()
    for seed in SEEDS:
        cases += generated_cases(seed, PER_SEED)
    return cases


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    folder = tmp_path_factory.mktemp("peer-differential")
    log = TransparencyLog.create(folder / "log.db", LOG_KEY, LOG_ID)
    try:
        cases = _all_cases()
        build_cases(cases, log)
    finally:
        log.close()
    key_file = write_peer_key(folder, KEY_B64)
    paths: dict[str, list[Path]] = {"default": [], "swarm-strict": []}
    by_path: dict[str, Case] = {}
    for case in cases:
        path = write_json(folder / f"{case.name}.json", case.bundle)
        paths[case.profile].append(path)
        by_path[str(path)] = case
    results: dict[str, Outcome] = {}
    for profile, files in paths.items():
        _, ours = our_verdicts(files, KEY_B64, profile=profile)
        for path in files:
            case = by_path[str(path)]
            peer = peer_verdict(path, key_file, swarm_strict=profile == "swarm-strict")
            results[case.name] = Outcome(case, peer, ours[str(path)])
    return results


def _unexplained(outcomes: Iterator[Outcome]) -> list[str]:
    return [o.describe() for o in outcomes if not o.agree and o.explanation() is None]


# -- the tests -----------------------------------------------------------------------------------

# Every handmade case must agree with the peer or be explained (docs/parity.md): no case is
# expected to fail. (A strict xfail over an empty list of open differences stood here; it guarded
# nothing, issue 36.)
_HANDMADE: Final = [c.name for c in handmade_cases() + adapter_cases()]


@pytest.mark.parametrize("name", _HANDMADE)
def test_handmade_case(outcomes: dict[str, Outcome], name: str) -> None:
    outcome = outcomes[name]
    assert outcome.agree or outcome.explanation() is not None, outcome.describe()


def test_generated_cases(outcomes: dict[str, Outcome]) -> None:
    generated = [o for o in outcomes.values() if o.case.name.startswith("gen-")]
    assert len(generated) == len(SEEDS) * PER_SEED
    problems = _unexplained(iter(generated))
    assert not problems, f"{len(problems)} unexplained difference(s):\n" + "\n".join(problems)
    # breadth: both decisions occur, and a fair share of differences are on purpose
    verdicts = {o.peer.verified for o in generated}
    assert verdicts == {True, False}


def test_every_deliberate_difference_occurs(outcomes: dict[str, Outcome]) -> None:
    """The list above stays honest: each entry explains at least one real disagreement."""
    used = {o.explanation() for o in outcomes.values() if not o.agree}
    stale = [f"{d.tag} ({d.row})" for d in DELIBERATE if d not in used]
    assert not stale, f"deliberate differences that no longer occur: {stale}"


def test_deliberate_rows_exist_in_parity_table() -> None:
    table = (Path(__file__).resolve().parents[3] / "docs" / "parity.md").read_text()
    missing = [d.row for d in DELIBERATE if f"| {d.row} |" not in table]
    assert not missing, f"rows named by DELIBERATE but absent from docs/parity.md: {missing}"


def test_consequence_substitution_is_never_verified(outcomes: dict[str, Outcome]) -> None:
    """Issue statement: a consequence substitution is never ``verified`` (peer: not verified)."""
    mismatched = [o for o in outcomes.values() if "consequence_mismatch" in o.case.tags]
    assert len(mismatched) >= 3
    for outcome in mismatched:
        assert not outcome.peer.verified, outcome.describe()
        assert outcome.ours["verdict"] != "verified", outcome.describe()


def test_policy_layer_never_decides(outcomes: dict[str, Outcome]) -> None:
    """``policy_layer`` sits outside ``bundle_hash``: shown like the peer, never in the verdict."""
    layered = [o for o in outcomes.values() if "policy_layer" in o.case.tags]
    assert layered
    for outcome in layered:
        bundle = outcome.case.bundle
        assert bundle is not None
        plain = outcomes["plain"]
        if outcome.case.name.startswith("policy_layer_"):
            assert outcome.peer.verified == plain.peer.verified, outcome.describe()
            assert outcome.ours["verdict"] == plain.ours["verdict"], outcome.describe()
        peer_layer = parse_policy_layer(bundle)
        ours = outcome.ours.get("policy_layer")
        assert isinstance(ours, dict), f"no policy_layer in our result: {outcome.describe()}"
        assert ours["sections"] == peer_layer["sections"]
        assert ours["has_policy"] == peer_layer["has_policy"]
        assert ours["used_in_verdict"] is False


def test_peer_in_process_matches_its_cli(outcomes: dict[str, Outcome], tmp_path: Path) -> None:
    """The in-process peer (its ``cmd_bundle``) decides as its installed command does."""
    key_file = write_peer_key(tmp_path, KEY_B64)
    for name in ("plain", "consequence_mismatch", "inclusion_log_id_differs", "swarm_all_signed"):
        outcome = outcomes[name]
        path = write_json(tmp_path / f"{name}.json", outcome.case.bundle)
        argv = [str(PEER_CLI), "bundle", str(path), "--json", "--strict"]
        argv += ["--public-key", str(key_file)]
        if outcome.case.profile == "swarm-strict":
            argv.append("--swarm-strict")
        done = run(argv)
        assert done.returncode == outcome.peer.cli_exit, done.stderr
        assert json.loads(done.stdout)["verified"] == (outcome.peer.cli_exit == 0)


def _step(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next((s for s in result.get("steps", []) if s["name"] == name), {})


def test_leaf_binding_statuses_match(outcomes: dict[str, Outcome]) -> None:
    """``cross_reference.leaf_binding`` has the peer's value wherever both computed it (the peer
    computes it only with a head and a well-formed proof; we report it whenever the step ran)."""
    compared = 0
    for outcome in outcomes.values():
        ours = _step(outcome.ours, "cross_reference").get("details", {}).get("leaf_binding")
        peer = outcome.peer.result["steps"]["cross_reference"].get("leaf_binding")
        bundle = outcome.case.bundle or {}
        peer_computed = "signed_tree_head" in bundle and peer != "no_anchor_claimed"
        if ours is None or not (peer_computed or bundle.get("merkle_inclusion") is None):
            continue
        assert ours == peer, outcome.describe()
        compared += 1
    seen = {
        _step(o.ours, "cross_reference").get("details", {}).get("leaf_binding")
        for o in outcomes.values()
    }
    assert {"bound", "anchor_unbound", "no_anchor_claimed"} <= seen
    assert compared > 100


def test_consequence_binding_statuses_match(outcomes: dict[str, Outcome]) -> None:
    """``cross_reference.consequence_binding``: the peer's four statuses, case by case."""
    seen = set()
    for outcome in outcomes.values():
        ours = _step(outcome.ours, "cross_reference").get("details", {})
        if "consequence_binding" not in ours:
            continue
        peer = outcome.peer.result["steps"]["cross_reference"]["consequence_binding"]
        assert ours["consequence_binding"] == peer, outcome.describe()
        seen.add(peer)
    assert seen == {
        "no_consequence_authorization_claimed",
        "consequence_authorized_not_dispatched",
        "consequence_bound",
        "consequence_identity_mismatch",
    }


def test_sidecar_binding_fields_match(outcomes: dict[str, Outcome]) -> None:
    """A sidecar both accept reports the peer's binding fields (no directory, or the nested
    ``keys_by_key_id`` one the peer reads; a flat directory binds here, row S-12)."""
    compared = 0
    for outcome in outcomes.values():
        sidecar = outcome.peer.sidecar
        step = _step(outcome.ours, "actor_signature_sidecar")
        bundle = outcome.case.bundle or {}
        flat = "key_directory" in bundle and "keys_by_key_id" not in bundle["key_directory"]
        if not sidecar.get("passed") or step.get("status") == "failed" or flat:
            continue
        for field in ("binding_present", "binding_verified", "bindings_checked"):
            assert step["details"][field] == sidecar[field], (field, outcome.describe())
        assert step["status"] == "self_asserted"  # keys from the bundle only (B-23)
        compared += 1
    assert compared >= 5


def test_label_mismatch_is_a_warning(outcomes: dict[str, Outcome]) -> None:
    """AiGentsy's fixture shape: the entry's actor label differs from the signed event's actor;
    the peer accepts it, we verify with the warning naming both (row S-14)."""
    for name in ("none", "flat", "nested"):
        outcome = outcomes[f"sidecar_label_mismatch_{name}"]
        assert outcome.peer.verified
        assert outcome.ours["verdict"] == "verified", outcome.describe()
        (warning,) = [w for w in outcome.ours["warnings"] if "actor_label_mismatch" in w]
        assert warning.startswith("event.actor_label_mismatch:")
        assert "agent:buyer-label" in warning
        assert "agent:buyer" in warning.replace("agent:buyer-label", "")


def test_self_asserted_keys_are_labelled(outcomes: dict[str, Outcome]) -> None:
    """An attacker's key listed in the bundle's own directory: the peer says PASS; we say
    ``self_asserted``, never plain ok (row B-23)."""
    outcome = outcomes["v3_attacker_key_in_directory"]
    assert outcome.peer.result["steps"]["actor_signatures"]["passed"] is True
    assert _step(outcome.ours, "actor_signatures")["status"] == "self_asserted"
    assert any(w.startswith("bundle.actor_keys_self_asserted") for w in outcome.ours["warnings"])


def test_swarm_decision_strength(outcomes: dict[str, Outcome]) -> None:
    """The peer grades a late decision record ``integrity_bound`` and still verifies; a
    verified bundle here has every record covered by the logged leaf (row W-10)."""
    covered = outcomes["swarm_decision_context_ok"]
    record = covered.peer.result["steps"]["swarm_decision"]["records"][0]
    assert (record["strength"], record["anchor_relationship"]) == (
        "authenticated",
        "later_anchor_commits_to_this_prefix",
    )
    assert covered.ours["verdict"] == "verified"
    late = outcomes["swarm_decision_after_finality"]
    record = late.peer.result["steps"]["swarm_decision"]["records"][0]
    assert (record["strength"], record["anchor_relationship"]) == (
        "integrity_bound",
        "anchor_precedes_this_record",
    )
    assert late.peer.verified
    assert late.our_outcome == "bundle.events_after_finality"


def test_unreadable_input_exits_2_in_both(tmp_path: Path) -> None:
    """Not JSON, or no file: exit 2 from both; ours prints one line (style.md §11)."""
    broken = tmp_path / "broken.json"
    broken.write_text('{"deal_id": ')
    for path in (broken, tmp_path / "absent.json"):
        peer = run([str(PEER_CLI), "bundle", str(path)])
        ours = run([str(OUR_CLI), "verify", "bundle", str(path), "--public-key-base64", KEY_B64])
        assert (peer.returncode, ours.returncode) == (2, 2), (peer.stderr, ours.stderr)
        assert len(ours.stderr.strip().splitlines()) == 1
        assert ours.stderr.startswith("error: ")


def test_duplicate_keys_are_refused_here(outcomes: dict[str, Outcome], tmp_path: Path) -> None:
    """A bundle whose text repeats a key: the peer's ``json.load`` keeps the last value and
    verifies; our strict parser refuses to read it two ways (row C-05)."""
    bundle = outcomes["plain"].case.bundle
    assert bundle is not None
    text = json.dumps(bundle)
    assert text.startswith('{"spec_version": ')
    path = tmp_path / "duplicate.json"
    path.write_text('{"deal_id": "someone-else", ' + text[1:], encoding="utf-8")
    key_file = write_peer_key(tmp_path, KEY_B64)
    assert peer_verdict(path, key_file).verified
    done = run([str(OUR_CLI), "verify", "bundle", str(path), "--public-key-base64", KEY_B64])
    assert done.returncode == 2
    assert done.stderr.startswith("error: json.duplicate_key: ")


# -- anchor receipts ------------------------------------------------------------------------------


def _head(outcomes: dict[str, Outcome]) -> dict[str, Any]:
    bundle = outcomes["plain"].case.bundle
    assert bundle is not None
    head: dict[str, Any] = bundle["signed_tree_head"]
    return head


@pytest.mark.parametrize("name", ANCHOR_RECEIPT_NAMES)
def test_anchor_receipt(outcomes: dict[str, Outcome], name: str) -> None:
    """Peer ``verify_anchor_receipt`` passes exactly when none of our receipt checks fails;
    without a trusted TSA certificate ours is ``unanchored``, never ``verified`` (row N-07)."""
    from affidavit.verify.anchor.receipt import verify_anchor_receipt

    receipt = anchor_receipts(_head(outcomes))[name]
    peer_ok, details = peer_anchor(json.loads(json.dumps(receipt)))
    ours = verify_anchor_receipt(receipt, log_key=LOG_KEY.public_key)
    assert ours.verdict != "verified"
    if peer_ok:
        assert ours.verdict == "unanchored", (name, details, ours.to_json())
    else:
        assert ours.verdict in ("failed", "unreadable"), (name, details, ours.to_json())
