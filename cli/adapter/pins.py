"""``affidavit adapter pin`` and ``affidavit adapter pins check``: pinning and the CI gate
(docs/formats.md §3, seed 003 "Manifest and pinning" and the lifecycle table; freshness:
docs/adr/0007-pin-gate-freshness.md).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final, TypeVar

import click
from affidavit.attest.host import read_capped, utc_now
from affidavit.attest.publishing import publish
from affidavit.cli._common import emit, json_option, labelled
from affidavit.cli._sources import read_manifest, read_object, resolve_key, with_key_options
from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hash, lint_contract
from affidavit.verify.contracts.freshness import check_freshness, parse_duration
from affidavit.verify.contracts.manifest import ManifestReport, verify_manifest
from affidavit.verify.contracts.pin_file import parse_pin_file
from affidavit.verify.contracts.pins import (
    BrokenDeclaration,
    Declaration,
    PinCheckReport,
    check_pins,
    plan_pin,
)
from affidavit.verify.json.strict import loads
from affidavit.verify.results import Problem, render_problems

__all__ = ["MAX_CONTRACT_FILE_BYTES", "ScanResult", "pin", "pins", "scan_contract_files"]

DEFAULT_PIN_FILE: Final = "pinned_adapters.json"
# The library names the caller's settings by parameter; these are the options that set them here.
CHECK_FLAGS: Final = {
    "require_signed": "--require-signed",
    "manifest": "--manifest",
    "live_manifest": "--registry",
    "allow_inspection_only": "--allow-inspection-only",
}
REVOKED_HINT: Final = (
    "; for legacy or forensic review only, re-run with --allow-revoked-for-legacy-inspection"
)
_F = TypeVar("_F", bound=Callable[..., Any])


def _pin_file_option(*names: str) -> Callable[[_F], _F]:
    """The pin file option both verbs share (docs/formats.md §3 ``pinned_adapters.json``)."""
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
    key, used = resolve_key(public_key_base64, publisher_doc, manifest=document)
    return document, verify_manifest(document, public_key=key, publisher_document_used=used)


@click.command("pin")
@click.option("--id", "adapter_id", default=None, help="adapter_id (default: the --contract's).")
@click.option(
    "--version",
    "adapter_version",
    default=None,
    help="adapter_version (default: the --contract's).",
)
@click.option(
    "--hash", "contract_hash_hex", default=None, help="64-char sha256 hex of the contract."
)
@click.option(
    "--contract",
    "contract_file",
    default=None,
    type=click.Path(dir_okay=False),
    help="The contract declaration to pin: its contract_hash is computed (instead of --hash).",
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
    adapter_id: str | None,
    adapter_version: str | None,
    contract_hash_hex: str | None,
    contract_file: str | None,
    pin_file: str,
    manifest_source: str | None,
    public_key_base64: str | None,
    publisher_doc: str | None,
    allow_revoked: bool,
    as_json: bool,
) -> None:
    """Pin (id, version, contract_hash) into the pin file (sorted, atomic, other pins kept).

    Give --id, --version and --hash (the seed's form), or --contract FILE: the declaration must
    lint clean, and its adapter_id, adapter_version and recomputed contract_hash are pinned.
    """
    adapter_id, adapter_version, contract_hash_hex = _pin_identity(
        adapter_id, adapter_version, contract_hash_hex, contract_file
    )
    if not manifest_source and (public_key_base64 or publisher_doc):
        raise errors.ContractError(
            "pin.invalid_argument", "a public key is only used with --manifest"
        )
    document, report = _verified_manifest(manifest_source, public_key_base64, publisher_doc)
    try:
        plan = plan_pin(
            adapter_id,
            adapter_version,
            contract_hash_hex,
            manifest=document,
            manifest_report=report,
            allow_revoked_for_legacy_inspection=allow_revoked,
        )
    except errors.ContractError as e:
        if e.code == "pin.revoked":
            e.message += REVOKED_HINT
        raise
    if plan.message:
        click.echo(plan.message, err=True)
    written = publish.write_pin(Path(pin_file), plan.pin)
    signature = plan.pin.get("entry_signature_status")
    emit(
        as_json,
        {"ok": True, "pinned": written["pinned_adapters"], "out": pin_file},
        f"pinned {adapter_id}@{adapter_version} {contract_hash_hex} in {pin_file}",
        f"  entry_hash_status {plan.pin['entry_hash_status']}"
        + ("" if signature is None else f", entry_signature_status {signature}"),
    )


def _pin_identity(
    adapter_id: str | None,
    adapter_version: str | None,
    contract_hash_hex: str | None,
    contract_file: str | None,
) -> tuple[str, str, str]:
    """(id, version, hash) from the flags, or from the --contract declaration (issue 37 §6)."""
    if contract_file is None:
        if adapter_id is None or adapter_version is None or contract_hash_hex is None:
            raise errors.UsageError("give --id, --version and --hash, or --contract FILE")
        return adapter_id, adapter_version, contract_hash_hex
    if contract_hash_hex is not None:
        raise errors.UsageError("give --hash or --contract, not both")
    declaration = read_object(contract_file, what="contract")
    report = lint_contract(declaration)
    if not report.ok:
        # A declaration that does not lint would fail the gate at once (seed 003 "Lint").
        raise errors.ContractError(
            "pin.contract_invalid",
            f"{contract_file} does not lint clean: " + ", ".join(dict.fromkeys(report.error_codes)),
        )
    found = (declaration.get("adapter_id"), declaration.get("adapter_version"))
    for flag, given, value in (
        ("--id", adapter_id, found[0]),
        ("--version", adapter_version, found[1]),
    ):
        if given is not None and given != value:
            raise errors.ContractError(
                "pin.invalid_argument", f"{flag} {given} differs from {contract_file}'s {value}"
            )
    return str(found[0]), str(found[1]), contract_hash(declaration)


@click.group("pins")
def pins() -> None:
    """Pin-file tools: check is the CI gate (the pre-commit hook affidavit-pins)."""


_CHECK_HELP: Final = """Check every pin: exit 0 all hold, 1 does not hold, 3 revoked, 2 bad input.

\b
A pin holds when:
- its contract is found under --contracts-dir (default: the pin file's folder), lints clean
  and recomputes to the pinned contract_hash; a deleted, moved or renamed contract fails
  (pin.contract_missing: a manifest entry never stands in for it), and a *.json file there that
  may be a contract but is unreadable or not strict JSON fails too (exit 1), never a note;
- with --manifest, the signed entry matches (--require-signed: and its signatures are ok under
  --public-key-base64 / --publisher-doc, one of which it needs: exit 2 without);
- with --max-age, the manifest's signed time (signed_at, proven by its freshness_signature) is
  no older than the duration; a manifest without a proven signed time fails;
- with --registry, the registry's live manifest verifies under the same key and lists the pin.

\b
Lifecycle comes from the signed entries and the contracts, never from pin text: a revoked
contract exits 3, unless --allow-inspection-only is given and the pin was recorded with
adapter pin --allow-revoked-for-legacy-inspection. See docs/adr/0007-pin-gate-freshness.md.
"""


@pins.command("check", help=_CHECK_HELP)
@_pin_file_option("--file")
@click.option(
    "--contracts-dir",
    "contracts_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Where contract declarations live (repeatable). Default: the pin file's folder.",
)
@click.option(
    "--manifest",
    "manifest_source",
    default=None,
    metavar="PATH|URL",
    help="The signed manifest each pin's entry is checked against.",
)
@with_key_options
@click.option("--require-signed", is_flag=True, help="Every pin needs an ok manifest signature.")
@click.option(
    "--allow-inspection-only",
    is_flag=True,
    help="Let revoked pins recorded as inspection-only pass (legacy or forensic review only).",
)
@click.option(
    "--max-age",
    default=None,
    metavar="DURATION",
    help="Refuse a manifest signed longer ago than this (e.g. 36h, 7d; units s m h d w).",
)
@click.option(
    "--registry",
    "registry_url",
    default=None,
    metavar="URL",
    help="Also check the registry's live manifest (explicit network use; needs a key).",
)
@json_option
def pins_check(  # noqa: PLR0917
    pin_file: str,
    contracts_dirs: tuple[str, ...],
    manifest_source: str | None,
    public_key_base64: str | None,
    publisher_doc: str | None,
    require_signed: bool,
    allow_inspection_only: bool,
    max_age: str | None,
    registry_url: str | None,
    as_json: bool,
) -> None:
    pin_path = Path(pin_file)
    max_age_delta = parse_duration(max_age) if max_age is not None else None
    if max_age_delta is not None and not manifest_source:
        raise errors.UsageError("--max-age needs --manifest (the manifest whose age is checked)")
    if require_signed and not (public_key_base64 or publisher_doc):
        # Bad flags are exit 2 (the exit table, docs/guides/ci-gate.md): the gate cannot run.
        raise errors.UsageError(
            "--require-signed needs a trusted key: --publisher-doc FILE or --public-key-base64"
        )
    if require_signed and not (manifest_source or registry_url):
        raise errors.UsageError("--require-signed needs --manifest (or --registry)")
    parsed = read_object(pin_file, what="pin file")
    with labelled(pin_file, errors.ContractError, "pin.file_invalid"):
        pin_set = parse_pin_file(parsed)
    document, report = _verified_manifest(manifest_source, public_key_base64, publisher_doc)
    live_document, live_report = _live_manifest(registry_url, public_key_base64, publisher_doc)
    manifest_problems = _freshness_problems(
        document, manifest_source, public_key_base64, publisher_doc, max_age_delta
    )
    folders = [Path(d) for d in contracts_dirs] or [pin_path.parent]
    scan = scan_contract_files(folders, (p.adapter_id for p in pin_set.pins))
    searched = [f"{folder}/" if str(folder) != "." else "./" for folder in folders]
    result = check_pins(
        pin_set,
        scan.declarations,
        manifest=document,
        manifest_report=report,
        require_signed=require_signed,
        broken=scan.broken,
        live_manifest=live_document,
        live_report=live_report,
        allow_inspection_only=allow_inspection_only,
        manifest_problems=manifest_problems,
        pin_file_source=pin_file,
        manifest_source=manifest_source,
        live_source=registry_url,
        searched=searched,
    )
    skipped = list(scan.skipped)
    emit(
        as_json,
        {**result.to_json(CHECK_FLAGS), "pin_file": pin_file, "skipped_files": skipped},
        *_check_lines(pin_file, result, skipped),
    )
    failing = [f"{v.adapter_id}@{v.adapter_version}" for v in result.pins if not v.holds]
    if result.exit_code == 1:
        raise errors.ContractError(
            "pin.check_failed",
            f"{pin_file}: pins do not hold: "
            + (", ".join(failing) or "; ".join(render_problems(result.problems, CHECK_FLAGS))),
        )
    if result.exit_code == 3:
        raise errors.ContractError(
            "pin.check_revoked", f"{pin_file}: revoked: " + ", ".join(failing)
        )
    sys.stdout.flush()


def _marks(result: PinCheckReport) -> list[str]:
    """Each pin line's word: ``ok`` only when the whole check passes (issue 37 §4); a pin that
    holds by itself under a failing manifest (stale, unsigned) is ``held``, never ``ok`` above a
    ``FAILED`` result."""
    return [
        "FAIL"
        if verdict.problems
        else "REVOKED"
        if verdict.revoked_refused
        else "ok"
        if result.ok
        else "held"
        for verdict in result.pins
    ]


def _check_lines(pin_file: str, result: PinCheckReport, skipped: list[str]) -> list[str]:
    lines = [f"pins check: {pin_file} ({len(result.pins)} pins)"]
    for verdict, mark in zip(result.pins, _marks(result), strict=True):
        label = f"{verdict.adapter_id}@{verdict.adapter_version}"
        sources = ", ".join(verdict.sources) or "no source"
        lines.append(f"  {mark:<8}{label}  {verdict.contract_hash[:16]}  [{sources}]")
        lines += [f"{' ' * 10}problem: {p}" for p in render_problems(verdict.problems, CHECK_FLAGS)]
        lines += [f"{' ' * 10}note: {n}" for n in render_problems(verdict.notes, CHECK_FLAGS)]
    lines += [f"  problem: {p}" for p in render_problems(result.problems, CHECK_FLAGS)]
    lines += [f"  note: {n}" for n in render_problems(result.notes, CHECK_FLAGS)]
    lines += [f"  note: skipped {s}" for s in skipped]
    return [*lines, f"result: {'OK' if result.ok else 'FAILED'} (exit {result.exit_code})"]


def _freshness_problems(
    document: dict[str, Any] | None,
    manifest_source: str | None,
    public_key_base64: str | None,
    publisher_doc: str | None,
    max_age: datetime.timedelta | None,
) -> list[Problem]:
    """The manifest's freshness findings (docs/adr/0007-pin-gate-freshness.md)."""
    if document is None:
        return []
    freshness = check_freshness(document, resolve_key(public_key_base64, publisher_doc)[0])
    # A statement that is present must verify, with or without --max-age (tamper evidence).
    if freshness.hash_status == "mismatch" or freshness.signature_status == "bad":
        problem, code = freshness.problem, "manifest.verification_failed"
    elif max_age is not None:
        problem, code = freshness.age_problem(max_age, utc_now()), "pin.manifest_stale"
    else:
        return []
    if problem is None:
        return []
    return [Problem(f"manifest freshness: {problem}", code=code, file=manifest_source)]


def _live_manifest(
    registry_url: str | None, public_key_base64: str | None, publisher_doc: str | None
) -> tuple[dict[str, Any] | None, ManifestReport | None]:
    """The registry's live manifest, verified under the caller's key (never the registry's)."""
    if registry_url is None:
        return None, None
    key = resolve_key(public_key_base64, publisher_doc)[0]
    if key is None:
        raise errors.UsageError(
            "--registry needs --public-key-base64 or --publisher-doc: the live manifest is "
            "only evidence under a key you trust"
        )
    from affidavit.registry.clients.registry import fetch_manifest  # noqa: PLC0415 - network path only

    live = fetch_manifest(registry_url)
    return live, verify_manifest(live, public_key=key)


# -- the contract files the gate checks (seed 003 "Register"; docs/formats.md §1) -------------
#
# The runtime reads its contracts leniently (the last of two duplicate keys wins), so a file the
# strict parser refuses may still be a contract it runs: a *.json file that cannot be read or is
# not strict JSON is *broken*, and fails the gate when it may be a contract (its name ends with
# adapter_contract.json, or its bytes or a lenient parse name adapter_id or a pinned id, so an
# escape such as "adapter\\u005fid" hides nothing). Other broken files are listed as skipped.

_CONTRACT_SUFFIX: Final = "adapter_contract.json"
# Folders never searched for contracts (tooling and dependencies, not a project's own files).
_SKIP_DIRS: Final = frozenset({"node_modules", "venv", "__pycache__", "site-packages"})
MAX_CONTRACT_FILE_BYTES: Final = 1024 * 1024


def _json_files_under(folders: Iterable[Path]) -> Iterator[Path]:
    """Every ``*.json`` below ``folders``, sorted, outside hidden and dependency folders.

    Raises:
        ``io.unreadable``: a folder does not exist.
    """
    for folder in folders:
        if not folder.is_dir():
            raise errors.ParseError("io.unreadable", f"{folder}: not a folder")
        for path in sorted(folder.rglob("*.json")):
            relative = path.relative_to(folder).parts[:-1]
            if not any(part.startswith(".") or part in _SKIP_DIRS for part in relative):
                yield path


@dataclasses.dataclass(frozen=True, slots=True)
class ScanResult:
    """Declarations found, files that may be contracts but cannot be read, and skipped files."""

    declarations: tuple[Declaration, ...]
    broken: tuple[BrokenDeclaration, ...]
    skipped: tuple[str, ...]


def scan_contract_files(folders: Iterable[Path], pinned_ids: Iterable[str]) -> ScanResult:
    """Scan ``folders`` recursively for ``*.json`` contract declarations.

    A strict-JSON object with string ``adapter_id`` and ``adapter_version`` and an
    ``output_fields`` key is a declaration (manifest entries and attest documents are not).

    Raises:
        ``io.unreadable``: a folder does not exist.
    """
    ids = sorted(set(pinned_ids))
    found: list[Declaration] = []
    broken: list[BrokenDeclaration] = []
    skipped: list[str] = []
    for path in _json_files_under(folders):
        data = b""
        try:
            data = read_capped(path, MAX_CONTRACT_FILE_BYTES)
            body = _strict(data)
        except errors.ParseError as e:
            reason = f"{e.code}: {e.message.removeprefix(f'{path}: ')}"
        else:
            if (
                isinstance(body, dict)
                and isinstance(body.get("adapter_id"), str)
                and isinstance(body.get("adapter_version"), str)
                and "output_fields" in body  # a bare manifest entry has no output_fields
            ):
                found.append(Declaration(source=str(path), body=body))
            continue
        named = _named_ids(data, ids)
        if path.name.endswith(_CONTRACT_SUFFIX) or named is not None:
            broken.append(BrokenDeclaration(str(path), reason, adapter_ids=named or frozenset()))
        else:
            skipped.append(f"{path}: {reason}")
    return ScanResult(tuple(found), tuple(broken), tuple(skipped))


def _strict(data: bytes) -> Any:
    if len(data) > MAX_CONTRACT_FILE_BYTES:  # its first bytes still say whether it may be one
        raise errors.ParseError("json.too_large", f"over {MAX_CONTRACT_FILE_BYTES} bytes")
    return loads(data)  # a strict-JSON error's message carries line and column


def _named_ids(data: bytes, ids: list[str]) -> frozenset[str] | None:
    """The pinned ids a broken file may declare (empty: unknown), or None when it shows no sign
    of being a contract at all."""
    named = {i for i in ids if i.encode() in data}
    lenient = _lenient_adapter_ids(data)
    if lenient is not None:
        named |= {i for i in lenient if i in ids}
    if named:
        return frozenset(named)
    if b"adapter_id" in data or lenient:
        return frozenset()
    return None


def _lenient_adapter_ids(data: bytes) -> set[str] | None:
    # The runtime's reading: json.loads, duplicates allowed. Every adapter_id value at any depth.
    seen: set[str] = set()

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        for key, value in pairs:
            if key == "adapter_id":
                seen.add(value if isinstance(value, str) else repr(value))
        return {}

    try:
        json.loads(data.decode("utf-8", "replace"), object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return seen or None
    return seen
