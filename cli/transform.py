"""``affidavit transform``: replay declared content transformations (docs/formats.md "Declared
transformations"; seed 004, RFC 002 §1.4).
"""

from __future__ import annotations

import hashlib
import sys

import click
from affidavit.cli._common import emit, emit_json, json_option
from affidavit.verify.transforms.chain import apply_chain
from affidavit.verify.transforms.reference import RESERVED_ADAPTER_SPECIFIC

__all__ = ["transform"]


@click.group("transform")
def transform() -> None:
    """Declared content transformations (RFC 002 §1.4): replay a chain, list what is available."""


@transform.command("apply")
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@json_option
def apply(names: tuple[str, ...], as_json: bool) -> None:
    """Apply the transformations NAME... in order to stdin's bytes; write the result to stdout
    (with --json: the source's and the content's SHA-256 and size, and the content as text)."""
    from affidavit.attest.plugins import transforms_for  # noqa: PLC0415 - lazy

    source = sys.stdin.buffer.read()
    # the installed plugins too (only when a name needs one); raises before anything is written
    out = apply_chain(names, source, transforms=transforms_for)
    if as_json:
        # the names of a transformation receipt (docs/formats.md "Transformation receipts");
        # a non-empty chain's output is UTF-8 text (verify/transforms/chain.py)
        emit_json(
            {
                "ok": True,
                "transformations": list(names),
                "source": {"sha256": hashlib.sha256(source).hexdigest(), "size": len(source)},
                "content": {
                    "sha256": hashlib.sha256(out).hexdigest(),
                    "size": len(out),
                    "text": out.decode("utf-8"),
                },
            }
        )
        return
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()


@transform.command("list")
@json_option
def list_(as_json: bool) -> None:
    """List the transformations this process can replay, and the reserved names it cannot."""
    from affidavit.attest.plugins import available_transforms  # noqa: PLC0415 - lazy

    available = available_transforms()
    rows = [{"name": name, "kind": available.kind(name)} for name in available.names()]
    unimplemented = [name for name in RESERVED_ADAPTER_SPECIFIC if name not in available]
    emit(
        as_json,
        {"ok": True, "transforms": rows, "reserved_unimplemented": unimplemented},
        *(f"{row['name']}\t{row['kind']}" for row in rows),
    )
