"""``affidavit facts`` (docs/formats.md "Facts"). A store is a SQLite fact store (known by its
header) or a JSON Lines file; an input is one fact, a JSON array of facts, or JSON Lines of facts.
``pull`` reads a Stigmem node ("Stigmem node shapes"); it imports httpx (the registry extra) when
it runs, the rest never does.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Final

import click
from affidavit.attest.files import atomic_write
from affidavit.cli._common import (
    AliasedOption,
    emit,
    emit_json,
    exit_with,
    json_option,
    read_input,
    signing_key_option,
)
from affidavit.cli._group import LazyGroup
from affidavit.cli._trust import read_folder, read_key_path
from affidavit.cli.render.lineage import FORMATS, Format, render
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.audit import Finding
from affidavit.verify.lineage.facts import SCOPES, Fact, parse_fact
from affidavit.verify.lineage.stigmem import map_node_records
from affidavit.verify.lineage.walk import DEFAULT_DEPTH, FactSource, check_depth, walk

__all__ = ["facts", "finding_lines"]


@click.group("facts", cls=LazyGroup, lazy={})
def facts() -> None:
    """Facts and their lineage: FactHash, derived_from rules, provenance walks, audits, and
    pulls from a Stigmem node."""


def read_facts(source: str) -> tuple[list[tuple[str, Any]], list[Fact]]:
    """``(label, document)`` for each fact of ``source`` (one object, an array, or JSON Lines),
    and each parsed (export records ``{fact_hash, fact}`` unwrapped). Every bad line and fact is
    found before any is raised.

    Raises:
        ``fact.input_empty``: no facts at all.
        ``json.*``, ``fact.invalid``, ``canonical.*``: the one bad line or fact, labelled.
        ``fact.batch_invalid``: several.
    """
    from affidavit.attest.stores.facts import batch_error  # noqa: PLC0415
    from affidavit.verify.lineage.walk import split_record  # noqa: PLC0415

    documents, bad = _read_documents(source)
    if not documents and not bad:
        raise errors.LineageError(
            "fact.input_empty", f"{source}: no facts read (the input is empty)"
        )
    parsed = []
    for label, document in documents:
        try:
            parsed.append(parse_fact(split_record(document)[1], what=label))
        except (errors.LineageError, errors.CanonicalError) as e:
            if not e.message.startswith(label):
                e.message = f"{label}: {e.message}"
            bad.append(e)
    if bad:
        raise bad[0] if len(bad) == 1 else batch_error(bad)
    return documents, parsed


def _read_documents(
    source: str,
) -> tuple[list[tuple[str, Any]], list[errors.AffidavitError]]:
    """The documents of ``source`` and, for JSON Lines, every line that is not strict JSON.

    Raises:
        ``json.*``: a single document is not strict JSON.
    """
    data = read_input(source)
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        return [], []  # an empty input: the caller says "no facts read"
    try:
        value = loads(data)
    except errors.ParseError as e:
        if e.code != "json.trailing_data" and len(lines) < 2:
            if not e.message.startswith(f"{source}:"):  # issue 33: name the file
                e.message = f"{source}: {e.message}"
                e.details.setdefault("source", source)
            raise
    else:
        if isinstance(value, list):
            return [(f"{source} item {index + 1}", item) for index, item in enumerate(value)], []
        if value is not None:  # a JSON null is read as one line, as JSON Lines are
            return [(source, value)], []
    documents = []  # JSON Lines with a bad line: every line is read and every bad one named
    bad: list[errors.AffidavitError] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            documents.append((f"{source} line {number}", loads(line)))
        except errors.ParseError as e:
            e.message = f"{source} line {number}: {e.message}"
            bad.append(e)
    return documents, bad


@contextmanager
def open_source(path: str) -> Iterator[FactSource]:
    """The fact store at ``path``, closed afterwards: SQLite when it has the SQLite header, else
    JSON Lines.

    Raises:
        ``io.unreadable``: no such file, or it cannot be read.
        ``lineage.store_invalid``: a SQLite file that is not a fact store.
    """
    import mmap  # noqa: PLC0415

    from affidavit.attest.stores.facts import FactStore, is_sqlite_file  # noqa: PLC0415
    from affidavit.verify.lineage.walk import JsonlFactSource  # noqa: PLC0415

    if not os.path.isfile(path):
        raise errors.ParseError("io.unreadable", f"{path}: no such file")
    source: FactSource
    if is_sqlite_file(path):
        source = FactStore.open(path)
    else:
        try:  # mapped, not read: the source keeps offsets, so a large export costs no memory
            with open(path, "rb") as handle:
                empty = os.fstat(handle.fileno()).st_size == 0  # which cannot be mapped
                data = b"" if empty else mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as e:
            raise errors.ParseError("io.unreadable", f"{path}: {e.strerror or e}") from e
        source = JsonlFactSource(data, path)
    try:
        yield source
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            close()


def _checker(paths: Sequence[str]) -> Any:
    if not paths:
        return None
    from affidavit.verify.lineage.signing import TrustedFactKeys  # noqa: PLC0415

    keys = {}
    for path in paths:  # a key file, or a folder of them (--trusted-keys everywhere, ADR 0016)
        for trusted in read_key_path(path).keys:
            keys[_key_id_of(trusted.source, trusted.document)] = trusted.key
    return TrustedFactKeys(keys).check


def _key_id_of(path: str, document: dict[str, Any] | None) -> str:
    """A trusted key's id: ``publisher_key_id`` of a JSON key document, else the file's stem."""
    if document is not None and isinstance(document.get("publisher_key_id"), str):
        return str(document["publisher_key_id"])
    name = Path(path).name
    return name.removesuffix(".pub").removesuffix(".pem").removesuffix(".json")


_trusted_key_option = click.option(
    "--trusted-keys",
    "--trusted-key",
    "trusted_keys",
    cls=AliasedOption,
    aliases=("--trusted-key",),  # the old spelling, kept for scripts (issue 33)
    multiple=True,
    metavar="FILE|DIR",
    help="A public key, or a folder of them, whose fact signatures count (repeatable); a key's "
    "id is its file's stem (or publisher_key_id of a JSON key document).",
)


class _Drawing(click.Choice):  # type: ignore[type-arg]
    """The walk's drawings; ``json`` is still read (it is ``--json``, the one name for the
    machine form, issue 33) but not shown."""

    shown: Final = tuple(form for form in FORMATS if form != "json")

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:  # noqa: ARG002
        return f"[{'|'.join(self.shown)}]"


def _store_and_source(
    store: str | None, paths: tuple[str, ...], verb: str, *, sources: int
) -> tuple[str, ...]:
    """``--store DB`` and ``sources`` operands, or the old positional ``DB`` first (kept for
    scripts, issue 33): the store, then the rest."""
    named = paths if store is None else (store, *paths)
    if not named:
        raise errors.UsageError(
            f"facts {verb} needs --store DB (see 'affidavit facts {verb} --help')",
            code="usage.missing_argument",
        )
    if len(named) != 1 + sources:
        takes = "and one FILE|-" if sources else "only"
        raise errors.UsageError(
            f"facts {verb} takes --store DB {takes} (see 'affidavit facts {verb} --help')"
        )
    return named


class _Operands(click.Argument):
    """The operands, shown in the usage line as ``usage`` (the old positional DB first is
    read but not shown: --store is its one name, issue 33)."""

    def __init__(self, *args: Any, usage: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usage = usage

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:  # noqa: ARG002 - click's
        return [self.usage] if self.usage else []


_store_option = click.option(
    "--store", "store_path", default=None, metavar="DB", help="The SQLite fact store."
)
# walk and audit read either kind of store (:func:`open_source`).
_any_store_option = click.option(
    "--store",
    "store_path",
    required=True,
    metavar="FILE|DB",
    help="The fact store: SQLite, or a JSON Lines file.",
)


@facts.command("hash")
@json_option
@click.argument("source", metavar="FILE|-")
def hash_command(as_json: bool, source: str) -> None:
    """Print the FactHash of each fact (one fact, an array, or JSON Lines)."""
    _documents, parsed = read_facts(source)
    facts = [{"fact_hash": f.hash, "stigmem_cid": f.cid} for f in parsed]
    emit(as_json, {"ok": True, "facts": facts}, *(fact.hash for fact in parsed))


@facts.command("add")
@json_option
@_store_option
@click.argument("operands", cls=_Operands, usage="FILE|-", nargs=-1, required=True)
def add_command(as_json: bool, store_path: str | None, operands: tuple[str, ...]) -> None:
    """Insert facts into the SQLite store --store DB (created when missing), all or none."""
    from affidavit.attest.stores.facts import FactStore  # noqa: PLC0415

    database, source = _store_and_source(store_path, operands, "add", sources=1)
    documents, parsed = read_facts(source)
    with FactStore.open(database, create=True) as store:
        result = store.add_batch(parsed, labels=[label for label, _ in documents], every_error=True)
    emit(
        as_json,
        {"ok": True, "added": list(result.added), "existing": list(result.existing)},
        *(f"added {fact_hash}" for fact_hash in result.added),
        *(f"already stored {fact_hash}" for fact_hash in result.existing),
    )


@facts.command("sign")
@json_option
@signing_key_option
@click.option("--key-id", default=None, help="Key id to record (default: the key file's stem).")
@click.argument("source", metavar="FILE|-")
def sign_command(as_json: bool, key_file: str, key_id: str | None, source: str) -> None:
    """Sign each fact's FactHash (Ed25519, b64url); print the signed facts."""
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415
    from affidavit.verify.lineage.signing import signed_document, signing_message  # noqa: PLC0415
    from affidavit.verify.lineage.walk import split_record  # noqa: PLC0415

    documents, parsed = read_facts(source)
    key = load_signing_key(key_file, refuse_world_readable=False, key_id=key_id)
    if key.key_id is None:  # pragma: no cover - load_signing_key always names the key
        raise errors.UsageError("the key has no key id; pass --key-id")
    signed = [
        signed_document(
            split_record(doc)[1], key_id=key.key_id, signature=key.sign(signing_message(f.hash))
        )
        for (_, doc), f in zip(documents, parsed, strict=True)
    ]
    if as_json:
        emit_json({"ok": True, "key_id": key.key_id, "facts": signed})
    elif len(signed) == 1:
        emit_json(signed[0])
    else:
        for document in signed:
            click.echo(jcs(document).decode("utf-8"))


