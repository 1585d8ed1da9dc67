"""Declared transformations (RFC 002 §1.4): throughput of each of Affidavit's seven reference
implementations vs MemPalace 3.11.0's (loaded from its wheel in build/oracles/), on the same
~8 MiB of mixed text, ratio measured in the same run, outputs checked identical; then the two
chains RFC 002 §1.4 maps the existing miners to (their reference steps, in the table's order),
bytes to bytes through ``apply_chain`` vs the oracle's functions composed by hand.

Target: each ours >= 0.8x the oracle (same algorithms class; str methods and re).
"""

from __future__ import annotations

import importlib.util
import random
import sys
import zipfile
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ops_per_second, table
from affidavit.verify.transforms import reference as ref
from affidavit.verify.transforms.chain import apply_chain
from affidavit.verify.transforms.reference import RESERVED_REFERENCE

WHEEL = Path(__file__).resolve().parents[1] / "build/oracles/mempalace-3.11.0-py3-none-any.whl"
SIZE = 8 << 20

# RFC 002 §1.4 "Existing code mapping", restricted to the reference transformations.
CHAINS = {
    "chain: filesystem (2 steps)": ("utf8_replace_invalid", "whitespace_trim"),
    "chain: conversations (6 steps)": (
        "utf8_replace_invalid",
        "newline_normalize",
        "line_trim",
        "line_join_spaces",
        "blank_line_drop",
        "whitespace_collapse_internal",
    ),
}


def load_oracle() -> ModuleType | None:
    if not WHEEL.is_file():
        return None
    with zipfile.ZipFile(WHEEL) as archive:
        source = archive.read("mempalace/sources/transforms.py").decode()
    spec = importlib.util.spec_from_loader("mempalace_oracle_transforms", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "transforms.py", "exec"), module.__dict__)
    return module


def mixed_text(size: int = SIZE, seed: int = 4) -> bytes:
    """Chat-transcript-like text: words, CRLF/LF/CR, blank-line runs, indentation, non-ASCII."""
    rng = random.Random(seed)
    words = ["the", "adapter", "declared", "palace", "drawer", "ü", "漢字", "\U0001f600", "x=1"]
    ends = ["\n"] * 8 + ["\r\n"] * 3 + ["\r", "\n\n", "\n\n\n\n", "\n \t\n\n\n"]
    parts: list[str] = []
    total = 0
    while total < size:
        line = " " * rng.choice([0, 0, 2, 4]) + " ".join(rng.choices(words, k=rng.randint(0, 12)))
        line += rng.choice(["", "", "  ", "\t", "\u00a0"]) + rng.choice(ends)
        parts.append(line)
        total += len(line.encode())
    # Whitespace at both ends, so whitespace_trim copies rather than returning its input.
    return b" \r\n" + "".join(parts).encode()[: size - 6] + b" \t\n"


def oracle_chain(oracle: ModuleType, names: tuple[str, ...], raw: bytes) -> bytes:
    """The oracle's functions in order: the first on the bytes, the rest on text."""
    fns = [oracle.RESERVED_TRANSFORMATIONS[n] for n in names]
    data = fns[0](raw)
    for fn in fns[1:]:
        data = fn(data)
    out: bytes = data.encode("utf-8")
    return out


def main() -> None:
    oracle = load_oracle()
    if oracle is None:
        print("MemPalace oracle wheel absent: run make install-dev")
        return
    raw = mixed_text()
    text = raw.decode("utf-8", errors="replace")
    mib = len(raw) / (1 << 20)
    rows = []
    for name in RESERVED_REFERENCE:
        ours_fn = getattr(ref, name)
        theirs_fn = oracle.RESERVED_TRANSFORMATIONS[name]
        arg: bytes | str = raw if name == "utf8_replace_invalid" else text
        assert ours_fn(arg) == theirs_fn(arg), name
        ours = ops_per_second(lambda f=ours_fn, a=arg: f(a), repeats=3, min_time=0.3) * mib
        theirs = ops_per_second(lambda f=theirs_fn, a=arg: f(a), repeats=3, min_time=0.3) * mib
        rows.append((name, f"{ours:.0f}", f"{theirs:.0f}", f"{ours / theirs:.2f}x"))
    for label, names in CHAINS.items():
        assert apply_chain(names, raw) == oracle_chain(oracle, names, raw), label
        ours = ops_per_second(lambda n=names: apply_chain(n, raw), repeats=3, min_time=0.3) * mib
        theirs = (
            ops_per_second(lambda n=names: oracle_chain(oracle, n, raw), repeats=3, min_time=0.3)
            * mib
        )
        rows.append((label, f"{ours:.0f}", f"{theirs:.0f}", f"{ours / theirs:.2f}x"))
    print(f"input: {mib:.1f} MiB mixed text")
    print(table(["transformation", "ours MiB/s", "mempalace MiB/s", "ratio"], rows))


if __name__ == "__main__":
    main()
