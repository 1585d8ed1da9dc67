"""``affidavit adapter attest|manifest|list|lifecycle|pin|pins``: publication and pinning.

Thin commands over :mod:`affidavit.attest.publish`, :mod:`affidavit.verify.manifest` and
:mod:`affidavit.verify.pins` (formats.md §3, seed 003 "Adoption workflow"). Flags mirror the
peer's ``aigentsy adapter`` verbs where the peer has them.

Network: none, except for an explicit ``https://`` MANIFEST argument or ``--fetch-publisher``;
then one GET through httpx (imported only on that path) with a timeout and a size cap.
Exit codes: 0 ok, 1 does not verify / a pin does not hold, 2 unreadable input or usage,
3 refused by policy (pinning or keeping a revoked contract).
"""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import click
from affidavit.attest import publish
from affidavit.cli._common import atomic_write, emit_json, json_option, read_input
from affidavit.verify import errors
from affidavit.verify.contract import LIFECYCLE_STATUSES, contract_hash, input_schema_hash
from affidavit.verify.jsonio import load_object
from affidavit.verify.keys import Ed25519PublicKey
from affidavit.verify.manifest import (
    ManifestReport,
    PublisherDocument,
    contracts_of,
    parse_publisher_document,
    verify_entry,
    verify_manifest,
)
from affidavit.verify.pins import check_pins, parse_pin_file, plan_pin

__all__ = ["attest", "lifecycle", "list_command", "manifest", "pin", "pins"]

MAX_FETCH_BYTES: Final = 16 * 1024 * 1024
FETCH_TIMEOUT_SECONDS: Final = 10.0
DEFAULT_PIN_FILE: Final = "pinned_adapters.json"
DEFAULT_MANIFEST: Final = "adapter-contracts.manifest.json"
# Tests replace this with an httpx.MockTransport; None means the real network.
_HTTP_TRANSPORT: Any = None


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fetch(url: str) -> bytes:
    """One HTTPS GET with a timeout and a size cap (issue 3 §3). The only network path here.

    Raises:
        ManifestFetchError: not https, httpx missing, an HTTP/transport error, or over the cap.
    """
    if not url.startswith("https://"):
        raise errors.ManifestFetchError(f"{url}: only https:// URLs are fetched")
    try:
        import httpx  # noqa: PLC0415 - only on the explicit network path
    except ImportError:  # pragma: no cover - httpx ships with the [registry] extra
        raise errors.ManifestFetchError(
            "fetching needs httpx: pip install 'affidavit[registry]'"
        ) from None
    try:
        with (
            httpx.Client(
                timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True, transport=_HTTP_TRANSPORT
            ) as client,
            client.stream("GET", url) as response,
        ):
            if response.url.scheme != "https":
                raise errors.ManifestFetchError(f"{url}: redirected away from https")
            response.raise_for_status()
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_FETCH_BYTES:
                    raise errors.ManifestFetchError(f"{url}: over {MAX_FETCH_BYTES} bytes")
            return bytes(body)
    except httpx.HTTPStatusError as e:
        raise errors.ManifestFetchError(f"{url}: HTTP {e.response.status_code}") from None
    except httpx.HTTPError as e:
        first_line = (str(e).splitlines() or [""])[0]
        raise errors.ManifestFetchError(f"{url}: {type(e).__name__}: {first_line}") from None


def _read_object(source: str, *, what: str) -> dict[str, Any]:
    """A JSON object from a path, ``-`` or (explicitly) an https URL, parsed strictly."""
    data = _fetch(source) if source.startswith(("https://", "http://")) else read_input(source)
    try:
        return load_object(data, what=what)
    except errors.JsonError as e:
        e.message = f"{source}: {e.message}"
        raise


def _read_manifest(source: str) -> dict[str, Any]:
    try:
        return _read_object(source, what="manifest")
    except errors.JsonWrongType as e:
        raise errors.ManifestFormatError(e.message) from None


def _publisher_document(source: str) -> PublisherDocument:
    document = _read_object(source, what="publisher document")
    try:
        return parse_publisher_document(document)
    except errors.PublisherDocumentError as e:
        e.message = f"{source}: {e.message}"
        raise


def _well_known_url(manifest_source: str, manifest: Mapping[str, Any]) -> str:
    # formats.md §3: /.well-known/<publisher>-publisher.json on the manifest's host.
    if not manifest_source.startswith("https://"):
        raise errors.UsageError("--fetch-publisher without a URL needs an https:// MANIFEST")
    origin = "/".join(manifest_source.split("/", 3)[:3])
    return f"{origin}/.well-known/{manifest.get('publisher_id', '')}-publisher.json"


