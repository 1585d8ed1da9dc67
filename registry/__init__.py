"""affidavit.registry: the small HTTP service (Starlette + uvicorn) and its clients; it may
import :mod:`affidavit.attest` and :mod:`affidavit.verify`, never the command line
(docs/architecture.md).

>>> from affidavit.registry import RegistryError, http_status
>>> http_status(RegistryError("registry.not_found", "no such leaf"))
404

The rooms: :mod:`.settings` and :mod:`.startup` (configuration, opening the state), :mod:`.app`
(the ASGI application), :mod:`.contracts` and :mod:`.publication` (the contract catalog),
:mod:`.writer` (the log's one write path, docs/adr/0024), :mod:`.db` and :mod:`.threads`
(the registry's tables, where store calls run), :mod:`.index` and :mod:`.lookup` (lookup by
hash), :mod:`.witnessing` (cosignatures), :mod:`.dump` (export, import, migrate),
:mod:`.errors` (``registry.*``, ``http.*``, ``auth.*``, ``net.*``); the subpackage
:mod:`.routes` lists its own, and :mod:`.clients` is internal: each of its modules lists its own.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "AuthError": "errors",
    "NetError": "errors",
    "RegistryError": "errors",
    "RegistryState": "state",
    "Settings": "settings",
    "create_app": "app",
    "export_store": "dump",
    "http_status": "errors",
    "import_store": "dump",
    "open_state": "startup",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
