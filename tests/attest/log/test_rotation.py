"""Log key rotation (docs/adr/0011): windows [from, until) meeting at T, heads signed only inside
the signer's window, a history signed key by key, the state binding continued, old proofs intact.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import warnings
from pathlib import Path

import pytest
from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.attest.log.keys import Rotation
from affidavit.attest.log.state import read_state, state_path
from affidavit.attest.log.storage import COMPONENT, MIGRATIONS, insert_meta
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.store import Store
from affidavit.verify.crypto.checkpoint import NoteVerifier, verify_checkpoint
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.merkle import verify_consistency, verify_inclusion
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.crypto.windows import parse_rfc3339

from tests.conftest import raises_code

OLD = derive_test_key("affidavit rotation old key", key_id="log-1")  # TEST-ONLY
NEW = derive_test_key("affidavit rotation new key", key_id="log-2")  # TEST-ONLY
THIRD = derive_test_key("affidavit rotation third key", key_id="log-3")  # TEST-ONLY
STRANGER = derive_test_key("affidavit rotation stranger", key_id="stranger")  # TEST-ONLY
LOG_ID = "rotation.test/log"
T = dt.datetime(2026, 1, 1, 0, 0, 0, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


class Clock:
    """A settable clock."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now


def _log(tmp_path: Path, clock: Clock, leaves: int = 3) -> TransparencyLog:
    """A log under OLD, bound to OLD's state file, with ``leaves`` leaves and a head before T."""
    log = TransparencyLog.create(
        tmp_path / "log.db", OLD, LOG_ID, clock=clock, state_file=_state(tmp_path, "old")
    )
    log.append([f"leaf-{i}".encode() for i in range(leaves)])
    log.signed_tree_head(T - dt.timedelta(hours=1))
    return log


def _state(tmp_path: Path, name: str) -> Path:
    return state_path(tmp_path / f"{name}.key", LOG_ID)


def _rotated(tmp_path: Path, clock: Clock | None = None) -> TransparencyLog:
    clock = clock or Clock(T + dt.timedelta(minutes=5))
    log = _log(tmp_path, clock)
    log.rotate_key(NEW, T, new_key_path="/keys/new.key", new_state_file=_state(tmp_path, "new"))
    return log


def test_rotation_end_to_end_old_heads_and_proofs_still_verify(tmp_path: Path) -> None:
    clock = Clock(T + dt.timedelta(minutes=5))
    log = _log(tmp_path, clock)
    old_head = log.heads()[-1]
    old_sth = json.loads(old_head.document)
    entry = log.rotate_key(NEW, T, new_state_file=_state(tmp_path, "new"))
    assert (entry.seq, entry.key_id, entry.valid_from, entry.tree_size) == (1, "log-2", _z(T), 3)
    assert log.public_key == NEW.public_key  # public_key is the current key
    log.append([b"leaf-3", b"leaf-4"])
    new_sth = log.signed_tree_head().to_json()  # the clock: T + 5 min, the new key's window
    assert new_sth["key_id"] == "log-2"
    verify_sth(new_sth, NEW.public_key)
    verify_sth(old_sth, OLD.public_key)  # the head before T: still the old key's
    assert old_sth["key_id"] == "log-1"
    with raises_code("treehead.signature_bad"):
        verify_sth(old_sth, NEW.public_key)
    proof = log.inclusion_proof(1, 3)  # a proof into the old head
    root = bytes.fromhex(old_sth["root_hash"])
    verify_inclusion(proof.leaf_hash, 1, 3, list(proof.path), root)
    consistency = log.consistency_proof(3, 5)  # the old head to the new one
    verify_consistency(3, 5, list(consistency.path), root, bytes.fromhex(new_sth["root_hash"]))
    history = log.key_history()
    assert [(k.key_id, k.valid_from, k.valid_until) for k in history] == [
        ("log-1", None, _z(T)),
        ("log-2", _z(T), None),
    ]
    documents = [k.to_json() for k in history]
    assert documents[0]["rotation"] is None
    assert documents[1]["rotation"]["signature"]
    log.close()


