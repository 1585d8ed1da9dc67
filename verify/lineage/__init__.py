"""The lineage room: facts and their lineage (docs/formats.md §5; seed 002).

:mod:`.facts` is the fact model, FactHash and the Stigmem CID; :mod:`.signing` fact signatures;
:mod:`.walk` provenance walks over any fact source (:mod:`.jsonl` reads a JSON Lines file's
bytes); :mod:`.graph` the cycle rule; :mod:`.audit` audits a store offline; :mod:`.stigmem` maps
Stigmem node shapes to facts. The walk and the audit are :func:`affidavit.verify.walk` and
:func:`affidavit.verify.audit`.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "AuditReport": "audit",
    "Checked": "audit",
    "DEFAULT_DEPTH": "walk",
    "EdgeDigest": "audit",
    "EdgeIndex": "audit",
    "Fact": "facts",
    "FactHash": "facts",
    "FactSource": "walk",
    "Finding": "audit",
    "JsonlFactSource": "jsonl",
    "MemoryFactSource": "walk",
    "SCOPES": "facts",
    "StoredRecord": "walk",
    "TrustedFactKeys": "signing",
    "WalkLimits": "walk",
    "WalkNode": "walk",
    "WalkResult": "walk",
    "assert_request_to_fact": "stigmem",
    "audit_checked": "audit",
    "check_depth": "walk",
    "check_records": "audit",
    "closing_parent": "graph",
    "fact_hash_of": "facts",
    "fact_record": "stigmem",
    "is_fact_hash": "facts",
    "map_node_records": "stigmem",
    "parse_fact": "facts",
    "signed_document": "signing",
    "signing_message": "signing",
    "split_record": "jsonl",
    "with_edge_index_check": "audit",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