@facts.command("walk")
@json_option
@click.argument("root", metavar="HASH")
@_any_store_option
@click.option("--depth", type=int, default=DEFAULT_DEPTH, show_default=True, help="Hops, 0..5.")
@click.option(
    "--readable-scopes",
    default=None,
    metavar="a,b",
    help="Scopes the caller may read (default: all); others look exactly like absent facts.",
)
@click.option(
    "--format",
    "form",
    type=_Drawing(FORMATS),
    default="text",
    show_default=True,
    help="How to draw the walk (--json for the machine form).",
)
@_trusted_key_option
def walk_command(  # noqa: PLR0917 - click passes options positionally by name
    as_json: bool,
    root: str,
    store_path: str,
    depth: int,
    readable_scopes: str | None,
    form: Format,
    trusted_keys: tuple[str, ...],
) -> None:
    """Walk a fact's provenance (docs/formats.md §5): text, dot, mermaid, svg or html (--json
    for the machine form)."""
    check_depth(depth)
    scopes = _parse_scopes(readable_scopes)
    checker = _checker(trusted_keys)
    with open_source(store_path) as source:
        result = walk(source, root, depth=depth, readable_scopes=scopes, check_signature=checker)
    sys.stdout.write(render(result, "json" if as_json else form))
    sys.stdout.flush()


