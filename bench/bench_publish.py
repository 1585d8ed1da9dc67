"""Publication benchmarks: manifest verify of 10,000 signed entries (target <= 1 s),
entries signed per second, Ed25519 verify through PyNaCl vs cryptography, and the peer's manifest
verify on the same manifest, all measured in this run. Keys are TEST-ONLY (derive_test_key).

Run: python bench/bench_publish.py [--entries N]
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nacl.signing
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.publishing.publish import build_entry, build_manifest
from affidavit.verify.contracts.manifest import verify_manifest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey as CryptoKey

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import table


def _median_seconds(fn: Any, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _entries(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        declaration = {
            "adapter_id": f"bench.adapter_{i // 100}.v0",
            "adapter_version": f"0.{i % 100}.0",
            "input_schema_version": "1.0.0",
            "validator_name": "starter_boolean_validator",
            "validator_version": "1.0.0",
            "output_fields": ["signal_a", "signal_b"],
            "allowed_policy_fields": ["signal_a"],
        }
        rows.append(
            build_entry(
                declaration,
                publisher_id="bench.publisher",
                publisher_key_id="bench-k1",
                published_at="2025-01-01T00:00:00Z",
            )
        )
    return rows


def main() -> None:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    n = parser.parse_args().entries
    key = derive_test_key("affidavit TEST-ONLY bench publisher", key_id="bench-k1")
    entries = _entries(n)

    start = time.perf_counter()
    manifest = build_manifest(
        entries,
        key,
        publisher_id="bench.publisher",
        publisher_key_id="bench-k1",
        generated_at="2025-01-01T00:00:00Z",
    )
    build_s = time.perf_counter() - start
    public = key.public_key
    report = verify_manifest(manifest, public_key=public)
    assert report.ok, report.failures()[:3]
    verify_s = _median_seconds(lambda: verify_manifest(manifest, public_key=public), repeats=3)
    no_sig_s = _median_seconds(
        lambda: verify_manifest(manifest, public_key=None, allow_unsigned=True), repeats=3
    )

    # Ed25519 verify of one 64-byte hex message, key object reused (primitive floors).
    message = manifest["contracts"][0]["entry_hash"].encode("ascii")
    signature = base64.b64decode(manifest["contracts"][0]["entry_signature"])
    nacl_key = nacl.signing.VerifyKey(public.raw)
    crypto_key = CryptoKey.from_public_bytes(public.raw)
    k = 3000
    nacl_s = _median_seconds(lambda: [nacl_key.verify(message, signature) for _ in range(k)])
    crypto_s = _median_seconds(lambda: [crypto_key.verify(signature, message) for _ in range(k)])
    sign_s = _median_seconds(lambda: [key.sign(message) for _ in range(k)])

    rows: list[list[object]] = [
        [
            f"manifest verify, {n} signed entries (Affidavit)",
            f"{verify_s * 1000:.0f} ms",
            f"{n / verify_s:,.0f} entries/s",
            f"{verify_s / (n * nacl_s / k):.2f}x PyNaCl floor",
        ],
        [
            f"manifest verify, {n} entries, hashes only",
            f"{no_sig_s * 1000:.0f} ms",
            f"{n / no_sig_s:,.0f} entries/s",
            "",
        ],
        [
            f"manifest build + sign, {n} entries",
            f"{build_s * 1000:.0f} ms",
            f"{n / build_s:,.0f} entries/s",
            "",
        ],
        ["Ed25519 sign (PyNaCl)", f"{sign_s / k * 1e6:.1f} us", f"{k / sign_s:,.0f} /s", ""],
        ["Ed25519 verify (PyNaCl)", f"{nacl_s / k * 1e6:.1f} us", f"{k / nacl_s:,.0f} /s", "1.00x"],
        [
            "Ed25519 verify (cryptography)",
            f"{crypto_s / k * 1e6:.1f} us",
            f"{k / crypto_s:,.0f} /s",
            f"{crypto_s / nacl_s:.2f}x PyNaCl",
        ],
    ]
    peer = shutil.which("aigentsy", path=str(Path(sys.executable).parent))
    if peer:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "m.json"
            path.write_text(json.dumps(manifest))
            argv = [
                peer,
                "adapter",
                "manifest",
                "verify",
                str(path),
                "--public-key-base64",
                public.b64,
            ]
            ours_argv = [
                str(Path(sys.executable).parent / "affidavit"),
                "adapter",
                "manifest",
                "verify",
                str(path),
                "--public-key-base64",
                public.b64,
                "--json",
            ]
            peer_s = _median_seconds(
                lambda: subprocess.run(argv, capture_output=True, check=True), repeats=3
            )
            ours_s = _median_seconds(
                lambda: subprocess.run(ours_argv, capture_output=True, check=True), repeats=3
            )
        rows.append(
            [
                f"peer CLI manifest verify, {n} entries (process)",
                f"{peer_s * 1000:.0f} ms",
                f"{n / peer_s:,.0f} entries/s",
                "1.00x",
            ]
        )
        rows.append(
            [
                f"affidavit CLI manifest verify, {n} entries (process)",
                f"{ours_s * 1000:.0f} ms",
                f"{n / ours_s:,.0f} entries/s",
                f"{ours_s / peer_s:.2f}x peer",
            ]
        )
    print(table(["what", "time", "rate", "ratio"], rows))
    print(
        f"target: manifest verify of {n} signed entries <= 1 s -> "
        f"{'met' if verify_s <= 1.0 else 'MISSED'} ({verify_s:.2f} s)"
    )


if __name__ == "__main__":
    main()
