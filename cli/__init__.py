"""affidavit.cli: the front door. Thin click commands over the library; ``--json`` for machines.

Run the command line in process (what the ``affidavit`` console script does)::

    from affidavit.cli import main

    main(["hash", "bundle.json"])  # prints the document's SHA-256, exits 0

Exit codes and the one ``error:`` line: style.md §11; one module per command, the
``_``-prefixed ones shared and private: docs/adr/0022-click-alone.md.
"""

from affidavit.cli.main import main

__all__ = ["main"]
