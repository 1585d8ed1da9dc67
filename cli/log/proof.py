"""``affidavit log proof``: a C2SP tlog-proof of one leaf, or a stamped bundle carrying its own, or
the leaf's RFC 9162 inclusion proof.

The tlog-proof (https://c2sp.org/tlog-proof) is built under the checkpoint the log recorded last,
with its witness cosignatures (:mod:`affidavit.attest.log.proofs`); one that does not cover the
leaf yet is ``log.no_checkpoint`` (sign one: ``log head DB --checkpoint``). ``--bundle`` checks
that the bundle's ``merkle_inclusion`` leaf is this log's leaf (``log.leaf_mismatch``) and adds
the proof as ``tlog_proof`` (outside ``bundle_hash``). No private key is read.

``--inclusion`` prints the RFC 9162 inclusion proof in a bundle's ``merkle_inclusion`` form
instead; ``log prove`` is its hidden old name (schema: specs/output/log-prove.schema.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.log.proofs import attach_proof, build_proof
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli._common import emit, emit_json, json_option, read_input, read_json_object
from affidavit.cli.log.basic import db_argument
from affidavit.verify import errors
from affidavit.verify.tlog.proof import MAX_EXTRA_BYTES

__all__ = ["proof", "prove"]


@click.command("proof")
@db_argument
@click.option("--index", type=click.IntRange(min=0), help="The leaf to prove.")
@click.option(
    "--bundle",
    "bundle_file",
    type=click.Path(dir_okay=False),
    help="A stamped bundle: write it with the tlog-proof of its leaf added (tlog_proof).",
)
@click.option(
    "--extra-file",
    type=click.Path(dir_okay=False),
    help="Opaque extra data for the proof's 'extra' line (not authenticated).",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write here instead of stdout.")
@click.option(
    "--inclusion",
    is_flag=True,
    help="Print leaf INDEX's RFC 9162 inclusion proof (a bundle's merkle_inclusion) instead.",
)
@click.option("--size", type=click.IntRange(min=0), help="With --inclusion: the tree size.")
@json_option
def proof(
    *,
    db: Path,
    index: int | None,
    bundle_file: str | None,
    extra_file: str | None,
    out: str | None,
    inclusion: bool,
    size: int | None,
    as_json: bool,
) -> None:
    """Print the C2SP tlog-proof of leaf INDEX, or add one to a stamped bundle (--bundle)."""
    if inclusion or size is not None:
        if not inclusion or index is None or bundle_file or extra_file or out:
            raise errors.UsageError("--inclusion takes --index I and --size N only (and --json)")
        _inclusion(db, index, size, as_json)
        return
    if (index is None) == (bundle_file is None):
        raise errors.UsageError("give exactly one of --index I and --bundle BUNDLE.json")
    if as_json and (bundle_file is not None or out is not None):
        raise errors.UsageError("--json prints the proof of --index to stdout (no --bundle, --out)")
    extra = None
    if extra_file is not None:
        extra = read_input(extra_file, max_bytes=MAX_EXTRA_BYTES)
        if not extra:
            raise errors.UsageError(f"{extra_file}: the extra data is empty")
    if index is None:
        bundle = read_json_object(str(bundle_file), what="bundle")
        with TransparencyLog.open(db) as opened:
            stamped = attach_proof(opened, bundle, extra=extra)
        _write((json.dumps(stamped, indent=2) + "\n").encode("utf-8"), out)
        if out is not None:
            leaf = stamped["merkle_inclusion"]["leaf_index"]
            click.echo(f"wrote {out}: the bundle with the tlog-proof of leaf {leaf}")
        return
    with TransparencyLog.open(db) as opened:
        built = build_proof(opened, index, extra=extra)
    text = built.to_text()
    if as_json:
        emit_json({"ok": True, "index": built.index, "tlog_proof": text})
        return
    _write(text.encode("utf-8"), out)
    if out is not None:
        click.echo(f"wrote {out}: the tlog-proof of leaf {index}")


@click.command("prove", hidden=True)
@db_argument
@click.option("--index", type=click.IntRange(min=0), required=True)
@click.option("--size", type=click.IntRange(min=0), help="Tree size (default: the current size).")
@json_option
def prove(db: Path, index: int, size: int | None, as_json: bool) -> None:
    """log proof --inclusion under its old name (hidden; kept for scripts)."""
    _inclusion(db, index, size, as_json)


def _inclusion(db: Path, index: int, size: int | None, as_json: bool) -> None:
    with TransparencyLog.open(db) as opened:
        document = opened.inclusion_proof(index, size).to_json(opened.log_id)
    emit(
        as_json,
        {"ok": True, "merkle_inclusion": document},
        *(
            f"{name}: {document[name]}"
            for name in ("log_id", "leaf_index", "tree_size", "leaf_hash", "merkle_root")
        ),
        *(f"proof: {step['position']} {step['hash']}" for step in document["proof"]),
    )


def _write(data: bytes, out: str | None) -> None:
    if out is None:
        click.echo(data.decode("utf-8"), nl=False)
    else:
        atomic_write(out, data)
