"""``affidavit receipt``: make, log and record transformation receipts (docs/formats.md
"Transformation receipts"; seed 004, RFC 002 §1.4 and §7).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.host import utc_now
from affidavit.cli._common import (
    emit,
    json_option,
    labelled,
    log_write_key_option,
    read_artefact,
    read_input,
    signing_key_option,
)
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.forms import format_utc
from affidavit.verify.lineage.facts import parse_fact

if TYPE_CHECKING:
    from affidavit.verify.receipts.format import Receipt

__all__ = ["receipt"]


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
    from affidavit.cli.log.basic import append_leaves  # noqa: PLC0415 - lazy
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
