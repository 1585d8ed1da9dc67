"""affidavit.cli: the front door. Thin click commands over the library; ``--json`` for machines.

Run the command line in process (what the ``affidavit`` console script does)::

    from affidavit.cli import main

    main(["hash", "bundle.json"])  # prints the document's SHA-256, exits 0

Every command takes ``--json`` (one document on stdout, its schema in ``specs/output/``), prints
text for people otherwise, and fails with one line ``error: <code>: <message>`` and exit 2 for
unreadable input or usage, 1 when verification fails, 3 when refused by policy (style.md §11).

The rooms:

- :mod:`~affidavit.cli.main`: the entry point; it runs the click root group, ``_group`` (the
  root, its lazy groups and their tables: a command's module is imported when it runs,
  docs/adr/0022-click-alone.md).
- one module or package per command: ``adapter/``, ``canon``, ``export``, ``facts/``, ``keys``,
  ``log/``, ``lookup``, ``receipt``, ``registry``, ``scitt``, ``stamp``, ``transform``,
  ``verify/``, ``witness``.
- :mod:`~affidavit.cli.render`: outcomes and lineage as text for people.
- shared and private: ``_trust`` (the one trust option group, docs/adr/0016-one-trust-input.md),
  ``_common`` (capped reads, ``--json``, JSON output), ``_batch``
  (``--jobs`` worker pools), ``_receipts`` (receipt folders), ``_sources`` (publication inputs),
  ``_listen``.
"""

from affidavit.cli.main import main

__all__ = ["main"]
