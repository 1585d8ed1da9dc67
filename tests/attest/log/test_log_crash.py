"""Crash safety: a writer killed with SIGKILL at random points loses nothing it
acknowledged, and the next tree head is consistent with every head handed out before."""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.crypto.treehead import sth_message

KEY_LABEL = "affidavit crash test key"  # TEST-ONLY
KEY = derive_test_key(KEY_LABEL)
LOG_ID = "crash.test/log"
ITERATIONS = 6

# The child appends batches forever, printing "ack <last index>" only after each batch committed,
# and now and then hands out a signed tree head ("head <size> <root>") or a checkpoint.
CHILD = """
import random, sys
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
path, seed, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)
log = TransparencyLog.open(path, derive_test_key(label))
print("ready", flush=True)
while True:
    first = log.size
    count = rng.randint(1, 40)
    indexes = log.append([f"leaf-{i}".encode() for i in range(first, first + count)])
    print(f"ack {indexes[-1]}", flush=True)
    if rng.random() < 0.3:
        head = log.signed_tree_head()
        print(f"head {head.tree_size} {head.root_hash}", flush=True)
    if rng.random() < 0.1:
        log.checkpoint()
"""


def _run_child_and_kill(path: Path, seed: int, rng: random.Random) -> list[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(seed), KEY_LABEL],
        stdout=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"ready"
    time.sleep(rng.uniform(0.005, 0.2))
    os.kill(child.pid, signal.SIGKILL)
    rest = child.stdout.read()  # lines printed before the kill were acknowledged
    child.stdout.close()
    assert child.wait(timeout=10) == -signal.SIGKILL
    return rest.decode().splitlines()


def _check_reopened(path: Path, acked: int, handed_out: dict[int, str]) -> None:
    with TransparencyLog.open(path, KEY) as log:
        size = log.size
        assert size > acked, f"acknowledged leaf {acked} lost (size {size})"
        for start in range(0, size, 1000):
            end = min(size, start + 1000)
            assert log.entries(start, end) == [f"leaf-{i}".encode() for i in range(start, end)]
        new = log.signed_tree_head()
        new_root = bytes.fromhex(new.root_hash)
        recorded = log.heads()
        seen_sizes = {h.tree_size: h.root_hash for h in recorded}
        for (
            tree_size,
            root_hex,
        ) in handed_out.items():  # every head the child handed out is recorded
            assert seen_sizes.get(tree_size) == root_hex
        for head in recorded:
            if head.kind == "sth":
                sth = json.loads(head.document)
                message = sth_message(LOG_ID, sth["tree_size"], sth["root_hash"], sth["timestamp"])
                verify_ed25519(KEY.public_key, message, base64.b64decode(sth["signature"]))
            if head.tree_size == 0:
                continue
            proof = log.consistency_proof(head.tree_size, new.tree_size)
            merkle.verify_consistency(
                head.tree_size,
                new.tree_size,
                list(proof.path),
                bytes.fromhex(head.root_hash),  # the root as handed out, not recomputed
                new_root,
            )


@pytest.mark.slow
def test_sigkill_mid_append_loses_nothing_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    TransparencyLog.create(path, KEY, LOG_ID).close()
    rng = random.Random(20250607)
    acked = -1
    handed_out: dict[int, str] = {}
    for iteration in range(ITERATIONS):
        for line in _run_child_and_kill(path, iteration, rng):
            kind, *fields = line.split()
            if kind == "ack":
                acked = max(acked, int(fields[0]))
            elif kind == "head":
                handed_out[int(fields[0])] = fields[1]
        _check_reopened(path, acked, handed_out)
    assert acked > 0  # the children did get work done
