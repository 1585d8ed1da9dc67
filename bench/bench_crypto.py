"""Crypto primitives, measured in the same run: Ed25519 through PyNaCl vs cryptography, signing,
key checks, and Merkle proof verification at 1,000,000 leaves.

Expected: PyNaCl about 2x faster than cryptography on verify (docs/adr/0002-ed25519-strictness.md);
inclusion and consistency proofs at 1,000,000 leaves in <= 1 ms each.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nacl.bindings
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ops_per_second, table
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.keys import Ed25519PublicKey, _check_point
from affidavit.verify.crypto.signature import verify_ed25519

MESSAGE = b"a" * 64  # a hex digest, the size the manifest and tree-head signatures cover


def signatures() -> list[list[object]]:
    key = derive_test_key("TEST-ONLY bench key")
    signature = key.sign(MESSAGE)
    crypto_private = Ed25519PrivateKey.from_private_bytes(key.seed)
    crypto_public = crypto_private.public_key()
    raw = key.public_key.raw

    def ours() -> None:
        verify_ed25519(key.public_key, MESSAGE, signature)

    def nacl_floor() -> None:
        nacl.bindings.crypto_sign_open(signature + MESSAGE, raw)

    def crypto_verify() -> None:
        crypto_public.verify(signature, MESSAGE)

    rates = {
        "verify: affidavit verify_ed25519 (PyNaCl)": ops_per_second(ours),
        "verify: libsodium floor (crypto_sign_open)": ops_per_second(nacl_floor),
        "verify: cryptography Ed25519PublicKey.verify": ops_per_second(crypto_verify),
        "sign: affidavit SigningKey.sign (PyNaCl)": ops_per_second(lambda: key.sign(MESSAGE)),
        "sign: cryptography Ed25519PrivateKey.sign": ops_per_second(
            lambda: crypto_private.sign(MESSAGE)
        ),
        "key check, first sight (uncached)": ops_per_second(lambda: _check_point.__wrapped__(raw)),
        "key parse, cached (Ed25519PublicKey(raw))": ops_per_second(lambda: Ed25519PublicKey(raw)),
    }
    base = rates["verify: cryptography Ed25519PublicKey.verify"]
    return [[name, rate, 1e6 / rate, rate / base] for name, rate in rates.items()]


def merkle_rows(n: int = 1_000_000) -> list[list[object]]:
    start = time.perf_counter()
    leaves = [merkle.leaf_hash(i.to_bytes(8, "big")) for i in range(n)]
    root = merkle.root_of(leaves)
    m = 654_321
    old_root = merkle.root_of(leaves[:m])
    build = time.perf_counter() - start
    index = 456_789
    inclusion = merkle.inclusion_proof(leaves, index)
    consistency = merkle.consistency_proof(leaves, m, n)

    def verify_inclusion() -> None:
        merkle.verify_inclusion(leaves[index], index, n, inclusion, root)

    def verify_consistency() -> None:
        merkle.verify_consistency(m, n, consistency, old_root, root)

    def floor() -> None:  # the hashing alone: one SHA-256 per proof element
        h = leaves[index]
        for p in inclusion:
            h = merkle.node_hash(h, p)

    rates = {
        f"inclusion verify ({len(inclusion)} hashes)": ops_per_second(verify_inclusion),
        f"consistency verify ({len(consistency)} hashes)": ops_per_second(verify_consistency),
        "floor: node_hash chain of the same length": ops_per_second(floor),
    }
    base = rates["floor: node_hash chain of the same length"]
    rows: list[list[object]] = [
        [name, rate, 1e6 / rate, rate / base] for name, rate in rates.items()
    ]
    rows.append([f"(setup: hash {n:,} leaves, two roots; total us)", "-", build * 1e6, "-"])
    return rows


def main() -> None:
    print(table(["Ed25519", "ops/s", "us/op", "x cryptography verify"], signatures()))
    print()
    print(table(["Merkle at 1,000,000 leaves", "ops/s", "us/op", "x floor"], merkle_rows()))


if __name__ == "__main__":
    main()
