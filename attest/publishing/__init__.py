"""Signing manifest entries, manifests and pin files, and keeping manifests fresh.

>>> from affidavit.attest.publishing.publish import attest_document
>>> contract = {"adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0"}
>>> attest_document(contract, publisher_id="demo.publisher.v1", publisher_key_id="demo_k1",
...                 published_at="2025-01-01T00:00:00Z", signing_key=None)["signed"]
False

Its modules: docs/architecture.md; the formats: docs/formats.md §3.

This room is internal (docs/adr/0022-click-alone.md, "Amendment (issue 32)"): import each name
from the module that defines it.
"""

__all__: list[str] = []
