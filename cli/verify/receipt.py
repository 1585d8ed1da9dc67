"""``affidavit verify receipt``: transformation receipts, offline (docs/formats.md
"Transformation receipts"; seed 004, RFC 002 §7.2/§7.3).

One receipt, or a folder of them in the bulk layout (:mod:`affidavit.cli._receipts`) over
``--jobs`` worker processes; trust only from the trust options (:mod:`affidavit.cli._trust`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import click
from affidavit.cli._batch import Progress, map_in_workers
from affidavit.cli._common import json_option, print_outcome, read_artefact, read_input
from affidavit.cli._trust import read_trust, trust_options
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.results import Report

if TYPE_CHECKING:
    from affidavit.verify.results import Result
    from affidavit.verify.trust import TrustRoot

__all__ = ["receipt"]

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
def receipt(  # noqa: PLR0917 - one parameter per option
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