def _z(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_heads_are_signed_only_inside_the_signers_window(tmp_path: Path) -> None:
    log = _rotated(tmp_path)
    with raises_code("log.key_outside_window") as caught:
        log.signed_tree_head(T - SECOND)  # the new key before T
    assert "'log-1' signs heads dated then" in caught.value.message
    with raises_code("log.key_outside_window"):
        log.checkpoint(timestamp=T - SECOND)  # checkpoints: the record's time
    assert log.signed_tree_head(T).key_id == "log-2"  # T itself is the new key's (half-open)
    log.set_key(OLD)  # an earlier key of the history may still sign inside its window
    log.bind_state(_state(tmp_path, "old"))
    with raises_code("log.key_outside_window"):
        log.signed_tree_head(T)  # the old key at T
    with raises_code("log.key_outside_window"):
        log.signed_tree_head(T + dt.timedelta(days=1))
    backdated = log.signed_tree_head(T - SECOND)
    assert backdated.key_id == "log-1"
    verify_sth(backdated.to_json(), OLD.public_key)
    with raises_code("log.key_mismatch"):
        log.set_key(STRANGER)
    log.close()


def test_offsets_are_compared_as_times(tmp_path: Path) -> None:
    """T given as 01:00+01:00 is midnight UTC. As text, "2026-01-01T00:30:00Z" sorts before
    "2026-01-01T01:00:00+01:00", so a string comparison would let the old key sign at 00:30Z."""
    clock = Clock(T + dt.timedelta(hours=2))
    log = _log(tmp_path, clock)
    at = parse_rfc3339("2026-01-01T01:00:00+01:00")
    assert at == T
    half_past = T + dt.timedelta(minutes=30)
    assert _z(half_past) < "2026-01-01T01:00:00+01:00"  # the trap a string compare falls in
    entry = log.rotate_key(NEW, at)
    assert entry.valid_from == "2026-01-01T00:00:00Z"  # recorded in UTC
    log.set_key(OLD)
    with raises_code("log.key_outside_window"):
        log.signed_tree_head(half_past)
    log.set_key(NEW)
    assert log.signed_tree_head(half_past).key_id == "log-2"
    log.close()


def test_state_binding_continues_across_the_rotation(tmp_path: Path) -> None:
    log = _rotated(tmp_path)
    size, root = log.size, log.root().hex()
    new_state = read_state(_state(tmp_path, "new"), NEW.public_key, LOG_ID)
    old_state = read_state(_state(tmp_path, "old"), OLD.public_key, LOG_ID)
    assert new_state is not None
    assert old_state is not None
    assert (new_state.tree_size, new_state.root_hash) == (size, root)  # starts at the handover
    assert (old_state.tree_size, old_state.root_hash) == (size, root)
    assert log.state_file == _state(tmp_path, "new")  # the log now advances the new key's state
    log.append([b"more"])
    log.signed_tree_head(T + SECOND)
    advanced = read_state(_state(tmp_path, "new"), NEW.public_key, LOG_ID)
    assert advanced is not None
    assert advanced.tree_size == size + 1
    log.close()
    db = tmp_path / "log.db"
    db.unlink()  # the database lost: neither key may start a new history under this log ID
    with raises_code("log.state_mismatch"):
        TransparencyLog.create(db, NEW, LOG_ID, state_file=_state(tmp_path, "new"))
    with raises_code("log.state_mismatch"):
        TransparencyLog.create(db, OLD, LOG_ID, state_file=_state(tmp_path, "old"))


def test_new_key_state_of_another_history_is_refused(tmp_path: Path) -> None:
    fork = TransparencyLog.create(
        tmp_path / "fork.db", NEW, LOG_ID, state_file=_state(tmp_path, "new")
    )
    fork.append([b"other"] * 5)
    fork.signed_tree_head(T)  # the new key already signed a head of a forked history
    fork.close()
    log = _log(tmp_path, Clock(T + SECOND))
    with raises_code("log.state_mismatch"):
        log.rotate_key(NEW, T, new_state_file=_state(tmp_path, "new"))
    assert [k.key_id for k in log.key_history()] == ["log-1"]  # nothing recorded
    log.close()


def test_a_rotation_is_signed_by_the_current_key_only(tmp_path: Path) -> None:
    clock = Clock(T + dt.timedelta(hours=1))
    log = _log(tmp_path, clock)
    log._key = STRANGER  # a key that is not the log's, past set_key's check
    with raises_code("log.key_mismatch"):
        log.rotate_key(NEW, T)
    log.set_key(OLD)
    log.rotate_key(NEW, T)
    log.set_key(OLD)  # the old key can no longer hand the log over
    with raises_code("log.key_mismatch"):
        log.rotate_key(THIRD, T + SECOND)
    log.close()


@pytest.mark.parametrize(
    ("new_key", "at", "why"),
    [
        (NEW, T - dt.timedelta(hours=1), "outside the window"),  # the head at T - 1 h
        (NEW, T - dt.timedelta(hours=2), "outside the window"),
        (NEW, T + dt.timedelta(days=1), "in the future"),
        (OLD, T, "already key #0"),  # the same key
        (SigningKey(NEW.seed, key_id="log-1"), T, "already key #0"),  # a key ID taken
        (SigningKey(NEW.seed, key_id="bad|id"), T, "key ID"),
    ],
)
def test_bad_rotations_are_refused(
    tmp_path: Path, new_key: SigningKey, at: dt.datetime, why: str
) -> None:
    log = _log(tmp_path, Clock(T + SECOND))
    with raises_code("log.rotation_invalid", match=why):
        log.rotate_key(new_key, at)
    assert len(log.key_history()) == 1
    log.close()


def test_overlapping_rotation_is_refused(tmp_path: Path) -> None:
    """A second rotation at or before the current key's valid_from would reopen a closed window
    (an overlap); a gap cannot be asked for: one instant closes one window and opens the next."""
    log = _rotated(tmp_path, Clock(T + dt.timedelta(hours=1)))
    for at in (T, T - SECOND):
        with raises_code("log.rotation_invalid", match="overlap"):
            log.rotate_key(THIRD, at)
    with raises_code("log.rotation_invalid", match="already key #0"):
        log.rotate_key(OLD, T + SECOND)  # a key gets one window: never back to the old key
    entry = log.rotate_key(THIRD, T + SECOND)
    assert [(k.key_id, k.valid_until) for k in log.key_history()] == [
        ("log-1", _z(T)),
        ("log-2", _z(T + SECOND)),
        ("log-3", None),
    ]
    assert entry.seq == 2
    log.close()


def _edit(db: Path, sql: str, *params: object) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(sql, params)


def test_a_history_not_signed_by_the_old_key_is_refused(tmp_path: Path) -> None:
    """Someone holding only the new key (and write access to the database) cannot graft it on:
    the rotation must be signed by the key it replaces."""
    log = _log(tmp_path, Clock(T + SECOND))
    log.close()
    db = tmp_path / "log.db"
    with TransparencyLog.open(db) as opened:
        rotation = Rotation(
            LOG_ID, 1, OLD.public_key, NEW.public_key, "log-2", _z(T), 3, opened.root().hex()
        )
    forged = rotation.sign(NEW, NEW)  # "signed" by the new key only
    _edit(
        db,
        "INSERT INTO log_keys VALUES (1, 'log-2', ?, ?, 3, ?, ?)",
        NEW.public_key.b64,
        _z(T),
        rotation.root_hash,
        forged,
    )
    _edit(db, "UPDATE log_meta SET value = ? WHERE key = 'public_key'", NEW.public_key.b64)
    _edit(db, "UPDATE log_meta SET value = 'log-2' WHERE key = 'key_id'")
    with raises_code("log.key_history_invalid", match="signature is not by key #0"):
        TransparencyLog.open(db)


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        # a gap or overlap: the window moved after the old key signed the rotation
        ("UPDATE log_keys SET valid_from = '2026-01-01T01:00:00Z' WHERE seq = 1", "not about"),
        ("UPDATE log_keys SET tree_size = 2 WHERE seq = 1", "not about"),
        ("DELETE FROM log_keys WHERE seq = 1", "current key is not the last"),
        ("UPDATE log_meta SET value = 'x' WHERE key = 'key_id'", "current key is not the last"),
        ("UPDATE log_keys SET valid_from = 'yesterday' WHERE seq = 1", "malformed"),
        ("UPDATE log_keys SET statement = '{' WHERE seq = 1", "json"),
        ("UPDATE log_keys SET seq = 5 WHERE seq = 1", "missing"),
    ],
)
def test_an_edited_history_is_refused(tmp_path: Path, sql: str, why: str) -> None:
    _rotated(tmp_path).close()
    _edit(tmp_path / "log.db", sql)
    with raises_code("log.key_history_invalid", match=why):
        TransparencyLog.open(tmp_path / "log.db")


