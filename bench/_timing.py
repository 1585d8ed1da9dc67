"""Tiny timing helpers shared by the benchmarks: median of repeats, ops/s, a printed table."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def ops_per_second(fn: Callable[[], object], *, repeats: int = 5, min_time: float = 0.2) -> float:
    """Median calls per second of ``fn`` over ``repeats`` runs of at least ``min_time`` s."""
    n = 1
    while True:  # calibrate the loop count
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / 4:
            break
        n *= 2
    n = max(1, int(n * (min_time / max(elapsed, 1e-9))))
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers], *[[_fmt(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"
    return str(value)
