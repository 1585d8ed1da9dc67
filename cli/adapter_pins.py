"""``affidavit adapter pin`` and ``affidavit adapter pins check``: pinning and the CI gate.

Thin commands over :mod:`affidavit.verify.pins` and :mod:`affidavit.attest.publish` (formats.md §3,
seed 003 "Manifest and pinning" and the lifecycle table). Exit codes: 0 every pin holds, 1 a pin
does not hold, 2 unreadable input or usage, 3 refused by policy (a revoked contract).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import click
from affidavit.attest import publish
from affidavit.cli._common import emit_json, json_option
from affidavit.cli._sources import read_manifest, read_object, resolve_key, with_key_options
from affidavit.verify import errors
from affidavit.verify.manifest import ManifestReport, verify_manifest
from affidavit.verify.pins import check_pins, parse_pin_file, plan_pin

__all__ = ["pin", "pins"]

DEFAULT_PIN_FILE: Final = "pinned_adapters.json"
_F = TypeVar("_F", bound=Callable[..., Any])


def _pin_file_option(*names: str) -> Callable[[_F], _F]:
    """The pin file option both verbs share (formats.md §3 ``pinned_adapters.json``)."""
    return click.option(
        *names,
        "pin_file",
        default=DEFAULT_PIN_FILE,
        show_default=True,
        type=click.Path(dir_okay=False),
    )


def _verified_manifest(
    manifest_source: str | None, public_key_base64: str | None, publisher_doc: str | None
) -> tuple[dict[str, Any] | None, ManifestReport | None]:
    """The manifest (if one is given) and its verification under the supplied key, if any."""
    if not manifest_source:
        return None, None
    document = read_manifest(manifest_source)
    key, used = resolve_key(
        public_key_base64=public_key_base64,
        publisher_doc=publisher_doc,
        fetch_url=None,
        manifest=document,
    )
    return document, verify_manifest(document, public_key=key, publisher_document_used=used)


# ------------------------------------------------------------------------------------------
# adapter pin


@click.command("pin")
@click.option("--id", "adapter_id", required=True)
@click.option("--version", "adapter_version", required=True)
@click.option(
    "--hash", "contract_hash_hex", required=True, help="64-char sha256 hex of the contract."
)
@_pin_file_option("--file", "--out")
@click.option(
    "--manifest",
    "manifest_source",
    default=None,
    metavar="PATH|URL",
    help="Record entry_hash, publisher_id and statuses from this manifest's entry.",
)
@with_key_options
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
    if not manifest_source and (public_key_base64 or publisher_doc):
        raise errors.PinArgumentError("a public key is only used with --manifest")
    document, report = _verified_manifest(manifest_source, public_key_base64, publisher_doc)
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
@_pin_file_option("--file")
@click.option(
    "--contracts-dir",
    "contracts_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Where contract declarations live (repeatable). Default: the pin file's folder, "
    "unless only --manifest is given.",
)
@click.option("--manifest", "manifest_source", default=None, metavar="PATH|URL")
@with_key_options
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
    parsed = read_object(pin_file, what="pin file")
    try:
        pin_set = parse_pin_file(parsed)
    except errors.PinFileError as e:
        e.message = f"{pin_file}: {e.message}"
        raise
    document, report = _verified_manifest(manifest_source, public_key_base64, publisher_doc)
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
