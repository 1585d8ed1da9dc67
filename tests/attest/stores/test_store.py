"""affidavit.attest.stores.sqlite: house SQLite settings, one writer, schema versions, error
codes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from affidavit.attest.errors import StoreError, StoreIntegrityError
from affidavit.attest.stores.store import Migrations, Store, numbered
from affidavit.verify import errors

from tests.conftest import raises_code

V1 = "CREATE TABLE t_items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"
V2 = "ALTER TABLE t_items ADD COLUMN note TEXT; CREATE INDEX t_items_name ON t_items(name)"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(tmp_path / "sub" / "x.db", create=True)
    yield s  # type: ignore[misc]
    s.close()


def _count(store: Store) -> int:
    with store.read() as db:
        return int(db.execute("SELECT count(*) FROM t_items").fetchone()[0])


def test_house_pragmas(store: Store) -> None:
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000


def test_missing_file_is_not_created(tmp_path: Path) -> None:
    target = tmp_path / "absent.db"
    with raises_code("store.missing") as e:
        Store.open(target)
    assert e.value.code == "store.missing"
    assert not target.exists()


def test_not_a_database(tmp_path: Path) -> None:
    target = tmp_path / "junk.db"
    target.write_bytes(b"this is not sqlite at all, not even close" * 100)
    with raises_code("store.unreadable") as e:
        Store.open(target)
    assert e.value.code == "store.unreadable"
    assert e.value.exit_code == 2


def test_migrations_apply_once_and_in_order(store: Store) -> None:
    assert store.schema_version("t") == 0
    assert store.migrate("t", Migrations.same(V1)) == 1
    assert store.migrate("t", Migrations.same(V1)) == 1  # idempotent
    with store.write() as db:
        db.execute("INSERT INTO t_items(name) VALUES ('a')")
    assert store.migrate("t", Migrations.same(V1, V2)) == 2
    assert store.schema_version("t") == 2
    assert _count(store) == 1  # data kept across the upgrade
    with store.read() as db:
        cols = [r[1] for r in db.execute("PRAGMA table_info(t_items)")]
    assert cols == ["id", "name", "note"]


def test_newer_schema_refused(store: Store) -> None:
    store.migrate("t", Migrations.same(V1, V2))
    with raises_code("store.schema_too_new") as e:
        store.migrate("t", Migrations.same(V1))
    assert e.value.details == {"component": "t", "found": 2, "supported": 1}


def test_failed_migration_rolls_back_entirely(store: Store) -> None:
    with pytest.raises(StoreError) as caught:  # the database's own error, as the project's
        store.migrate("t", Migrations.same(V1, "CREATE TABLE t_other (x); THIS IS NOT SQL"))
    assert caught.value.code == "store.unreadable"
    assert store.schema_version("t") == 0
    with store.read() as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert "t_items" not in names
    assert "t_other" not in names


def test_write_rolls_back_on_error_and_nests(store: Store) -> None:
    store.migrate("t", Migrations.same(V1))

    def failing_batch() -> None:
        with store.write() as db:
            db.execute("INSERT INTO t_items(name) VALUES ('lost')")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        failing_batch()
    assert _count(store) == 0
    with store.write() as outer:
        outer.execute("INSERT INTO t_items(name) VALUES ('a')")
        with store.write() as inner:  # joins the outer transaction
            inner.execute("INSERT INTO t_items(name) VALUES ('b')")
        with store.read() as r:  # sees its own writes
            assert r.execute("SELECT count(*) FROM t_items").fetchone()[0] == 2
    assert _count(store) == 2


def test_write_inside_read_is_refused(store: Store) -> None:
    store.migrate("t", Migrations.same(V1))
    with pytest.raises(errors.UsageError), store.read(), store.write():
        pass  # pragma: no cover
    with store.write() as db:  # the store is usable afterwards
        db.execute("INSERT INTO t_items(name) VALUES ('a')")
    assert _count(store) == 1


def test_one_writer_busy_error(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    first = Store.open(path, create=True)
    first.migrate("t", Migrations.same(V1))
    second = Store.open(path, timeout=0.05)
    try:
        with first.write() as db:
            db.execute("INSERT INTO t_items(name) VALUES ('held')")
            with raises_code("store.busy") as e, second.write():
                pass  # pragma: no cover
            assert e.value.code == "store.busy"
        with second.write() as db:  # lock released: the second writer proceeds
            db.execute("INSERT INTO t_items(name) VALUES ('next')")
        assert _count(first) == 2
    finally:
        first.close()
        second.close()


def test_read_sees_one_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    reader = Store.open(path, create=True)
    reader.migrate("t", Migrations.same(V1))
    other = sqlite3.connect(path, isolation_level=None)
    try:
        with reader.read() as db:
            assert db.execute("SELECT count(*) FROM t_items").fetchone()[0] == 0
            other.execute("INSERT INTO t_items(name) VALUES ('concurrent')")
            assert db.execute("SELECT count(*) FROM t_items").fetchone()[0] == 0
        assert _count(reader) == 1
    finally:
        other.close()
        reader.close()


def test_context_manager_closes(tmp_path: Path) -> None:
    with Store.open(tmp_path / "x.db", create=True) as s:
        s.migrate("t", Migrations.same(V1))
    with pytest.raises(StoreError, match="closed"):
        s.conn.execute("SELECT 1")


def test_opening_an_up_to_date_schema_takes_no_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    writer = Store.open(path, create=True)
    writer.migrate("t", Migrations.same(V1))
    reader = Store.open(path, timeout=0.05)
    try:
        with writer.write():  # a writer holds the lock; readers still open and read
            assert reader.migrate("t", Migrations.same(V1)) == 1
            assert _count(reader) == 0
    finally:
        writer.close()
        reader.close()


def test_the_sqlite_store_raises_the_projects_errors(store: Store) -> None:
    """docs/adr/0020 §3: a broken constraint is StoreIntegrityError (a StoreError with the code a
    database error always had), never sqlite3's class; SQLite's own spellings still work here."""
    store.migrate("t", Migrations.same(V1))
    with store.write() as db:
        db.execute("INSERT INTO t_items(id, name) VALUES ($1, $2)", (1, "a"))
    with pytest.raises(StoreIntegrityError) as caught, store.write() as db:
        db.execute("INSERT INTO t_items(id, name) VALUES ($1, $2)", (1, "again"))
    assert caught.value.code == "store.unreadable"
    assert not isinstance(caught.value, sqlite3.Error)
    with store.write() as db:  # rolled back, and the key may be skipped instead
        assert db.insert_rows("t_items", ("id", "name"), [(1, "b")], skip_existing=True) == 0
    assert _count(store) == 1
    assert "t_items" in store.conn.tables()


def test_numbered_parameters_bind_past_a_thousand(store: Store) -> None:
    """``$1 ... $n`` bind by name on SQLite; more names than the store keeps ready still bind."""
    values = list(range(1, 1501))
    sql = f"SELECT $1, $1500 WHERE 1500 IN ({numbered(1, 1500)})"
    assert store.query(sql, values) == [(1, 1500)]