@facts.command("audit")
@json_option
@_any_store_option
@_trusted_key_option
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=1,
    help="Worker processes for the per-fact checks of a SQLite store; each reads its share of "
    "the store itself (not used with --trusted-keys, nor for JSON Lines, read in one pass).",
)
@click.option(
    "--receipts",
    "receipts_dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Also check every receipt fact (receipt fact) against the receipt files under DIR, "
    "found by receipt_hash; a missing, altered or disagreeing receipt is a finding.",
)
@click.option(
    "--receipt-trusted-keys",
    "receipt_keys_dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="With --receipts: also check each receipt's signature under the keys in DIR.",
)
def audit_command(  # noqa: PLR0917 - click passes options positionally by name
    as_json: bool,
    store_path: str,
    trusted_keys: tuple[str, ...],
    jobs: int,
    receipts_dir: str | None,
    receipt_keys_dir: str | None,
) -> None:
    """Recompute every FactHash, check every rule. Exit 0 clean, 1 findings, 2 unreadable."""
    from affidavit.attest.stores.facts import FactStore  # noqa: PLC0415
    from affidavit.verify.lineage.audit import audit  # noqa: PLC0415

    if receipt_keys_dir is not None and receipts_dir is None:
        raise errors.UsageError("--receipt-trusted-keys applies only with --receipts")
    checker = _checker(trusted_keys)
    receipt_check = _receipt_checker(receipts_dir, receipt_keys_dir)
    with open_source(store_path) as source:
        if isinstance(source, FactStore) and checker is None:
            report = source.audit(jobs=jobs)
        else:  # signatures need each Fact here; JSON Lines has no ranges to share out
            report = audit(source, check_signature=checker)
        receipts = None if receipt_check is None else _check_receipts(source, receipt_check)
    if report.facts == 0 and report.ok:
        # Nothing was checked, so nothing can be called ok.
        raise errors.LineageError(
            "lineage.store_empty", f"{store_path}: no facts read (the store is empty)"
        )
    failed_receipts = 0 if receipts is None else sum(not check.ok for check in receipts)
    ok = report.ok and failed_receipts == 0
    document = report.to_json()
    lines = finding_lines(report)
    if report.signatures is not None:
        lines.append(f"signatures: {', '.join(f'{v} {k}' for k, v in report.signatures.items())}")
    if receipts is not None:  # only with --receipts: the output is otherwise unchanged
        document["ok"] = ok
        document["receipts"] = {
            "checked": len(receipts),
            "failed": failed_receipts,
            "results": [check.to_json() for check in receipts],
        }
        lines += [
            f"receipt ok {check.receipt_hash} fact {check.fact}"
            if check.ok
            else f"FAIL {check.code} receipt {check.receipt_hash} fact {check.fact}: "
            f"{check.message}"
            for check in receipts
        ]
        lines.append(f"receipts: {len(receipts)} checked, {failed_receipts} failed")
    verdict = "ok" if ok else f"{len(report.findings) + failed_receipts} finding(s)"
    emit(as_json, document, *lines, f"audited {report.facts} facts: {verdict}")
    exit_with(0 if ok else 1)


