"""The signed log state beside the key (docs/adr/0005): a key that signed heads is bound to its
log; a store that does not extend the latest of them is refused; a damaged node is never signed."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.state import read_state, state_path
from affidavit.attest.log.transparency import TransparencyLog

from tests.conftest import raises_code

KEY = derive_test_key("affidavit log state key")  # TEST-ONLY
OTHER = derive_test_key("affidavit log state other key")  # TEST-ONLY
LOG_ID = "state.test/log"
WHEN = dt.datetime(2025, 6, 7, 8, 9, 10, tzinfo=dt.UTC)


def _bound(tmp_path: Path, leaves: int = 5, name: str = "log.db") -> tuple[Path, Path]:
    """A log with ``leaves`` leaves and one signed head, bound to a state file."""
    state = state_path(tmp_path / "log.key", LOG_ID)
    db = tmp_path / name
    with TransparencyLog.create(db, KEY, LOG_ID, state_file=state) as log:
        log.append([f"leaf-{i}".encode() for i in range(leaves)])
        log.signed_tree_head(WHEN)
    return db, state


def _flip_node(db: Path, level: int, index: int) -> None:
    with sqlite3.connect(db) as conn:
        (value,) = conn.execute(
            "SELECT hash FROM log_nodes WHERE level = ? AND idx = ?", (level, index)
        ).fetchone()
        flipped = bytes([value[0] ^ 0x01]) + bytes(value[1:])
        conn.execute(
            "UPDATE log_nodes SET hash = ? WHERE level = ? AND idx = ?", (flipped, level, index)
        )


def test_signing_writes_a_verified_state(tmp_path: Path) -> None:
    db, state = _bound(tmp_path)
    recorded = read_state(state, KEY.public_key, LOG_ID)
    assert recorded is not None
    with TransparencyLog.open(db) as log:
        assert (recorded.tree_size, recorded.root_hash) == (5, log.root().hex())
    assert state.stat().st_mode & 0o777 == 0o600


def test_deleted_store_cannot_be_recreated_under_the_same_key(tmp_path: Path) -> None:
    db, state = _bound(tmp_path)
    db.unlink()
    with raises_code("log.state_mismatch"):
        TransparencyLog.create(db, KEY, LOG_ID, state_file=state)


@pytest.mark.parametrize("leaves", [0, 3])
def test_store_that_does_not_extend_the_state_is_refused(tmp_path: Path, leaves: int) -> None:
    _, state = _bound(tmp_path)
    other = tmp_path / "other.db"  # a second history under the same key and log ID
    with TransparencyLog.create(other, KEY, LOG_ID) as log:
        log.append([f"other-{i}".encode() for i in range(leaves)])
    with raises_code("log.state_mismatch"):
        TransparencyLog.open(other, KEY, state_file=state)


def test_same_size_other_root_is_refused(tmp_path: Path) -> None:
    _, state = _bound(tmp_path)
    other = tmp_path / "other.db"
    with TransparencyLog.create(other, KEY, LOG_ID) as log:
        log.append([f"other-{i}".encode() for i in range(5)])
    with raises_code("log.state_mismatch"):
        TransparencyLog.open(other, KEY, state_file=state)


def test_extending_store_is_accepted_and_advances_the_state(tmp_path: Path) -> None:
    db, state = _bound(tmp_path)
    with TransparencyLog.open(db, KEY, state_file=state) as log:
        log.append([b"more"])
        log.checkpoint(timestamp=WHEN)
    recorded = read_state(state, KEY.public_key, LOG_ID)
    assert recorded is not None
    assert recorded.tree_size == 6


def test_tampered_or_foreign_state_is_invalid(tmp_path: Path) -> None:
    db, state = _bound(tmp_path)
    document = json.loads(state.read_text())
    document["tree_size"] = 1
    state.write_text(json.dumps(document))
    with raises_code("log.state_invalid"):
        TransparencyLog.open(db, KEY, state_file=state)
    assert read_state(tmp_path / "absent.json", KEY.public_key, LOG_ID) is None
    with raises_code("log.state_invalid"):  # signed by another key
        read_state(state, OTHER.public_key, LOG_ID)


def test_flipped_interior_node_is_never_signed(tmp_path: Path) -> None:
    """Reproduction (issue: corrupt tree nodes get signed): a flipped node on the root's path
    made the log sign a head whose root contradicts its own head of the same size."""
    db = tmp_path / "plain.db"  # no state file: the recorded head alone must catch it
    with TransparencyLog.create(db, KEY, LOG_ID) as log:
        log.append([f"leaf-{i}".encode() for i in range(7)])
        before = log.signed_tree_head(WHEN)
    _flip_node(db, 2, 0)  # covers leaves 0-3: read for the root of size 7 (and kept in size 8)
    with TransparencyLog.open(db, KEY) as log:
        with raises_code("log.integrity"):
            log.signed_tree_head(WHEN)
        log.append([b"later"])  # a bigger tree must still extend the head of size 8
        with raises_code("log.integrity"):
            log.checkpoint(timestamp=WHEN)
        with raises_code("log.integrity"):
            log.verify_integrity()
        assert [h.tree_size for h in log.heads()] == [before.tree_size]  # nothing new recorded


def test_full_audit_finds_a_node_off_the_root_path(tmp_path: Path) -> None:
    db = tmp_path / "plain.db"
    with TransparencyLog.create(db, KEY, LOG_ID) as log:
        log.append([f"leaf-{i}".encode() for i in range(8)])
        log.signed_tree_head(WHEN)
    _flip_node(db, 1, 1)  # below the stored (2, 0): the root of size 8 does not read it
    with TransparencyLog.open(db, KEY) as log:
        log.verify_integrity()  # the O(log n) check cannot see it...
        with raises_code("log.integrity") as caught:
            log.verify_integrity(full=True)  # ...the start-up audit does
        assert caught.value.details == {"level": 1, "index": 1}


def test_audit_checks_leaf_data(tmp_path: Path) -> None:
    db = tmp_path / "plain.db"
    with TransparencyLog.create(db, KEY, LOG_ID) as log:
        log.append([b"a", b"b", b"c"])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE log_entries SET data = ? WHERE idx = 2", (b"C",))
    with TransparencyLog.open(db) as log, raises_code("log.integrity") as caught:
        log.verify_integrity(full=True)
    assert caught.value.code == "log.integrity"
    assert caught.value.details == {"level": 0, "index": 2}
