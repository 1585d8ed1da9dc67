"""affidavit.attest.log.transparency: storage, proofs against the in-memory reference, heads, error
codes."""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import MAX_ENTRIES_PER_CALL, TransparencyLog
from affidavit.attest.stores.store import Migrations, Store
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.crypto.treehead import sth_message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

KEY = derive_test_key("affidavit test log key")  # TEST-ONLY
OTHER_KEY = derive_test_key("some other key")  # TEST-ONLY
WHEN = dt.datetime(2025, 6, 7, 8, 9, 10, tzinfo=dt.UTC)
LOG_ID = "affidavit.test/log"


def _data(i: int) -> bytes:
    return f"leaf-{i}".encode()


@pytest.fixture
def log(tmp_path: Path) -> TransparencyLog:
    created = TransparencyLog.create(tmp_path / "log.db", KEY, LOG_ID)
    yield created  # type: ignore[misc]
    created.close()


def test_create_open_and_meta(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    TransparencyLog.create(path, KEY, LOG_ID, key_path="/keys/log.key").close()
    with TransparencyLog.open(path) as reopened:
        assert reopened.log_id == LOG_ID
        assert reopened.public_key.raw == KEY.public_key.raw
        assert reopened.key_path == "/keys/log.key"
        assert reopened.size == 0
        assert reopened.root() == merkle.root_of([])  # RFC 9162 §2.1.1: empty root H("")
        with raises_code("log.no_signing_key"):
            reopened.signed_tree_head(WHEN)


def test_create_refuses_an_existing_log(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    TransparencyLog.create(path, KEY, LOG_ID).close()
    with raises_code("log.exists") as e:
        TransparencyLog.create(path, KEY, "other")
    assert e.value.code == "log.exists"


@pytest.mark.parametrize("bad", ["", "a|b", "has space", "tab\there", "é", "x" * 201, "log\n"])
def test_bad_log_id(tmp_path: Path, bad: str) -> None:
    with raises_code("log.bad_log_id"):
        TransparencyLog.create(tmp_path / "log.db", KEY, bad)


def test_open_without_log_and_missing_file(tmp_path: Path) -> None:
    Store.open(tmp_path / "empty.db", create=True).close()
    with raises_code("log.not_found"):
        TransparencyLog.open(tmp_path / "empty.db")
    with raises_code("store.missing"):
        TransparencyLog.open(tmp_path / "absent.db")


def test_key_mismatch(tmp_path: Path) -> None:
    TransparencyLog.create(tmp_path / "log.db", KEY, LOG_ID).close()
    with raises_code("log.key_mismatch") as e:
        TransparencyLog.open(tmp_path / "log.db", OTHER_KEY)
    assert e.value.exit_code == 2


def test_append_leaf_entries(log: TransparencyLog) -> None:
    assert log.append([]) == []
    assert log.append([_data(0), _data(1)]) == [0, 1]
    assert log.append([_data(2)]) == [2]
    assert log.size == 3
    assert log.leaf(1) == _data(1)
    assert log.leaf_hash(1) == merkle.leaf_hash(_data(1))
    assert log.entries(0, 3) == [_data(0), _data(1), _data(2)]
    with raises_code("log.index_out_of_range"):
        log.leaf(3)
    with raises_code("log.index_out_of_range"):
        log.leaf_hash(-1)
    with raises_code("log.size_out_of_range"):
        log.entries(2, 4)
    with raises_code("log.size_out_of_range"):
        log.entries(2, 2)
    with raises_code("log.range_too_large"):
        log.entries(0, MAX_ENTRIES_PER_CALL + 1)


def test_append_leaf_hashes(log: TransparencyLog) -> None:
    hashes = [merkle.leaf_hash(_data(i)) for i in range(5)]
    assert log.append_leaf_hashes(hashes) == [0, 1, 2, 3, 4]
    assert log.root() == merkle.root_of(hashes)
    with raises_code("log.no_entry_data"):
        log.leaf(2)
    with raises_code("log.no_entry_data"):
        log.entries(0, 2)
    with raises_code("log.bad_leaf_hash") as e:
        log.append_leaf_hashes([hashes[0], b"\x00" * 31])
    assert e.value.details == {"position": 1}
    assert log.size == 5  # nothing of the refused batch was stored


def test_batch_is_atomic(log: TransparencyLog) -> None:
    log.append([_data(0)])
    with pytest.raises(TypeError):
        log.append([_data(1), None])  # type: ignore[list-item]
    assert log.size == 1


def _build(log: TransparencyLog, n: int, batches: list[int]) -> list[bytes]:
    """Append n leaves in batches of the given sizes (cycled); return their leaf hashes."""
    done, turn = 0, 0
    while done < n:
        step = min(batches[turn % len(batches)], n - done)
        log.append([_data(i) for i in range(done, done + step)])
        done, turn = done + step, turn + 1
    return [merkle.leaf_hash(_data(i)) for i in range(n)]


def test_every_proof_matches_the_reference_up_to_33(log: TransparencyLog) -> None:
    leaves = _build(log, 33, [1, 2, 5, 3])
    for n in range(1, 34):
        root = merkle.root_of(leaves[:n])
        assert log.root(n) == root
        for i in range(n):
            proof = log.inclusion_proof(i, n)
            assert list(proof.path) == merkle.inclusion_proof(leaves, i, n)
            assert (proof.leaf_hash, proof.root_hash) == (leaves[i], root)
            merkle.verify_inclusion(leaves[i], i, n, list(proof.path), root)
        for m in range(1, n + 1):
            cons = log.consistency_proof(m, n)
            assert list(cons.path) == merkle.consistency_proof(leaves, m, n)
            merkle.verify_consistency(m, n, list(cons.path), cons.first_root, cons.second_root)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 400),
    batches=st.lists(st.integers(1, 70), min_size=1, max_size=5),
    picks=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=6),
)
def test_proofs_equal_reference_random(
    tmp_path_factory: pytest.TempPathFactory,
    n: int,
    batches: list[int],
    picks: list[tuple[float, float]],
) -> None:
    path = tmp_path_factory.mktemp("prop") / "log.db"
    with TransparencyLog.create(path, KEY, LOG_ID) as log:
        leaves = _build(log, n, batches)
        for a, b in picks:
            size = 1 + int(a * (n - 1))
            index = int(b * (size - 1))
            first = 1 + int(b * (size - 1))
            proof = log.inclusion_proof(index, size)
            assert list(proof.path) == merkle.inclusion_proof(leaves, index, size)
            merkle.verify_inclusion(leaves[index], index, size, list(proof.path), proof.root_hash)
            cons = log.consistency_proof(first, size)
            assert list(cons.path) == merkle.consistency_proof(leaves, first, size)
            assert cons.second_root == merkle.root_of(leaves[:size])
            merkle.verify_consistency(
                first, size, list(cons.path), cons.first_root, cons.second_root
            )


