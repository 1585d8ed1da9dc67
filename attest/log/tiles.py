"""The transparency log as C2SP tlog-tiles (https://c2sp.org/tlog-tiles): the bytes of any tile or
entry bundle, and a writer that publishes a checkpoint's tree as static files.

>>> import os, tempfile, pathlib
>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.log.transparency import TransparencyLog
>>> from affidavit.verify.tlog.tiles import TiledTree
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> key = derive_test_key("tiles doctest")                    # TEST-ONLY key
>>> log = TransparencyLog.create(folder / "log.db", key, "example.com/log")
>>> _ = log.append([b"a", b"b", b"c"])
>>> report = write_tiles(log, folder / "tiles", log.checkpoint())
>>> report.tiles_written, report.bundles_written, sorted(os.listdir(folder / "tiles"))
(1, 1, ['checkpoint', 'tile'])
>>> tree = TiledTree(folder_fetch(folder / "tiles"), 3, log.root())  # binds every tile read
>>> tree.inclusion_proof(1) == list(log.inclusion_proof(1, 3).path)
True
>>> log.close()

A tile at level ``L``, index ``N`` is a direct read of ``log_nodes``: the stored hashes at tree
level ``8·L``, positions ``256·N .. 256·N + W - 1``. An entry bundle is written only when every
leaf has data and fits a uint16 length; other bundles are skipped and counted.
:func:`write_tiles` writes ``DIR/checkpoint`` last, after every file it covers is fsynced, so a
client never sees a checkpoint whose files are not there yet (docs/transparency.md, "What
`log tiles` writes, and its rules").
"""

from __future__ import annotations

import bisect
import contextlib
import os
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.files import folder_lock, fsync_dir
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.log.tree import stored_size
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    NoteVerifier,
    parse_checkpoint_body,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.tlog.layout import (
    TILE_HEIGHT,
    TILE_WIDTH,
    TileRef,
    bundles_for_size,
    encode_bundle,
    tiles_for_size,
)
from affidavit.verify.tlog.rotation import ROTATIONS_PATH, encode_rotations

__all__ = [
    "CHECKPOINT_NAME",
    "TilesReport",
    "folder_fetch",
    "rotations_bytes",
    "tile_bytes",
    "write_tiles",
]

CHECKPOINT_NAME: Final = "checkpoint"  # tlog-tiles, "Checkpoints": <prefix>/checkpoint
_CHUNK_TILES: Final = 64  # tiles read per query (64 x 256 rows)
_FILE_MODE: Final = 0o644  # public static files
_WRITERS: Final = 8  # files written (and fsynced) at once
_IN_FLIGHT: Final = 64  # files handed to the writers before waiting for the oldest


