"""The json room: strict JSON in, canonical bytes out (docs/formats.md §1).

>>> from affidavit.verify.json.canonical import jcs
>>> from affidavit.verify.json.strict import loads
>>> jcs(loads(b'{"b": 1.0, "a": "x"}'))
b'{"a":"x","b":1}'

:mod:`.strict` is the one loader of untrusted documents, :mod:`.canonical` writes the three
canonical encodings, :mod:`.forms` the textual forms of hashes and times.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
