"""Strict JSON parsing and the canonical encodings (RFC 8785 JCS, the AiGentsy `json.dumps`
forms)."""
