"""``affidavit adapter scaffold | lint | bump | diff``: author AdapterContracts (seed 003), with
the verbs, flags and JSON keys of ``aigentsy adapter``.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.plugins import installed_validators
from affidavit.cli._common import emit_json, exit_with, json_option, read_json_object
from affidavit.verify import errors
from affidavit.verify.contracts.contract import (
    CONTRACT_HASH_FIELDS,
    INPUT_SCHEMA_HASH_FIELDS,
    LIFECYCLE_FIELDS,
    ContractHashes,
    ContractReport,
    contract_hashes,
    lint_contract,
)
from affidavit.verify.contracts.schema import is_adapter_id, is_field_name, is_semver

__all__ = ["bump", "diff", "lint", "scaffold"]

CONTRACT_FILE: Final = "adapter_contract.json"
# scaffold --validator FAMILY -> (validator_name, validator_version) written into the contract.
VALIDATOR_FAMILIES: Final = {"boolean": ("starter_boolean_validator", "1.0.0")}
_HASHED: Final = frozenset(CONTRACT_HASH_FIELDS) | frozenset(INPUT_SCHEMA_HASH_FIELDS)
_DECLARED_HASHES: Final = ("contract_hash", "input_schema_hash")
_SCAFFOLD_NOTE: Final = (
    "Written by `affidavit adapter scaffold`. List in output_fields every signal your adapter "
    "emits and in allowed_policy_fields the ones AcceptancePolicy may read. After editing, "
    "the hashes no longer match: `affidavit adapter bump` to a new version recomputes them, "
    "and `affidavit adapter lint` checks the result. Keys starting with '_' are ignored."
)


# Deprecated, hidden: text is the default and --json the machine form (style.md §11);
# --format json|text is kept for the scripts written when JSON was the default.
_format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["json", "text"]),
    default=None,
    hidden=True,
    help="Deprecated: --format json is --json; text is the default.",
)


def _emit(
    document: Mapping[str, Any], as_json: bool, output_format: str | None, text: list[str]
) -> None:
    if as_json or output_format == "json":
        emit_json(dict(document))
    else:
        click.echo("\n".join(text))


def _dump(declaration: Mapping[str, Any]) -> bytes:
    return (json.dumps(declaration, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _rehash(declaration: dict[str, Any]) -> ContractHashes:
    """Write both recomputed hashes into ``declaration``."""
    hashes = contract_hashes(declaration)
    declaration["input_schema_hash"] = hashes.input_schema_hash
    declaration["contract_hash"] = hashes.contract_hash
    return hashes


def _hash_lines(hashes: ContractHashes | ContractReport) -> list[str]:
    return [
        f"  contract_hash      {hashes.contract_hash}",
        f"  input_schema_hash  {hashes.input_schema_hash}",
    ]


def _scaffold_fields(fields: str) -> list[str]:
    names = [name.strip() for name in fields.split(",") if name.strip()]
    if not names:
        raise errors.UsageError("--fields names no field")
    for name in names:
        if not is_field_name(name):
            raise errors.UsageError(f"--fields: {name!r} is not snake_case")
    if len(set(names)) != len(names):
        raise errors.UsageError("--fields lists a field twice")
    return names


@click.command("scaffold")
@click.option("--id", "adapter_id", required=True, help="Reverse-DNS adapter_id.")
@click.option("--version", "adapter_version", default="0.1.0", show_default=True)
@click.option(
    "--validator",
    type=click.Choice(sorted(VALIDATOR_FAMILIES)),
    default="boolean",
    show_default=True,
    help="Validator family.",
)
@click.option("--out", default=".", show_default=True, help="Directory for adapter_contract.json.")
@click.option(
    "--fields",
    default="signal_a,signal_b,signal_c",
    show_default=True,
    help="Comma-separated snake_case output fields (all allowed into policy).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing adapter_contract.json.")
@_format_option
@json_option
def scaffold(
    *,
    adapter_id: str,
    adapter_version: str,
    validator: str,
    out: str,
    fields: str,
    force: bool,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Write a stub adapter_contract.json with both hashes computed."""
    if not is_adapter_id(adapter_id):
        raise errors.UsageError(f"--id {adapter_id!r} is not reverse-DNS (e.g. acme.eval.v0)")
    if not is_semver(adapter_version):
        raise errors.UsageError(f"--version {adapter_version!r} is not MAJOR.MINOR.PATCH")
    names = _scaffold_fields(fields)
    validator_name, validator_version = VALIDATOR_FAMILIES[validator]
    declaration: dict[str, Any] = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": adapter_id,
        "adapter_version": adapter_version,
        "input_schema_version": "1.0.0",
        "output_fields": names,
        "allowed_policy_fields": list(names),
        "validator_name": validator_name,
        "validator_version": validator_version,
    }
    hashes = _rehash(declaration)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    target = (folder / CONTRACT_FILE).resolve()
    if target.exists() and not force:
        raise errors.ParseError("io.exists", f"{target} exists; pass --force to overwrite it")
    atomic_write(target, _dump({"_comment": _SCAFFOLD_NOTE, **declaration}))
    document = {
        "ok": True,
        "adapter_id": adapter_id,
        "out": str(target),
        "contract_hash": hashes.contract_hash,
        "input_schema_hash": hashes.input_schema_hash,
        "next": [
            f"affidavit adapter lint {target}",
            "edit output_fields / allowed_policy_fields to match your adapter",
            "affidavit adapter bump <file> --version X.Y.Z after editing (recomputes the hashes)",
        ],
    }
    _emit(document, as_json, output_format, [f"wrote {target}", *_hash_lines(hashes)])


