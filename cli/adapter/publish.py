"""``affidavit adapter attest|manifest|list|lifecycle``: publication (docs/formats.md §3, seed 003
"Adoption workflow"), with the peer's ``aigentsy adapter`` flags where it has them. Network: only
for an explicit ``https://`` MANIFEST or ``--fetch-publisher`` (:mod:`affidavit.cli._sources`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.host import utc_now
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.publishing import publish
from affidavit.attest.publishing.freshness import sign_freshness
from affidavit.cli._common import AliasedOption, emit, emit_json, json_option, labelled
from affidavit.cli._sources import (
    read_manifest,
    read_object,
    resolve_key,
    well_known_url,
    with_key_options,
)
from affidavit.verify import errors
from affidavit.verify.contracts.contract import (
    LIFECYCLE_STATUSES,
    contract_hash,
    input_schema_hash,
    lint_contract,
)
from affidavit.verify.contracts.freshness import FreshnessReport, check_freshness
from affidavit.verify.contracts.manifest import (
    ManifestReport,
    check_entry_text,
    contracts_of,
    verify_entry,
    verify_manifest,
)
from affidavit.verify.json.forms import format_utc

__all__ = ["attest", "lifecycle", "list_command", "manifest"]

DEFAULT_MANIFEST: Final = "adapter-contracts.manifest.json"
_HASH_NAMES: Final = ("contract_hash", "input_schema_hash")
_F = TypeVar("_F", bound=Callable[..., Any])


def _signing_key_option(*, required: bool) -> Callable[[_F], _F]:
    return click.option(
        "--key",
        "--sign-with",
        "sign_with",
        cls=AliasedOption,
        aliases=("--sign-with",),  # the old spelling, kept for scripts (issue 33)
        required=required,
        type=click.Path(dir_okay=False),
        help="Private key file (.key).",
    )


def _write_json(path: str, document: Any) -> None:
    atomic_write(path, (json.dumps(document, indent=2) + "\n").encode("ascii"))


def _lint(declaration: Mapping[str, Any], source: str, as_json: bool) -> None:
    report = lint_contract(declaration)
    if report.ok:
        return
    if as_json:
        emit_json(report.to_json())
    messages = [issue.message for issue in report.errors]
    raise errors.ContractError(
        "entry.lint_failed",
        f"{source}: does not lint clean, so no entry is attested: " + "; ".join(messages[:3]),
        details={"errors": [issue.to_json() for issue in report.errors]},
    )


@click.command("attest")
@click.argument("contract", metavar="CONTRACT")
@_signing_key_option(required=False)
@click.option(
    "--publisher-id", default=None, help="Default: from the publisher doc beside the key."
)
@click.option(
    "--publisher-key-id",
    "--key-id",
    "publisher_key_id",
    default=None,
    help="Default: the key file name without .key.",
)
@click.option(
    "--status",
    type=click.Choice(LIFECYCLE_STATUSES),
    default=None,
    help="Default: the contract's status, else active.",
)
@click.option(
    "--channel",
    type=click.Choice(publish.DISTRIBUTION_CHANNELS),
    default=None,
    help="Default: the contract's distribution_channel, else third_party.",
)
@click.option("--docs-url", default="")
@click.option("--declaration-url", default="")
@click.option("--release-notes", default="")
@click.option("--supersedes", default=None, metavar="ID@X.Y.Z", help="Default: the contract's.")
@click.option("--replaced-by", default=None, metavar="ID@X.Y.Z", help="Default: the contract's.")
@click.option("--published-at", default=None, help="ISO-8601 UTC; default: now.")
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Write here, not stdout."
)
@json_option
def attest(  # noqa: PLR0917 - one parameter per click option
    contract: str,
    sign_with: str | None,
    publisher_id: str | None,
    publisher_key_id: str | None,
    status: str | None,
    channel: str | None,
    docs_url: str,
    declaration_url: str,
    release_notes: str,
    supersedes: str | None,
    replaced_by: str | None,
    published_at: str | None,
    out: str | None,
    as_json: bool,
) -> None:
    """Lint CONTRACT and emit its manifest entry (attest document), signed with --key.

    Without a key the entry is UNSIGNED and says so ("signed": false). Lifecycle fields not
    given as flags come from the contract (seed 003: they are outside its hashes).
    """
    declaration = read_object(contract, what="AdapterContract")
    _lint(declaration, contract, as_json)
    key = load_signing_key(sign_with) if sign_with else None
    publisher_id = publisher_id or (key.publisher_id if key else None)
    publisher_key_id = publisher_key_id or (key.key_id if key else None)
    if not publisher_id or not publisher_key_id:
        raise errors.UsageError("give --publisher-id and --key-id (or a key with a publisher doc)")
    fields: dict[str, Any] = {
        "publisher_id": publisher_id,
        "publisher_key_id": publisher_key_id,
        "published_at": published_at or format_utc(utc_now()),
        "status": status,
        "distribution_channel": channel,
        "docs_url": docs_url,
        "declaration_url": declaration_url,
        "release_notes": release_notes,
        "supersedes": supersedes,
        "replaced_by": replaced_by,
    }
    # docs/formats.md §3: every hashed entry field is signed; refuse control characters before any
    # signature is made (the entry is built once unsigned, checked, then attested).
    check_entry_text(publish.build_entry(declaration, **fields))
    document = publish.attest_document(declaration, signing_key=key, **fields)
    if out is None:
        click.echo(json.dumps(document, indent=2))
        return
    _write_json(out, document)
    digest, signed = document["entry_hash"], document["signed"]
    emit(
        as_json,
        {"ok": True, "out": out, "entry_hash": digest, "signed": signed},
        f"wrote {out}: {'signed' if signed else 'UNSIGNED'} entry {digest}",
    )


@click.group("manifest")
def manifest() -> None:
    """Build, sign and verify adapter-contract manifests (docs/formats.md §3)."""


@manifest.command("build")
@click.argument("entries", nargs=-1, required=True, metavar="ENTRY...")
@_signing_key_option(required=True)
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="Manifest file to write."
)
@click.option("--publisher-id", default=None, help="Default: the entries' publisher_id.")
@click.option(
    "--publisher-key-id",
    "--key-id",
    "publisher_key_id",
    default=None,
    help="Default: the entries' publisher_key_id.",
)
@click.option("--manifest-version", default="1", show_default=True)
@click.option("--generated-at", default=None, help="ISO-8601 UTC; default: now.")
@click.option(
    "--signed-at",
    default=None,
    help="Signed time, what pins check --max-age reads (YYYY-MM-DDTHH:MM:SSZ); "
    "default: --generated-at.",
)
@json_option
def manifest_build(  # noqa: PLR0917
    entries: tuple[str, ...],
    sign_with: str,
    out: str,
    publisher_id: str | None,
    publisher_key_id: str | None,
    manifest_version: str,
    generated_at: str | None,
    signed_at: str | None,
    as_json: bool,
) -> None:
    """Sign ENTRY files (attest documents or bare entries) into one ordered, signed manifest.

    The manifest also carries a signed freshness statement (signed_at, freshness_hash,
    freshness_signature; docs/adr/0007-pin-gate-freshness.md) that the peer ignores.
    """
    parsed = [publish.entry_from_document(read_object(e, what="entry"), source=e) for e in entries]
    for source, entry in zip(entries, parsed, strict=True):
        # docs/formats.md §3: nothing with a control character is signed
        with labelled(source, errors.ContractError, "entry.control_character"):
            check_entry_text(entry)
    key = load_signing_key(sign_with)
    publisher_id = publisher_id or _agreed(parsed, "publisher_id")
    publisher_key_id = publisher_key_id or _agreed(parsed, "publisher_key_id")
    generated_at = generated_at or format_utc(utc_now())
    document = publish.build_manifest(
        parsed,
        key,
        publisher_id=publisher_id,
        publisher_key_id=publisher_key_id,
        generated_at=generated_at,
        manifest_version=manifest_version,
    )
    document = sign_freshness(document, key, signed_at=signed_at or generated_at)
    _write_json(out, document)
    count, digest = len(document["contracts"]), document["manifest_hash"]
    summary = {
        "ok": True,
        "out": out,
        "entry_count": count,
        "manifest_hash": digest,
        "publisher_id": publisher_id,
        "publisher_key_id": publisher_key_id,
        "public_key_base64": key.public_key.b64,
    }
    emit(as_json, summary, f"wrote {out}: {count} signed entries, manifest_hash {digest}")


def _agreed(entries: list[dict[str, Any]], key: str) -> str:
    values = {e.get(key, "") for e in entries}
    if len(values) != 1 or not next(iter(values)):
        raise errors.ContractError(
            "entry.publisher_mismatch",
            f"the entries do not agree on one {key} ({sorted(values)}); pass it explicitly",
        )
    return str(values.pop())


def _report_lines(report: ManifestReport, source: str, freshness: FreshnessReport) -> list[str]:
    key = "supplied" if report.public_key_supplied else "NONE"
    if report.publisher_document_used:
        key += f" (publisher document {report.publisher_document_used})"
    proven = "proven" if freshness.proven else "NOT proven"
    lines = [
        f"manifest: {source}",
        f"  manifest_hash:      {report.manifest_hash_status}",
        f"  manifest_signature: {report.manifest_signature_status}",
        f"  public key:         {key}",
        f"  entries:            {report.entry_count}",
        *(
            f"    [{e.index}] {e.adapter_id}@{e.adapter_version} ({e.status}): "
            f"hash {e.entry_hash_status}, signature {e.entry_signature_status}"
            for e in report.entries
        ),
        *(f"  FAIL: {reason}" for reason in report.failures()),
    ]
    if report.manifest_signature_status == "no_public_key":
        lines.append("  note: no public key: signatures were NOT checked (this is not trust)")
    lines.append(
        f"  signed_at:          {freshness.claimed_signed_at or '-'} ({proven}; "
        f"freshness_hash {freshness.hash_status}, signature {freshness.signature_status})"
    )
    return lines + [f"  FAIL: {reason}" for reason in _freshness_failures(freshness)]


def _freshness_failures(freshness: FreshnessReport) -> list[str]:
    # A statement that is present must verify; an absent one is not a failure here (the peer's
    # manifests have none). `pins check --max-age` is where a missing one fails.
    if freshness.hash_status == "absent":
        return []
    failures = [] if freshness.hash_status == "ok" else [f"freshness_hash {freshness.hash_status}"]
    if freshness.signature_status == "bad":
        failures.append("freshness_signature bad")
    return failures


def _finish(report: ManifestReport, as_json: bool, source: str, freshness: FreshnessReport) -> None:
    failures = report.failures() + _freshness_failures(freshness)
    document = report.to_json()
    document.update(freshness=freshness.to_json(), failures=failures, ok=not failures)
    emit(
        as_json,
        document,
        *_report_lines(report, source, freshness),
        f"result: {'OK' if not failures else 'FAILED'}",
    )
    if failures:
        raise errors.ContractError(
            "manifest.verification_failed",
            f"{source}: {len(failures)} check(s) failed: "
            + "; ".join(failures[:3])
            + (" ..." if len(failures) > 3 else ""),
        )


@manifest.command("verify")
@click.argument("target", metavar="MANIFEST|URL")
@with_key_options
@click.option(
    "--fetch-publisher",
    is_flag=False,
    flag_value="-",
    default=None,
    metavar="[URL]",
    help="Fetch the publisher document over HTTPS for the key. Without URL: "
    "--from-publisher-document, else /.well-known/<publisher_id>-publisher.json on the host.",
)
@click.option(
    "--from-publisher-document",
    default=None,
    metavar="URL",
    help="Publisher document URL for a bare --fetch-publisher (the peer's flag).",
)
@click.option("--allow-unsigned", is_flag=True, help="Accept absent/unchecked signatures (unsafe).")
@json_option
def manifest_verify(  # noqa: PLR0917
    target: str,
    public_key_base64: str | None,
    publisher_doc: str | None,
    fetch_publisher: str | None,
    from_publisher_document: str | None,
    allow_unsigned: bool,
    as_json: bool,
) -> None:
    """Verify a manifest offline: entry hashes, signatures, manifest hash, collisions.

    Without a public key nothing is trusted: signatures report no_public_key and the exit code
    is 1 unless --allow-unsigned is given.
    """
    document = read_manifest(target)
    fetch_url = fetch_publisher  # a bare --fetch-publisher: the peer's flag, else .well-known
    if fetch_publisher == "-":
        fetch_url = from_publisher_document or well_known_url(target, document)
    key, used = resolve_key(
        public_key_base64, publisher_doc, fetch_url=fetch_url, manifest=document
    )
    report = verify_manifest(
        document, public_key=key, allow_unsigned=allow_unsigned, publisher_document_used=used
    )
    _finish(report, as_json, target, check_freshness(document, key))


@manifest.command("verify-entry")
@click.argument("entry", metavar="ENTRY")
@with_key_options
@click.option(
    "--allow-unsigned", is_flag=True, help="Accept an absent/unchecked signature (unsafe)."
)
@json_option
def manifest_verify_entry(
    entry: str,
    public_key_base64: str | None,
    publisher_doc: str | None,
    allow_unsigned: bool,
    as_json: bool,
) -> None:
    """Verify one entry (attest document or bare entry): its hash and signature."""
    parsed = publish.entry_from_document(read_object(entry, what="entry"), source=entry)
    key, _ = resolve_key(public_key_base64, publisher_doc)
    report = verify_entry(parsed, key)
    sig_ok = report.entry_signature_status == "ok" or (
        allow_unsigned and report.entry_signature_status in ("absent", "no_public_key")
    )
    ok = report.entry_hash_status == "ok" and sig_ok and report.status_valid
    statuses = (
        f"entry_hash {report.entry_hash_status}, entry_signature {report.entry_signature_status}"
    )
    emit(
        as_json,
        {"ok": ok, **report.to_json()},
        f"{report.adapter_id}@{report.adapter_version}: {statuses}",
    )
    if not ok:
        raise errors.ContractError("manifest.verification_failed", f"{entry}: {statuses}")


@click.command("list")
@click.option(
    "--manifest",
    "source",
    default=None,
    metavar="PATH|URL",
    help=f"Manifest to read (default: ./{DEFAULT_MANIFEST}).",
)
@click.option(
    "--registry",
    "registry_url",
    default=None,
    metavar="URL",
    help="Read the signed manifest from an Affidavit registry (explicit network use).",
)
@json_option
def list_command(source: str | None, registry_url: str | None, as_json: bool) -> None:
    """List the entries of a manifest (a discovery surface; this does not verify it)."""
    if source and registry_url:
        raise errors.UsageError("give --manifest or --registry, not both")
    if registry_url:
        from affidavit.registry.clients.registry import fetch_manifest  # noqa: PLC0415 - network path only

        source = registry_url
        document = fetch_manifest(registry_url)
    else:
        source = source or DEFAULT_MANIFEST
        document = read_manifest(source)
    rows = contracts_of(document)
    listing = {
        "ok": True,
        "manifest": source,
        "manifest_version": document.get("manifest_version"),
        "publisher_id": document.get("publisher_id"),
        "entry_count": len(rows),
        "contracts": rows,
        "verified": False,
    }
    header = ("STATUS", "ADAPTER", "VERSION", "CHANNEL", "CONTRACT_HASH", "REPLACED_BY")
    table = [header] + [
        (
            _marker(r),
            str(r.get("adapter_id", "")),
            str(r.get("adapter_version", "")),
            str(r.get("distribution_channel") or "-"),
            str(r.get("contract_hash", ""))[:16],
            str(r.get("replaced_by") or "-"),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    emit(
        as_json,
        listing,
        *(
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in table
        ),
        f"{len(rows)} entries from {source} (publisher {document.get('publisher_id', '?')}); "
        "not verified: run `affidavit adapter manifest verify`.",
    )


def _marker(row: Mapping[str, Any]) -> str:
    status = str(row.get("status") or "active")
    if status == "active" and row.get("replaced_by"):
        return "superseded"
    return status.upper() if status in ("deprecated", "revoked") else status


@click.command("lifecycle")
@click.argument("contract", metavar="CONTRACT", type=click.Path(dir_okay=False))
@click.option(
    "--status", required=True, type=click.Choice(("active", "superseded", "deprecated", "revoked"))
)
@click.option("--replaced-by", default=None, metavar="ID@X.Y.Z", help='"" removes it.')
@click.option("--supersedes", default=None, metavar="ID@X.Y.Z", help='"" removes it.')
@click.option("--out", default=None, type=click.Path(dir_okay=False), help="Default: in place.")
@json_option
def lifecycle(  # noqa: PLR0917
    contract: str,
    status: str,
    replaced_by: str | None,
    supersedes: str | None,
    out: str | None,
    as_json: bool,
) -> None:
    """Edit CONTRACT's lifecycle fields (seed 003) and show that both hashes are unchanged."""
    declaration = read_object(contract, what="AdapterContract")
    updated = publish.set_lifecycle(
        declaration, status=status, replaced_by=replaced_by, supersedes=supersedes
    )
    before = (contract_hash(declaration), input_schema_hash(declaration))
    after = (contract_hash(updated), input_schema_hash(updated))
    target = out or contract
    _write_json(target, updated)
    changed = {
        k: {"old": declaration.get(k), "new": updated.get(k)}
        for k in ("status", "replaced_by", "supersedes")
        if declaration.get(k) != updated.get(k)
    }
    result = {
        "ok": True,
        "out": target,
        "changes": changed,
        "contract_hash": after[0],
        "input_schema_hash": after[1],
        "hashes_unchanged": before == after,
    }
    pointer = f", replaced_by {updated['replaced_by']}" if updated.get("replaced_by") else ""
    emit(
        as_json,
        result,
        f"wrote {target}: status {updated['status']}{pointer}",
        *(
            f"  {name:<17} {old} -> {new} ({'unchanged' if old == new else 'CHANGED'})"
            for name, old, new in zip(_HASH_NAMES, before, after, strict=True)
        ),
    )