def test_rotation_hands_over_a_tree_later_heads_must_extend(tmp_path: Path) -> None:
    log = _rotated(tmp_path)
    log.close()
    with sqlite3.connect(tmp_path / "log.db") as conn:  # lose the recorded heads: the rotation's
        conn.execute("DELETE FROM log_heads")  # handed-over tree still binds the next head
        conn.execute("UPDATE log_nodes SET hash = zeroblob(32) WHERE level = 0 AND idx = 2")
    opened = TransparencyLog.open(tmp_path / "log.db", NEW)
    with raises_code("log.integrity", match="rotation to key 'log-2'"):
        opened.signed_tree_head(T + SECOND)
    opened.close()


def test_checkpoints_signed_before_the_rotation_can_still_be_cosigned(tmp_path: Path) -> None:
    log = _log(tmp_path, Clock(T - SECOND))
    note = log.checkpoint()
    log._clock = Clock(T + SECOND)  # time passes
    log.rotate_key(NEW, T)
    cosigned = log.add_cosignatures(note, [])
    verifier = NoteVerifier(LOG_ID, key_id_c2sp(LOG_ID, OLD.public_key.raw), OLD.public_key)
    assert verify_checkpoint(cosigned, [verifier]).checkpoint.tree_size == 3
    log.close()