@dataclass(slots=True)
class TilesReport:
    """What :func:`write_tiles` did."""

    directory: str
    tree_size: int
    previous_size: int  # the size of DIR/checkpoint before this run (0: there was none)
    tiles_written: int = 0
    tiles_kept: int = 0  # already present with the same bytes (after an interrupted run)
    bundles_written: int = 0
    bundles_kept: int = 0
    bundles_skipped: int = 0  # a leaf without data (appended by hash) or an entry > 65,535 bytes
    bytes_written: int = 0
    checkpoint_written: bool = False  # False: DIR/checkpoint already held these exact bytes
    skipped_bundles: list[str] = field(default_factory=list)  # their paths

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object (``log tiles --json``)."""
        return asdict(self)


# -- reading tiles from the log -----------------------------------------------------------------


def tile_bytes(log: TransparencyLog, ref: TileRef) -> bytes | None:
    """The bytes of tile or entry bundle ``ref`` (as :func:`write_tiles` writes them), or None
    when it is beyond the current size or a bundle that cannot be written.

    Raises:
        ``log.integrity``: a node the tile needs is missing from the database.
    """
    with log.store.read() as db:
        size = stored_size(db)
        count = size >> (TILE_HEIGHT * ref.level)  # hashes at this tile level
        if ref.index * TILE_WIDTH + ref.width > count:
            return None
    if ref.entries:
        return next(_bundles(log, [ref]))[1]
    return next(_tiles(log, ref.level, [ref]))[1]


def _tiles(
    log: TransparencyLog, level: int, refs: list[TileRef]
) -> Iterator[tuple[TileRef, bytes]]:
    """The bytes of ``refs`` (consecutive tiles of one level, ascending), read in chunks."""
    height = TILE_HEIGHT * level
    for batch, low, high in _batches(refs):
        with log.store.read() as db:
            rows = db.execute(
                "SELECT hash FROM log_nodes"
                " WHERE level = $1 AND idx >= $2 AND idx < $3 ORDER BY idx",
                (height, low, high),
            ).fetchall()
        if len(rows) != high - low:  # (level, idx) is the key: the count proves none is missing
            raise LogError(
                "log.integrity",
                f"{log.store.path}: stored nodes of {batch[0].path} .. {batch[-1].path} are "
                "missing",
                details={"path": batch[0].path},
            )
        for ref in batch:
            first = ref.index * TILE_WIDTH - low
            data = b"".join([row[0] for row in rows[first : first + ref.width]])
            if len(data) != ref.byte_length:  # pragma: no cover - only if edited by hand
                raise LogError(
                    "log.integrity",
                    f"{log.store.path}: a stored node of {ref.path} is not 32 bytes",
                    details={"path": ref.path},
                )
            yield ref, data


def _batches(refs: list[TileRef]) -> Iterator[tuple[list[TileRef], int, int]]:
    """``refs`` :data:`_CHUNK_TILES` at a time, with the positions ``[low, high)`` they cover."""
    for offset in range(0, len(refs), _CHUNK_TILES):
        batch = refs[offset : offset + _CHUNK_TILES]
        yield batch, batch[0].index * TILE_WIDTH, batch[-1].index * TILE_WIDTH + batch[-1].width


def _bundles(log: TransparencyLog, refs: list[TileRef]) -> Iterator[tuple[TileRef, bytes | None]]:
    """The bytes of entry bundles ``refs`` (consecutive, ascending), None for one with a leaf
    appended by hash only or an entry over 65,535 bytes."""
    for batch, low, high in _batches(refs):
        with log.store.read() as db:
            rows = db.execute(
                "SELECT idx, data FROM log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx",
                (low, high),
            ).fetchall()
        complete = len(rows) == high - low  # idx is the key: every leaf here has data
        positions = [] if complete else [int(row[0]) for row in rows]  # some appended by hash
        for ref in batch:
            start = ref.index * TILE_WIDTH
            if complete:
                first, last = start - low, start - low + ref.width
            else:
                first = bisect.bisect_left(positions, start)
                last = bisect.bisect_left(positions, start + ref.width)
            if last - first != ref.width:
                yield ref, None  # a leaf appended by hash only
                continue
            try:
                yield ref, encode_bundle([row[1] for row in rows[first:last]])  # "Log entries"
            except errors.ProofError as e:
                if e.code != "tlog.entry_too_large":  # pragma: no cover - the only one raised
                    raise
                yield ref, None


# -- reading a folder ---------------------------------------------------------------------------


def folder_fetch(directory: str | Path) -> Callable[[str], bytes | None]:
    """A :data:`affidavit.verify.tlog.tiles.Fetch` over a tlog-tiles folder: ``path`` -> the
    file's bytes, or None when absent; a path that is absolute or climbs out is ``usage.invalid``.
    """
    root = Path(directory)

    def fetch(path: str) -> bytes | None:
        parts = path.split("/")
        if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise errors.UsageError(f"{path!r} is not a relative tile path")
        try:
            return root.joinpath(*parts).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    return fetch


# -- writing a folder ---------------------------------------------------------------------------


def write_tiles(log: TransparencyLog, directory: str | Path, note: str) -> TilesReport:
    """Publish the tree of checkpoint ``note`` (a note of this log) as tiles in ``directory``
    (module docstring).

    Raises:
        ``checkpoint.*``: ``note`` is malformed or not signed by a key of the log under its
            origin.
        ``log.checkpoint_foreign``: the note's size or root is not this log's.
        ``log.tiles_conflict``: the folder's checkpoint is another log's, newer, or
            forked from this log, or a file present differs from this log's bytes.
        ``log.integrity``: a stored node is missing.
        OSError: the folder cannot be written.
    """
    checkpoint, verifiers = _own_checkpoint(log, note)
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    with folder_lock(root), _Files(root) as files:  # one writer per folder
        previous = _published_size(log, root, checkpoint, verifiers)
        report = TilesReport(str(root), checkpoint.tree_size, previous)
        size = checkpoint.tree_size
        by_level: dict[int, list[TileRef]] = {}
        for ref in tiles_for_size(size, since=previous):
            by_level.setdefault(ref.level, []).append(ref)
        for level, refs in by_level.items():
            for ref, data in _tiles(log, level, refs):
                files.put(ref.path, data, "tiles")
        for ref, bundle in _bundles(log, bundles_for_size(size, since=previous)):
            if bundle is None:
                report.bundles_skipped += 1
                report.skipped_bundles.append(ref.path)
            else:
                files.put(ref.path, bundle, "bundles")
        files.sync()  # every tile durable before the checkpoint that needs it is visible
        report.tiles_written, report.tiles_kept = files.written["tiles"], files.kept["tiles"]
        report.bundles_written = files.written["bundles"]
        report.bundles_kept = files.kept["bundles"]
        rotations = rotations_bytes(log)
        if rotations is not None:  # before the checkpoint a new key may have signed
            _replace_rotations(root, files, rotations)
            files.sync()
        encoded = note.encode("utf-8")
        target = root / CHECKPOINT_NAME
        if not target.exists() or target.read_bytes() != encoded:
            files.replace(CHECKPOINT_NAME, encoded)  # tlog-tiles, "Checkpoints": last
            files.sync()
            report.checkpoint_written = True
        report.bytes_written = files.bytes_written
    return report


def rotations_bytes(log: TransparencyLog) -> bytes | None:
    """The log's rotation statements as :data:`~affidavit.verify.tlog.rotation.ROTATIONS_PATH`
    holds them, or None when the key never rotated (docs/adr/0011)."""
    statements = [entry.statement for entry in log.key_history() if entry.statement is not None]
    return encode_rotations(statements) if statements else None


def _replace_rotations(root: Path, files: _Files, data: bytes) -> None:
    """Write ``ROTATIONS_PATH``, which only grows: what is there must be a prefix of ``data``."""
    target = root / ROTATIONS_PATH
    try:
        present = target.read_bytes()
    except FileNotFoundError:
        present = b""
    if not data.startswith(present):
        raise LogError(
            "log.tiles_conflict",
            f"{target} holds rotations that are not this log's: refusing to overwrite",
            details={"path": ROTATIONS_PATH},
        )
    if present != data:
        files.replace(ROTATIONS_PATH, data)


def _own_checkpoint(log: TransparencyLog, note: str) -> tuple[Checkpoint, list[NoteVerifier]]:
    """The checkpoint of ``note``, verified under any of the log's keys with its origin as key
    name, and checked against the log's tree."""
    origin = parse_checkpoint_body(parse_note(note).text).origin
    verifiers = [
        NoteVerifier(origin, key_id_c2sp(origin, entry.public_key.raw), entry.public_key)
        for entry in log.key_history()
    ]
    checkpoint = verify_checkpoint(note, verifiers, origin=origin).checkpoint
    if not log.has_head(checkpoint.tree_size, checkpoint.root_hash):
        raise LogError(
            "log.checkpoint_foreign",
            f"checkpoint of size {checkpoint.tree_size} is not a tree head of this log "
            f"(size {log.size})",
        )
    return checkpoint, verifiers


