"""A verdict of ``affidavit verify bundle`` as a SLSA Verification Summary Attestation v1.

slsa.dev/spec/v1.0/verification_summary, "Schema" and "Fields": the Statement's subject is the
artefact verified; the predicate says who verified it, when, against what, from which inputs, and
the outcome. How each field is filled here:

* ``verifier.id`` (required TypeURI): ``https://affidavit.dev/verifier/affidavit@<version>``, the
  verifier and its release (the trust base a consumer pins, with the key that signs the VSA);
* ``timeVerified`` (required Timestamp): the verification time, RFC 3339 UTC to the second, from
  an injectable clock;
* ``resourceUri`` (required ResourceURI): ``urn:affidavit:bundle:<deal_id>`` (percent-encoded,
  RFC 3986 §2.1): a bundle is identified by its deal, not by where the file happened to lie;
* ``policy`` (required ResourceDescriptor with a ``uri``): what the caller trusted.
  ``uri`` is :data:`POLICY_URI`, naming how the digest is made; ``digest.sha256`` is
  ``H(jcs(trust document))`` (:func:`trust_document`): the sorted trusted tree-head keys, the
  trusted actor keys, the profile, ``--require-actor-signatures`` and the tlog-policy file's
  SHA-256. Two VSAs with the same policy digest were verified under the same trust;
* ``inputAttestations`` (optional; "MUST contain information on all the attestations used"): the
  one bundle read, ``{uri: resourceUri, digest: {sha256: SHA-256 of the exact bytes read}}``
  (the VSA v1 InputAttestation has only these two fields). The bytes include the signed tree
  head and ``tlog_proof``, which ``bundle_hash`` (the subject digest) does not cover, so the VSA
  pins the exact evidence;
* ``verificationResult``: ``PASSED`` only for the verdict ``verified``; ``failed`` and
  ``unanchored`` are ``FAILED``;
* ``verifiedLevels`` (required): "the highest level of each track verified ... or FAILED". A
  bundle is not a build, so no ``SLSA_BUILD_LEVEL_*`` is claimed; PASSED gives the custom value
  :data:`VERIFIED_LEVEL` (the spec allows custom values not starting with ``SLSA_``), FAILED gives
  ``["FAILED"]``;
* ``dependencyLevels``: absent (no dependency is verified); ``slsaVersion``: ``"1.0"``, the VSA
  spec version followed.

The subject is :func:`affidavit.verify.dsse.predicates.bundle_subject`: ``deal_id`` and the
``bundle_hash`` *recomputed* from what was read (a FAILED VSA of a tampered bundle names the
content it saw, never the hash the bundle claims).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from importlib.metadata import version as installed
from typing import Any, Final
from urllib.parse import quote

from affidavit.attest.host import utc_now
from affidavit.attest.intoto.statement import build_statement
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
    """What the caller trusted, as the JSON object whose JCS :func:`trust_digest` hashes:
    ``{trustedKeys: [standard base64, sorted, distinct], trustedActorKeys: [[base64, actor_id
    or null], sorted, distinct], profile, requireActorSignatures, tlogPolicySha256 (SHA-256 hex
    of the tlog-policy file's bytes, or null)}``."""
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
    """The VSA Statement of one ``verify bundle`` verdict (module docstring): ``bundle`` the
    parsed bundle, ``data`` the exact bytes read, ``passed`` whether the verdict is
    ``verified``, ``policy_digest`` the :func:`trust_digest`. Deterministic for a fixed
    ``clock`` and ``version``.

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
