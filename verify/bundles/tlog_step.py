"""Step ``tlog_proof``: the bundle's finality leaf in a log that witnesses cosigned (C2SP
tlog-proof; docs/formats.md §4).

Under a tlog-policy the step fails closed unless the bundle's ``tlog_proof`` parses, proves
``merkle_inclusion.leaf_index``, proves the leaf ``cross_reference`` binds
(:func:`~affidavit.verify.bundles.binding.bind_leaf`) and verifies under the policy, witness
quorum included (:func:`affidavit.verify.tlog.proof.verify_proof`). Without a policy it is
reported ``not_checked``, and only for a bundle that carries a ``tlog_proof``.

Cold start (docs/adr/0003-cold-start.md): imported only for such a bundle or under a policy.
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