def finding_lines(report: Any) -> list[str]:
    """An audit's findings and notes, one line each (``facts audit``, ``facts pull``)."""
    return [
        *(f"FAIL {f.code} {f.where}: {f.message}" for f in report.findings),
        *(f"info {n.code} {n.where}: {n.message}" for n in report.info),
    ]


def _receipt_checker(receipts_dir: str | None, keys_dir: str | None) -> Any:
    """``fact -> ReceiptFactCheck | None`` over the receipts under ``receipts_dir``
    (:mod:`affidavit.verify.receipts.facts`), or None without ``--receipts``."""
    if receipts_dir is None:
        return None

    from affidavit.cli._receipts import receipt_files  # noqa: PLC0415
    from affidavit.verify.receipts.facts import ReceiptIndex, check_receipt_fact  # noqa: PLC0415

    keys = () if keys_dir is None else tuple(read_folder(keys_dir).public_keys)
    index = ReceiptIndex.of_files(receipts_dir, receipt_files(receipts_dir))
    return partial(check_receipt_fact, index=index, trusted_keys=keys)


def _check_receipts(source: FactSource, check: Any) -> list[Any]:
    """Every receipt fact of ``source``, checked, in storage order; records that are not facts
    are left to the audit, which reports them."""
    from affidavit.verify.lineage.walk import split_record  # noqa: PLC0415

    checks = []
    for record in source.records():
        try:
            fact = parse_fact(split_record(loads(record.body))[1], what=record.where)
        except errors.AffidavitError:
            continue
        result = check(fact)
        if result is not None:
            checks.append(result)
    return checks