def _resolve_key(
    *,
    public_key_base64: str | None,
    publisher_doc: str | None,
    fetch_url: str | None,
    manifest: Mapping[str, Any] | None,
) -> tuple[Ed25519PublicKey | None, str | None]:
    """The trusted key from exactly one source, and the publisher document used (if any)."""
    given = [x for x in (public_key_base64, publisher_doc, fetch_url) if x]
    if len(given) > 1:
        raise errors.UsageError(
            "give one of --public-key-base64, --publisher-doc, --fetch-publisher"
        )
    if public_key_base64:
        return Ed25519PublicKey.from_b64(public_key_base64), None
    source = publisher_doc or fetch_url
    if not source:
        return None, None
    document = _publisher_document(source)
    if manifest is not None:
        document.check_matches(manifest)
    return document.public_key, source


_key_options = [
    click.option(
        "--public-key-base64",
        default=None,
        help="Trusted Ed25519 public key (raw 32 bytes, base64).",
    ),
    click.option(
        "--publisher-doc",
        default=None,
        metavar="FILE",
        help="Pinned local copy of the publisher document (its public_key_base64 is trusted).",
    ),
]


def _with_key_options(f: Any) -> Any:
    for option in reversed(_key_options):
        f = option(f)
    return f


# ------------------------------------------------------------------------------------------
# adapter attest


def _lint(declaration: Mapping[str, Any], source: str, as_json: bool) -> None:
    from affidavit.verify.contract import lint_contract  # noqa: PLC0415 - lazy

    report = lint_contract(declaration)
    if report.ok:
        return
    if as_json:
        emit_json(report.to_json())
    messages = [issue.message for issue in report.errors]
    raise errors.EntryLintFailed(
        f"{source}: does not lint clean, so no entry is attested: " + "; ".join(messages[:3]),
        details={"errors": [issue.to_json() for issue in report.errors]},
    )


@click.command("attest")
@click.argument("contract", metavar="CONTRACT")
@click.option("--sign-with", type=click.Path(dir_okay=False), help="Private key file (.key).")
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
    """Lint CONTRACT and emit its manifest entry (attest document), signed with --sign-with.

    Without a key the entry is UNSIGNED and says so ("signed": false). Lifecycle fields not
    given as flags come from the contract (seed 003: they are outside its hashes).
    """
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy

    declaration = _read_object(contract, what="AdapterContract")
    _lint(declaration, contract, as_json)
    key = load_signing_key(sign_with) if sign_with else None
    publisher_id = publisher_id or (key.publisher_id if key else None)
    publisher_key_id = publisher_key_id or (key.key_id if key else None)
    if not publisher_id or not publisher_key_id:
        raise errors.UsageError("give --publisher-id and --key-id (or a key with a publisher doc)")
    document = publish.attest_document(
        declaration,
        publisher_id=publisher_id,
        publisher_key_id=publisher_key_id,
        published_at=published_at or _utc_now(),
        signing_key=key,
        status=status,
        distribution_channel=channel,
        docs_url=docs_url,
        declaration_url=declaration_url,
        release_notes=release_notes,
        supersedes=supersedes,
        replaced_by=replaced_by,
    )
    rendered = json.dumps(document, indent=2) + "\n"
    if out is None:
        click.echo(rendered, nl=False)
        return
    atomic_write(out, rendered.encode("ascii"))
    if as_json:
        emit_json(
            {
                "ok": True,
                "out": out,
                "entry_hash": document["entry_hash"],
                "signed": document["signed"],
            }
        )
    else:
        state = "signed" if document["signed"] else "UNSIGNED"
        click.echo(f"wrote {out}: {state} entry {document['entry_hash']}")


# ------------------------------------------------------------------------------------------
# adapter manifest build | verify | verify-entry


@click.group("manifest")
def manifest() -> None:
    """Build, sign and verify adapter-contract manifests (formats.md §3)."""


