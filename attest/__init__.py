"""affidavit.attest: what holds a private key or writes a file. Keys, the transparency log, the
stamp, publishing, stores, in-toto and SCITT signing; it may import :mod:`affidavit.verify`, never
the registry or the command line (docs/architecture.md).

>>> from affidavit.attest import derive_test_key
>>> from affidavit.verify.crypto.signature import verify_ed25519
>>> key = derive_test_key("attest doctest")  # TEST-ONLY key
>>> verify_ed25519(key.public_key, b"hello", key.sign(b"hello"))

Its modules: docs/architecture.md. The subpackages :mod:`.log`, :mod:`.stores`,
:mod:`.publishing` and :mod:`.intoto` are internal: each of their modules lists its own.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "LogError": "errors",
    "SigningKey": "keyring",
    "StampItem": "stamp",
    "StoreError": "errors",
    "SwarmOptions": "stamp",
    "atomic_write": "files",
    "available_transforms": "plugins",
    "create_all": "files",
    "create_exclusive": "files",
    "derive_test_key": "keyring",
    "draft_bundles": "stamp",
    "evaluate_adapter": "stamp",
    "example_contract": "stamp",
    "finality_leaf": "stamp",
    "finish_bundle": "stamp",
    "folder_lock": "files",
    "generate_key_files": "keyring",
    "generate_keypair": "keyring",
    "installed_validators": "plugins",
    "key_file_is_insecure": "keyring",
    "load_or_generate_key": "keyring",
    "load_private_pem": "keyring",
    "load_public_key": "keyring",
    "load_signing_key": "keyring",
    "make_receipt": "receipts",
    "private_database": "files",
    "private_dir": "files",
    "private_file": "files",
    "private_key_pem": "keyring",
    "public_key_pem": "keyring",
    "publisher_document": "keyring",
    "read_capped": "host",
    "read_key_bytes": "host",
    "sign_receipt": "scitt",
    "sign_receipt_body": "receipts",
    "sign_statement": "scitt",
    "stamp_bundles": "stamp",
    "transforms_for": "plugins",
    "utc_now": "host",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