def _published_size(
    log: TransparencyLog, root: Path, checkpoint: Checkpoint, verifiers: list[NoteVerifier]
) -> int:
    """The size of the folder's checkpoint (0: none), refusing one that is not this log's under
    this origin, is newer than ``checkpoint``, or is not a head of this log."""
    path = root / CHECKPOINT_NAME
    try:
        published = path.read_bytes()
    except FileNotFoundError:
        return 0
    try:
        old = verify_checkpoint(published, verifiers, origin=checkpoint.origin).checkpoint
    except errors.AffidavitError as e:
        raise LogError(
            "log.tiles_conflict",
            f"{path} is not a checkpoint of this log under origin {checkpoint.origin!r} "
            f"({e.code}): refusing to write into another log's folder",
            details={"path": str(path)},
        ) from e
    if old.tree_size > checkpoint.tree_size:
        raise LogError(
            "log.tiles_conflict",
            f"{path} is of size {old.tree_size}, newer than the checkpoint to write "
            f"(size {checkpoint.tree_size}): refusing to move the published tree back",
            details={"path": str(path), "published_size": old.tree_size},
        )
    if not log.has_head(old.tree_size, old.root_hash):
        raise LogError(
            "log.tiles_conflict",
            f"{path} (size {old.tree_size}) is not a tree head of this log: a forked tree",
            details={"path": str(path), "published_size": old.tree_size},
        )
    return old.tree_size


