"""The storage layer's errors: the database file and the transparency log.

::

    AffidavitError (affidavit.verify.errors)
    ├── StoreError      store.*: the database is missing, busy, damaged, unreachable or too new
    │   └── StoreIntegrityError  a statement broke a constraint (a key taken, a CHECK, a trigger)
    └── LogError        log.*: the transparency log refused an operation or found itself unsound
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from affidavit.verify.codes import FAILED, INPUT, catalogue, table
from affidavit.verify.errors import AffidavitError

__all__ = ["LogError", "StoreError", "StoreIntegrityError", "families"]

_STORE_INPUT: Final = {
    "store.busy": (
        "Another writer held the database's lock past the lock or busy timeout; nothing was "
        "written; retry later (HTTP 503, Retry-After)."
    ),
    "store.corrupt": "The database file is damaged (SQLite integrity check failed); HTTP 503.",
    "store.missing": "The database file does not exist (and creating it was not asked for).",
    "store.schema_too_new": (
        "The database holds a newer schema version than this Affidavit understands."
    ),
    "store.unreadable": (
        "The store cannot be opened or reached: a file that is not an SQLite database, or a "
        "PostgreSQL server that is unreachable or dropped the connection (HTTP 503, Retry-After)."
    ),
}
STORE: Final = table(INPUT, _STORE_INPUT)

_LOG_INPUT: Final = {
    "log.bad_leaf_hash": "A leaf hash given to the log is not exactly 32 bytes.",
    "log.bad_log_id": (
        "A log ID must be 1-200 printable ASCII characters without '|' or whitespace."
    ),
    "log.bad_timestamp": (
        "A tree head timestamp must be a timezone-aware datetime (it is signed as UTC)."
    ),
    "log.exists": "The database already holds a transparency log; refused to create another.",
    "log.index_out_of_range": "The leaf index is not below the tree size asked for.",
    "log.checkpoint_foreign": "A checkpoint's size or root is not a tree head of this log.",
    "log.key_mismatch": "The signing key given is not the key this log was created with.",
    "log.key_history_invalid": (
        "The log's recorded key history does not verify (a rotation not signed by the key it "
        "replaced, or edited)."
    ),
    "log.key_outside_window": (
        "A log key signs only heads dated inside its validity window [valid_from, valid_until)."
    ),
    "log.leaf_mismatch": (
        "The bundle's leaf (hash, index or log) is not this log's leaf at that index."
    ),
    "log.no_checkpoint": (
        "No recorded checkpoint covers the leaf; sign one (`affidavit log head DB --checkpoint`)."
    ),
    "log.no_entry_data": "The leaf was appended by its hash only; the log holds no data for it.",
    "log.no_signing_key": (
        "Signing a tree head needs the log's private key (open the log with a key)."
    ),
    "log.not_found": "The database holds no transparency log (run `affidavit log init` first).",
    "log.range_too_large": "Too many entries asked for at once; page through them.",
    "log.rotation_invalid": (
        "A key rotation would reuse a key, lie in the future, or overlap the current key's window "
        "or the heads it signed."
    ),
    "log.size_out_of_range": (
        "A tree size is beyond the log's size, or the sizes are out of order, or zero."
    ),
    "log.state_invalid": (
        "The log state file beside the key is malformed or not signed by the log key."
    ),
    "log.state_mismatch": (
        "The store does not extend the head the log key signed last (a fork); refused."
    ),
    "log.tiles_conflict": (
        "The tile folder holds another log's (or a newer or forked) tree; nothing overwritten."
    ),
    "log.unhealthy": (
        "The stored tree contradicts a signed head; the log refuses to sign (HTTP 503)."
    ),
}
_LOG_FAILED: Final = {
    "log.integrity": (
        "The stored tree is inconsistent (a node is missing or a recorded head differs)."
    ),
}
LOG: Final = (*table(INPUT, _LOG_INPUT), *table(FAILED, _LOG_FAILED))


class StoreError(AffidavitError):
    """The database file cannot be used: missing, unreadable, busy, damaged or too new."""

    codes = catalogue(STORE)


class StoreIntegrityError(StoreError):
    """A statement broke a constraint of the schema: a key already taken, a CHECK, a trigger
    that refused the row (docs/adr/0020-each-store-its-dialect.md). Both stores raise it for
    their driver's integrity error, so a caller that expects one (a duplicate key) catches this
    class. One that escapes is the database's fault like any other: ``store.unreadable``
    (HTTP 503), the code a database error had before the stores raised their own."""


class LogError(AffidavitError):
    """The transparency log refused an operation, or its stored tree contradicts a signed head."""

    codes = catalogue(LOG)


def families() -> Iterator[type[AffidavitError]]:
    """Every family of this layer."""
    yield from (StoreError, LogError)