@facts.command("export")
@_store_option
@click.argument("operands", cls=_Operands, usage="", nargs=-1)
@json_option
def export_command(store_path: str | None, operands: tuple[str, ...], as_json: bool) -> None:
    """Write the SQLite store --store DB as JSON Lines, one {fact, fact_hash} per line, to
    stdout (what facts add reads); with --json, one document listing them."""
    from affidavit.attest.stores.facts import FactStore  # noqa: PLC0415

    (database,) = _store_and_source(store_path, operands, "export", sources=0)
    buffer = io.BytesIO()
    with FactStore.open(database) as store:
        count = store.export_jsonl(buffer if as_json else sys.stdout.buffer)
    if as_json:
        records = [loads(line) for line in buffer.getvalue().splitlines()]
        emit_json({"ok": True, "count": count, "facts": records})
        return
    sys.stdout.buffer.flush()


def _parse_scopes(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    scopes = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(scopes - SCOPES)
    if unknown:
        raise errors.UsageError(
            f"unknown scope(s) {', '.join(unknown)}; choose from {', '.join(sorted(SCOPES))}"
        )
    return scopes


@facts.command("pull")
@json_option
@click.argument("url", metavar="URL")
@click.option(
    "--api-key",
    default=None,
    metavar="KEY",
    envvar="STIGMEM_API_KEY",
    help="The node's API key, sent as Authorization: Bearer (or STIGMEM_API_KEY).",
)
@click.option(
    "--out", "out_path", required=True, metavar="FILE.jsonl", help="Where to write the facts."
)
@click.option(
    "--include-contradicted",
    is_flag=True,
    help="Also pull facts the node marks contradicted (recorded under stigmem.contradicted).",
)
@click.option(
    "--timeout", type=click.FloatRange(0.1, 600), default=30.0, show_default=True, help="Seconds."
)
@click.option(
    "--page-size",
    type=click.IntRange(1, 500),
    default=500,
    show_default=True,
    help="Facts per page (the node's maximum is 500).",
)
def pull_command(  # noqa: PLR0917 - click passes options positionally by name
    as_json: bool,
    url: str,
    api_key: str | None,
    out_path: str,
    include_contradicted: bool,
    timeout: float,
    page_size: int,
) -> None:
    """Pull a Stigmem node's facts into FILE.jsonl (then: facts add / facts audit)."""
    from affidavit.registry.clients.stigmem import fetch_node_facts  # noqa: PLC0415 - httpx

    listing = fetch_node_facts(
        url,
        api_key=api_key,
        include_contradicted=include_contradicted,
        page_size=page_size,
        timeout=timeout,
    )
    report = map_node_records(listing.records)
    if listing.pages > 1:  # the node's cursor cannot prove the listing complete
        report.findings.append(
            Finding(
                "stigmem.paging_unreliable",
                "error",
                url,
                None,
                f"the node needed {listing.pages} pages; its cursor selects id > cursor while it "
                f"sorts by timestamp, so facts may have been skipped ({listing.repeated} "
                "repeated records were dropped)",
                {"pages": listing.pages, "repeated": listing.repeated},
            )
        )
    if not report.records:
        raise errors.LineageError(
            "fact.input_empty", f"{url}: no facts read (the node lists none for this key)"
        )
    # 0600: a node's facts may be of any scope
    atomic_write(out_path, b"".join(jcs(d) + b"\n" for d in report.documents), mode=0o600)
    verdict = "ok" if report.ok else f"{len(report.findings)} finding(s)"
    emit(
        as_json,
        {**report.to_json(), "out": out_path, "fact_hashes": report.hashes},
        *finding_lines(report),
        f"pulled {report.records} records, wrote {len(report.documents)} facts "
        f"to {out_path}: {verdict}",
    )
    exit_with(0 if report.ok else 1)
