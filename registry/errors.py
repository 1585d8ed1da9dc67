"""Errors on the wire: every failure is ``{code, message, details}`` with a fitting HTTP status.

>>> from affidavit.verify.errors import HttpBodyTooLarge
>>> http_status(HttpBodyTooLarge("too big"))
413

Codes come from the one error tree (``specs/error-codes.json``, seed 001 "errors are
{code, message, details}"). The status is looked up by code first, then by the branch of the tree:
bad input 400, does not verify 422, refused by policy 403. Unexpected exceptions become
``http.internal`` (500) with no details, so nothing internal leaks.
"""

from __future__ import annotations

import json
from typing import Any, Final

from affidavit.verify import errors
from starlette.responses import Response

__all__ = ["error_response", "http_status", "json_response"]

# Status by code (issue 6; seed 002 §20.8 for the fact codes).
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
    "registry.field_not_patchable": 422,
    "provenance_cycle_detected": 400,
    "derived_from_immutable": 422,
    "graph_depth_exceeded": 400,
    "fact_not_found": 404,
    "lineage.root_forbidden": 403,
    "log.index_out_of_range": 404,
    "store.busy": 503,
    # The server's own storage is at fault, not the request (docs/adr/0005): 503, never 500.
    "store.corrupt": 503,
    "store.unreadable": 503,
    "lineage.store_invalid": 503,
    "log.unhealthy": 503,
    "log.integrity": 503,
    "log.state_mismatch": 503,
    "log.state_invalid": 503,
    "http.body_timeout": 408,
    # Ownership (docs/adr/0006).
    "auth.key_unbound": 403,
    "auth.publisher_forbidden": 403,
    "registry.channel_reserved": 403,
}

# Codes after which the connection is closed: the rest of the request body is unknown.
_CLOSE_CODES: Final = frozenset({"http.body_timeout"})


def http_status(error: errors.AffidavitError) -> int:
    """The HTTP status for ``error``: by its code, else by its branch of the error tree."""
    status = _STATUS_BY_CODE.get(error.code)
    if status is not None:
        return status
    if isinstance(error, errors.PolicyRefusal):
        return 403
    if isinstance(error, errors.VerificationError):
        return 422
    return 400


def json_response(
    document: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A compact JSON response (key order as built; non-ASCII kept as UTF-8)."""
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def error_response(error: errors.AffidavitError) -> Response:
    """The ``{code, message, details}`` response for ``error`` (``Connection: close`` when the
    request body was not read to its end)."""
    headers = {"connection": "close"} if error.code in _CLOSE_CODES else None
    return json_response(error.to_json(), status=http_status(error), headers=headers)
