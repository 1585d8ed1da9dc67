"""Transformation receipts (docs/formats.md "Transformation receipts"; seed 004, RFC 002 §1.4
and §7): ``affidavit receipt`` makes, logs and records them; ``affidavit verify receipt`` checks
one, or a folder of them in the bulk layout (:mod:`affidavit.cli._receipts`) over ``--jobs``
worker processes, offline, under the trust options (:mod:`affidavit.cli._trust`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.host import utc_now
from affidavit.cli._batch import Progress, map_in_workers
from affidavit.cli._common import (
    emit,
    json_option,
    labelled,
    log_write_key_option,
    print_outcome,
    read_artefact,
    read_input,
    signing_key_option,
)
from affidavit.cli._trust import read_trust, trust_options
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.forms import format_utc
from affidavit.verify.lineage.facts import parse_fact
from affidavit.verify.results import Report

if TYPE_CHECKING:
    from affidavit.verify.receipts.format import Receipt
    from affidavit.verify.results import Result
    from affidavit.verify.trust import TrustRoot

__all__ = ["receipt", "verify_command"]


@click.group("receipt")
def receipt() -> None:
    """Transformation receipts: what an adapter did to source bytes, signed and replayable."""


def _read_receipt(path: str) -> Receipt:
    from affidavit.verify.receipts.format import MAX_RECEIPT_BYTES, load_receipt  # noqa: PLC0415 - lazy

    data = read_input(path, max_bytes=MAX_RECEIPT_BYTES)
    with labelled(path):
        return load_receipt(data, what=path)


@receipt.command("make")
@click.option("--source", "source_file", required=True, metavar="SRC", help="The source bytes.")
@click.option(
    "--content",
    "content_file",
    metavar="OUT",
    help="The whole stored output (with --chunk: what the chunks must concatenate to).",
)
@click.option(
    "--chunk",
    "chunk_files",
    multiple=True,
    metavar="FILE",
    help="A stored record of the output, in chunk order (repeatable).",
)
@click.option("--adapter", required=True, metavar="NAME", help="The adapter's name.")
@click.option("--adapter-version", required=True, metavar="V", help="The adapter's version.")
@click.option(
    "--transform",
    "transformations",
    multiple=True,
    metavar="T",
    help="A declared transformation, in the order applied (repeatable; none: byte_preserving).",
)
@click.option("--source-uri", metavar="URI", help="Where the source is (relative path for bulk).")
@click.option(
    "--issued-at", metavar="TS", help="UTC time YYYY-MM-DDTHH:MM:SSZ to record (default: now)."
)
@signing_key_option
@click.option("--out", "out_file", required=True, metavar="RECEIPT.json", help="Where to write.")
@json_option
def make_command(  # noqa: PLR0917 - one parameter per option
    source_file: str,
    content_file: str | None,
    chunk_files: tuple[str, ...],
    adapter: str,
    adapter_version: str,
    transformations: tuple[str, ...],
    source_uri: str | None,
    issued_at: str | None,
    key_file: str,
    out_file: str,
    as_json: bool,
) -> None:
    """Replay, then sign a receipt of SRC -> OUT; refuse a content that does not replay."""
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy
    from affidavit.attest.plugins import transforms_for  # noqa: PLC0415 - lazy
    from affidavit.attest.receipts import make_receipt  # noqa: PLC0415 - lazy
    from affidavit.verify.receipts.format import parse_receipt  # noqa: PLC0415 - lazy

    if content_file is None and not chunk_files:
        raise errors.UsageError("give --content OUT, --chunk FILE (repeatable), or both")
    stdin_uses = [source_file, content_file, *chunk_files].count("-")
    if stdin_uses > 1:
        raise errors.UsageError("standard input (-) can stand for one input only")
    key = load_signing_key(key_file)
    source = read_artefact(source_file)
    content = None if content_file is None else read_artefact(content_file)
    chunks = [read_artefact(path) for path in chunk_files] or None
    document = make_receipt(
        source,
        content,
        adapter=adapter,
        adapter_version=adapter_version,
        transformations=transformations,
        key=key,
        chunks=chunks,
        source_uri=source_uri,
        issued_at=issued_at if issued_at is not None else format_utc(utc_now()),
        transforms=transforms_for,  # the installed plugins too, when the chain needs one
    )
    made = parse_receipt(document)
    atomic_write(out_file, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    summary = {
        "ok": True,
        "out": out_file,
        "receipt_hash": made.receipt_hash,
        "capability": made.capability,
        "transformations": list(made.transformations),
        "source": made.source.to_json(),
        "content": made.content.to_json(),
        "chunks": None if made.chunks is None else len(made.chunks),
        "key_id": made.signature.key_id,
    }
    chain = ", ".join(made.transformations) or "no transformations"
    emit(
        as_json,
        summary,
        f"wrote {out_file}: {made.capability} ({chain})",
        f"receipt_hash {made.receipt_hash}",
    )


@receipt.command("log")
@click.argument("first", metavar="[URL] RECEIPT")
@click.argument("second", required=False, metavar="")
@click.option(
    "--log",
    "db",
    default=None,
    metavar="DB|URL",
    help="The transparency log (log init) to append to, or a registry's URL.",
)
@log_write_key_option
@json_option
def log_command(
    first: str, second: str | None, db: str | None, api_key: str | None, as_json: bool
) -> None:
    """Append RECEIPT's RFC 8785 bytes as one leaf of the transparency log DB.

    To a registry's log: receipt log URL RECEIPT (or --log URL), answered once a signed
    checkpoint covers it and proven against the registry's key.
    """
    from affidavit.cli.log.group import append_leaves  # noqa: PLC0415 - lazy
    from affidavit.registry.clients.log_entries import is_registry_url  # noqa: PLC0415 - lazy

    receipt_file, target = first, db
    if second is not None:  # receipt log URL RECEIPT
        if db is not None or not is_registry_url(first):
            raise errors.UsageError("give receipt log URL RECEIPT, or receipt log RECEIPT --log DB")
        receipt_file, target = second, first
    if target is None:
        raise errors.UsageError("missing option(s): --log", code="usage.missing_argument")
    parsed = _read_receipt(receipt_file)
    leaf = jcs(parsed.to_json())  # docs/formats.md §1 jcs: one leaf per receipt, however spelt
    (row,), log = append_leaves(target, [leaf], api_key)
    entry = {"ok": True, "receipt": receipt_file, "receipt_hash": parsed.receipt_hash}
    entry |= row | log
    emit(as_json, entry, f"{entry['index']}\t{entry['leaf_hash']}\t{parsed.receipt_hash}")


@receipt.command("fact")
@click.argument("receipt_file", metavar="RECEIPT")
@click.option(
    "--source-fact",
    required=True,
    metavar="HASH",
    help="FactHash of the source's fact: the new fact's derived_from.",
)
@click.option(
    "--store", "store_path", required=True, metavar="DB", help="SQLite fact store (created)."
)
@click.option(
    "--scope",
    type=click.Choice(["local", "team", "company", "public"]),
    default="local",
    show_default=True,
)
@click.option(
    "--ts", metavar="TS", help="The fact's time (default: the receipt's issued_at, else now)."
)
@json_option
def fact_command(  # noqa: PLR0917 - one parameter per option
    receipt_file: str,
    source_fact: str,
    store_path: str,
    scope: str,
    ts: str | None,
    as_json: bool,
) -> None:
    """Record RECEIPT as a fact derived from the source's fact (content <- receipt <- source)."""
    from affidavit.attest.stores.facts import FactStore  # noqa: PLC0415 - lazy
    from affidavit.verify.receipts.facts import receipt_fact_document  # noqa: PLC0415 - lazy

    parsed = _read_receipt(receipt_file)
    when = ts or parsed.issued_at or format_utc(utc_now())
    document = receipt_fact_document(parsed, source_fact=source_fact, ts=when, scope=scope)
    fact = parse_fact(document, what=f"the fact of {receipt_file}")
    with FactStore.open(store_path, create=True) as store:
        result = store.add_batch([fact], labels=[receipt_file])
    added = bool(result.added)
    emit(
        as_json,
        {
            "ok": True,
            "fact_hash": fact.hash,
            "added": added,
            "receipt_hash": parsed.receipt_hash,
            "fact": document,
        },
        f"{'added' if added else 'already stored'} {fact.hash}",
    )


