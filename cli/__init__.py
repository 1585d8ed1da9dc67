"""affidavit.cli: the front door. Thin click commands over the library; ``--json`` for machines.

Run the command line in process (what the ``affidavit`` console script does)::

    from affidavit.cli import main

    main(["hash", "bundle.json"])  # prints the document's SHA-256, exits 0

Every command takes ``--json`` (one document on stdout, its schema in ``specs/output/``), prints
text for people otherwise, and fails with one line ``error: <code>: <message>`` and exit 2 for
unreadable input or usage, 1 when verification fails, 3 when refused by policy (style.md §11).

One module or package per command (``_group`` has the tables, docs/adr/0022-click-alone.md);
``render`` turns outcomes and lineage into text; the ``_``-prefixed modules are shared and
private: ``_trust`` is the one trust option group (docs/adr/0016-one-trust-input.md), ``_common``
the capped reads, JSON output and shared options.
"""

from affidavit.cli.main import main

__all__ = ["main"]
