"""SCITT: registrations per second on a real registry process, and receipt verifications per
second offline (ours and, when installed, scitt-cose's).

- register: ``POST /entries`` of distinct EdDSA Signed Statements to ``affidavit registry serve``
  (SQLite, a temp folder, one issuer key trusted), by 1 and by ``--clients`` concurrent clients
  (threads, one HTTP connection each); every answer must be 201 with a receipt. A registration
  is a job of the registry's write path (group commit: concurrent ones share a transaction and
  an fsync), answered once a signed checkpoint covers its leaf, with a receipt over that tree.
- verify receipt: :func:`affidavit.verify.scitt.receipt.verify_receipt` on one receipt (strict
  CBOR, the proof, EdDSA through libsodium); verify statement: the whole Transparent Statement
  (statement signature too); scitt-cose: its ``verify_receipt`` on the same receipt.

The registry runs from ``pip install '<checkout>[registry]'`` (not editable) in build/bench-venv,
as a user installs it (bench/_install.py); the clients and the offline checks run here.

Run: ``python bench/bench_scitt.py [--statements N] [--clients C]``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.processes

import httpx
from _install import server_env, user_install
from _timing import ops_per_second, table
from affidavit.attest.keyring import derive_test_key, load_signing_key, public_key_pem
from affidavit.attest.scitt import sign_statement
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.receipt import verify_receipt
from affidavit.verify.scitt.report import verify_transparent_statement

from tests.processes import RegistryProcess
from tests.verify.scitt.support import with_receipts

ISSUER = derive_test_key("bench_scitt issuer (TEST-ONLY)")
ISSUER_NAME = "https://bench.example"
COSE = {"Content-Type": "application/cose"}


def _statements(n: int, tag: str) -> list[bytes]:
    return [
        sign_statement(f'{{"n": {i}}}'.encode(), ISSUER, issuer=ISSUER_NAME,
                       subject=f"pkg:bench/{tag}@{i}", content_type="application/json")
        for i in range(n)
    ]  # fmt: skip


def _register(url: str, statements: list[bytes], clients: int) -> tuple[float, list[bytes]]:
    def worker(chunk: list[bytes]) -> list[bytes]:
        out = []
        with httpx.Client(timeout=30) as client:
            for statement in chunk:
                answer = client.post(url + "/entries", content=statement, headers=COSE)
                assert answer.status_code == 201, answer.content
                out.append(answer.content)
        return out

    chunks = [statements[i::clients] for i in range(clients)]
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        receipts = [r for part in pool.map(worker, chunks) for r in part]
    return len(statements) / (time.perf_counter() - start), receipts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=300)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "iss").mkdir()
        (root / "iss" / "issuer.pub").write_text(ISSUER.public_key.b64 + "\n")
        (root / "iss" / "issuer.pub.iss").write_text(ISSUER_NAME + "\n")  # what it signs for
        install = user_install()  # the server as a user installs it (bench/_install.py)
        print(f"server from {install.header()}; the clients from this virtualenv")
        process = RegistryProcess(
            root / "data",
            env={"AFFIDAVIT_SCITT_ISSUERS": str(root / "iss"), "AFFIDAVIT_SCITT_RATE": "100000"},
            log_file=root / "server.log",
            command=install.affidavit,
        )
        process.env = server_env(process.env)
        process.start()
        try:
            one, receipts = _register(process.url, _statements(args.statements, "a"), 1)
            many, _ = _register(process.url, _statements(args.statements, "b"), args.clients)
            log_key = load_signing_key(root / "data" / "keys" / "registry-1.key").public_key
        finally:
            process.stop()
    statement = _statements(1, "a")[0]
    receipt = receipts[0]
    entry = hashlib.sha256(statement).digest()
    keys = [CoseKey.from_ed25519(log_key)]
    transparent = with_receipts(statement, [receipt])
    issuers = [CoseKey.from_ed25519(ISSUER.public_key)]

    def one_receipt() -> object:
        return verify_receipt(receipt, entry, keys)

    def whole() -> object:
        return verify_transparent_statement(transparent, log_keys=keys, issuer_keys=issuers)

    rows: list[list[object]] = [
        ["register, 1 client (registrations/s)", one],
        [f"register, {args.clients} clients (registrations/s)", many],
        ["verify receipt (verifications/s)", ops_per_second(one_receipt)],
        ["verify Transparent Statement (/s)", ops_per_second(whole)],
    ]
    try:
        from scitt_cose.receipt import verify_receipt as oracle
    except ImportError:
        rows.append(["scitt-cose verify_receipt (/s)", "not installed"])
    else:
        pem = public_key_pem(log_key)

        def theirs() -> object:
            return oracle(receipt, leaf_entry_hex=entry.hex(), log_public_key_pem=pem)

        rows.append(["scitt-cose verify_receipt (/s)", ops_per_second(theirs)])
    print(f"{args.statements} statements per run, SQLite, one registry process")
    print(table(["what", "rate"], rows))


if __name__ == "__main__":
    main()
