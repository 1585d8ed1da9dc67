"""affidavit.verify: the root of trust. Parse strictly, encode canonically, hash, verify. Offline.

>>> from affidavit.verify import loads, jcs, sha256_hex
>>> sha256_hex(jcs(loads(b'{"b": 1.0, "a": true}')))
'a3f44886ecd0b8667b0c6a4652d41e1f9e8205fb8d35d299fd20577f5268adb6'

Nothing in this package reads the network, the environment or the clock on its own: trust
inputs and time are arguments. It never imports ``affidavit.attest``, ``affidavit.registry``,
``affidavit.cli``, httpx, socket or urllib (a test walks its imports).

The re-exports below load on first use (PEP 562), so importing one submodule (say
``affidavit.verify.errors``) does not import the others: it keeps CLI start-up small.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from affidavit.verify.errors import AffidavitError
    from affidavit.verify.json.canonical import (
        canonical_bytes,
        jcs,
        py_compact,
        py_spaced,
        sha256_hex,
    )
    from affidavit.verify.json.strict import load_object, loads

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

_HOME = {
    "AffidavitError": "errors",
    "canonical_bytes": "json.canonical",
    "jcs": "json.canonical",
    "load_object": "json.strict",
    "loads": "json.strict",
    "py_compact": "json.canonical",
    "py_spaced": "json.canonical",
    "sha256_hex": "json.canonical",
}


def __getattr__(name: str) -> Any:
    """Import a re-exported name from its submodule on first access."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
