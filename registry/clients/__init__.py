"""HTTP clients: the registry's own API, tiled logs, witnesses, SCITT services and Stigmem nodes,
every request through the one HTTP rule (:mod:`.https`: the URL checked where it enters, a
deadline for the whole exchange, a capped answer, one code per failure).

>>> from affidavit.registry.clients.tiles import TileReader
>>> TileReader("https://log.example/tlog").url("checkpoint")
'https://log.example/tlog/checkpoint'

A remote that is not a registry fails with the neutral ``net.*`` codes; the registry's clients
keep ``registry.*`` (issue 22).

This room is internal (issue 32; docs/adr/0022-click-alone.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. Callers
import a name from the module that defines it (each module's ``__all__`` says what it offers).
"""

__all__: list[str] = []