@manifest.command("build")
@click.argument("entries", nargs=-1, required=True, metavar="ENTRY...")
@click.option(
    "--sign-with", required=True, type=click.Path(dir_okay=False), help="Private key file."
)
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
@json_option
def manifest_build(  # noqa: PLR0917
    entries: tuple[str, ...],
    sign_with: str,
    out: str,
    publisher_id: str | None,
    publisher_key_id: str | None,
    manifest_version: str,
    generated_at: str | None,
    as_json: bool,
) -> None:
    """Sign ENTRY files (attest documents or bare entries) into one ordered, signed manifest."""
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy

    parsed = [publish.entry_from_document(_read_object(e, what="entry"), source=e) for e in entries]
    key = load_signing_key(sign_with)
    publisher_id = publisher_id or _agreed(parsed, "publisher_id")
    publisher_key_id = publisher_key_id or _agreed(parsed, "publisher_key_id")
    document = publish.build_manifest(
        parsed,
        key,
        publisher_id=publisher_id,
        publisher_key_id=publisher_key_id,
        generated_at=generated_at or _utc_now(),
        manifest_version=manifest_version,
    )
    atomic_write(out, (json.dumps(document, indent=2) + "\n").encode("ascii"))
    summary = {
        "ok": True,
        "out": out,
        "entry_count": len(document["contracts"]),
        "manifest_hash": document["manifest_hash"],
        "publisher_id": publisher_id,
        "publisher_key_id": publisher_key_id,
        "public_key_base64": key.public_key.b64,
    }
    if as_json:
        emit_json(summary)
    else:
        count, digest = summary["entry_count"], summary["manifest_hash"]
        click.echo(f"wrote {out}: {count} signed entries, manifest_hash {digest}")


def _agreed(entries: list[dict[str, Any]], key: str) -> str:
    values = {e.get(key, "") for e in entries}
    if len(values) != 1 or not next(iter(values)):
        raise errors.EntryPublisherMismatch(
            f"the entries do not agree on one {key} ({sorted(values)}); pass it explicitly"
        )
    return str(values.pop())


def _print_report(report: ManifestReport, source: str) -> None:
    click.echo(f"manifest: {source}")
    click.echo(f"  manifest_hash:      {report.manifest_hash_status}")
    click.echo(f"  manifest_signature: {report.manifest_signature_status}")
    key = "supplied" if report.public_key_supplied else "NONE"
    if report.publisher_document_used:
        key += f" (publisher document {report.publisher_document_used})"
    click.echo(f"  public key:         {key}")
    click.echo(f"  entries:            {report.entry_count}")
    for e in report.entries:
        click.echo(
            f"    [{e.index}] {e.adapter_id}@{e.adapter_version} ({e.status}): "
            f"hash {e.entry_hash_status}, signature {e.entry_signature_status}"
        )
    for reason in report.failures():
        click.echo(f"  FAIL: {reason}")
    if report.manifest_signature_status == "no_public_key":
        click.echo("  note: no public key: signatures were NOT checked (this is not trust)")
    click.echo(f"result: {'OK' if report.ok else 'FAILED'}")


def _finish(report: ManifestReport, as_json: bool, source: str) -> None:
    if as_json:
        emit_json(report.to_json())
    else:
        _print_report(report, source)
    if not report.ok:
        failures = report.failures()
        raise errors.ManifestVerificationFailed(
            f"{source}: {len(failures)} check(s) failed: "
            + "; ".join(failures[:3])
            + (" ..." if len(failures) > 3 else "")
        )


@manifest.command("verify")
@click.argument("target", metavar="MANIFEST|URL")
@_with_key_options
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
    document = _read_manifest(target)
    fetch_url = None
    if fetch_publisher is not None:
        fetch_url = (
            fetch_publisher
            if fetch_publisher != "-"
            else from_publisher_document or _well_known_url(target, document)
        )
    key, used = _resolve_key(
        public_key_base64=public_key_base64,
        publisher_doc=publisher_doc,
        fetch_url=fetch_url,
        manifest=document,
    )
    report = verify_manifest(
        document, public_key=key, allow_unsigned=allow_unsigned, publisher_document_used=used
    )
    _finish(report, as_json, target)


@manifest.command("verify-entry")
@click.argument("entry", metavar="ENTRY")
@_with_key_options
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
    parsed = publish.entry_from_document(_read_object(entry, what="entry"), source=entry)
    key, _ = _resolve_key(
        public_key_base64=public_key_base64,
        publisher_doc=publisher_doc,
        fetch_url=None,
        manifest=None,
    )
    report = verify_entry(parsed, key)
    sig_ok = report.entry_signature_status == "ok" or (
        allow_unsigned and report.entry_signature_status in ("absent", "no_public_key")
    )
    ok = report.entry_hash_status == "ok" and sig_ok and report.status_valid
    if as_json:
        emit_json({"ok": ok, **report.to_json()})
    else:
        click.echo(
            f"{report.adapter_id}@{report.adapter_version}: entry_hash {report.entry_hash_status}, "
            f"entry_signature {report.entry_signature_status}"
        )
    if not ok:
        raise errors.ManifestVerificationFailed(
            f"{entry}: entry_hash {report.entry_hash_status}, "
            f"entry_signature {report.entry_signature_status}"
        )


