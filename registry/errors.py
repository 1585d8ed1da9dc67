"""The registry's errors, and the one map from error code to HTTP status.

::

    AffidavitError (affidavit.verify.errors)
    ├── RegistryError     registry.*, http.*, stigmem.node_*: the service and its clients
    ├── AuthError         auth.*: API keys and their scopes
    └── NetError          net.*: a remote that is not a registry, or a server that cannot listen

>>> http_status(RegistryError("http.body_too_large", "too big"))
413

Every failure on the wire is ``{code, message, details}`` (seed 001) with the status
:func:`http_status` gives: by code, else by exit code (2: 400, 1: 422, 3: 403); unexpected
exceptions are ``http.internal`` (500) with no details. The server's own faults reach clients
through :func:`public_body`: a store fault as its code and a fixed message (``Retry-After`` when
a retry may succeed), any other with the store's location and folders cut out; the rest goes to
the server's log only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

from affidavit.verify.codes import FAILED, INPUT, REFUSED, catalogue, table
from affidavit.verify.errors import AffidavitError

__all__ = [
    "CLOSE_CODES",
    "RETRY_AFTER_S",
    "AuthError",
    "NetError",
    "RegistryError",
    "families",
    "http_status",
    "public_body",
    "status_for",
]


_REGISTRY_INPUT: Final = {
    "http.bad_parameter": "A path or query parameter is missing or malformed (HTTP 400).",
    "http.body_empty": "The request body is empty; this route needs at least one byte (HTTP 400).",
    "http.body_timeout": "The request body did not arrive within the body-read timeout (HTTP 408).",
    "http.body_too_large": "The request body is larger than the registry's limit (HTTP 413).",
    "http.internal": "The registry failed unexpectedly; nothing was written (HTTP 500).",
    "http.method_not_allowed": "The route does not accept this HTTP method (HTTP 405).",
    "http.not_found": "No such route (HTTP 404).",
    "registry.bad_response": (
        "The registry answered with something other than the documented shape."
    ),
    "registry.contract_not_found": "No contract with this adapter_id (and version) (HTTP 404).",
    "registry.data_dir_invalid": (
        "The registry data folder cannot be created or used; refused to start."
    ),
    "registry.field_not_patchable": (
        "PATCH changes lifecycle fields only; hashed ones need a new version (HTTP 422)."
    ),
    "registry.dump_invalid": (
        "A registry export cannot be read (a file missing or malformed, a newer schema); nothing "
        "imported."
    ),
    "registry.dump_unportable": (
        "A registry export holds contract ids PostgreSQL cannot index (stored before the id "
        "bounds, docs/adr/0017); nothing imported. It restores into SQLite."
    ),
    "registry.store_not_empty": (
        "Import restores into an empty store; this one already holds a log, contracts or facts."
    ),
    "registry.not_found": "The registry holds no such record, tree head or leaf (HTTP 404).",
    "registry.integration_pending": (
        "The entry is durably sequenced but no signed checkpoint covered it in time; send it again "
        "to wait again (HTTP 503, Retry-After)."
    ),
    "registry.queue_full": (
        "The registry's write queue is full; nothing was written: retry after Retry-After (HTTP "
        "503)."
    ),
    "registry.remote_error": (
        "The registry refused the request; details carry its {code, message, details}."
    ),
    "registry.unavailable": "The registry could not be reached or its node probe failed.",
    "registry.url_missing": "No registry URL: pass --registry or set AFFIDAVIT_REGISTRY_URL.",
    "stigmem.node_error": "The Stigmem node answered with an error or an unexpected body.",
    "stigmem.node_unreachable": "The Stigmem node could not be reached.",
}
_REGISTRY_FAILED: Final = {
    "lookup.index_missing": (
        "A log entry replayed from the tiles is not answered by the registry's lookup under a hash "
        "it is filed under (a monitor's check of the index)."
    ),
    "lookup.leaf_mismatch": (
        "A lookup answer's leaf bytes do not hash to the leaf hash it proves (issue 26)."
    ),
    "lookup.not_about": (
        "A lookup answer names an entry whose leaf is not filed under the hash asked for, in the "
        "fields or as the kind it claims (registry/index.py)."
    ),
    "lookup.not_found": (
        "A lookup found no entry about the hash under a verified checkpoint; absence is not proven "
        "(only replaying the log proves it)."
    ),
    "lookup.size_mismatch": (
        "A lookup answer's inclusion proof is for another tree size than its checkpoint."
    ),
    "registry.contract_rejected": (
        "The contract does not lint clean; details carry the lint report (HTTP 422)."
    ),
    "registry.entry_too_large": (
        "The log entry a request would make (a raw entry, a contract publication or lifecycle "
        "change) is over 65,535 bytes, the largest a tlog-tiles entry bundle holds (ADR 0018); "
        "nothing was written (HTTP 422)."
    ),
    "registry.dump_unsigned": (
        "A registry export has no manifest signature (manifest.sig); nothing imported."
    ),
    "registry.dump_signature_invalid": (
        "A registry export's manifest is not signed by the trusted key; nothing imported."
    ),
    "registry.dump_file_mismatch": (
        "A file of a registry export differs from the hash its signed manifest names."
    ),
    "registry.dump_count_mismatch": (
        "A table of a registry export has another row count than its signed manifest names."
    ),
    "registry.dump_key_mismatch": (
        "A registry export's log is not the trusted key's (its key or key history); nothing "
        "imported."
    ),
    "registry.dump_root_mismatch": (
        "A registry export's leaves or nodes do not give the signed tree size and root."
    ),
    "registry.dump_checkpoint_invalid": (
        "A registry export's checkpoint is missing, not the log's latest, not signed by the log's "
        "key, or not its tree."
    ),
    "registry.dump_head_invalid": (
        "A tree head recorded in a registry export does not verify or contradicts its tree."
    ),
    "registry.dump_fact_mismatch": (
        "A fact in a registry export is filed under a hash its body does not have."
    ),
    "registry.dump_entry_mismatch": (
        "A SCITT row of a registry export is not the SHA-256 of its statement or not the log's "
        "leaf at its index, or a sequenced entry's hash is not its data's (or it sits inside the "
        "tree)."
    ),
}
_REGISTRY_REFUSED: Final = {
    "registry.channel_reserved": (
        "The distribution channel is reserved for the operator (admin key) (HTTP 403)."
    ),
    "registry.version_conflict": (
        "Another contract holds this (adapter_id, adapter_version) (HTTP 409)."
    ),
}
REGISTRY: Final = (
    *table(INPUT, _REGISTRY_INPUT),
    *table(FAILED, _REGISTRY_FAILED),
    *table(REFUSED, _REGISTRY_REFUSED),
)

_AUTH_INPUT: Final = {
    "auth.bad_publisher": (
        "A publish key needs --publisher PREFIX (dot-separated adapter-id segments)."
    ),
    "auth.bad_scope": (
        "Not a valid API-key scope (admin, publish, log:write, facts:write, facts:read:<scope>)."
    ),
}
_AUTH_REFUSED: Final = {
    "auth.forbidden": "The API key lacks the scope this route needs (HTTP 403).",
    "auth.invalid": "The API key is unknown or malformed (HTTP 401).",
    "auth.key_unbound": (
        "The publish key is bound to no publisher namespace; bind it first (HTTP 403)."
    ),
    "auth.missing": "The route needs an API key and none was sent (HTTP 401).",
    "auth.publisher_forbidden": (
        "The API key may not write contracts under this adapter_id (HTTP 403)."
    ),
}
AUTH: Final = (*table(INPUT, _AUTH_INPUT), *table(REFUSED, _AUTH_REFUSED))


# One meaning each, whatever the remote (a tile server, a witness, a publisher's key document)
# and whichever server cannot listen (issue 22: the same situation has the same code everywhere).
# The registry's clients keep registry.unavailable / registry.bad_response (scripts rely on them).
_NET_INPUT: Final = {
    "net.bad_response": (
        "A remote answered, but not usably: over the size cap, a redirect away from https, an HTTP "
        "error status or a body that is not what was asked for."
    ),
    "net.bind_failed": (
        "A server (registry serve, witness serve) cannot listen on the host and port given; "
        "refused to start."
    ),
    "net.timeout": "A remote gave no complete answer within the exchange's deadline.",
    "net.unavailable": (
        "A remote could not be reached (DNS, connect, TLS), or httpx is not installed."
    ),
}
NET: Final = table(INPUT, _NET_INPUT)


class RegistryError(AffidavitError):
    """The registry service, or a client of it or of a Stigmem node, failed or refused."""

    codes = catalogue(REGISTRY)


class AuthError(AffidavitError):
    """An API key is missing, unknown, or lacks the scope or namespace the request needs."""

    codes = catalogue(AUTH)


class NetError(AffidavitError):
    """A remote that is not a registry could not be reached or answered badly, or a server
    could not listen."""

    codes = catalogue(NET)


def families() -> Iterator[type[AffidavitError]]:
    """Every family of this layer."""
    yield from (RegistryError, AuthError, NetError)


# Status by code (seed 002 §20.8 for the fact codes).
_STATUS_BY_CODE: Final[dict[str, int]] = {
    "http.body_too_large": 413,
    "json.too_large": 413,
    "http.not_found": 404,
    "http.method_not_allowed": 405,
    "http.internal": 500,
    "auth.missing": 401,
    "auth.invalid": 401,
    "auth.forbidden": 403,
    "registry.not_found": 404,
    "registry.contract_not_found": 404,
    "registry.version_conflict": 409,
    "registry.contract_rejected": 422,
    "registry.entry_too_large": 422,
    "registry.field_not_patchable": 422,
    "provenance_cycle_detected": 400,
    "derived_from_immutable": 422,
    "graph_depth_exceeded": 400,
    "fact_not_found": 404,
    "lineage.root_forbidden": 403,
    "log.index_out_of_range": 404,
    "store.busy": 503,
    # The write path (registry/writer.py): bounded, and never a silent drop.
    "registry.queue_full": 503,
    "registry.integration_pending": 503,
    # The server's own storage is at fault, not the request (docs/adr/0005): 503, never 500.
    "store.corrupt": 503,
    "store.unreadable": 503,
    "lineage.store_invalid": 503,
    "log.unhealthy": 503,
    "log.integrity": 503,
    "log.state_mismatch": 503,
    "log.state_invalid": 503,
    "log.key_outside_window": 503,
    "log.key_history_invalid": 503,
    "http.body_timeout": 408,
    # Ownership (docs/adr/0006).
    "auth.key_unbound": 403,
    "auth.publisher_forbidden": 403,
    "registry.channel_reserved": 403,
    # SCITT (SCRAPI): a statement the registration policy refuses is 400 "Rejected".
    "cbor.too_large": 413,
    "scitt.issuer_untrusted": 400,
    "scitt.issuer_mismatch": 400,
    "scitt.media_type_unsupported": 415,
    "scitt.rate_limited": 429,
    "scitt.entry_not_found": 404,
}

# A store fault's message for clients (the detail is logged): the store's location and the
# driver's text name hosts, ports, users, databases and paths (docs/postgresql.md "Operations").
_PUBLIC_MESSAGES: Final[dict[str, str]] = {
    "store.unreadable": "the registry's store is unavailable; retry later",
    "store.busy": "the registry's store is busy (another writer holds its lock); retry later",
    "store.corrupt": "the registry's store is damaged; the operator must restore it",
    "store.missing": "the registry's store is missing; the operator must restore it",
    "store.schema_too_new": "the registry's store was written by a newer version",
}

# Seconds a client should wait before retrying (the Retry-After header): a lost connection is
# made again within about a second once the database is back, and a lock wait ends at the lease.
RETRY_AFTER_S: Final[dict[str, int]] = {
    "store.unreadable": 1,
    "store.busy": 1,
    "registry.queue_full": 1,
    "registry.integration_pending": 1,
}

_HIDDEN: Final = "[hidden]"


def public_body(error: AffidavitError, hidden: Sequence[str] = ()) -> dict[str, Any]:
    """``error.to_json()`` as a client may see it: a store fault's fixed message without details;
    other errors with each string of ``hidden`` (the store's location, the data folder) cut out
    of the message and of the details' strings."""
    fixed = _PUBLIC_MESSAGES.get(error.code)
    if fixed is not None:
        return {"code": error.code, "message": fixed, "details": {}}
    body = error.to_json()
    cut = sorted((h for h in hidden if h), key=len, reverse=True)
    if not cut:
        return body
    return {
        "code": body["code"],
        "message": _cut(body["message"], cut),
        "details": {
            k: _cut(v, cut) if isinstance(v, str) else v for k, v in body["details"].items()
        },
    }


def _cut(text: str, hidden: Sequence[str]) -> str:
    for secret in hidden:
        text = text.replace(secret, _HIDDEN)
    return text


# Codes after which the connection is closed: the rest of the request body is unknown.
CLOSE_CODES: Final = frozenset({"http.body_timeout"})


def status_for(code: str, exit_code: int) -> int:
    """The HTTP status for an error code: by the code, else by its exit code."""
    status = _STATUS_BY_CODE.get(code)
    if status is not None:
        return status
    return {FAILED: 422, REFUSED: 403}.get(exit_code, 400)


def http_status(error: AffidavitError) -> int:
    """The HTTP status the registry answers ``error`` with."""
    return status_for(error.code, error.exit_code)
