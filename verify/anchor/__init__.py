"""The anchor room: anchor receipts, a signed tree head time-stamped by an RFC 3161 TSA, verified
offline (docs/adr/0010-rfc3161-tokens.md).

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