def test_a_version_1_log_migrates_its_key_into_the_history(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    store = Store.open(db, create=True)
    store.migrate(COMPONENT, MIGRATIONS[:1])
    meta = {"log_id": LOG_ID, "public_key": OLD.public_key.b64, "key_id": "log-1"}
    with store.write() as conn:
        insert_meta(conn, db, meta)
    with TransparencyLog.open(store, OLD) as log:
        assert store.schema_version(COMPONENT) == len(MIGRATIONS)
        assert [(k.seq, k.key_id, k.window) for k in log.key_history()] == [
            (0, "log-1", (None, None))
        ]
        assert log.signed_tree_head(T).key_id == "log-1"
    store.close()


def test_a_registry_over_a_rotated_log_signs_with_the_current_key(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from affidavit.registry.app import create_app
    from affidavit.registry.settings import Settings

    first = Settings(data_dir=tmp_path / "data", contracts_dir=tmp_path / "contracts")
    clock = Clock(T - dt.timedelta(hours=1))
    with TestClient(create_app(first, clock=clock, signing_key=OLD)) as client:
        old_sth = client.get("/protocol/merkle/latest").json()
    verify_sth(old_sth, OLD.public_key)
    keys = first.data_dir / "keys"
    clock.now = T + dt.timedelta(hours=1)
    with TransparencyLog.open(
        first.data_dir / "registry.db",
        OLD.with_labels(key_id="registry-1", publisher_id=None),
        clock=clock,
        state_file=state_path(keys / "registry-1.key", first.log_id),
    ) as log:
        log.rotate_key(
            NEW.with_labels(key_id="registry-2", publisher_id=None),
            T,
            new_state_file=state_path(keys / "registry-2.key", first.log_id),
        )
    second = Settings(
        data_dir=first.data_dir, contracts_dir=first.contracts_dir, key_id="registry-2"
    )
    with TestClient(create_app(second, clock=clock, signing_key=NEW)) as client:
        assert client.get("/protocol/merkle/public-key").json()["public_key_base64"] == (
            NEW.public_key.b64
        )
        size = old_sth["tree_size"]
        served = client.get(f"/protocol/merkle/sth/{size}").json()
        head = client.get("/protocol/merkle/latest").json()
    # The writer signed the heads of the size once, with the current key, when it started (docs/
    # adr/0024: no GET signs); the old key's head stays recorded, as it was handed out.
    assert served == head
    with TransparencyLog.open(first.data_dir / "registry.db") as log:
        recorded = [json.loads(h.document) for h in log.heads() if h.kind == "sth"]
    assert old_sth in recorded
    assert head["key_id"] == "registry-2"
    assert head["timestamp"] == _z(T + dt.timedelta(hours=1))
    verify_sth(head, NEW.public_key)


def test_an_open_log_notices_an_edited_history_before_signing(tmp_path: Path) -> None:
    log = _rotated(tmp_path)
    log.signed_tree_head(T + SECOND)  # the verified history is remembered...
    _edit(tmp_path / "log.db", "UPDATE log_keys SET valid_from = ? WHERE seq = 1", _z(T - SECOND))
    with raises_code("log.key_history_invalid"):  # ...only for exactly the rows it verified
        log.signed_tree_head(T + 2 * SECOND)
    log.close()


def test_the_default_rotation_time_is_now_to_the_second(tmp_path: Path) -> None:
    """Heads are signed to the second: a rotation "now" at 00:00:00.9 must let the new key sign
    the head of 00:00:00.9 (stamped 00:00:00) at once."""
    clock = Clock(T + dt.timedelta(microseconds=900_000))
    log = _log(tmp_path, clock)
    entry = log.rotate_key(NEW)
    assert entry.valid_from == "2026-01-01T00:00:00Z"
    assert log.signed_tree_head().timestamp == "2026-01-01T00:00:00Z"
    log.close()
