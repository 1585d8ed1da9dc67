"""Contract lifecycle (seed 003, "Deprecated, superseded, and revoked contracts") and versions.

>>> from affidavit.verify.contracts.lifecycle import active_head, lifecycle_state
>>> rows = [
...     {"adapter_id": "acme.x.v0", "adapter_version": "0.9.0", "status": "active"},
...     {"adapter_id": "acme.x.v0", "adapter_version": "0.10.0", "status": "active"},
...     {"adapter_id": "acme.x.v0", "adapter_version": "1.0.0", "status": "revoked"},
... ]
>>> active_head(rows, "acme.x.v0")["adapter_version"]
'0.10.0'
>>> lifecycle_state({"status": "active", "replaced_by": "acme.x.v0@0.10.0"})
'superseded'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from affidavit.verify import errors
from affidavit.verify.contracts.schema import ADAPTER_ID_PATTERN, SEMVER_PATTERN

__all__ = [
    "ADAPTER_ID_RE",
    "INSPECTION_ONLY_ADVICE",
    "SEMVER_RE",
    "Lifecycle",
    "active_head",
    "exact_match",
    "lifecycle_advice",
    "lifecycle_state",
    "parse_adapter_ref",
    "parse_semver",
]

Lifecycle = Literal["active", "superseded", "deprecated", "revoked"]

# docs/formats.md §2 patterns (also the peer's pin argument checks), anchored with \A and \Z:
# Python's "$" also matches before a trailing newline. Use them with ``fullmatch`` all the same.
ADAPTER_ID_RE: Final = re.compile(rf"\A{ADAPTER_ID_PATTERN}\Z")
SEMVER_RE: Final = re.compile(rf"\A{SEMVER_PATTERN}\Z")

# seed 003 lifecycle table, "CLI pin behavior" column.
INSPECTION_ONLY_ADVICE: Final = (
    "REVOKED - inspection-only pin, recorded for legacy or forensic review. Do not adopt for new "
    "work: new evaluations route to unknown_adapter; historical bundles still replay."
)
_ADVICE: Final[Mapping[Lifecycle, str | None]] = {
    "active": None,
    "superseded": "SUPERSEDED - a newer version exists; adoption is allowed, consider migrating.",
    "deprecated": (
        "DEPRECATED - migrate new work to the replacement when ready; historical bundles "
        "still verify from their embedded declarations."
    ),
    "revoked": INSPECTION_ONLY_ADVICE,
}


def parse_semver(version: str) -> tuple[int, int, int]:
    """``"1.2.3"`` -> ``(1, 2, 3)``.

    Raises:
        ``pin.invalid_argument``: the text is not ``MAJOR.MINOR.PATCH`` digits without leading
            zeros.
    """
    if not isinstance(version, str) or not SEMVER_RE.fullmatch(version):
        raise errors.ContractError(
            "pin.invalid_argument", f"not a semver MAJOR.MINOR.PATCH: {version!r}"
        )
    major, minor, patch = (int(part) for part in version.split("."))
    return major, minor, patch


def parse_adapter_ref(ref: str) -> tuple[str, str]:
    """``"acme.x.v0@1.2.3"`` -> ``("acme.x.v0", "1.2.3")`` (seed 003: supersedes/replaced_by).

    Raises:
        ``entry.lifecycle_invalid``: not ``adapter_id@semver``.
    """
    adapter_id, at, version = ref.rpartition("@") if isinstance(ref, str) else ("", "", "")
    if not at or not ADAPTER_ID_RE.fullmatch(adapter_id) or not SEMVER_RE.fullmatch(version):
        raise errors.ContractError(
            "entry.lifecycle_invalid", f"expected adapter_id@MAJOR.MINOR.PATCH, got {ref!r}"
        )
    return adapter_id, version


def lifecycle_state(row: Mapping[str, Any]) -> Lifecycle:
    """The lifecycle of a declaration, manifest entry or pin: a missing status means active, an
    unknown one revoked (fail closed; the manifest verifier reports it)."""
    status = row.get("status") or "active"
    if status == "active":
        return "superseded" if row.get("replaced_by") else "active"
    if status == "deprecated":
        return "deprecated"
    return "revoked"


def lifecycle_advice(state: Lifecycle) -> str | None:
    """The advice recorded in a pin for this lifecycle state (None for plain active)."""
    return _ADVICE[state]


def _version_key(row: Mapping[str, Any]) -> tuple[int, int, int]:
    try:
        return parse_semver(row.get("adapter_version", ""))
    except errors.ContractError:  # pin.invalid_argument: not semver, sorts first
        return (-1, -1, -1)


def active_head(rows: Iterable[Mapping[str, Any]], adapter_id: str) -> Mapping[str, Any] | None:
    """The highest-semver active (or superseded) row of ``adapter_id``, None when there is none
    (seed 003 "Coexistence and collision rules": get_contract(adapter_id))."""
    candidates = [
        r
        for r in rows
        if r.get("adapter_id") == adapter_id
        and (r.get("status") or "active") == "active"
        and SEMVER_RE.fullmatch(str(r.get("adapter_version", "")))
    ]
    return max(candidates, key=_version_key) if candidates else None


def exact_match(
    rows: Iterable[Mapping[str, Any]], adapter_id: str, adapter_version: str
) -> Mapping[str, Any] | None:
    """The first row with exactly this (adapter_id, adapter_version), or None."""
    for row in rows:
        if row.get("adapter_id") == adapter_id and row.get("adapter_version") == adapter_version:
            return row
    return None
