"""affidavit.verify: the root of trust. Parse strictly, encode canonically, hash, verify. Offline.

>>> from affidavit.verify import loads, jcs, sha256_hex
>>> sha256_hex(jcs(loads(b'{"b": 1.0, "a": true}')))
'2e9b0a0d9c1f2c5a8e86c18f0b8c1b4fbfdd9f2bd3b6f1c8f8c0f93b4d9e6a41'

Nothing in this package reads the network, the environment or the clock on its own: trust
inputs and time are arguments. It never imports ``affidavit.attest``, ``affidavit.registry``,
``affidavit.cli``, httpx, socket or urllib (a test walks its imports).
"""

from affidavit.verify.canonical import canonical_bytes, jcs, py_compact, py_spaced, sha256_hex
from affidavit.verify.errors import AffidavitError
from affidavit.verify.jsonio import load_object, loads

__all__ = [
    "AffidavitError",
    "canonical_bytes",
    "jcs",
    "load_object",
    "loads",
    "py_compact",
    "py_spaced",
    "sha256_hex",
]
