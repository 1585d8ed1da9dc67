"""The PostgreSQL store (attest/stores/postgres.py), unit by unit and against a real server:
statements sent as written, redaction, the writer lock, snapshots, the project's errors."""

from __future__ import annotations

import threading
import time

import pytest
from affidavit.attest.errors import StoreError, StoreIntegrityError
from affidavit.attest.stores.postgres import _Rows, is_postgres_url, redact
from affidavit.attest.stores.store import Migrations, Store

from tests.conftest import raises_code


def test_urls_and_redaction() -> None:
    assert is_postgres_url("postgresql://u@h:5432/d")
    assert is_postgres_url("postgres://u@h/d")
    assert not is_postgres_url("sqlite:///x.db")
    assert not is_postgres_url(None)
    assert redact("postgresql://u:secret@h:5432/d") == "postgresql://u:***@h:5432/d"
    assert redact("postgresql://u@h/d") == "postgresql://u@h/d"


def test_rows_hand_out_each_row_once() -> None:
    rows = _Rows([(1,), (2,), (3,)], rowcount=3)
    assert rows.fetchone() == (1,)
    assert list(rows) == [(2,), (3,)]
    assert (rows.fetchone(), rows.fetchall(), rows.rowcount) == (None, [], 3)


def test_a_real_database_behaves_like_the_file(pg_url: str) -> None:
    store = Store.connect(pg_url)
    try:
        assert store.kind == "postgresql"
        assert (
            store.migrate(
                "demo", Migrations.same("CREATE TABLE demo_items (id BIGINT PRIMARY KEY, b BYTEA)")
            )
            == 1
        )
        with store.write() as db:
            db.insert_rows("demo_items", ("id", "b"), [(1, b"\x00\xff"), (2, b"")])
        with store.read() as db:
            assert db.execute("SELECT id, b FROM demo_items ORDER BY id").fetchall() == [
                (1, b"\x00\xff"),
                (2, b""),
            ]
        with pytest.raises(StoreIntegrityError), store.write() as db:
            db.execute("INSERT INTO demo_items VALUES ($1, $2)", (1, b"again"))
        with store.read() as db:  # the failed write was rolled back whole
            assert db.execute("SELECT count(*) FROM demo_items").fetchone() == (2,)
        store.quick_check()  # PostgreSQL checks its pages itself: nothing to add, no error
    finally:
        store.close()


def test_one_writer_at_a_time_across_connections(pg_url: str) -> None:
    first, second = Store.connect(pg_url), Store.connect(pg_url)
    try:
        first.migrate("demo", Migrations.same("CREATE TABLE demo_log (n BIGINT PRIMARY KEY)"))
        order: list[str] = []
        with first.write():
            order.append("first holds the lock")

            def other() -> None:
                with second.write():
                    order.append("second wrote")

            thread = threading.Thread(target=other)
            thread.start()
            time.sleep(0.3)  # the second writer is waiting on the advisory lock meanwhile
            order.append("first commits")
        thread.join(10)
        assert order == ["first holds the lock", "first commits", "second wrote"]
    finally:
        first.close()
        second.close()


def test_an_unreachable_server_is_one_clear_error() -> None:
    with raises_code("store.unreadable") as caught:
        Store.connect("postgresql://nobody:pw@127.0.0.1:9/none", timeout=1)
    assert "pw" not in caught.value.message


def test_statements_are_sent_as_written(pg_url: str) -> None:
    """No rewriting (docs/adr/0020): ``$1`` is the server's own parameter, ``%`` a plain
    character, and SQLite's spellings are not PostgreSQL (a ``?`` placeholder, ``PRAGMA``,
    ``sqlite_master``, ``INSERT OR IGNORE``) and fail as the project's error."""
    store = Store.connect(pg_url)
    try:
        assert store.query("SELECT $1::text LIKE '%x', $2::bigint", ("a%x", 7)) == [(True, 7)]
        for sqlite_only in (
            "SELECT 1 WHERE 1 = ?",
            "PRAGMA quick_check",
            "SELECT name FROM sqlite_master",
            "INSERT OR IGNORE INTO schema_versions VALUES ('x', 1)",
        ):
            with pytest.raises(StoreError) as caught:
                store.query(sqlite_only)
            assert caught.value.code == "store.unreadable", sqlite_only
        assert "schema_versions" in store.conn.tables()
    finally:
        store.close()


def test_many_rows_go_in_multi_row_statements_past_the_parameter_limit(pg_url: str) -> None:
    store = Store.connect(pg_url)
    try:
        store.migrate(
            "wide", Migrations.same("CREATE TABLE wide (a BIGINT PRIMARY KEY, b TEXT, c BYTEA)")
        )
        rows = [(n, str(n), bytes([n % 256])) for n in range(30_000)]  # 90,000 parameters
        with store.write() as db:
            assert db.insert_rows("wide", ("a", "b", "c"), rows) == 30_000
            assert db.insert_rows("wide", ("a", "b", "c"), rows[:10], skip_existing=True) == 0
        assert store.query("SELECT count(*), sum(a) FROM wide") == [(30_000, sum(range(30_000)))]
    finally:
        store.close()
