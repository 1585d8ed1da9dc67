"""The SQLite fact store: insert rules (seed 002 §20.6.1), atomic batches, walks, audits, export."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest
from affidavit.attest.stores.facts import FactStore
from affidavit.verify.lineage.audit import audit
from affidavit.verify.lineage.walk import JsonlFactSource, walk

from tests.conftest import raises_code
from tests.verify.lineage.test_lineage import ABSENT, chain, make_fact


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
    with raises_code("derived_from_immutable") as caught:
        store.add_batch([make_fact("a")], labels=["line 7"])
    assert caught.value.code == "derived_from_immutable"
    assert "line 7" in caught.value.message
    assert store.get(make_fact("a").hash).derived_from == (ABSENT,)  # type: ignore[union-attr]


def test_derived_from_immutable_within_one_batch(store: FactStore) -> None:
    with raises_code("derived_from_immutable"):
        store.add_batch([make_fact("a"), make_fact("a", ABSENT)])
    assert len(store) == 0


def test_self_reference_is_a_cycle(store: FactStore) -> None:
    plain = make_fact("self")
    selfish = make_fact("self", plain.hash)
    with raises_code("provenance_cycle_detected") as caught:
        store.add_batch([selfish])
    assert caught.value.code == "provenance_cycle_detected"


def test_cycle_against_the_store_is_refused(store: FactStore) -> None:
    a = make_fact("a")
    b = make_fact("b", a)
    c = make_fact("c", b)
    store.add_batch([b, c])  # b names a, which is not stored yet (dangling is valid)
    a_cyclic = make_fact("a", c)  # a derived from c closes a -> c -> b -> a
    with raises_code("provenance_cycle_detected") as caught:
        store.add_batch([a_cyclic])
    assert caught.value.details["fact"] == a.hash
    assert store.get(a.hash) is None
    store.add_batch([a])  # the acyclic a is fine


def test_cycle_across_a_batch_stores_nothing(store: FactStore) -> None:
    a = make_fact("a")
    b = make_fact("b", a)
    a_cyclic = make_fact("a", b)
    good = make_fact("good")
    with raises_code("provenance_cycle_detected") as caught:
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
    with raises_code("lineage.fact_hash_mismatch"):
        walk(store, facts[1].hash)


def test_export_is_readable_as_jsonl(store: FactStore, tmp_path: Path) -> None:
    facts = chain(3)
    store.add_batch(facts)
    out = io.BytesIO()
    assert store.export_jsonl(out) == 3
    path = tmp_path / "export.jsonl"
    path.write_bytes(out.getvalue())
    source = JsonlFactSource(path.read_bytes(), str(path))
    assert walk(source, facts[-1].hash, depth=5) == walk(store, facts[-1].hash, depth=5)
    assert audit(source).ok


def test_open_refuses_other_files(tmp_path: Path) -> None:
    text = tmp_path / "x.db"
    text.write_text("hello")
    with raises_code("lineage.store_invalid"):
        FactStore.open(text)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with raises_code("lineage.store_invalid"):
        FactStore.open(other)
    with raises_code("io.unreadable"):
        FactStore.open(tmp_path / "missing.db")


def test_reopen_keeps_facts(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    with FactStore.open(path, create=True) as first:
        first.add_batch(chain(2))
    with FactStore.open(path) as second:
        assert len(second) == 2


# Files are private (0600 in a 0700 folder made here) -------------------------------------------


def test_new_store_and_its_wal_files_are_private(tmp_path: Path) -> None:
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = tmp_path / "made" / "here" / "facts.db"
        with FactStore.open(path, create=True) as store:
            store.add_batch(chain(2))
            modes = {
                name: stat.S_IMODE(os.stat(path.parent / name).st_mode)
                for name in os.listdir(path.parent)
            }
        assert modes["facts.db"] == 0o600
        assert {modes[n] for n in modes if n.startswith("facts.db-")} <= {0o600}
        assert "facts.db-wal" in modes  # WAL side files exist while open, and are 0600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        # an existing folder keeps its mode (the operator chose it)
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        FactStore.open(shared / "f.db", create=True).close()
        assert stat.S_IMODE(os.stat(shared).st_mode) == 0o755
        assert stat.S_IMODE(os.stat(shared / "f.db").st_mode) == 0o600
    finally:
        os.umask(old)


# Readers and scopes ----------------------------------------------------------------------------


def test_reader_is_read_only_and_sees_commits(store: FactStore, tmp_path: Path) -> None:
    facts = chain(2)
    store.add_batch(facts[:1])
    reader = FactStore.open_reader(store.path)
    try:
        assert reader.get(facts[0].hash) is not None
        store.add_batch(facts[1:])
        assert reader.get(facts[1].hash) is not None
        with raises_code("store.unreadable"):  # a read-only connection refuses the write
            reader.add_batch([make_fact("new")])
    finally:
        reader.close()
    with raises_code("io.unreadable"):
        FactStore.open_reader(tmp_path / "missing.db")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with raises_code("lineage.store_invalid"):
        FactStore.open_reader(other)


def test_scope_filter_skips_bodies(store: FactStore) -> None:
    team, company = make_fact("t"), make_fact("c", scope="company")
    store.add_batch([team, company])
    assert store.scope_of(company.hash) == "company"
    assert store.scope_of(ABSENT) is None
    both = [team.hash, company.hash]
    assert set(store.get_many(both, scopes=frozenset({"team"}))) == {team.hash}
    assert store.get_many(both, scopes=frozenset()) == {}
    assert set(store.get_many(both)) == set(both)


def test_every_error_collects_all_rule_breaks(store: FactStore) -> None:
    a, b = chain(2)
    store.add_batch([a])
    moved = make_fact("f0", ABSENT)  # same FactHash as a, another derived_from
    assert moved.hash == a.hash
    loop = make_fact("loop")
    self_loop = make_fact("loop", loop.hash)
    with raises_code("derived_from_immutable"):  # default: the first one
        store.add_batch([moved, self_loop])
    with raises_code("fact.batch_invalid") as caught:
        store.add_batch([moved, b, self_loop], labels=["x", "y", "z"], every_error=True)
    assert [bad["code"] for bad in caught.value.details["bad"]] == [
        "derived_from_immutable",
        "provenance_cycle_detected",
    ]
    assert store.get(b.hash) is None  # all or nothing
    with raises_code("provenance_cycle_detected"):  # one refusal is raised as itself
        store.add_batch([b, self_loop], every_error=True)


def test_plans_sharing_a_context_see_each_other_and_a_refused_one_leaves_nothing(
    store: FactStore,
) -> None:
    # issue 24: the requests of one write batch plan against one context and are written
    # together; each sees what the earlier ones planned, and a refused plan plans nothing.
    left0, right0 = make_fact("left"), make_fact("right")
    left = make_fact("left", right0.hash)  # a FactHash does not cover derived_from
    right = make_fact("right", left0.hash)
    context = store.context()
    first = store.plan([left], context=context)
    assert [f.hash for f in first.added] == [left.hash]
    with raises_code("provenance_cycle_detected"):  # through the planned, unwritten edge
        store.plan([right], context=context)
    again = store.plan([make_fact("left", right0.hash)], context=context)
    assert (again.added, again.existing) == ((), (left.hash,))  # planned counts as stored
    plain = store.plan([right0], context=context)  # the refused right was not planned
    assert [f.hash for f in plain.added] == [right0.hash]
    store.write_plan(first)
    store.write_plan(plain)
    assert store.get(left.hash) is not None
    assert store.get(right0.hash) is not None
    assert list(store.children(right0.hash)) == [left.hash]
