"""The registry as a SCITT Transparency Service (RFC 9943, SCRAPI; docs/transparency.md "SCITT",
docs/formats.md §10): registration policy, the statements' store, registration into the log,
receipts. The HTTP side is :mod:`affidavit.registry.routes.scitt`.

A statement is accepted only when it verifies under a trusted issuer key bound to the ``iss`` it
names (:func:`check_policy`; no issuer keys: every statement refused, fail closed). Its log entry
is the SHA-256 of the statement as registered, sequenced with its ``scitt_entries`` row through
the one write path (:func:`register_job`); the entry ID is that hash in hex, so registering
again adds no leaf. Receipts (RFC 9942 §5.2) are signed by the log key over a signed
checkpoint's tree: the one that integrated the leaf, later the largest (a GET signs no head).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from affidavit.attest.errors import LogError
from affidavit.attest.log.sequencing import Sequenced
from affidavit.attest.scitt import sign_receipt
from affidavit.attest.stores.store import Migrations
from affidavit.registry.lookup import refile
from affidavit.registry.publication import require_healthy
from affidavit.registry.settings import Settings
from affidavit.registry.state import ReadView, RegistryState
from affidavit.registry.writer import Batch, Integrated, Job
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import parse_checkpoint_body, parse_note
from affidavit.verify.crypto.merkle import leaf_hash, root_from_inclusion_proof
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.statement import SignedStatement

__all__ = [
    "COMPONENT",
    "MIGRATIONS",
    "Registration",
    "ScittSettings",
    "check_policy",
    "integrated_receipt",
    "register_job",
    "registration",
    "scitt_settings",
    "service_keys",
]

COMPONENT: Final = "scitt"
_MIGRATIONS_SQLITE: Final = (
    """
    CREATE TABLE scitt_entries (
        entry_id      TEXT PRIMARY KEY,
        leaf_index    INTEGER NOT NULL,
        statement     BLOB NOT NULL,
        issuer        TEXT NOT NULL,
        subject       TEXT NOT NULL,
        registered_at TEXT NOT NULL
    )
    """,
)

# The same steps in PostgreSQL's DDL (BYTEA, BIGINT, identity columns; docs/adr/0020).
_MIGRATIONS_POSTGRESQL: Final = (
    """
CREATE TABLE scitt_entries (
        entry_id      TEXT PRIMARY KEY,
        leaf_index    BIGINT NOT NULL,
        statement     BYTEA NOT NULL,
        issuer        TEXT NOT NULL,
        subject       TEXT NOT NULL,
        registered_at TEXT NOT NULL
    )
""",
)
MIGRATIONS: Final = Migrations(sqlite=_MIGRATIONS_SQLITE, postgresql=_MIGRATIONS_POSTGRESQL)
_SETTINGS_KEY: Final = "scitt"


@dataclass(frozen=True, slots=True)
class ScittSettings:
    """What ``registry serve`` configures for SCITT (in ``Settings.extra["scitt"]``): trusted
    issuer keys, the per-client rate (SCRAPI "Rate Limiting"), and how long ``POST /entries``
    waits for the receipt before answering 303."""

    issuers: tuple[CoseKey, ...] = ()
    rate_per_s: float = 50.0
    burst: int = 100
    wait_s: float = 5.0

    def __post_init__(self) -> None:
        if not 0 < self.rate_per_s <= 100_000 or not 1 <= self.burst <= 1_000_000:
            raise errors.UsageError("the SCITT rate must be above 0 and the burst at least 1")
        if not 0 <= self.wait_s <= 60:
            raise errors.UsageError("the SCITT registration wait must be 0 to 60 seconds")

    def into(self, settings: Settings) -> Settings:
        """``settings`` carrying these."""
        return dataclasses.replace(settings, extra={**settings.extra, _SETTINGS_KEY: self})


def scitt_settings(settings: Settings) -> ScittSettings:
    """The SCITT settings of a registry (the defaults when none were given)."""
    found = settings.extra.get(_SETTINGS_KEY)
    return found if isinstance(found, ScittSettings) else ScittSettings()


class Registration(NamedTuple):
    """A registered statement's receipt for the tree of ``tree_size`` leaves."""

    entry_id: str
    leaf_index: int
    tree_size: int
    root: bytes
    receipt: bytes


def check_policy(statement: SignedStatement, issuers: Sequence[CoseKey]) -> CoseKey:
    """The issuer key the statement's signature verifies under (RFC 9943 §5.1.1.1).

    Raises:
        ``scitt.payload_missing``: the payload is detached.
        ``scitt.issuer_untrusted``: no trusted issuer key verifies it (or none is configured).
        ``scitt.issuer_mismatch``: only keys bound to other issuers than its ``iss`` verify it.
    """
    if statement.sign1.payload is None:
        raise errors.ScittError(
            "scitt.payload_missing",
            "the Signed Statement's payload is detached: the service must verify its signature",
        )
    try:
        return statement.verify_issuer(issuers)  # bound to its iss; the key its kid names first
    except errors.ScittError as e:
        if e.code == "scitt.issuer_mismatch":  # a trusted key, of another issuer: said without
            raise errors.ScittError(  # the key's file or bindings (the operator's, not public)
                "scitt.issuer_mismatch",
                f"the statement names iss {statement.issuer!r}; its signature verifies only"
                " under a trusted key of another issuer (RFC 9943 §5.1.1.1)",
                details={"issuer": statement.issuer},
            ) from None
        why = "no issuer key is configured" if not issuers else "it verifies under none of them"
        raise errors.ScittError(
            "scitt.issuer_untrusted",
            f"the registration policy accepts statements signed by trusted issuers: {why}",
            details={"issuer": statement.issuer},
        ) from None


