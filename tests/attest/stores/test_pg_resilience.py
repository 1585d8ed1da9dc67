"""The PostgreSQL store survives database faults (issue 27, items 1 and 3), against a real
server: a lost connection is replaced at the next transaction (never in the middle of one), a
lock wait is bounded and answered ``store.busy`` with the connection still usable, and a writer
that stops talking mid-transaction loses the writer lock after its lease.

Each test is bounded (threads joined with a deadline) and needs no restart of the cluster: the
restarts and stopped servers are in tests/registry/test_pg_faults.py, with real processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from affidavit.attest.errors import StoreError
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.postgres import LOCK_TIMEOUT_S, WRITER_LEASE_S
from affidavit.attest.stores.store import Migrations, Store
from affidavit.verify.lineage.facts import parse_fact

from tests.conftest import raises_code
from tests.pg import PgCluster

DEMO = Migrations.same("CREATE TABLE demo_rows (n BIGINT PRIMARY KEY)")
# A short lease for the silent-writer test (Store.connect takes it), instead of the
# production WRITER_LEASE_S; the lock wait stays longer than the lease, as in production
# (LOCK_TIMEOUT_S). LOCK_WAIT is only a ceiling (a passing test waits the lease, not it), kept
# wide so that a loaded machine's slow server does not turn "freed by the lease" into store.busy.
LEASE = 2.0
LOCK_WAIT = 12.0


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    opened = Store.connect(pg_url)
    opened.migrate("demo", DEMO)
    try:
        yield opened
    finally:
        opened.close()


def _count(store: Store) -> int:
    with store.read() as db:
        return int(db.execute("SELECT count(*) FROM demo_rows").fetchone()[0])


def test_a_terminated_connection_is_replaced_at_the_next_transaction(
    store: Store, pg_url: str, pg_cluster: PgCluster
) -> None:
    with store.write() as db:
        db.execute("INSERT INTO demo_rows VALUES (1)")
    assert pg_cluster.terminate_backends(pg_url) == 1
    with store.write() as db:  # reconnects: nothing of a transaction was lost
        db.execute("INSERT INTO demo_rows VALUES (2)")
    assert pg_cluster.terminate_backends(pg_url) == 1
    assert _count(store) == 2  # a read snapshot reconnects too
    assert pg_cluster.terminate_backends(pg_url) == 1
    # a statement outside any transaction (the registry's API-key lookup) reconnects as well
    assert store.conn.execute("SELECT count(*) FROM demo_rows").fetchone() == (2,)


def test_a_connection_lost_inside_a_transaction_fails_that_transaction_only(
    store: Store, pg_url: str, pg_cluster: PgCluster
) -> None:
    def lose_it() -> None:
        with store.write() as db:
            db.execute("INSERT INTO demo_rows VALUES (1)")
            pg_cluster.terminate_backends(pg_url)
            # never run on a new connection outside the transaction (it would commit alone)
            with pytest.raises(StoreError):
                db.execute("INSERT INTO demo_rows VALUES (2)")
            assert store.conn.in_transaction  # until the caller ends it

    with raises_code("store.unreadable"):  # its COMMIT is refused
        lose_it()
    assert not store.conn.in_transaction
    assert _count(store) == 0  # the server rolled the whole transaction back
    with store.write() as db:
        db.execute("INSERT INTO demo_rows VALUES (3)")
    assert _count(store) == 1


def test_a_lock_timeout_is_busy_and_leaves_the_connection_usable(pg_url: str) -> None:
    holder, waiter = Store.connect(pg_url), Store.connect(pg_url, timeout=0.5)
    try:
        holder.migrate("demo", DEMO)
        with holder.write() as db:
            db.execute("SELECT pg_sleep(0)")
            with raises_code("store.busy"), waiter.write():
                pass
            assert not waiter.conn.in_transaction
        with waiter.write() as db:  # not left in an aborted transaction
            db.execute("INSERT INTO demo_rows VALUES (1)")
        assert _count(waiter) == 1
    finally:
        holder.close()
        waiter.close()


def test_a_silent_writer_loses_the_lock_after_its_lease(pg_url: str) -> None:
    """A writer that stops talking inside its transaction (a SIGSTOPped instance) holds the
    writer lock for at most its lease: the server ends its session, the others go on."""
    assert WRITER_LEASE_S < LOCK_TIMEOUT_S  # the production values keep the order used here
    silent = Store.connect(pg_url, timeout=LOCK_WAIT, lease=LEASE)
    other = Store.connect(pg_url, timeout=LOCK_WAIT, lease=LEASE)
    done: list[float] = []
    try:
        silent.migrate("demo", DEMO)
        started = time.monotonic()

        def write_other() -> None:
            with other.write() as db2:
                db2.execute("INSERT INTO demo_rows VALUES (2)")
            done.append(time.monotonic() - started)

        def fall_silent() -> None:
            with silent.write() as db:
                db.execute("INSERT INTO demo_rows VALUES (1)")
                thread = threading.Thread(target=write_other)
                thread.start()
                thread.join(LOCK_WAIT + 1)  # the silent writer sends nothing meanwhile
                assert done, "the other writer still waits for a silent holder"
                with pytest.raises(StoreError):  # the session is gone
                    db.execute("INSERT INTO demo_rows VALUES (3)")

        with raises_code("store.unreadable"):  # and its COMMIT is refused
            fall_silent()
        assert LEASE - 0.5 <= done[0] < LOCK_WAIT  # freed by the lease, not a lock timeout
        with silent.write() as db:  # and the silent one works again once it wakes up
            db.execute("INSERT INTO demo_rows VALUES (4)")
        with other.read() as db:
            rows = db.execute("SELECT n FROM demo_rows ORDER BY n").fetchall()
        assert rows == [(2,), (4,)]
    finally:
        silent.close()
        other.close()


def test_the_fact_store_waits_a_bounded_time_for_the_writer_lock(pg_url: str) -> None:
    facts = FactStore.connect(pg_url)
    holder = Store.connect(pg_url)
    one = parse_fact(
        {
            "entity": "urn:x:a",
            "relation": "memory:role",
            "value": {"type": "boolean", "v": True},
            "source": "urn:s:1",
            "scope": "local",
            "confidence": 1,
            "ts": "2026-01-01T00:00:00Z",
        }
    )
    seen: list[BaseException] = []
    try:

        def add() -> None:
            try:
                facts.add_batch([one])
            except BaseException as e:  # handed to the test thread
                seen.append(e)

        with holder.write() as db:
            thread = threading.Thread(target=add, daemon=True)
            thread.start()
            # an active holder (not idle: the lease does not end it) outlasts the lock timeout
            db.execute("SELECT pg_sleep($1)", (LOCK_TIMEOUT_S + 1.5,))
            thread.join(1)
        assert not thread.is_alive(), "the fact store waited past its lock timeout"
        assert len(seen) == 1
        assert isinstance(seen[0], StoreError)
        assert seen[0].code == "store.busy"
        assert facts.add_batch([one]).added == (one.hash,)  # the connection is usable
    finally:
        facts.close()
        holder.close()


def test_opening_the_fact_store_behind_a_busy_writer_is_store_busy(pg_url: str) -> None:
    """FactStore.connect creates its tables under the writer lock (a registry reader thread
    does it when it first starts): a writer that holds the lock past the lock timeout makes
    that ``store.busy``, retryable, not ``lineage.store_invalid`` ("not a fact store")."""
    FactStore.connect(pg_url).close()  # the tables exist: only the lock is in the way
    holder = Store.connect(pg_url)
    seen: list[BaseException] = []

    def open_it() -> None:
        try:
            FactStore.connect(pg_url).close()
        except BaseException as e:  # handed to the test thread
            seen.append(e)

    try:
        with holder.write() as db:
            thread = threading.Thread(target=open_it, daemon=True)
            thread.start()
            db.execute("SELECT pg_sleep($1)", (LOCK_TIMEOUT_S + 1.5,))  # active: no lease
            thread.join(1)
        assert not thread.is_alive(), "opening waited past its lock timeout"
        assert len(seen) == 1
        assert isinstance(seen[0], StoreError), seen[0]
        assert seen[0].code == "store.busy"
        FactStore.connect(pg_url).close()  # and opens once the writer is gone
    finally:
        holder.close()


# A writer that spends its transactions in batch inserts (insert_rows), as the log and the fact
# index do, over and over, in its own process.
_BATCH_WRITER = """
import sys
from affidavit.attest.stores.store import Store
store = Store.connect(sys.argv[1])
print("ready", flush=True)
while True:
    with store.write() as db:
        db.insert_rows(
            "demo_batch", ("n", "b"), [(n, b"x" * 64) for n in range(100_000)], skip_existing=True
        )
        db.execute("DELETE FROM demo_batch")
"""


def test_a_writer_paused_inside_a_batch_insert_loses_the_lock_after_its_lease(
    pg_url: str, pg_cluster: PgCluster
) -> None:
    """SIGSTOP a process in the middle of a batch insert: the server must see it idle (each
    statement ends with a Sync), not inside a pipeline, or the lease never starts."""
    waiter = Store.connect(pg_url, timeout=WRITER_LEASE_S + 2)
    waiter.migrate(
        "demo", Migrations.same("CREATE TABLE demo_batch (n BIGINT PRIMARY KEY, b BYTEA)")
    )
    child = subprocess.Popen(
        [sys.executable, "-c", _BATCH_WRITER, pg_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(1.0)  # well inside its batches by now
        os.kill(child.pid, signal.SIGSTOP)
        started = time.monotonic()
        with waiter.write() as db:  # store.busy after WRITER_LEASE_S + 2 if the lease never ran
            db.execute("SELECT 1")
        waited = time.monotonic() - started
        assert waited <= WRITER_LEASE_S + 1.5, waited
    finally:
        child.kill()
        child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
        waiter.close()
