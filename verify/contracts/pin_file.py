"""Pin files (docs/formats.md §3 ``pinned_adapters.json``), ours or the peer's: every pin is
validated and each (adapter_id, adapter_version) may be pinned once.

>>> parse_pin_file({"pinned_adapters": []}).pins
()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.contracts.lifecycle import ADAPTER_ID_RE, SEMVER_RE
from affidavit.verify.json.forms import HEX64

__all__ = ["Pin", "PinFile", "parse_pin_file", "validate_pin_args"]

# seed 003 lifecycle table: how the peer and we word a recorded inspection-only pin.
_RECORDED_INSPECTION_ADVICE: Final = (
    "REVOKED \u2014 inspection-only pin",
    "REVOKED - inspection-only pin",
)


def validate_pin_args(adapter_id: str, adapter_version: str, contract_hash_hex: str) -> None:
    """Check the three identifying pin values.

    Raises:
        ``pin.invalid_argument``: id not reverse-DNS, version not semver, or hash not 64 lowercase
            hex.
    """
    if not ADAPTER_ID_RE.fullmatch(adapter_id):
        raise errors.ContractError(
            "pin.invalid_argument", f"adapter id must be reverse-DNS style: {adapter_id!r}"
        )
    if not SEMVER_RE.fullmatch(adapter_version):
        raise errors.ContractError(
            "pin.invalid_argument",
            f"version must be semver MAJOR.MINOR.PATCH without leading zeros: {adapter_version!r}",
        )
    if not HEX64.fullmatch(contract_hash_hex):  # the one hex64 form (verify/json/forms.py)
        raise errors.ContractError(
            "pin.invalid_argument", "contract hash must be 64 lowercase hex characters"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Pin:
    """One validated pin. ``raw`` is the pin object as read, kept for a byte-faithful rewrite."""

    adapter_id: str
    adapter_version: str
    contract_hash: str
    status: str | None
    entry_hash: str | None
    entry_hash_status: str | None
    entry_signature_status: str | None
    lifecycle_advice: str | None
    raw: Mapping[str, Any] = dataclasses.field(compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        """Identity: (adapter_id, adapter_version)."""
        return self.adapter_id, self.adapter_version

    @property
    def inspection_only(self) -> bool:
        """True when the pin was recorded as inspection-only: ``"inspection_only": true`` (as
        :func:`~affidavit.verify.contracts.pins.plan_pin` records it) or the peer's (or our)
        recorded advice; editable text, honoured only under ``allow_inspection_only``."""
        if self.raw.get("inspection_only") is True:
            return True
        # The peer records it only as advice; accept its exact wording (and ours), not any text.
        return (self.lifecycle_advice or "").startswith(_RECORDED_INSPECTION_ADVICE)


@dataclasses.dataclass(frozen=True, slots=True)
class PinFile:
    """A parsed ``pinned_adapters.json``: its pins and every other top-level key, as read."""

    pins: tuple[Pin, ...]
    extra: Mapping[str, Any] = dataclasses.field(compare=False, repr=False)


def _optional_text(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise errors.ContractError("pin.file_invalid", f"{where}: {key} must be a string or null")
    return value


def _parse_pin(raw: Any, index: int) -> Pin:
    where = f"pinned_adapters[{index}]"
    if not isinstance(raw, dict):
        raise errors.ContractError(
            "pin.file_invalid", f"{where} must be an object", details={"index": index}
        )
    values = {}
    for key in ("adapter_id", "adapter_version", "contract_hash"):
        value = raw.get(key)
        if not isinstance(value, str):
            raise errors.ContractError(
                "pin.file_invalid", f"{where}: {key} missing or not a string"
            )
        values[key] = value
    try:
        validate_pin_args(values["adapter_id"], values["adapter_version"], values["contract_hash"])
    except errors.ContractError as e:
        if e.code != "pin.invalid_argument":
            raise
        raise errors.ContractError(
            "pin.file_invalid", f"{where}: {e.message}", details={"index": index}
        ) from None
    return Pin(
        adapter_id=values["adapter_id"],
        adapter_version=values["adapter_version"],
        contract_hash=values["contract_hash"],
        status=_optional_text(raw, "status", where),
        entry_hash=_optional_text(raw, "entry_hash", where),
        entry_hash_status=_optional_text(raw, "entry_hash_status", where),
        entry_signature_status=_optional_text(raw, "entry_signature_status", where),
        lifecycle_advice=_optional_text(raw, "lifecycle_advice", where),
        raw=dict(raw),
    )


def parse_pin_file(document: Any) -> PinFile:
    """Validate a parsed pin file (ours or the peer's).

    Raises:
        ``pin.file_invalid``: not an object, ``pinned_adapters`` not an array of valid pins, or the
            same (adapter_id, adapter_version) pinned twice.
    """
    if not isinstance(document, dict):
        raise errors.ContractError("pin.file_invalid", "a pin file must be a JSON object")
    raw_pins = document.get("pinned_adapters")
    if raw_pins is None:
        raw_pins = []
    if not isinstance(raw_pins, list):
        raise errors.ContractError("pin.file_invalid", "pinned_adapters must be an array")
    pins = tuple(_parse_pin(raw, i) for i, raw in enumerate(raw_pins))
    seen: set[tuple[str, str]] = set()
    for pin in pins:
        if pin.key in seen:
            raise errors.ContractError(
                "pin.file_invalid", f"{pin.adapter_id}@{pin.adapter_version} is pinned twice"
            )
        seen.add(pin.key)
    extra = {k: v for k, v in document.items() if k != "pinned_adapters"}
    return PinFile(pins=pins, extra=extra)