# ------------------------------------------------------------------------------------------
# adapter list


@click.command("list")
@click.option(
    "--manifest",
    "source",
    default=None,
    metavar="PATH|URL",
    help=f"Manifest to read (default: ./{DEFAULT_MANIFEST}).",
)
@json_option
def list_command(source: str | None, as_json: bool) -> None:
    """List the entries of a manifest (a discovery surface; this does not verify it)."""
    source = source or DEFAULT_MANIFEST
    document = _read_manifest(source)
    rows = contracts_of(document)
    if as_json:
        emit_json(
            {
                "ok": True,
                "manifest": source,
                "manifest_version": document.get("manifest_version"),
                "publisher_id": document.get("publisher_id"),
                "entry_count": len(rows),
                "contracts": rows,
                "verified": False,
            }
        )
        return
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
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    click.echo(
        f"{len(rows)} entries from {source} (publisher {document.get('publisher_id', '?')}); "
        "not verified: run `affidavit adapter manifest verify`."
    )


def _marker(row: Mapping[str, Any]) -> str:
    status = str(row.get("status") or "active")
    if status == "active" and row.get("replaced_by"):
        return "superseded"
    return status.upper() if status in ("deprecated", "revoked") else status


# ------------------------------------------------------------------------------------------
# adapter lifecycle


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
    declaration = _read_object(contract, what="AdapterContract")
    updated = publish.set_lifecycle(
        declaration, status=status, replaced_by=replaced_by, supersedes=supersedes
    )
    before = (contract_hash(declaration), input_schema_hash(declaration))
    after = (contract_hash(updated), input_schema_hash(updated))
    target = out or contract
    atomic_write(target, (json.dumps(updated, indent=2) + "\n").encode("ascii"))
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
    if as_json:
        emit_json(result)
        return
    pointer = f", replaced_by {updated['replaced_by']}" if updated.get("replaced_by") else ""
    click.echo(f"wrote {target}: status {updated['status']}{pointer}")
    for name, old, new in (
        ("contract_hash", before[0], after[0]),
        ("input_schema_hash", before[1], after[1]),
    ):
        verdict = "unchanged" if old == new else "CHANGED"
        click.echo(f"  {name:<17} {old} -> {new} ({verdict})")


# ------------------------------------------------------------------------------------------
# adapter pin


@click.command("pin")
@click.option("--id", "adapter_id", required=True)
@click.option("--version", "adapter_version", required=True)
@click.option(
    "--hash", "contract_hash_hex", required=True, help="64-char sha256 hex of the contract."
)
@click.option(
    "--file",
    "--out",
    "pin_file",
    default=DEFAULT_PIN_FILE,
    show_default=True,
    type=click.Path(dir_okay=False),
)
@click.option(
    "--manifest",
    "manifest_source",
    default=None,
    metavar="PATH|URL",
    help="Record entry_hash, publisher_id and statuses from this manifest's entry.",
)
@_with_key_options
@click.option(
    "--allow-revoked-for-legacy-inspection",
    "allow_revoked",
    is_flag=True,
    help="Record a REVOKED entry as an inspection-only pin (never for new work).",
)
@json_option
def pin(  # noqa: PLR0917
    adapter_id: str,
    adapter_version: str,
    contract_hash_hex: str,
    pin_file: str,
    manifest_source: str | None,
    public_key_base64: str | None,
    publisher_doc: str | None,
    allow_revoked: bool,
    as_json: bool,
) -> None:
    """Pin (id, version, contract_hash) into the pin file (sorted, atomic, other pins kept)."""
    document = _read_manifest(manifest_source) if manifest_source else None
    report = None
    if document is not None:
        key, used = _resolve_key(
            public_key_base64=public_key_base64,
            publisher_doc=publisher_doc,
            fetch_url=None,
            manifest=document,
        )
        report = verify_manifest(document, public_key=key, publisher_document_used=used)
    elif public_key_base64 or publisher_doc:
        raise errors.PinArgumentError("a public key is only used with --manifest")
    plan = plan_pin(
        adapter_id,
        adapter_version,
        contract_hash_hex,
        manifest=document,
        manifest_report=report,
        allow_revoked_for_legacy_inspection=allow_revoked,
    )
    if plan.message:
        click.echo(plan.message, err=True)
    written = publish.write_pin(Path(pin_file), plan.pin)
    if as_json:
        emit_json({"ok": True, "pinned": written["pinned_adapters"], "out": pin_file})
        return
    click.echo(f"pinned {adapter_id}@{adapter_version} {contract_hash_hex} in {pin_file}")
    click.echo(
        f"  entry_hash_status {plan.pin['entry_hash_status']}"
        + (
            f", entry_signature_status {plan.pin['entry_signature_status']}"
            if "entry_signature_status" in plan.pin
            else ""
        )
    )


