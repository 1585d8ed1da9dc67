"""ES6 number serialisation over 1,000,000 doubles generated the way cyberphone's numgen does.

numgen (cyberphone/json-canonicalization, testdata/numgen.go) writes IEEE-754 bit patterns, edge
cases first, then random patterns, each with its ES6 ``Number.prototype.toString`` form. The 100M
line file is not shipped, so the same kind of stream is generated here from a fixed seed and each
value is checked against two independent ES6 implementations: the ``rfc8785`` package, and, when
Node.js is installed, V8's own ``String(number)`` (the definition RFC 8785 §3.2.2.3 points to).
"""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
from collections.abc import Iterator

import pytest
import rfc8785
from affidavit.verify.json.canonical import es6_number

from tests.budget import budget

COUNT = budget(local=100_000, ci=1_000_000)  # the million in CI (tests/budget.py)
SEED = 8785
EDGE_CASES = [
    0x0000000000000000,  # +0
    0x8000000000000000,  # -0
    0x0000000000000001,  # smallest subnormal
    0x000FFFFFFFFFFFFF,  # largest subnormal
    0x0010000000000000,  # smallest normal
    0x7FEFFFFFFFFFFFFF,  # largest double
    0x3FF0000000000000,  # 1
    0x4340000000000000,  # 2^53
    0x433FFFFFFFFFFFFF,  # 2^53 - 1
    0x444B1AE4D6E2EF50,  # 1e21
    0x444B1AE4D6E2EF4F,  # just below 1e21
    0x3EB0C6F7A0B5ED8D,  # 1e-6
    0x3E7AD7F29ABCAF48,  # 1e-7
    0x3FB999999999999A,  # 0.1
]


def _finite(bits: int) -> bool:
    return (bits >> 52) & 0x7FF != 0x7FF


def generate_bit_patterns(count: int = COUNT, seed: int = SEED) -> Iterator[int]:
    """Edge cases, then values near decimal layout boundaries, then random finite patterns."""
    rng = random.Random(seed)
    yield from EDGE_CASES
    produced = len(EDGE_CASES)
    # Decimal-looking values around the layout switches at 1e-7 and 1e21 (ES6 §7.1.12.1 steps 6-10).
    for exponent in range(-30, 31):
        for _ in range(200):
            value = float(f"{rng.randint(1, 10 ** rng.randint(1, 17))}e{exponent}")
            yield struct.unpack(">Q", struct.pack(">d", value))[0]
            produced += 1
    while produced < count:
        bits = rng.getrandbits(64)
        if _finite(bits):
            yield bits
            produced += 1


def _as_double(bits: int) -> float:
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


@pytest.mark.slow
def test_es6_form_matches_rfc8785_on_numgen_doubles_a_million_in_ci() -> None:
    mismatches = []
    checked = 0
    for bits in generate_bit_patterns():
        value = _as_double(bits)
        if es6_number(value) != rfc8785.dumps(value).decode():
            mismatches.append(f"{bits:016x}")
        checked += 1
    assert checked == COUNT
    assert mismatches == []


@pytest.mark.slow
def test_es6_form_matches_v8_on_numgen_doubles() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed; the V8 oracle is skipped (rfc8785 is still checked)")
    patterns = list(generate_bit_patterns(count=200_000, seed=SEED + 1))
    script = (
        "const lines=require('fs').readFileSync(0,'utf8').trim().split('\\n');"
        "const b=Buffer.alloc(8);const out=[];"
        "for(const h of lines){b.write(h,'hex');out.push(String(b.readDoubleBE(0)));}"
        "process.stdout.write(out.join('\\n'));"
    )
    completed = subprocess.run(
        [node, "-e", script],
        input="\n".join(f"{bits:016x}" for bits in patterns),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    v8 = completed.stdout.split("\n")
    assert len(v8) == len(patterns)
    ours = [es6_number(_as_double(bits)) for bits in patterns]
    differing = [
        f"{b:016x}" for b, mine, theirs in zip(patterns, ours, v8, strict=True) if mine != theirs
    ]
    assert differing == []