_SINGLE_ONLY: Final = ("--source", "--content", "--chunk")
_BULK_ONLY: Final = ("--source-root", "--content-root")


@click.command("receipt")
@click.argument("target", metavar="RECEIPT|DIR")
@click.option("--source", "source_file", metavar="SRC", help="One receipt: the source bytes.")
@click.option("--content", "content_file", metavar="OUT", help="One receipt: the whole output.")
@click.option(
    "--chunk",
    "chunk_files",
    multiple=True,
    metavar="FILE",
    help="One receipt: a stored record of the output, in chunk order (repeatable).",
)
@click.option(
    "--source-root",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="A folder of receipts: where each source.uri is.",
)
@click.option(
    "--content-root",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="A folder of receipts: where the contents are (default: beside their receipts).",
)
@trust_options
@click.option(
    "--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="Worker processes."
)
@json_option
def verify_command(  # noqa: PLR0917 - one parameter per option
    target: str,
    source_file: str | None,
    content_file: str | None,
    chunk_files: tuple[str, ...],
    source_root: str | None,
    content_root: str | None,
    jobs: int,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify a transformation receipt (or a folder of them): signature, hashes, replay."""
    trust = read_trust(**trust_options)
    raw_keys = trust.raw_keys
    if os.path.isdir(target):
        _refuse(_SINGLE_ONLY, (source_file, content_file, chunk_files), "a folder of receipts")
        if source_root is None:
            raise errors.UsageError("a folder of receipts needs --source-root DIR")
        results = _bulk(target, source_root, content_root or target, raw_keys, jobs)
        _finish(results, as_json, trust, detailed=False)
        return
    _refuse(_BULK_ONLY, (source_root, content_root), "one receipt")
    if source_file is None or (content_file is None and not chunk_files):
        raise errors.UsageError(
            "one receipt needs --source SRC and --content OUT and/or --chunk FILE"
        )
    result = _single(target, source_file, content_file, chunk_files, raw_keys)
    _finish([result], as_json, trust, detailed=True)


def _refuse(options: Sequence[str], values: Sequence[object], what: str) -> None:
    given = [name for name, value in zip(options, values, strict=True) if value]
    if given:
        raise errors.UsageError(f"{', '.join(given)} do(es) not apply to {what}")


def _single(
    receipt_file: str,
    source_file: str,
    content_file: str | None,
    chunk_files: tuple[str, ...],
    raw_keys: list[bytes],
) -> Result:
    from affidavit.attest.plugins import transforms_for  # noqa: PLC0415 - lazy
    from affidavit.verify.receipts.format import MAX_RECEIPT_BYTES, load_receipt  # noqa: PLC0415 - lazy
    from affidavit.verify.receipts.verify import unreadable_receipt, verify_receipt  # noqa: PLC0415 - lazy

    if [source_file, content_file, *chunk_files].count("-") + (receipt_file == "-") > 1:
        raise errors.UsageError("standard input (-) can stand for one input only")

    try:
        data = read_input(receipt_file, max_bytes=MAX_RECEIPT_BYTES)
        parsed = load_receipt(data, what=receipt_file)
    except (errors.ReceiptError, errors.ParseError, errors.CanonicalError) as e:
        if e.code == "io.unreadable":
            raise
        return unreadable_receipt(receipt_file, e)
    source = read_artefact(source_file)
    content = None if content_file is None else read_artefact(content_file)
    chunks = [read_artefact(path) for path in chunk_files] or None
    keys = [Ed25519PublicKey(raw) for raw in raw_keys]
    # the installed plugins too, loaded when the chain needs one (transforms_for)
    return verify_receipt(parsed, source, content, chunks, keys, transforms_for, label=receipt_file)


def _bulk(
    folder: str, source_root: str, content_root: str, raw_keys: list[bytes], jobs: int
) -> list[Result]:
    from affidavit.cli._receipts import Layout, find_receipts, init_worker, run_task  # noqa: PLC0415 - lazy

    if not os.path.isdir(source_root):
        raise errors.ParseError("io.unreadable", f"{source_root}: not a folder")
    tasks = find_receipts(Layout(folder, source_root, content_root))
    if not tasks:
        raise errors.UsageError(f"{folder}: no *.receipt.json files under it")
    progress = Progress(len(tasks), unit=" receipts")
    results = []
    for result in map_in_workers(
        run_task,
        tasks,
        jobs=jobs,
        initializer=init_worker,
        initargs=(raw_keys,),
        max_chunk=64,
        chunks_per_worker=8,
    ):
        results.append(result)
        progress.tick()
    return results


def _finish(results: Sequence[Result], as_json: bool, trust: TrustRoot, *, detailed: bool) -> None:
    report = Report("receipt", tuple(results))
    print_outcome(report, as_json=as_json, extra={"trust": trust.to_json()}, detailed=detailed)
