"""HTTP clients: the registry's own API, tiled logs, witnesses, SCITT services and Stigmem nodes,
every request through the one HTTP rule (:mod:`.https`: the URL checked where it enters, a
deadline for the whole exchange, a capped answer, one code per failure).

>>> from affidavit.registry.clients import TileReader
>>> TileReader("https://log.example/tlog").url("checkpoint")
'https://log.example/tlog/checkpoint'

A remote that is not a registry fails with the neutral ``net.*`` codes; the registry's clients
keep ``registry.*`` (issue 22).
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562). Keep
# sorted by name.
_HOME = {
    "Codes": "https",
    "HttpResponse": "https",
    "LogWriter": "log_entries",
    "RegistryClient": "registry",
    "TileReader": "tiles",
    "add_checkpoint": "witness",
    "append_all": "log_entries",
    "audit_index": "lookup",
    "fetch_manifest": "registry",
    "fetch_node_facts": "stigmem",
    "fetch_public_key": "registry",
    "get": "https",
    "is_registry_url": "log_entries",
    "parse_url": "https",
    "parse_witnesses": "witness",
    "probe": "registry",
    "register_statement": "scitt",
    "require_node": "registry",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
