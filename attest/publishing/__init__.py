"""Signing manifest entries, manifests and pin files, and keeping manifests fresh.

>>> from affidavit.attest.publishing.publish import attest_document
>>> contract = {"adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0"}
>>> attest_document(contract, publisher_id="demo.publisher.v1", publisher_key_id="demo_k1",
...                 published_at="2025-01-01T00:00:00Z", signing_key=None)["signed"]
False

:mod:`.publish` builds and signs entries and manifests (docs/formats.md §3) and writes pin
files; :mod:`.freshness` signs a manifest's freshness times.

This room is internal (issue 32; docs/adr/0022-click-alone.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. Callers
import a name from the module that defines it (each module's ``__all__`` says what it offers).
"""

__all__: list[str] = []
