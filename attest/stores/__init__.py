"""Storage: the one store interface (transactions, migrations) on SQLite or PostgreSQL, and the
fact store on it.

>>> import tempfile, pathlib
>>> from affidavit.attest.stores import Migrations, Store
>>> with Store.open(pathlib.Path(tempfile.mkdtemp()) / "a.db", create=True) as store:
...     store.migrate("demo", Migrations.same("CREATE TABLE demo_items (id INTEGER PRIMARY KEY)"))
1

:mod:`.store` is the interface every caller uses (``Store``, ``Connection``, ``Migrations``);
:mod:`.sqlite` implements its ``Connection`` on SQLite with the house settings, :mod:`.postgres`
on PostgreSQL, each in its own SQL and each the only importer of its driver (docs/adr/0020);
:mod:`.facts` is the fact store, with
:mod:`.fact_plan` (a batch checked against seed 002's rules), :mod:`.fact_rows` (its rows as
stored) and :mod:`.fact_audit` (serial and parallel audits).
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "AddResult": "facts",
    "Connection": "store",
    "DEFAULT_BUSY_TIMEOUT_S": "sqlite",
    "FactPlan": "fact_plan",
    "FactStore": "facts",
    "LOCK_TIMEOUT_S": "postgres",
    "Migrations": "store",
    "PgConnection": "postgres",
    "PlanContext": "fact_plan",
    "SqliteConnection": "sqlite",
    "Store": "store",
    "WRITER_LEASE_S": "postgres",
    "batch_error": "fact_plan",
    "is_postgres_url": "postgres",
    "is_sqlite_file": "facts",
    "numbered": "store",
    "range_bounds": "fact_audit",
    "redact": "postgres",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