# ------------------------------------------------------------------------------------------
# adapter pins check (the CI gate)


@click.group("pins")
def pins() -> None:
    """Pin-file tools: ``check`` is the CI gate (pre-commit hook ``affidavit-pins``)."""


@pins.command("check")
@click.option(
    "--file",
    "pin_file",
    default=DEFAULT_PIN_FILE,
    show_default=True,
    type=click.Path(dir_okay=False),
)
@click.option(
    "--contracts-dir",
    "contracts_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Where contract declarations live (repeatable). Default: the pin file's folder, "
    "unless only --manifest is given.",
)
@click.option("--manifest", "manifest_source", default=None, metavar="PATH|URL")
@_with_key_options
@click.option("--require-signed", is_flag=True, help="Every pin needs an ok manifest signature.")
@json_option
def pins_check(  # noqa: PLR0917
    pin_file: str,
    contracts_dirs: tuple[str, ...],
    manifest_source: str | None,
    public_key_base64: str | None,
    publisher_doc: str | None,
    require_signed: bool,
    as_json: bool,
) -> None:
    """Check every pin: exit 0 all hold, 1 mismatch or missing, 3 revoked, 2 unreadable input."""
    pin_path = Path(pin_file)
    parsed = _read_object(pin_file, what="pin file")
    try:
        pin_set = parse_pin_file(parsed)
    except errors.PinFileError as e:
        e.message = f"{pin_file}: {e.message}"
        raise
    document = _read_manifest(manifest_source) if manifest_source else None
    report = None
    if document is not None:
        key, used = _resolve_key(
            public_key_base64=public_key_base64,
            publisher_doc=publisher_doc,
            fetch_url=None,
            manifest=document,
        )
        report = verify_manifest(document, public_key=key, publisher_document_used=used)
    folders = [Path(d) for d in contracts_dirs]
    if not folders and document is None:
        folders = [pin_path.parent]
    declarations, skipped = publish.scan_declarations(folders)
    result = check_pins(
        pin_set,
        declarations,
        manifest=document,
        manifest_report=report,
        require_signed=require_signed,
    )
    if as_json:
        emit_json({**result.to_json(), "pin_file": pin_file, "skipped_files": skipped})
    else:
        click.echo(f"pins check: {pin_file} ({len(result.pins)} pins)")
        for verdict in result.pins:
            mark = "ok" if verdict.holds else ("REVOKED" if not verdict.problems else "FAIL")
            label = f"{verdict.adapter_id}@{verdict.adapter_version}"
            sources = ", ".join(verdict.sources) or "no source"
            click.echo(f"  {mark:<8}{label}  {verdict.contract_hash[:16]}  [{sources}]")
            for line in verdict.problems:
                click.echo(f"          problem: {line}")
            for line in verdict.notes:
                click.echo(f"          note: {line}")
        for line in result.problems:
            click.echo(f"  problem: {line}")
        for line in (*result.notes, *(f"skipped {s}" for s in skipped)):
            click.echo(f"  note: {line}")
        click.echo(f"result: {'OK' if result.ok else 'FAILED'} (exit {result.exit_code})")
    failing = [f"{v.adapter_id}@{v.adapter_version}" for v in result.pins if not v.holds]
    if result.exit_code == 1:
        raise errors.PinCheckFailed(
            f"{pin_file}: pins do not hold: " + (", ".join(failing) or "; ".join(result.problems))
        )
    if result.exit_code == 3:
        raise errors.PinCheckRevoked(
            f"{pin_file}: revoked and not inspection-only: " + ", ".join(failing)
        )
    sys.stdout.flush()


def __getattr__(name: str) -> Any:
    # The adapter group looks verbs up by name; "list" must not shadow the builtin in this module.
    if name == "list":
        return list_command
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