def test_proof_argument_errors(log: TransparencyLog) -> None:
    _build(log, 4, [4])
    with raises_code("log.index_out_of_range"):
        log.inclusion_proof(4)
    with raises_code("log.index_out_of_range"):
        log.inclusion_proof(2, 2)
    with raises_code("log.size_out_of_range"):
        log.inclusion_proof(0, 5)
    with raises_code("log.size_out_of_range"):
        log.consistency_proof(0, 4)  # from an empty tree proves nothing
    with raises_code("log.size_out_of_range"):
        log.consistency_proof(3, 2)
    with raises_code("log.size_out_of_range"):
        log.root(5)
    assert log.consistency_proof(4).path == ()  # same size: empty proof


def test_inclusion_json_form(log: TransparencyLog) -> None:
    leaves = _build(log, 5, [5])
    doc = log.inclusion_proof(4).to_json(LOG_ID)
    assert doc["leaf_hash"] == leaves[4].hex()
    assert doc["merkle_root"] == merkle.root_of(leaves).hex()
    assert (doc["leaf_index"], doc["tree_size"], doc["log_id"]) == (4, 5, LOG_ID)
    # leaf 4 of 5: its only sibling is the subtree of leaves 0-3, on the left (RFC 9162 §2.1.3)
    assert doc["proof"] == [{"position": "left", "hash": merkle.root_of(leaves[:4]).hex()}]