def register_job(state: RegistryState, statement: SignedStatement) -> Job[Any, Sequenced]:
    """The write-path job registering ``statement`` (accepted by :func:`check_policy`): finds
    an entry registered before, else sequences the leaf and stores its row together; the
    result is the leaf's place."""
    entry = statement.leaf_entry

    def prepare() -> Sequenced | None:
        with state.tables.store.read() as db:
            row = db.execute(
                "SELECT leaf_index FROM scitt_entries WHERE entry_id = $1", (entry.hex(),)
            ).fetchone()
        if row is not None:
            return Sequenced(int(row[0]), leaf_hash(entry), created=False)
        require_healthy(state)  # docs/adr/0005: nothing is sequenced into an unhealthy log
        return None

    def apply(found: Sequenced | None, batch: Batch) -> Sequenced:  # noqa: ARG001
        if found is not None:
            return found
        (placed,) = state.log.sequence([entry])  # the one SCITT write of a leaf
        with state.tables.store.write() as db:  # joins the batch's transaction
            db.execute(
                "INSERT INTO scitt_entries(entry_id, leaf_index, statement, issuer, subject,"
                " registered_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT(entry_id) DO NOTHING",
                (
                    entry.hex(),
                    placed.index,
                    statement.registered_bytes,
                    statement.issuer,
                    statement.subject,
                    state.now(),
                ),
            )
        if not placed.created:  # the entry was in the log already (appended raw): file it
            refile(state.tables, state.log, placed.index)  # as reindex would (issue 31)
        return placed

    return Job(prepare, apply, entries=lambda found: [] if found is not None else [entry])


def integrated_receipt(
    state: RegistryState, statement: SignedStatement, proven: Integrated
) -> Registration:
    """The receipt of a sequenced statement over the signed checkpoint that covers it.

    Raises:
        ``log.integrity``: the path does not lead from the leaf to the checkpoint's root.
    """
    root = parse_checkpoint_body(parse_note(proven.checkpoint).text).root_hash
    place = (proven.index, proven.tree_size, proven.path)
    return _signed(state, statement.entry_id, statement.subject, place, root)


def registration(state: RegistryState, view: ReadView, entry_id: str) -> Registration | None:
    """A fresh receipt of a registered entry for the largest signed checkpoint, or None.

    Raises:
        ``log.integrity``: the log's path does not lead to the signed checkpoint's root.
    """
    with view.tables.store.read() as db:
        row = db.execute(
            "SELECT leaf_index, subject FROM scitt_entries WHERE entry_id = $1", (entry_id,)
        ).fetchone()
    if row is None:
        return None
    index = int(row[0])
    head = view.log.largest_head("checkpoint")  # signed at integration (docs/adr/0024)
    if head is None or head.tree_size <= index:  # pragma: no cover - integrated before it
        raise LogError("log.unhealthy", "no signed checkpoint covers the entry")
    place = (index, head.tree_size, view.log.inclusion_proof(index, head.tree_size).path)
    return _signed(state, entry_id, str(row[1]), place, bytes.fromhex(head.root_hash))


def _signed(
    state: RegistryState,
    entry_id: str,
    subject: str,
    place: tuple[int, int, Sequence[bytes]],
    root: bytes,
) -> Registration:
    """The receipt of the leaf at ``place`` (index, size, path), signed once the path leads to
    ``root`` (docs/adr/0005: never a receipt the checkpoint contradicts)."""
    index, tree_size, path = place
    if root_from_inclusion_proof(leaf_hash(bytes.fromhex(entry_id)), *place) != root:
        raise LogError(
            "log.integrity",
            f"the inclusion path does not give the checkpoint's root at {tree_size}",
        )
    receipt = sign_receipt(
        state.key,
        leaf_index=index,
        tree_size=tree_size,
        path=path,
        root=root,
        issuer=state.log.log_id,  # the checkpoint's origin (docs/formats.md §6)
        subject=subject,
        issued_at=state.clock(),
    )
    return Registration(entry_id, index, tree_size, root, receipt)


def service_keys(view: ReadView) -> list[CoseKey]:
    """The receipt-signing keys: every key of the log's history (SCRAPI keeps retired ones)."""
    return [
        CoseKey.from_ed25519(entry.public_key, entry.key_id) for entry in view.log.key_history()
    ]
