"""Storage: the one store interface (transactions, migrations) on SQLite or PostgreSQL, and the
fact store on it.

>>> import tempfile, pathlib
>>> from affidavit.attest.stores.store import Migrations, Store
>>> with Store.open(pathlib.Path(tempfile.mkdtemp()) / "a.db", create=True) as store:
...     store.migrate("demo", Migrations.same("CREATE TABLE demo_items (id INTEGER PRIMARY KEY)"))
1

:mod:`.store` is the interface every caller uses; :mod:`.sqlite` and :mod:`.postgres` implement
its ``Connection``, each in its own SQL (docs/adr/0020); :mod:`.facts` is the fact store.

This room is internal (docs/adr/0022-click-alone.md, "Amendment (issue 32)"): import each name
from the module that defines it.
"""

__all__: list[str] = []
