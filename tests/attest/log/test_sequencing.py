"""affidavit.attest.log.sequencing: sequence durably, deduplicate by leaf hash, integrate in
batches without a gap or a fork; on SQLite and on a real PostgreSQL database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.state import read_state
from affidavit.attest.log.storage import COMPONENT, MIGRATIONS
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.store import Store
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import NoteVerifier, verify_checkpoint
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.treehead import verify_sth

from tests.conftest import raises_code

KEY = derive_test_key("affidavit sequencing test key")  # TEST-ONLY
LOG_ID = "affidavit.test/sequencing"
WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "log.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def log(location: str, tmp_path: Path) -> Iterator[TransparencyLog]:
    store = Store.at(location, create=True)
    created = TransparencyLog.create(store, KEY, LOG_ID, state_file=tmp_path / "k.logstate.json")
    try:
        yield created
    finally:
        store.close()


def _reopened(location: str) -> TransparencyLog:
    return TransparencyLog(Store.at(location), key=KEY)


def test_sequenced_entries_get_consecutive_indexes_and_survive_a_new_connection(
    log: TransparencyLog, location: str
) -> None:
    first = log.sequence([b"a", b"b", b"c"])
    assert [s.index for s in first] == [0, 1, 2]
    assert all(s.created for s in first)
    assert first[1].leaf_hash == merkle.leaf_hash(b"b")  # RFC 9162 §2.1.1
    assert log.size == 0  # sequenced, not integrated: the tree has not grown
    assert log.next_index == 3
    other = _reopened(location)  # committed: another connection sees them
    try:
        assert other.next_index == 3
        assert [s.index for s in other.sequence([b"d"])] == [3]
    finally:
        other.store.close()


def test_an_entry_already_in_the_log_gets_its_first_index(log: TransparencyLog) -> None:
    log.append([b"old"])  # a leaf of the tree, appended directly
    placed = log.sequence([b"x", b"old", b"x", b"y"])
    assert [(s.index, s.created) for s in placed] == [(1, True), (0, False), (1, False), (2, True)]
    again = log.sequence([b"y", b"x"])  # sequenced, not yet integrated: still found
    assert [(s.index, s.created) for s in again] == [(2, False), (1, False)]
    log.integrate()
    assert [(s.index, s.created) for s in log.sequence([b"y"])] == [(2, False)]
    assert log.next_index == 3


def test_integration_builds_the_same_tree_as_direct_appends(
    log: TransparencyLog, tmp_path: Path
) -> None:
    data = [f"entry-{i}".encode() for i in range(300)]
    log.sequence(data[:120])
    assert log.integrate(limit=50) == (0, 50)  # a bounded batch
    log.sequence(data[120:])
    assert log.integrate() == (50, 300)
    assert log.integrate() == (300, 300)  # nothing pending
    with TransparencyLog.create(tmp_path / "direct.db", KEY, LOG_ID) as direct:
        direct.append(data)
        for size in (1, 50, 77, 256, 300):
            assert log.root(size) == direct.root(size)
    assert log.entries(0, 300) == data
    proof = log.inclusion_proof(123)
    merkle.verify_inclusion(proof.leaf_hash, 123, 300, list(proof.path), proof.root_hash)


def test_a_direct_append_integrates_sequenced_entries_first(log: TransparencyLog) -> None:
    log.sequence([b"s0", b"s1"])
    assert log.append([b"d"]) == [2]  # the sequenced entries keep indexes 0 and 1
    assert log.size == 3
    assert log.entries(0, 3) == [b"s0", b"s1", b"d"]


def test_integration_refuses_a_gap_and_integrates_nothing(
    log: TransparencyLog, location: str
) -> None:
    log.sequence([b"a", b"b", b"c"])
    with log.store.write() as db:
        db.execute("DELETE FROM log_sequenced WHERE idx = 1")  # a damaged queue
    with raises_code("log.integrity"):
        log.integrate()
    assert log.size == 0


def test_a_failed_integration_rolls_back_and_the_next_one_integrates(
    log: TransparencyLog,
) -> None:
    log.sequence([b"a", b"b"])

    def integrate_then_crash() -> None:
        with log.store.write():
            log.integrate()
            raise RuntimeError("crash before COMMIT")

    with pytest.raises(RuntimeError):
        integrate_then_crash()
    assert log.size == 0
    assert log.integrate() == (0, 2)
    assert log.entries(0, 2) == [b"a", b"b"]


def test_sign_heads_signs_one_checkpoint_and_one_tree_head_over_one_tree(
    log: TransparencyLog, tmp_path: Path
) -> None:
    log.sequence([b"a", b"b", b"c"])
    log.integrate()
    note, head = log.sign_heads(timestamp=WHEN)
    verify_sth(head.to_json(), KEY.public_key)
    verifier = NoteVerifier(LOG_ID, key_id_c2sp(LOG_ID, KEY.public_key.raw), KEY.public_key)
    checkpoint = verify_checkpoint(note, [verifier]).checkpoint
    assert (checkpoint.tree_size, checkpoint.root_hash.hex()) == (3, head.root_hash)
    assert log.recorded_head("checkpoint", 3) is not None
    assert log.recorded_head("sth", 3) is not None
    largest = log.largest_head("checkpoint")
    assert largest is not None
    assert largest.document == note
    state = read_state(tmp_path / "k.logstate.json", KEY.public_key, LOG_ID)
    assert state is not None
    assert (state.tree_size, state.root_hash) == (3, head.root_hash)


def test_a_log_of_schema_3_migrates_and_finds_its_old_leaves(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with TransparencyLog.create(path, KEY, LOG_ID) as made:
        made.append([b"kept-0", b"kept-1"])
    with Store.open(path) as raw, raw.write() as db:  # back to schema 3: no sequencing tables
        db.execute("DROP TABLE log_sequenced")
        db.execute("DROP INDEX log_leaves_by_hash")
        db.execute("UPDATE schema_versions SET version = 3 WHERE component = 'log'")
    with TransparencyLog.open(path, KEY) as migrated:
        assert migrated.store.schema_version(COMPONENT) == len(MIGRATIONS) == 4
        placed = migrated.sequence([b"kept-1", b"new"])
        assert [(s.index, s.created) for s in placed] == [(1, False), (2, True)]


def test_several_sequence_calls_in_one_transaction_continue_each_other(
    log: TransparencyLog, location: str
) -> None:
    # The next index is read once per transaction (a group-commit batch sequences job by job).
    log.sequence([b"before"])
    with log.store.write():
        first = log.sequence([b"a", b"b"])
        second = log.sequence([b"c", b"a"])
        log.append([b"direct"])  # integrates the sequenced ones first, then appends
        third = log.sequence([b"d"])
    assert [p.index for p in first] == [1, 2]
    assert [(p.index, p.created) for p in second] == [(3, True), (1, False)]
    assert [p.index for p in third] == [5]
    assert log.entries(0, 5) == [b"before", b"a", b"b", b"c", b"direct"]
