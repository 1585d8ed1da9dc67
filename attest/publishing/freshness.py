"""Sign a manifest's freshness statement (docs/formats.md §3; affidavit.verify.contracts.freshness).

>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.publishing.publish import build_manifest
>>> key = derive_test_key("doctest TEST-ONLY key")
>>> manifest = build_manifest([], key, publisher_id="acme", publisher_key_id="k1",
...                           generated_at="2025-01-01T00:00:00Z")
>>> signed = sign_freshness(manifest, key, signed_at="2025-01-02T00:00:00Z")
>>> signed["signed_at"], len(signed["freshness_hash"])
('2025-01-02T00:00:00Z', 64)

The statement binds ``signed_at`` to the manifest's ``manifest_hash``, ``manifest_version`` and
``generated_at``; the peer ignores the three added keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from affidavit.attest.publishing.publish import Signer, _sign_hex
from affidavit.verify import errors
from affidavit.verify.contracts.freshness import freshness_hash
from affidavit.verify.contracts.manifest import manifest_hash
from affidavit.verify.json.forms import parse_utc

__all__ = ["sign_freshness"]


def sign_freshness(
    manifest: Mapping[str, Any], signer: Signer, *, signed_at: str | None = None
) -> dict[str, Any]:
    """A copy of ``manifest`` with ``signed_at`` (default: its ``generated_at``),
    ``freshness_hash`` and ``freshness_signature``.

    Raises:
        ``manifest.invalid``: ``signed_at`` is not ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``, or the
            manifest's ``manifest_hash`` does not recompute.
    """
    when = signed_at if signed_at is not None else manifest.get("generated_at")
    if parse_utc(when, fraction=True) is None:
        raise errors.ContractError(
            "manifest.invalid",
            f"signed_at must be an ISO-8601 UTC time like 2025-01-01T00:00:00Z, not {when!r}",
        )
    if manifest.get("manifest_hash") != manifest_hash(manifest):
        raise errors.ContractError(
            "manifest.invalid", "the manifest's manifest_hash does not recompute"
        )
    signed = {
        k: v
        for k, v in manifest.items()
        if k not in ("signed_at", "freshness_hash", "freshness_signature")
    }
    signed["signed_at"] = when
    digest = freshness_hash(signed)
    signed["freshness_hash"] = digest
    signed["freshness_signature"] = _sign_hex(signer, digest)
    return signed
