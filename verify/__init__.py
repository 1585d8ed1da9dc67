"""affidavit.verify: the root of trust. Parse strictly, encode canonically, hash, verify. Offline.

>>> from affidavit.verify import loads, jcs, sha256_hex
>>> sha256_hex(jcs(loads(b'{"b": 1.0, "a": true}')))
'a3f44886ecd0b8667b0c6a4652d41e1f9e8205fb8d35d299fd20577f5268adb6'

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
