"""Find the local contract files the pin gate must check (seed 003 "Register"; docs/formats.md §1).

The runtime loads every ``*.adapter_contract.json`` under its contracts folder with a lenient
parser (the last of two duplicate keys wins), so a file the strict parser refuses may still be the
contract the runtime runs. The gate therefore never skips such a file silently: a ``*.json`` file
under the scanned folders that cannot be read or is not strict JSON is *broken*, and a broken file
is a failure (never a note) when it may be a contract:

* its name ends with ``adapter_contract.json`` (the seed's naming rule), or
* its bytes contain ``adapter_id`` or a pinned adapter id, or a lenient parse finds an
  ``adapter_id`` key at any depth (so escapes such as ``"adapter\\u005fid"`` do not hide it).

Other broken files (a ``package.json`` with a duplicate key) are listed as skipped.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from affidavit.attest.host import read_capped
from affidavit.verify import errors
from affidavit.verify.contracts.pins import BrokenDeclaration, Declaration
from affidavit.verify.json.strict import loads

__all__ = ["MAX_CONTRACT_FILE_BYTES", "ScanResult", "scan_contract_files"]

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
        _classify(path, ids, found, broken, skipped)
    return ScanResult(tuple(found), tuple(broken), tuple(skipped))


def _classify(
    path: Path,
    ids: list[str],
    found: list[Declaration],
    broken: list[BrokenDeclaration],
    skipped: list[str],
) -> None:
    data = b""
    try:
        data = read_capped(path, MAX_CONTRACT_FILE_BYTES)
    except errors.ParseError as e:
        reason = f"{e.code}: {e.message.removeprefix(f'{path}: ')}"
    else:
        if len(data) > MAX_CONTRACT_FILE_BYTES:  # its first bytes still say whether it may be one
            reason = f"json.too_large: over {MAX_CONTRACT_FILE_BYTES} bytes"
        else:
            try:
                body = loads(data)
            except errors.ParseError as e:
                reason = f"{e.code}: {e.message}"  # the message carries line and column
            else:
                if (
                    isinstance(body, dict)
                    and isinstance(body.get("adapter_id"), str)
                    and isinstance(body.get("adapter_version"), str)
                    and "output_fields" in body  # a bare manifest entry has no output_fields
                ):
                    found.append(Declaration(source=str(path), body=body))
                return
    named = _named_ids(data, ids)
    if path.name.endswith(_CONTRACT_SUFFIX) or named is not None:
        broken.append(
            BrokenDeclaration(source=str(path), reason=reason, adapter_ids=named or frozenset())
        )
    else:
        skipped.append(f"{path}: {reason}")


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