def test_signed_tree_head_verifies_and_is_recorded(log: TransparencyLog) -> None:
    leaves = _build(log, 6, [6])
    head = log.signed_tree_head(WHEN.astimezone(dt.timezone(dt.timedelta(hours=2))))
    assert head.timestamp == "2025-06-07T08:09:10Z"  # signed as UTC
    assert head.root_hash == merkle.root_of(leaves).hex()
    assert head.tree_size == 6
    message = f"{LOG_ID}|6|{head.root_hash}|2025-06-07T08:09:10Z".encode()
    assert sth_message(LOG_ID, 6, head.root_hash, head.timestamp) == message
    verify_ed25519(KEY.public_key, message, base64.b64decode(head.signature))
    recorded = log.heads()
    assert len(recorded) == 1
    assert (recorded[0].kind, recorded[0].tree_size) == ("sth", 6)
    assert json.loads(recorded[0].document) == head.to_json()


def test_sth_accepted_by_the_peer_verifier(log: TransparencyLog) -> None:
    aigentsy_merkle = pytest.importorskip("aigentsy_verify.merkle")
    _build(log, 3, [3])
    sth = log.signed_tree_head(WHEN).to_json()
    assert aigentsy_merkle.verify_sth_signature(sth, KEY.public_key.b64) is True
    tampered = dict(sth, tree_size=2)
    assert aigentsy_merkle.verify_sth_signature(tampered, KEY.public_key.b64) is False


def test_naive_timestamp_refused(log: TransparencyLog) -> None:
    with raises_code("log.bad_timestamp"):
        log.signed_tree_head(dt.datetime(2025, 1, 1))
    assert log.heads() == []


def test_injected_clock(tmp_path: Path) -> None:
    with TransparencyLog.create(tmp_path / "l.db", KEY, LOG_ID, clock=lambda: WHEN) as log:
        assert log.signed_tree_head().timestamp == "2025-06-07T08:09:10Z"


def test_missing_node_is_an_integrity_error(log: TransparencyLog) -> None:
    _build(log, 8, [8])
    with log.store.write() as db:
        db.execute("DELETE FROM log_nodes WHERE level = 1 AND idx = 1")
    assert log.root() == merkle.root_of([merkle.leaf_hash(_data(i)) for i in range(8)])
    with raises_code("log.integrity") as e:
        log.inclusion_proof(0)  # needs node (1, 1): leaves 2-3
    assert e.value.exit_code == 1
    assert e.value.details == {"level": 1, "index": 1}


def test_shares_a_store_with_other_tables(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "shared.db", create=True)
    store.migrate("other", Migrations.same("CREATE TABLE other_things (x INTEGER)"))
    log = TransparencyLog.create(store, KEY, LOG_ID)
    log.append([b"x"])
    log.close()  # does not close a store it did not open
    assert TransparencyLog.open(store).size == 1
    assert store.schema_version("log") == 4  # 2: key history; 3: heads by size; 4: sequencing
    store.close()


def test_checkpoint_is_a_verifiable_c2sp_note(log: TransparencyLog) -> None:
    from affidavit.verify.crypto.checkpoint import (
        parse_verifier_key,
        verifier_key_string,
        verify_checkpoint,
    )

    leaves = _build(log, 7, [3])
    note = log.checkpoint(timestamp=WHEN)
    vkey = parse_verifier_key(verifier_key_string(LOG_ID, KEY.public_key))
    verified = verify_checkpoint(note, [vkey], origin=LOG_ID)
    assert verified.checkpoint.tree_size == 7
    assert verified.checkpoint.root_hash == merkle.root_of(leaves)
    other = parse_verifier_key(verifier_key_string(LOG_ID, OTHER_KEY.public_key))
    with raises_code("checkpoint.no_trusted_signature"):
        verify_checkpoint(note, [other])
    custom = log.checkpoint("example.com/other-origin", WHEN)
    assert custom.startswith("example.com/other-origin\n7\n")
    assert [h.kind for h in log.heads()] == ["checkpoint", "checkpoint"]
    assert log.heads(since_seq=1)[0].document == custom
