"""The anchor room: tree heads time-stamped by an RFC 3161 TSA, verified offline (docs/adr/0010).

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
