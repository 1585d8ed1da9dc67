"""affidavit.specs: JSON Schemas, the error-code list and the OpenAPI document, as package data.

>>> from affidavit.specs import read_spec
>>> read_spec("error-codes.json")[:1]
b'{'

Read offline from the installed package; nothing here touches the network.
"""

from __future__ import annotations

from importlib.resources import files

__all__ = ["read_spec"]


def read_spec(name: str) -> bytes:
    """Return the bytes of the spec file ``name`` shipped in this package.

    Raises:
        FileNotFoundError: there is no such spec.
    """
    return files(__name__).joinpath(name).read_bytes()
