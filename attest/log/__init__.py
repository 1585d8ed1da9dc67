"""The append-only RFC 6962 transparency log: tree, checks, signed state."""
