"""Step ``outcome_reconciliation``: the SDK's controlled vocabularies of ``OUTCOME_RECONCILED``.

>>> check_reconciliation([]) is None
True

An ``OUTCOME_RECONCILED`` event records a post-action read-back (AiGentsy SDK 1.17.2,
``record_outcome_reconciled``). The SDK writes three fields only from closed vocabularies; a value
outside them (or a missing one) is not something the SDK writes, so it fails the step
(``bundle.reconciliation_vocabulary_unknown``, ``details.unknown`` lists each ``field=value``).
The step reports what the events record; it never judges whether the read-back is true.
Reported only when the bundle has such an event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.results import StepResult

__all__ = ["EVENT_TYPE", "VOCABULARIES", "check_reconciliation"]

STEP: Final = "outcome_reconciliation"
EVENT_TYPE: Final = "OUTCOME_RECONCILED"
VOCABULARIES: Final[Mapping[str, frozenset[str]]] = {
    "reconciliation_status": frozenset({"matched", "mismatched", "inconclusive", "unavailable"}),
    "readback_source_type": frozenset(
        {
            "first_party",
            "third_party",
            "platform_attested",
            "caller_attested",
            "signed_external",
            "unsigned_external",
        }
    ),
    "evidence_redaction_status": frozenset(
        {"hash_only", "summary_only", "redacted", "full_payload_opt_in"}
    ),
}


def check_reconciliation(events: Sequence[Mapping[str, Any]]) -> StepResult | None:
    """The step for chain-checked events, or None when no ``OUTCOME_RECONCILED`` is present."""
    records: list[dict[str, Any]] = []
    unknown: list[str] = []
    for index, event in enumerate(events):
        if event["event_type"] != EVENT_TYPE:
            continue
        payload = event["payload"]
        record: dict[str, Any] = {"event_id": event["event_id"], "index": index}
        for field, allowed in VOCABULARIES.items():
            value = payload.get(field)
            record[field] = value
            if not isinstance(value, str) or value not in allowed:
                unknown.append(f"events[{index}].payload.{field}={value!r}")
        records.append(record)
    if not records:
        return None
    if unknown:
        error = errors.BundleError(
            "bundle.reconciliation_vocabulary_unknown",
            f"{len(unknown)} value(s) outside the OUTCOME_RECONCILED vocabularies: "
            + ", ".join(unknown[:5]),
        )
        return StepResult.failed(STEP, error, unknown=unknown, records=records)
    return StepResult.ok(STEP, records=records)
