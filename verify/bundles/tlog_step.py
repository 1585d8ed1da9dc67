"""Step ``tlog_proof``: the bundle's finality leaf in a log that witnesses cosigned (C2SP).

A stamped bundle may carry ``tlog_proof``: a string holding a C2SP tlog-proof
(https://c2sp.org/tlog-proof) of its finality leaf, a top-level field outside ``bundle_hash``
(docs/formats.md §4: "any other key"; ``affidavit log proof DB --bundle`` adds it). Under a
tlog-policy (``BundleVerifier(tlog_policy=...)``, ``verify bundle --policy``) the step checks, in
order, and fails closed:

1. the bundle carries ``tlog_proof`` (else ``bundle.tlog_proof_missing``), a string that parses
   (``tlog.proof_malformed``, ``checkpoint.malformed``);
2. its index is ``merkle_inclusion.leaf_index`` (``bundle.tlog_proof_mismatch``);
3. the leaf it proves is the bundle's finality leaf: the one the claimed leaf hash recomputes from
   (:func:`~affidavit.verify.bundles.binding.bind_leaf`, as ``cross_reference`` binds it);
4. its checkpoint is signed by a policy log named by its origin, every policy witness's
   cosignature verifies and the quorum is met, and the inclusion path binds the leaf to the
   checkpoint's root (:func:`affidavit.verify.tlog.proof.verify_proof`: ``tlog.*``,
   ``checkpoint.*``, ``merkle.*``).

A bundle whose chain, inclusion or leaf binding already failed reports the step ``not_checked``
(those steps fail it). Without a policy the step is reported only for a bundle that carries a
``tlog_proof``, as ``not_checked``: it never changes the verdict then. The checkpoint need not be
the signed tree head's size: it only has to cover the leaf.

Cold start (docs/adr/0003-cold-start.md): this module is imported only for a bundle with a
``tlog_proof`` or under a policy, and the tlog-proof modules (dataclasses, signed notes) only under
a policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from affidavit.verify import errors
from affidavit.verify.bundles.binding import bind_leaf
from affidavit.verify.bundles.events import FINALITY_EVENT_TYPES, leaf_data
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.results import StepResult

if TYPE_CHECKING:
    from affidavit.verify.bundles.views import BundleView
    from affidavit.verify.tlog.policy import Policy

__all__ = ["FIELD", "NO_POLICY", "STEP", "tlog_proof_step"]

STEP: Final = "tlog_proof"
FIELD: Final = "tlog_proof"
NO_POLICY: Final = "no tlog-policy was given to check the bundle's tlog_proof against"


def tlog_proof_step(view: BundleView, policy: Policy | None, *, chained: bool) -> StepResult:
    """Step ``tlog_proof`` (module docstring). ``chained``: the event chain verified."""
    if policy is None:
        return StepResult.not_checked(STEP, NO_POLICY)
    if not chained:
        return StepResult.not_checked(STEP, "the event chain did not verify")
    bundle = view.raw
    if FIELD not in bundle:
        missing = errors.BundleError(
            "bundle.tlog_proof_missing",
            "a tlog-policy was given, and the bundle carries no tlog_proof of its finality leaf",
        )
        return StepResult.failed(STEP, missing)
    text = bundle[FIELD]
    if not isinstance(text, str):
        malformed = errors.ProofError("tlog.proof_malformed", "tlog_proof must be a string")
        return StepResult.failed(STEP, malformed)
    inclusion = view.inclusion.proof
    if inclusion is None:
        return StepResult.not_checked(STEP, "no well-formed merkle_inclusion names the leaf")
    events = view.events.items
    _, bound = bind_leaf(events, view.inclusion)
    if bound is None or events[bound].event_type not in FINALITY_EVENT_TYPES:
        return StepResult.not_checked(STEP, "the proven leaf is bound to no finality event")
    leaf = leaf_hash(leaf_data(events[bound].raw))
    from affidavit.verify.tlog.proof import parse_proof, verify_proof  # noqa: PLC0415 - lazy: only under a policy (docs/adr/0003)

    try:
        proof = parse_proof(text)
    except errors.AffidavitError as e:
        return StepResult.failed(STEP, e)
    if proof.index != inclusion.leaf_index:
        other = errors.BundleError(
            "bundle.tlog_proof_mismatch",
            f"tlog_proof is for leaf {proof.index}, merkle_inclusion for leaf "
            f"{inclusion.leaf_index}",
        )
        return StepResult.failed(STEP, other, expected=inclusion.leaf_index, actual=proof.index)
    try:
        verified = verify_proof(proof, policy, leaf_hash=leaf)
    except errors.AffidavitError as e:
        return StepResult.failed(STEP, e)
    return StepResult.ok(STEP, **verified.to_json())