class _Files:
    """Atomic, never-overwriting file writes under one folder, on a small thread pool (several
    fsyncs in flight let the file system commit them together); folder fsyncs in :meth:`sync`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bytes_written = 0
        self.written: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()
        self._made: set[str] = set()
        self._dirty: set[str] = set()
        self._pool = ThreadPoolExecutor(_WRITERS, thread_name_prefix="affidavit-tiles")
        self._pending: deque[tuple[str, int, Future[bool]]] = deque()

    def __enter__(self) -> _Files:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def put(self, relative: str, data: bytes, kind: str) -> None:
        """Write ``data`` at ``relative`` unless present with these bytes (counted under
        ``kind``); errors surface from a later :meth:`put` or from :meth:`sync`."""
        folder = os.path.dirname(os.path.join(self.root, relative))
        self._mkdirs(folder)
        self._dirty.add(folder)
        future = self._pool.submit(self._put, relative, data)
        self._pending.append((kind, len(data), future))
        if len(self._pending) >= _IN_FLIGHT:
            self._collect()

    def _collect(self) -> None:
        kind, length, future = self._pending.popleft()
        if future.result():
            self.written[kind] += 1
            self.bytes_written += length
        else:
            self.kept[kind] += 1

    def _put(self, relative: str, data: bytes) -> bool:
        target = os.path.join(self.root, relative)
        try:
            with open(target, "rb") as existing:
                present = existing.read(len(data) + 1)
        except FileNotFoundError:
            pass
        else:
            if present != data:
                raise LogError(
                    "log.tiles_conflict",
                    f"{target} exists with other bytes than this log's: refusing to overwrite",
                    details={"path": relative},
                )
            return False
        self._write(target, data)
        return True

    def replace(self, relative: str, data: bytes) -> None:
        """Write ``data`` at ``relative`` atomically, replacing what is there (on this thread)."""
        target = os.path.join(self.root, relative)
        folder = os.path.dirname(target)
        self._mkdirs(folder)
        self._write(target, data)
        self._dirty.add(folder)
        self.bytes_written += len(data)

    @staticmethod
    def _write(target: str, data: bytes) -> None:
        """A temporary file beside ``target``, written, fsynced, renamed over it; its name is
        fixed per target, so a rerun after a crash reuses what the crash left."""
        folder, name = os.path.split(target)
        temporary = os.path.join(folder, f".{name}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        handle = os.open(temporary, flags, _FILE_MODE)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view) :]
            os.fsync(handle)
        finally:
            os.close(handle)
        os.replace(temporary, target)

    def _mkdirs(self, folder: str) -> None:
        if folder in self._made:
            return
        parent = os.path.dirname(folder)
        if not os.path.isdir(folder):
            self._mkdirs(parent)
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder)
            self._dirty.add(parent)  # the new folder's entry
        self._made.add(folder)

    def sync(self) -> None:
        """Wait for every write, then fsync (in parallel) every folder that may have a new entry."""
        while self._pending:
            self._collect()
        list(self._pool.map(_sync_folder, sorted(self._dirty)))
        self._dirty.clear()


def _sync_folder(folder: str) -> None:
    """fsync ``folder``; in a partial tile's folder (``<N>.p``) first drop the temporary files
    an interrupted run left for a partial tile of another size (elsewhere they are reused)."""
    if folder.endswith(".p"):
        with os.scandir(folder) as entries:
            stale = [e.path for e in entries if e.name.startswith(".") and e.name.endswith(".tmp")]
        for path in stale:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    fsync_dir(folder)
