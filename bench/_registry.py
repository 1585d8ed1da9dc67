"""Shared PostgreSQL setup of the benchmarks that run the registry's stores: a throwaway cluster
with the benchmarks' settings, and bulk loading by ``COPY``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from tests.pg import PgCluster

# PostgreSQL's default shared_buffers (tests/pg.py keeps 16MB, enough for the tests).
PG_SETTINGS = {"shared_buffers": "128MB"}


def start_cluster() -> PgCluster:
    """A throwaway cluster (tests/pg.py, ``fsync`` on) with PG_SETTINGS, started; the caller
    stops it. Raises ``tests.pg.PostgresMissing`` when there is no server to run."""
    cluster = PgCluster()
    try:
        with (cluster.data / "postgresql.conf").open("a") as conf:
            conf.write("# bench/_registry.py\n")
            conf.writelines(f"{key} = {value}\n" for key, value in PG_SETTINGS.items())
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def copy_rows(
    conn: psycopg.Connection[Any], target: str, types: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """``COPY target FROM STDIN (FORMAT BINARY)`` of ``rows``, typed ``types`` (``target`` is a
    table and its columns: ``"facts (hash, scope, body)"``)."""
    with conn.cursor() as cursor, cursor.copy(f"COPY {target} FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(list(types))
        for row in rows:
            copy.write_row(row)
