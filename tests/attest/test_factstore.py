"""The SQLite fact store: insert rules (seed 002 §20.6.1), atomic batches, walks, audits, export."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest
from affidavit.attest.factstore import FactStore
from affidavit.verify import errors
from affidavit.verify.lineage import walk
from affidavit.verify.lineage_audit import audit
from affidavit.verify.lineage_jsonl import JsonlFactSource

from tests.verify.test_lineage import ABSENT, chain, make_fact


@pytest.fixture
def store(tmp_path: Path) -> FactStore:
    opened = FactStore.open(tmp_path / "facts.db", create=True)
    yield opened  # type: ignore[misc]
    opened.close()


def test_add_get_children_and_wal(store: FactStore) -> None:
    facts = chain(3)
    result = store.add_batch(facts)
    assert result.added == tuple(f.hash for f in facts)
    assert store.get(facts[1].hash) == facts[1]
    assert tuple(store.children(facts[0].hash)) == (facts[1].hash,)
    assert store.get(ABSENT) is None
    assert len(store) == 3
    mode = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_the_same_fact_again_is_a_no_op(store: FactStore) -> None:
    fact = make_fact("a", ABSENT)
    store.add_batch([fact])
    again = store.add_batch([fact, fact])
    assert again.added == ()
    assert again.existing == (fact.hash, fact.hash)
    assert len(store) == 1


def test_derived_from_is_immutable(store: FactStore) -> None:
    # seed 002 §20.6.1 rule 4
    store.add_batch([make_fact("a", ABSENT)])
    with pytest.raises(errors.DerivedFromImmutable) as caught:
        store.add_batch([make_fact("a")], labels=["line 7"])
    assert caught.value.code == "derived_from_immutable"
    assert "line 7" in caught.value.message
    assert store.get(make_fact("a").hash).derived_from == (ABSENT,)  # type: ignore[union-attr]


def test_derived_from_immutable_within_one_batch(store: FactStore) -> None:
    with pytest.raises(errors.DerivedFromImmutable):
        store.add_batch([make_fact("a"), make_fact("a", ABSENT)])
    assert len(store) == 0


def test_self_reference_is_a_cycle(store: FactStore) -> None:
    plain = make_fact("self")
    selfish = make_fact("self", plain.hash)
    with pytest.raises(errors.ProvenanceCycleDetected) as caught:
        store.add_batch([selfish])
    assert caught.value.code == "provenance_cycle_detected"


def test_cycle_against_the_store_is_refused(store: FactStore) -> None:
    a = make_fact("a")
    b = make_fact("b", a)
    c = make_fact("c", b)
    store.add_batch([b, c])  # b names a, which is not stored yet (dangling is valid)
    a_cyclic = make_fact("a", c)  # a derived from c closes a -> c -> b -> a
    with pytest.raises(errors.ProvenanceCycleDetected) as caught:
        store.add_batch([a_cyclic])
    assert caught.value.details["fact"] == a.hash
    assert store.get(a.hash) is None
    store.add_batch([a])  # the acyclic a is fine


def test_cycle_across_a_batch_stores_nothing(store: FactStore) -> None:
    a = make_fact("a")
    b = make_fact("b", a)
    a_cyclic = make_fact("a", b)
    good = make_fact("good")
    with pytest.raises(errors.ProvenanceCycleDetected) as caught:
        store.add_batch([good, b, a_cyclic], labels=["line 1", "line 2", "line 3"])
    assert "line 3" in caught.value.message
    assert len(store) == 0  # atomic: the good fact is not stored either
    assert store.get(good.hash) is None


def test_dangling_references_are_stored(store: FactStore) -> None:
    fact = make_fact("d", ABSENT)
    store.add_batch([fact])
    assert store.get(fact.hash) == fact
    assert tuple(store.children(ABSENT)) == (fact.hash,)


def test_walk_and_audit_over_the_store(store: FactStore) -> None:
    facts = chain(4)
    store.add_batch(facts)
    result = walk(store, facts[-1].hash, depth=5)
    assert [n.hash for n in result.nodes] == [f.hash for f in reversed(facts)]
    assert audit(store).ok


def test_audit_finds_a_body_edited_in_place(store: FactStore) -> None:
    facts = chain(2)
    store.add_batch(facts)
    db = sqlite3.connect(store.path)
    db.execute(
        'UPDATE facts SET body = replace(body, \'"v":"f0"\', \'"v":"forged"\') WHERE hash = ?',
        (bytes.fromhex(facts[0].hash),),
    )
    db.commit()
    db.close()
    report = audit(store)
    assert [(f.code, f.fact) for f in report.findings] == [
        ("lineage.fact_hash_mismatch", facts[0].hash)
    ]
    with pytest.raises(errors.LineageFactHashMismatch):
        walk(store, facts[1].hash)


def test_export_is_readable_as_jsonl(store: FactStore, tmp_path: Path) -> None:
    facts = chain(3)
    store.add_batch(facts)
    out = io.BytesIO()
    assert store.export_jsonl(out) == 3
    path = tmp_path / "export.jsonl"
    path.write_bytes(out.getvalue())
    source = JsonlFactSource(path)
    assert walk(source, facts[-1].hash, depth=5) == walk(store, facts[-1].hash, depth=5)
    assert audit(source).ok


def test_open_refuses_other_files(tmp_path: Path) -> None:
    text = tmp_path / "x.db"
    text.write_text("hello")
    with pytest.raises(errors.LineageStoreInvalid):
        FactStore.open(text)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(errors.LineageStoreInvalid):
        FactStore.open(other)
    with pytest.raises(errors.FileReadError):
        FactStore.open(tmp_path / "missing.db")


def test_reopen_keeps_facts(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    with FactStore.open(path, create=True) as first:
        first.add_batch(chain(2))
    with FactStore.open(path) as second:
        assert len(second) == 2
