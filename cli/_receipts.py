"""Folders of transformation receipts, read for the command line: the bulk layout of ``verify
receipt DIR`` (docs/formats.md "Transformation receipts", "Bulk layout") and the work of one
receipt in a ``--jobs`` worker, and every receipt file of a folder (``facts audit --receipts
DIR``). The library verifies bytes; folders, files and workers are the command line's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final, NamedTuple

from affidavit.attest.plugins import transforms_for
from affidavit.cli._common import read_artefact
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.receipts.format import MAX_RECEIPT_BYTES, Receipt, load_receipt
from affidavit.verify.receipts.verify import unreadable_receipt, verify_receipt
from affidavit.verify.results import Result

__all__ = [
    "RECEIPT_SUFFIX",
    "Layout",
    "Task",
    "find_receipts",
    "init_worker",
    "receipt_files",
    "run_task",
    "source_path",
]

RECEIPT_SUFFIX: Final = ".receipt.json"


class Layout(NamedTuple):
    """The three roots of a bulk run."""

    receipts: str
    sources: str
    contents: str


class Task(NamedTuple):
    """One receipt of a bulk run: its path, and relative path under the receipts root."""

    receipt: str
    relative: str
    layout: Layout


def find_receipts(layout: Layout) -> list[Task]:
    """Every ``*.receipt.json`` under ``layout.receipts``.

    Raises:
        ``io.unreadable``: the receipts root is not a folder.
    """
    return [
        Task(path, relative, layout) for relative, path in _files(layout.receipts, RECEIPT_SUFFIX)
    ]


def receipt_files(folder: str) -> list[tuple[str, bytes | errors.AffidavitError]]:
    """Every ``*.json`` under ``folder`` by relative path, with its bytes (at most
    :data:`~affidavit.verify.receipts.format.MAX_RECEIPT_BYTES`) or the error reading it.

    Raises:
        ``io.unreadable``: ``folder`` is not a folder.
    """
    found: list[tuple[str, bytes | errors.AffidavitError]] = []
    for _relative, path in _files(folder, ".json"):
        try:
            found.append((path, read_artefact(path, max_bytes=MAX_RECEIPT_BYTES)))
        except errors.ParseError as e:
            found.append((path, e))
    return found


def _files(root: str, suffix: str) -> list[tuple[str, str]]:
    """``(relative POSIX path, path)`` of every file under ``root`` named ``*<suffix>``, sorted."""
    if not os.path.isdir(root):
        raise errors.ParseError("io.unreadable", f"{root}: not a folder")
    found: list[tuple[str, str]] = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            if name.endswith(suffix) and len(name) > len(suffix):
                path = os.path.join(folder, name)
                if os.path.isfile(path):
                    found.append((os.path.relpath(path, root).replace(os.sep, "/"), path))
    return sorted(found)


def source_path(receipt: Receipt, sources: str, *, what: str) -> str:
    """Where the receipt's source is: ``sources/<source.uri>``.

    Raises:
        ``receipt.layout_invalid``: no ``source.uri``, or one that is not a safe relative path.
    """
    uri = receipt.source_uri
    if uri is None:
        raise _layout(what, "the receipt has no source.uri: its source cannot be located")
    parts = uri.split("/")
    if uri.startswith("/") or "\\" in uri or any(p in {"", ".", ".."} for p in parts):
        raise _layout(what, f"source.uri {uri!r} is not a relative path inside the source root")
    path = os.path.join(sources, *parts)
    root = os.path.realpath(sources)
    if os.path.commonpath([root, os.path.realpath(path)]) != root:
        raise _layout(what, f"source.uri {uri!r} leads out of the source root")
    return path


def _layout(what: str, message: str) -> errors.ReceiptError:
    return errors.ReceiptError("receipt.layout_invalid", f"{what}: {message}")


# -- the work of one receipt (in this process, or in a --jobs worker) ---------------------------

_KEYS: tuple[Ed25519PublicKey, ...] = ()


def init_worker(raw_keys: Sequence[bytes]) -> None:
    """Set this process's trusted keys (a pool's initializer)."""
    global _KEYS  # noqa: PLW0603 - one trust set per worker process
    _KEYS = tuple(Ed25519PublicKey(raw) for raw in raw_keys)


def run_task(task: Task) -> Result:
    """Read one receipt and the files it names, and verify it; never raises for bad input."""
    label = task.receipt
    try:
        receipt = load_receipt(read_artefact(label, max_bytes=MAX_RECEIPT_BYTES), what=label)
    except (errors.ReceiptError, errors.ParseError, errors.CanonicalError) as e:
        return unreadable_receipt(label, e)
    content = os.path.join(task.layout.contents, *task.relative[: -len(RECEIPT_SUFFIX)].split("/"))
    files: tuple[tuple[str, str], ...] = (("content", content),)
    try:
        source = source_path(receipt, task.layout.sources, what=label)
        files = (("source", source), ("content", content))
        source_bytes, content_bytes = read_artefact(source), read_artefact(content)
    except (errors.ReceiptError, errors.ParseError) as e:
        return unreadable_receipt(label, e, files)
    return verify_receipt(  # the installed plugins too, loaded when the chain needs one
        receipt, source_bytes, content_bytes, None, _KEYS, transforms_for, label=label, files=files
    )