def _lint_text(source: str, report: ContractReport) -> list[str]:
    lines = [f"{source}: {'ok' if report.ok else 'INVALID'} ({report.adapter_id or '?'})"]
    lines += [f"  error {issue.code}: {issue.message}" for issue in report.errors]
    lines += [f"  warning {issue.code}: {issue.message}" for issue in report.warnings]
    return lines + _hash_lines(report)


@click.command("lint")
@_format_option
@json_option
@click.argument("path", metavar="PATH|-")
def lint(output_format: str | None, as_json: bool, path: str) -> None:
    """Lint a contract: schema, allowed ⊆ output, both hashes, lifecycle, known validator."""
    declaration = read_json_object(path, what="adapter contract")
    report = lint_contract(declaration, validators=installed_validators())
    _emit(report.to_json(), as_json, output_format, _lint_text(path, report))
    exit_with(0 if report.ok else 1)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@click.command("bump")
@click.argument("path")
@click.option("--version", "adapter_version", required=True, help="New adapter_version (semver).")
@_format_option
@json_option
def bump(path: str, adapter_version: str, output_format: str | None, as_json: bool) -> None:
    """Raise adapter_version and recompute both hashes, rewriting the file atomically."""
    if not is_semver(adapter_version):
        raise errors.UsageError(f"--version {adapter_version!r} is not MAJOR.MINOR.PATCH")
    declaration = read_json_object(path, what="adapter contract")
    previous = declaration.get("adapter_version", "")
    if is_semver(previous) and _version_tuple(adapter_version) <= _version_tuple(previous):
        raise errors.ContractError(
            "contract.version_not_increasing",
            f"{path}: adapter_version {previous} -> {adapter_version} does not increase",
            details={"previous_version": previous, "new_version": adapter_version},
        )
    declaration["adapter_version"] = adapter_version
    hashes = _rehash(declaration)
    report = lint_contract(declaration)
    if not report.ok:  # refuse to write a contract that still does not lint: nothing is lost
        _emit(report.to_json(), as_json, output_format, _lint_text(path, report))
        exit_with(1)
        return
    mode = stat.S_IMODE(os.stat(path).st_mode)
    atomic_write(path, _dump(declaration), mode=mode)
    document = {
        "ok": True,
        "adapter_id": report.adapter_id,
        "previous_version": previous,
        "new_version": adapter_version,
        "new_contract_hash": hashes.contract_hash,
        "new_input_schema_hash": hashes.input_schema_hash,
        "path": path,
        "contract_hash": hashes.contract_hash,
        "input_schema_hash": hashes.input_schema_hash,
        "warnings": [issue.message for issue in report.warnings],
    }
    text = [f"{path}: {report.adapter_id} {previous} -> {adapter_version}", *_hash_lines(hashes)]
    _emit(document, as_json, output_format, text)


def _kind(field: str) -> str:
    # seed 003: lifecycle fields are discovery-only and never change a hash.
    if field in _HASHED:
        return "hash-impacting"
    if field in LIFECYCLE_FIELDS:
        return "lifecycle"
    if field in _DECLARED_HASHES:
        return "declared-hash"
    return "extra"


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for field in sorted(set(old) | set(new)):
        if field not in old or field not in new:
            change = "added" if field not in old else "removed"
        # Compare canonical bytes, not Python equality (1 == 1.0 == true in Python).
        elif json.dumps(old[field], sort_keys=True) != json.dumps(new[field], sort_keys=True):
            change = "changed"
        else:
            continue
        changes.append(
            {
                "field": field,
                "kind": _kind(field),
                "hash_relevant": field in _HASHED,
                "old": old.get(field),
                "new": new.get(field),
                "change": change,
            }
        )
    return changes


def _without_comments(declaration: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in declaration.items() if not key.startswith("_")}


@click.command("diff")
@click.argument("old_path", metavar="OLD")
@click.argument("new_path", metavar="NEW")
@_format_option
@json_option
def diff(old_path: str, new_path: str, output_format: str | None, as_json: bool) -> None:
    """Structural diff of two contracts; lifecycle changes are flagged as hash-irrelevant.

    Exit 0 when the files declare the same contract, 1 when any field differs.
    """
    old = _without_comments(read_json_object(old_path, what="adapter contract"))
    new = _without_comments(read_json_object(new_path, what="adapter contract"))
    changes = _changes(old, new)
    old_hashes, new_hashes = contract_hashes(old), contract_hashes(new)
    document = {
        "ok": True,
        "diff_field_count": len(changes),
        "changes": changes,
        "recomputed_old_contract_hash": old_hashes.contract_hash,
        "recomputed_new_contract_hash": new_hashes.contract_hash,
        "hash_changed": old_hashes.contract_hash != new_hashes.contract_hash,
        "recomputed_old_input_schema_hash": old_hashes.input_schema_hash,
        "recomputed_new_input_schema_hash": new_hashes.input_schema_hash,
        "input_schema_hash_changed": old_hashes.input_schema_hash != new_hashes.input_schema_hash,
        "note": (
            "Lifecycle fields and '_' keys are outside both hashes; a changed contract_hash "
            "means a hashed field changed, which needs a new adapter_version."
        ),
    }
    text = [f"{old_path} -> {new_path}: {len(changes)} field(s) differ"]
    text += [
        f"  {c['field']} [{c['kind']}]: {json.dumps(c['old'])} -> {json.dumps(c['new'])}"
        for c in changes
    ]
    text.append(
        f"  recomputed contract_hash {old_hashes.contract_hash} -> {new_hashes.contract_hash}"
    )
    _emit(document, as_json, output_format, text)
    exit_with(1 if changes else 0)
