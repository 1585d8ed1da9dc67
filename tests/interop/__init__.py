"""Interoperability with other implementations (securesystemslib, the in-toto bindings)."""
