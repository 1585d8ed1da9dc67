"""The receipts room: transformation receipts (seed 004 §7), what an adapter did to source bytes,
signed, replayable offline.

:mod:`.format` is the receipt document and its hash; :mod:`.verify` verifies one against the
bytes it speaks of (the one Result); :mod:`.facts` files receipts as facts.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "MAX_RECEIPT_BYTES": "format",
    "Receipt": "format",
    "ReceiptIndex": "facts",
    "check_receipt_fact": "facts",
    "key_id_of": "format",
    "load_receipt": "format",
    "parse_receipt": "format",
    "receipt_body": "format",
    "receipt_fact_document": "facts",
    "receipt_hash_of": "format",
    "signing_message": "format",
    "unreadable_receipt": "verify",
    "verify_receipt": "verify",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
