"""Anchor receipts: RFC 3161 time-stamp tokens over signed tree heads
(docs/adr/0010-rfc3161-tokens.md)."""
