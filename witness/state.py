"""The witness's memory: the latest checkpoint it cosigned for each log, in ``DIR/witness.db``.

:meth:`WitnessState.cosign` reads the origin's row, checks, signs, writes and COMMITs in one
write transaction, a lock across processes: the atomic check-and-update tlog-witness asks for
(docs/transparency.md, "State, and the rollback race").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from affidavit.attest.host import utc_now
from affidavit.attest.stores.store import Connection, Migrations, Store
from affidavit.witness.cosigner import WitnessKeys
from affidavit.witness.protocol import Authenticated, Stored, check_against, origin_hash

__all__ = ["DATABASE_NAME", "WitnessState"]

DATABASE_NAME: Final = "witness.db"
COMPONENT: Final = "witness"
# The witness keeps its own SQLite file (Store.open); the PostgreSQL spelling is there for the
# store interface's sake (docs/adr/0020), not used by `affidavit witness serve`.
MIGRATIONS: Final = Migrations(
    sqlite=(
        "CREATE TABLE witness_checkpoints ("
        "origin TEXT PRIMARY KEY, "
        "origin_sha256 TEXT NOT NULL UNIQUE, "
        "tree_size INTEGER NOT NULL CHECK (tree_size >= 0), "
        "root_hash BLOB NOT NULL CHECK (length(root_hash) = 32), "
        "note TEXT NOT NULL, "
        "cosigned_at INTEGER NOT NULL)",
    ),
    postgresql=(
        "CREATE TABLE witness_checkpoints ("
        "origin TEXT PRIMARY KEY, "
        "origin_sha256 TEXT NOT NULL UNIQUE, "
        "tree_size BIGINT NOT NULL CHECK (tree_size >= 0), "
        "root_hash BYTEA NOT NULL CHECK (length(root_hash) = 32), "
        "note TEXT NOT NULL, "
        "cosigned_at BIGINT NOT NULL)",
    ),
)


def _now() -> int:
    return int(utc_now().timestamp())


class WitnessState:
    """The witness database (:meth:`open`); the server calls it from its one database thread."""

    def __init__(self, store: Store, clock: Callable[[], int] = _now) -> None:
        self.store = store
        self._clock = clock

    @classmethod
    def open(cls, folder: Path, *, clock: Callable[[], int] = _now) -> WitnessState:
        """Open (creating it, private) ``folder/witness.db``.

        Raises:
            ``store.unreadable``: the folder or the file cannot be used, or is not a database.
            ``store.schema_too_new``: written by a newer Affidavit.
        """
        store = Store.open(Path(folder) / DATABASE_NAME, create=True)
        try:
            store.migrate(COMPONENT, MIGRATIONS)
        except BaseException:
            store.close()
            raise
        return cls(store, clock)

    def close(self) -> None:
        """Close the database."""
        self.store.close()

    def cosign(self, request: Authenticated, keys: WitnessKeys) -> list[str]:
        """Check ``request`` against its origin's row, cosign and record it, committed before
        the cosignature lines are returned.

        Raises:
            affidavit.witness.protocol.Refusal: 409 or 422
                (:func:`affidavit.witness.protocol.check_against`); nothing is written then.
            ``store.busy``: another process held the write lock past the busy timeout.
        """
        checkpoint = request.checkpoint
        with self.store.write() as db:
            check_against(request, _stored(db, checkpoint.origin))
            timestamp = max(1, self._clock())  # tlog-witness: the timestamp is never zero
            lines = keys.cosign(request.text, checkpoint, timestamp)
            note = request.text + "\n" + "".join(request.log_signatures) + "".join(lines)
            db.execute(
                "INSERT INTO witness_checkpoints"
                "(origin, origin_sha256, tree_size, root_hash, note, cosigned_at) "
                "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT(origin) DO UPDATE SET "
                "tree_size = excluded.tree_size, root_hash = excluded.root_hash, "
                "note = excluded.note, cosigned_at = excluded.cosigned_at",
                (
                    checkpoint.origin,
                    origin_hash(checkpoint.origin),
                    checkpoint.tree_size,
                    checkpoint.root_hash,
                    note,
                    timestamp,
                ),
            )
        return lines

    def latest_note(self, digest: str) -> str | None:
        """The cosigned checkpoint of the origin whose SHA-256 is ``digest`` (hex), or None."""
        with self.store.read() as db:
            row = db.execute(
                "SELECT note FROM witness_checkpoints WHERE origin_sha256 = $1", (digest,)
            ).fetchone()
        return None if row is None else str(row[0])

    def latest(self, origin: str) -> Stored | None:
        """The latest cosigned size and root of ``origin``, or None."""
        with self.store.read() as db:
            return _stored(db, origin)


def _stored(db: Connection, origin: str) -> Stored | None:
    row = db.execute(
        "SELECT tree_size, root_hash FROM witness_checkpoints WHERE origin = $1", (origin,)
    ).fetchone()
    return None if row is None else Stored(int(row[0]), bytes(row[1]))
