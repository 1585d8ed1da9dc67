"""Signing manifest entries, manifests and pin files, and keeping manifests fresh.

>>> from affidavit.attest.publishing import attest_document
>>> contract = {"adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0"}
>>> attest_document(contract, publisher_id="demo.publisher.v1", publisher_key_id="demo_k1",
...                 published_at="2025-01-01T00:00:00Z", signing_key=None)["signed"]
False

:mod:`.publish` builds and signs entries and manifests (docs/formats.md §3) and writes pin
files; :mod:`.freshness` signs a manifest's freshness times.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "attest_document": "publish",
    "build_entry": "publish",
    "build_manifest": "publish",
    "set_lifecycle": "publish",
    "sign_entry": "publish",
    "sign_freshness": "freshness",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
