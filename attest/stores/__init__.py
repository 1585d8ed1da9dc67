"""Storage: the one store interface (transactions, migrations) on SQLite or PostgreSQL, and the
fact store on it.

>>> import tempfile, pathlib
>>> from affidavit.attest.stores.store import Migrations, Store
>>> with Store.open(pathlib.Path(tempfile.mkdtemp()) / "a.db", create=True) as store:
...     store.migrate("demo", Migrations.same("CREATE TABLE demo_items (id INTEGER PRIMARY KEY)"))
1

:mod:`.store` is the interface every caller uses (``Store``, ``Connection``, ``Migrations``);
:mod:`.sqlite` implements its ``Connection`` on SQLite with the house settings, :mod:`.postgres`
on PostgreSQL, each in its own SQL and each the only importer of its driver (docs/adr/0020);
:mod:`.facts` is the fact store, with
:mod:`.fact_plan` (a batch checked against seed 002's rules), :mod:`.fact_rows` (its rows as
stored) and :mod:`.fact_audit` (serial and parallel audits).

This room is internal (issue 32; docs/adr/0022-click-alone.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. Callers
import a name from the module that defines it (each module's ``__all__`` says what it offers).
"""

__all__: list[str] = []
