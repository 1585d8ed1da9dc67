"""ProofPack bundle verification, offline and fail-closed (docs/formats.md §4, seed 003).

>>> verifier = BundleVerifier(trusted_keys=())
>>> result = verifier.verify({"deal_id": "d", "proofs": [], "events": [],
...                           "merkle_inclusion": None, "bundle_hash": "0" * 64})
>>> result.verdict, result.failed_step.name, result.failed_step.code
('failed', 'bundle_hash', 'bundle.hash_mismatch')

The step plan; names and order are part of the ``--json`` output
(``specs/verify-result.schema.json``), and the code below carries each number:

 1. ``parse``: strict top level (else *unreadable*, exit 2), parts read once (:mod:`.views`)
 2. ``bundle_hash`` (:mod:`.hashing`)
 3. ``event_chain`` (:mod:`.events`)
 4. ``proof_binding``: proofs bound by an event's ``payload.proof_hashes``
 5. ``merkle_inclusion`` (RFC 9162 §2.1.3; :mod:`.inclusion`)
 6. ``sth_signature``: the tree head under a key the caller trusts
 7. ``cross_reference`` (docs/formats.md §4 "Cross-reference", docs/adr/0008; :mod:`.binding`)
 8. ``actor_signatures`` (:mod:`.events`, :mod:`.actor_trust`)
 9. ``actor_signature_sidecar`` (:mod:`.events`)
10. ``adapter_replay`` (:mod:`.adapter_replay`)
11. ``outcome_reconciliation``: only with an ``OUTCOME_RECONCILED`` event (:mod:`.events`)
12. to 14. ``swarm_coverage``, ``swarm_snapshot``, ``swarm_decision``: only with
    ``profile="swarm-strict"`` (:mod:`.swarm`, :mod:`.swarm_decision`)
15. ``tlog_proof``: only with a ``tlog_policy``, else ``not_checked`` for a bundle that carries
    one (:mod:`.tlog_step`)

Steps 4 and 7 to 14 need a verified chain (step 3). When it fails, steps 5 and 6 are still
reported (they do not read the events), then 4 and 7 to 10 (and 12 to 14) as ``not_checked``.

Verdict: ``failed`` when any step failed; otherwise ``verified`` only when inclusion, the tree-head
signature, the cross-reference (and any ``tlog_proof``) are ``ok``; else ``unanchored``. A
``self_asserted`` step does not fail the bundle unless ``require_actor_signatures``
(docs/adr/0008). The ``policy_layer`` is shown, never used for the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.adapter_replay import replay_adapter
from affidavit.verify.bundles.binding import cross_reference
from affidavit.verify.bundles.events import (
    ActorCheck,
    SidecarCheck,
    actor_signature_check,
    chain_step,
    check_reconciliation,
    sidecar_check,
)
from affidavit.verify.bundles.hashing import bundle_hash, proof_hash
from affidavit.verify.bundles.inclusion import inclusion_step, read_inclusion
from affidavit.verify.bundles.views import (
    BundleView,
    Event,
    TreeHead,
    parse_events,
    view_policy_layer,
)
from affidavit.verify.contracts.validators import ValidatorRegistry, default_registry
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.crypto.treehead import SignedTreeHead, parse_sth
from affidavit.verify.json.forms import same_digest
from affidavit.verify.json.strict import loads
from affidavit.verify.results import Result, StepResult

if TYPE_CHECKING:
    from affidavit.verify.bundles.actor_trust import ActorTrust
    from affidavit.verify.crypto.windows import KeyWindow
    from affidavit.verify.tlog.policy import Policy

__all__ = [
    "PROFILES",
    "SPEC_VERSIONS",
    "UNANCHORED_HINT",
    "BundleVerifier",
    "verify_bundle",
]

SPEC_VERSIONS: Final = ("1.0.0", "2.0.0", "3.0.0")
PROFILES: Final = ("default", "swarm-strict")
SWARM_STEPS: Final = ("swarm_coverage", "swarm_snapshot", "swarm_decision")
SELF_ASSERTED_WARNING: Final = (
    "bundle.actor_keys_self_asserted: actor signatures verify only under keys the bundle "
    "carries; trust the actors' keys (actor_trust) to prove who signed"
)
UNANCHORED_HINT: Final = "no tree head signed by a trusted key"
_UNANCHORED: Final = ("bundle.unanchored", UNANCHORED_HINT)
_AFTER_CHAIN: Final = (
    "proof_binding",
    "cross_reference",
    "actor_signatures",
    "actor_signature_sidecar",
    "adapter_replay",
)
_TOP_TYPES: Final = (("deal_id", str), ("proofs", list), ("events", list), ("bundle_hash", str))


def _parse(unverified: Any) -> None:
    """Step 1, ``parse``: the top level. Raises ``bundle.malformed`` /
    ``bundle.unsupported_version`` (exit 2)."""
    if not isinstance(unverified, dict):
        raise errors.BundleError("bundle.malformed", "a bundle must be a JSON object")
    for name, kind in _TOP_TYPES:
        if not isinstance(unverified.get(name), kind):
            raise errors.BundleError(
                "bundle.malformed",
                f"bundle.{name} is missing or not {'a string' if kind is str else 'an array'}",
            )
    if "spec_version" in unverified and unverified["spec_version"] not in SPEC_VERSIONS:
        raise errors.BundleError(
            "bundle.unsupported_version",
            f"spec_version {unverified['spec_version']!r} is not one of {', '.join(SPEC_VERSIONS)}",
        )
    inclusion = unverified.get("merkle_inclusion")
    if inclusion is not None and not isinstance(inclusion, dict):
        raise errors.BundleError(
            "bundle.malformed", "bundle.merkle_inclusion must be an object or null"
        )


_NO_TREE_HEAD: Final = TreeHead()
_HEAD_MEMO_SIZE: Final = 64  # tree heads a verifier keeps parsed (a batch is one head or a few)
_PLAIN_HEAD_VALUES: Final = (str, int, type(None))  # exact types: True and 1 never share a key


def _read_tree_head(raw_head: Any) -> TreeHead:
    """Step 1, continued: the signed tree head, parsed strictly (its signature is step 6)."""
    if raw_head is None:
        return _NO_TREE_HEAD
    try:
        return TreeHead(parse_sth(raw_head))
    except errors.AffidavitError as e:
        return TreeHead(error=e)


def _head_key(raw_head: Any) -> tuple[tuple[str, Any], ...] | None:
    """The head's fields as a memo key when every name is a ``str`` and every value a ``str``,
    ``int`` or ``None`` (exact types: equal keys are equal JSON); else ``None``, not memoized."""
    if type(raw_head) is not dict:
        return None
    fields = tuple(raw_head.items())
    for name, value in fields:
        if type(name) is not str or type(value) not in _PLAIN_HEAD_VALUES:
            return None
    return fields


def _read_parts(bundle: dict[str, Any], tree_head: TreeHead) -> BundleView:
    """Step 1, continued: read the parts the anchor rests on, once (:mod:`.views`)."""
    inclusion = read_inclusion(bundle.get("merkle_inclusion"))
    return BundleView(
        bundle, bundle["deal_id"], parse_events(bundle["events"]), inclusion, tree_head
    )


class BundleVerifier:
    """Verifies bundles against a fixed set of trusted tree-head keys. Reuse one for many
    bundles: tree heads and their signatures are memoized, so one head costs one check."""

    def __init__(
        self,
        trusted_keys: Iterable[Ed25519PublicKey] = (),
        *,
        actor_trust: ActorTrust | None = None,
        require_actor_signatures: bool = False,
        profile: str = "default",
        tlog_policy: Policy | None = None,
        key_windows: Mapping[bytes, Sequence[KeyWindow]] | None = None,
        validators: ValidatorRegistry = default_registry,
    ) -> None:
        if profile not in PROFILES:
            raise errors.UsageError(f"profile {profile!r} is not one of {', '.join(PROFILES)}")
        self.trusted_keys: tuple[Ed25519PublicKey, ...] = tuple(trusted_keys)
        self.actor_trust = actor_trust
        self.require_actor_signatures = require_actor_signatures
        self.profile = profile
        self.tlog_policy = tlog_policy  # C2SP tlog-policy: step 15 required (fail closed)
        self._sth_memo: dict[tuple[bytes, bytes], Ed25519PublicKey | None] = {}
        self._heads: dict[tuple[tuple[str, Any], ...], TreeHead] = {}
        # Validity windows of trusted keys, by raw key (verify/crypto/windows.py; none: always).
        self.key_windows = {raw: tuple(found) for raw, found in (key_windows or {}).items()}
        # Step 10 re-runs validators from these: the built-ins unless the caller passes plug-ins.
        self.validators = validators

    def verify(self, unverified_bundle: Any, *, source: str | None = None) -> Result:
        """Verify one parsed bundle; never raises for any JSON value (see the module docstring)."""
        # 1. parse: the top level (docs/formats.md §4), else unreadable; then the typed views.
        try:
            _parse(unverified_bundle)
        except errors.AffidavitError as e:
            return self.unreadable(source, e)
        tree_head = self._tree_head(unverified_bundle.get("signed_tree_head"))
        view = _read_parts(unverified_bundle, tree_head)
        bundle = unverified_bundle  # kept for byte-exact hashing and the steps that read their own
        warnings: list[str] = []
        # 2. bundle_hash: recomputed from the bytes received (docs/formats.md §1, §4).
        steps = [StepResult.ok("parse"), self._bundle_hash(bundle)]
        # 3. event_chain: shape, deal, ids, hashes, prev_hash links (docs/formats.md §4 "Event").
        chain = chain_step(view.events, view.deal_id)
        steps.append(chain)
        # 5. merkle_inclusion and 6. sth_signature read no event: computed here, reported in order.
        inclusion = inclusion_step(view.inclusion)
        sth, sth_step = self._sth_step(view.tree_head)
        if chain.status == "ok":
            # 4. proof_binding: events listing proof_hashes list exactly these proofs.
            steps.append(_proof_binding(view, warnings))
            steps.append(inclusion)  # 5.
            steps.append(sth_step)  # 6.
            # 7. cross_reference: root, leaf and consequence binding (docs/formats.md §4, ADR 0008).
            steps.append(cross_reference(view, inclusion, sth))
            # 8. actor_signatures and 9. actor_signature_sidecar (docs/adr/0008).
            steps.extend(self._actor_steps(view, warnings))
            # 10. adapter_replay: embedded contracts, validators, policy decisions.
            steps.append(replay_adapter(bundle, warnings, validators=self.validators))
            # 11. outcome_reconciliation: only with an OUTCOME_RECONCILED event.
            reconciliation = check_reconciliation(bundle["events"])
            if reconciliation is not None:
                steps.append(reconciliation)
            # 12.-14. swarm_coverage, swarm_snapshot, swarm_decision: profile swarm-strict only.
            if self.profile == "swarm-strict":
                from affidavit.verify.bundles.swarm import swarm_steps  # noqa: PLC0415 - lazy: only this profile needs it (docs/adr/0003)

                steps.extend(swarm_steps(bundle, self.actor_trust))
        else:
            # A broken chain: 5. and 6. as computed, then 4., 7.-10. (12.-14.) not checked.
            steps.extend((inclusion, sth_step))
            why = "the event chain did not verify"
            steps.extend(StepResult.not_checked(name, why) for name in _AFTER_CHAIN)
            if self.profile == "swarm-strict":
                steps.extend(StepResult.not_checked(name, why) for name in SWARM_STEPS)
        # 15. tlog_proof: under a tlog-policy, or shown not_checked when the bundle carries one.
        if self.tlog_policy is not None or "tlog_proof" in bundle:
            from affidavit.verify.bundles.tlog_step import tlog_proof_step  # noqa: PLC0415 - lazy: only these bundles (docs/adr/0003)

            chained = chain.status == "ok"
            steps.append(tlog_proof_step(view, self.tlog_policy, chained=chained))
        # The verdict, from the steps (style.md §5): anchored needs 5., 6. and 7. ok (and 15.).
        final = tuple(steps)
        required: tuple[str, ...] = ("merkle_inclusion", "sth_signature", "cross_reference")
        if self.tlog_policy is not None:
            required = (*required, "tlog_proof")
        subject = {
            "deal_id": bundle["deal_id"],
            "spec_version": bundle.get("spec_version"),
            "bundle_hash": bundle["bundle_hash"],
            "warnings": list(dict.fromkeys(warnings)),
            "profile": self.profile,
        }
        if "policy_layer" in bundle:  # shown, outside bundle_hash and the verdict (formats.md §4)
            subject["policy_layer"] = view_policy_layer(bundle)
        return Result("bundle", source, final, subject, required, _UNANCHORED)

    def _tree_head(self, raw_head: Any) -> TreeHead:
        """The bundle's tree head (:func:`_read_tree_head`), memoized on its exact fields
        (:func:`_head_key`): bundles under one head parse it once."""
        key = _head_key(raw_head)
        if key is None:
            return _read_tree_head(raw_head)
        found = self._heads.get(key)
        if found is None:
            if len(self._heads) >= _HEAD_MEMO_SIZE:
                self._heads.clear()
            found = self._heads[key] = _read_tree_head(raw_head)
        return found

    def _actor_steps(self, view: BundleView, warnings: list[str]) -> list[StepResult]:
        """Steps 8, ``actor_signatures``, and 9, ``actor_signature_sidecar``, with the caller's
        requirement (``require_actor_signatures``) applied to the first (docs/adr/0008)."""
        bundle = view.raw
        actors = actor_signature_check(
            bundle["events"], bundle.get("key_directory"), self.actor_trust
        )
        sidecar = sidecar_check(bundle, self.actor_trust)
        warnings.extend(sidecar.warnings)
        if "self_asserted" in (actors.step.status, sidecar.step.status):
            warnings.append(SELF_ASSERTED_WARNING)
        first = actors.step
        if self.require_actor_signatures and "failed" not in (first.status, sidecar.step.status):
            first = _required(view.events.items, actors, sidecar)
        return [first, sidecar.step]

    def unreadable(self, source: str | None, error: errors.AffidavitError) -> Result:
        """The result for a bundle that ``error`` kept from being read: one failed ``parse``
        step, and the bundle's fields null (every bundle result has them, as the peer's does)."""
        subject = dict.fromkeys(("deal_id", "spec_version", "bundle_hash"))
        subject.update(warnings=[], profile=self.profile)
        return Result("bundle", source, (StepResult.unreadable("parse", error),), subject)

    def verify_bytes(self, data: bytes, *, source: str | None = None) -> Result:
        """Parse ``data`` strictly (:mod:`.jsonio`) and verify; bad JSON gives ``unreadable``."""
        try:
            document = loads(data)
        except errors.ParseError as e:
            return self.unreadable(source, e)
        return self.verify(document, source=source)

    # -- steps --------------------------------------------------------------------------

    @staticmethod
    def _bundle_hash(bundle: Mapping[str, Any]) -> StepResult:
        """Step 2, ``bundle_hash`` (docs/formats.md §4)."""
        try:
            recomputed = bundle_hash(bundle)
        except errors.CanonicalError as e:
            return StepResult.failed("bundle_hash", e)
        if not same_digest(recomputed, bundle["bundle_hash"]):
            error = errors.BundleError(
                "bundle.hash_mismatch", "bundle_hash does not match the bundle"
            )
            return StepResult.failed(
                "bundle_hash", error, expected=recomputed, actual=bundle["bundle_hash"]
            )
        form = "py-compact" if "spec_version" in bundle else "py-spaced (legacy)"
        return StepResult.ok("bundle_hash", form=form)

    def _sth_step(self, tree_head: TreeHead) -> tuple[SignedTreeHead | None, StepResult]:
        """Step 6, ``sth_signature``: the head (read in step 1) verified under the trusted keys
        (memoized; docs/formats.md §4 "Signed tree head")."""
        name = "sth_signature"
        if tree_head.error is not None:
            return None, StepResult.failed(name, tree_head.error)
        sth = tree_head.head
        if sth is None:
            return None, StepResult.not_checked(name, "the bundle carries no signed_tree_head")
        if not self.trusted_keys:
            return sth, StepResult.not_checked(name, UNANCHORED_HINT)
        message = sth.message()
        memo_key = (message, sth.signature)
        if memo_key not in self._sth_memo:
            self._sth_memo[memo_key] = self._find_signer(message, sth.signature)
        signer = self._sth_memo[memo_key]
        if signer is None:
            error = errors.SignatureError(
                "treehead.signature_bad",
                f"the tree head of {sth.log_id!r} at size {sth.tree_size} is not signed by any "
                f"of the {len(self.trusted_keys)} trusted key(s)",
            )
            return None, StepResult.failed(name, error)
        windows = self.key_windows.get(signer.raw)
        if windows:  # the head's timestamp inside the signer's validity window (ADR 0011)
            from affidavit.verify.crypto.windows import check_head_time  # noqa: PLC0415 - lazy: only windowed keys

            try:
                check_head_time(
                    windows,
                    sth.timestamp,
                    key_b64=signer.b64,
                    log_id=sth.log_id,
                    tree_size=sth.tree_size,
                )
            except errors.SignatureError as e:
                return None, StepResult.failed(name, e)
        return sth, StepResult.ok(name, key=signer.b64, key_id=sth.key_id)

    def _find_signer(self, message: bytes, signature: bytes) -> Ed25519PublicKey | None:
        for key in self.trusted_keys:
            try:
                verify_ed25519(key, message, signature)
            except errors.AffidavitError:
                continue
            return key
        return None


def _required(events: Sequence[Event], actors: ActorCheck, sidecar: SidecarCheck) -> StepResult:
    """``actor_signatures`` under the caller's requirement: every event carries an actor
    signature that verifies under a key the caller trusts (docs/adr/0008)."""
    name = actors.step.name
    signed = set(actors.signed)
    trusted = set(actors.trusted)
    for index, event in enumerate(events):
        if event.hash in sidecar.signed:
            signed.add(index)
        if event.hash in sidecar.trusted:
            trusted.add(index)
    details = {"events": len(events), "signed_events": len(signed), "trusted_events": len(trusted)}
    if len(signed) < len(events):
        missing = errors.BundleError(
            "bundle.actor_signatures_missing",
            f"actor signatures are required; {len(events) - len(signed)} of {len(events)} "
            "event(s) carry none",
        )
        return StepResult.failed(name, missing, **details)
    if len(trusted) < len(events):
        untrusted = errors.BundleError(
            "bundle.actor_signatures_untrusted",
            f"actor signatures are required under keys the caller trusts; "
            f"{len(events) - len(trusted)} of {len(events)} event(s) are signed under no key the "
            "caller trusts for their actor at their time",
        )
        return StepResult.failed(name, untrusted, **details)
    return StepResult.ok(name, trust="caller_trusted", **details)


def _proof_binding(view: BundleView, warnings: list[str]) -> StepResult:
    """Step 4, ``proof_binding``: events listing ``proof_hashes`` must list exactly these proofs
    (hashed only when an event binds them, issue 35)."""
    name = "proof_binding"
    binders = [
        (i, e.payload["proof_hashes"])
        for i, e in enumerate(view.events.items)
        if "proof_hashes" in e.payload
    ]
    proofs = view.raw["proofs"]
    if not binders:
        if proofs:
            warnings.append("proofs are covered by bundle_hash only; no event binds them")
        return StepResult.not_checked(name, "no event binds the proofs (proof_hashes)")
    expected = [proof_hash(p) for p in proofs]
    for index, listed in binders:
        if listed != expected:
            error = errors.BundleError(
                "bundle.proof_unbound",
                f"events[{index}].payload.proof_hashes do not match the bundle's proofs",
            )
            return StepResult.failed(name, error, expected=expected, actual=listed, index=index)
    return StepResult.ok(name, proofs=len(expected))


def verify_bundle(
    unverified_bundle: Any,
    trusted_keys: Iterable[Ed25519PublicKey] = (),
    *,
    source: str | None = None,
    actor_trust: ActorTrust | None = None,
    profile: str = "default",
) -> Result:
    """One-shot :meth:`BundleVerifier.verify` (prefer a shared verifier for many bundles)."""
    verifier = BundleVerifier(trusted_keys, actor_trust=actor_trust, profile=profile)
    return verifier.verify(unverified_bundle, source=source)
