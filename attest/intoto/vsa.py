"""A verdict of ``affidavit verify bundle`` as a SLSA Verification Summary Attestation v1.

Every field as filled here: docs/formats.md §8, "SLSA VSA v1". The subject
(:func:`affidavit.verify.dsse.predicates.bundle_subject`) carries the ``bundle_hash``
*recomputed* from what was read, never the hash a tampered bundle claims; two VSAs with the same
policy digest (:func:`trust_document`) were verified under the same trust.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from importlib.metadata import version as installed
from typing import Any, Final
from urllib.parse import quote

from affidavit.attest.host import utc_now
from affidavit.attest.intoto.sign import build_statement
from affidavit.verify.dsse.predicates import SLSA_VSA_V1, bundle_subject
from affidavit.verify.json.canonical import jcs, sha256_hex
from affidavit.verify.json.forms import format_utc

__all__ = [
    "POLICY_URI",
    "RESOURCE_URI_PREFIX",
    "VERIFIED_LEVEL",
    "VERIFIER_ID_PREFIX",
    "trust_digest",
    "trust_document",
    "verifier_id",
    "vsa_statement",
]

VERIFIER_ID_PREFIX: Final = "https://affidavit.dev/verifier/affidavit@"
POLICY_URI: Final = "https://affidavit.dev/policy/verify-bundle/v1"
RESOURCE_URI_PREFIX: Final = "urn:affidavit:bundle:"
VERIFIED_LEVEL: Final = "AFFIDAVIT_BUNDLE_VERIFIED"
SLSA_VERSION: Final = "1.0"


def verifier_id(version: str | None = None) -> str:
    """``verifier.id``: :data:`VERIFIER_ID_PREFIX` and the installed Affidavit version."""
    if version is None:
        version = installed("affidavit")
    return VERIFIER_ID_PREFIX + version


def trust_document(
    trusted_keys: Iterable[bytes],
    *,
    actor_keys: Iterable[tuple[bytes, str | None]] = (),
    profile: str = "default",
    require_actor_signatures: bool = False,
    tlog_policy: bytes | None = None,
) -> dict[str, Any]:
    """What the caller trusted, the object :func:`trust_digest` hashes: the sorted, distinct
    tree-head and actor keys (base64), the profile, ``requireActorSignatures`` and the SHA-256
    of the tlog-policy file (or null)."""
    keys = sorted({base64.b64encode(raw).decode("ascii") for raw in trusted_keys})
    actors = sorted(
        {(base64.b64encode(raw).decode("ascii"), actor) for raw, actor in actor_keys},
        key=lambda pair: (pair[0], pair[1] or ""),
    )
    return {
        "trustedKeys": keys,
        "trustedActorKeys": [[key, actor] for key, actor in actors],
        "profile": profile,
        "requireActorSignatures": require_actor_signatures,
        "tlogPolicySha256": None if tlog_policy is None else sha256_hex(tlog_policy),
    }


def trust_digest(document: Mapping[str, Any]) -> str:
    """``policy.digest.sha256``: SHA-256 hex of the JCS of a :func:`trust_document`."""
    return sha256_hex(jcs(document))


def vsa_statement(
    bundle: Mapping[str, Any],
    data: bytes,
    *,
    passed: bool,
    policy_digest: str,
    clock: Callable[[], datetime] = utc_now,
    version: str | None = None,
) -> dict[str, Any]:
    """The VSA Statement of one ``verify bundle`` verdict on ``bundle`` (``data``: the exact
    bytes read; ``policy_digest``: :func:`trust_digest`; docs/formats.md §8).

    Raises:
        ``bundle.malformed``: the bundle has no string ``deal_id`` (no subject to name).
        ``canonical.*``: the bundle cannot be hashed.
    """
    subject = bundle_subject(bundle)
    resource = RESOURCE_URI_PREFIX + quote(subject["name"], safe="")
    predicate: dict[str, Any] = {
        "verifier": {"id": verifier_id(version)},
        "timeVerified": format_utc(clock()),
        "resourceUri": resource,
        "policy": {"uri": POLICY_URI, "digest": {"sha256": policy_digest}},
        "inputAttestations": [{"uri": resource, "digest": {"sha256": sha256_hex(data)}}],
        "verificationResult": "PASSED" if passed else "FAILED",
        "verifiedLevels": [VERIFIED_LEVEL if passed else "FAILED"],
        "slsaVersion": SLSA_VERSION,
    }
    return build_statement([subject], SLSA_VSA_V1, predicate)
