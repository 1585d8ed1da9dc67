"""The anchor room: anchor receipts, a signed tree head time-stamped by an RFC 3161 TSA, verified
offline (docs/adr/0010-rfc3161-tokens.md).

:mod:`.receipt` is the receipt's steps and result; :mod:`.rfc3161` the time-stamp token,
:mod:`.certs` the certificate that signed it and :mod:`.der` the strict DER reader under both.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "anchor_result": "receipt",
    "verify_anchor_receipt": "receipt",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
