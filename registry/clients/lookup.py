"""Ask a registry what its log holds about a hash, and prove every answer before believing it
(``affidavit lookup``; the steps, bounds and verdicts are docs/transparency.md "Lookup").

>>> from affidavit.verify.trust import TrustRoot
>>> check_answer("https://registry.example", "0" * 64, [], {}, TrustRoot()).verdict
'unanchored'

:func:`lookup` fetches the pages of ``GET /v1/lookup/{hash}`` and each entry's leaf, checking
before it reads more (a page's checkpoint first, each entry's proof before its leaf; issue 31),
every read bounded in bytes and all by one deadline. :func:`check_answer` is offline: each
page's ``checkpoint`` under a trusted log key, each entry's ``inclusion`` proof to that root at
the checkpoint's size, and each ``leaf``: its bytes hash to its leaf hash and are filed under the
hash asked for as the registry says (:func:`affidavit.registry.index.subjects`); a 32-byte leaf
is filed under a ``subject`` or ``issuer`` only with the registered statement it is the hash of.
A verified checkpoint with no entry is ``unanchored`` (``lookup.not_found``): it proves nothing
about absence; so is an answer with no trusted key (fail closed).
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from affidavit.registry.clients.https import REGISTRY, new_client, parse_url, send
from affidavit.registry.clients.tiles import TileReader
from affidavit.registry.errors import RegistryError
from affidavit.registry.index import Subject, subjects
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    NoteVerifier,
    VerifiedCheckpoint,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.merkle import leaf_hash, verify_inclusion
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.json.strict import loads
from affidavit.verify.results import Result, StepResult
from affidavit.verify.tlog.tiles import TiledTree
from affidavit.verify.trust import TrustRoot

if TYPE_CHECKING:
    import httpx

__all__ = [
    "AUDIT_TIMEOUT",
    "LOOKUP_TIMEOUT",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_PAGES",
    "Answer",
    "Entry",
    "audit_index",
    "check_answer",
    "lookup",
    "parse_page",
]

MAX_ENTRIES: Final = 1000  # entries a lookup reads at most (ten pages of the registry's cap)
MAX_PAGES: Final = 10  # pages a lookup reads at most, whatever they hold
# docs/adr/0018: the log's entry limit (tlog-tiles entry bundles use uint16 lengths): no leaf of
# an honest log is longer.
MAX_ENTRY_BYTES: Final = 0xFFFF
LOOKUP_TIMEOUT: Final = 30.0  # seconds for the whole lookup, every page and leaf
AUDIT_TIMEOUT: Final = 300.0  # seconds for a whole audit_index, every tile and lookup
_MAX_PAGE_BYTES: Final = 8 * 1024 * 1024
# A leaf's answer: {"leaf_index": N, "leaf_data_b64": "..."} of at most MAX_ENTRY_BYTES bytes
# (base64: 87,380 characters), with room for the registry's other fields.
_MAX_LEAF_ANSWER: Final = 96 * 1024
_UNREAD: Final = "not read: an earlier step failed, so the lookup read no more"
_NOT_FOUND: Final = (
    "lookup.not_found",
    "no entry about the hash under the verified checkpoint; a lookup proves presence only "
    "(replaying the log proves absence)",
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry as a registry answered it (unverified until :func:`check_answer` says so)."""

    index: int
    leaf_hash: str
    kind: str
    matched: tuple[str, ...]
    tree_size: int
    hashes: tuple[str, ...]
    statement: bytes | None = None  # a registered statement's bytes (a ``digest`` leaf's)

    def to_json(self) -> dict[str, Any]:
        """``{index, leaf_hash, kind, matched, tree_size}``."""
        return {
            "index": self.index,
            "leaf_hash": self.leaf_hash,
            "kind": self.kind,
            "matched": list(self.matched),
            "tree_size": self.tree_size,
        }


@dataclass(frozen=True, slots=True)
class Answer:
    """One page of ``GET /v1/lookup/{hash}``, parsed (unverified)."""

    checkpoint: str
    entries: tuple[Entry, ...]
    next_cursor: int | None


# -- parsing ----------------------------------------------------------------------------------


def _bad(message: str) -> RegistryError:
    return RegistryError("registry.bad_response", f"lookup answer: {message}")


def _int(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise _bad(f"{what} is not a non-negative integer")
    return value


def _b64(value: Any, error: RegistryError) -> bytes:
    try:
        return base64.b64decode(value if isinstance(value, str) else b"?", validate=True)
    except (binascii.Error, ValueError):
        raise error from None


def _entry(value: Any) -> Entry:
    if not isinstance(value, dict):
        raise _bad("an entry is not an object")
    proof = value.get("inclusion_proof")
    matched = value.get("matched")
    if not isinstance(proof, dict) or not isinstance(matched, list) or not matched:
        raise _bad("an entry lacks inclusion_proof or matched")
    hashes = proof.get("hashes")
    if not isinstance(hashes, list) or not all(is_hex64(h) for h in hashes):
        raise _bad("inclusion_proof.hashes is not a list of 64-hex hashes")
    if not is_hex64(value.get("leaf_hash")) or not isinstance(value.get("kind"), str):
        raise _bad("an entry's leaf_hash or kind is malformed")
    if not all(isinstance(field, str) for field in matched):
        raise _bad("matched is not a list of field names")
    statement = value.get("statement")  # a registered statement's (base64), or absent
    if statement is not None:
        statement = _b64(statement, _bad("an entry's statement is not base64"))
    return Entry(
        index=_int(value.get("index"), "index"),
        leaf_hash=str(value["leaf_hash"]),
        kind=str(value["kind"]),
        matched=tuple(matched),
        tree_size=_int(proof.get("tree_size"), "inclusion_proof.tree_size"),
        hashes=tuple(hashes),
        statement=statement,
    )


def parse_page(data: bytes) -> Answer:
    """One page of the lookup answer, strictly.

    Raises:
        ``registry.bad_response``: not the documented shape (specs/registry-v1.yaml ``Lookup``).
    """
    try:
        document = loads(data, max_bytes=_MAX_PAGE_BYTES)
    except errors.ParseError as e:
        raise _bad(f"not strict JSON: {e.code}: {e.message}") from None
    if not isinstance(document, dict):
        raise _bad("not a JSON object")
    raw_entries, note = document.get("entries"), document.get("checkpoint")
    if not isinstance(raw_entries, list) or not isinstance(note, str):
        raise _bad("entries or checkpoint missing")
    cursor = document.get("next_cursor")
    return Answer(
        checkpoint=note,
        entries=tuple(_entry(item) for item in raw_entries),
        next_cursor=None if cursor is None else _int(cursor, "next_cursor"),
    )


# -- checking (offline) -----------------------------------------------------------------------


def _verified(note: str, trust: TrustRoot) -> VerifiedCheckpoint:
    """``note`` verified under the trusted keys, a bare key named by the note's origin (a key
    ID binds the name, so only the origin the log signs can match).

    Raises:
        ``checkpoint.*``: it does not verify, or is not a signed note.
    """
    origin = parse_note(note).text.split("\n", 1)[0]
    found: list[NoteVerifier] = []
    for trusted in trust.keys:
        if trusted.verifier is not None:
            found.append(trusted.verifier)
        elif origin:
            found.append(NoteVerifier(origin, trusted.key.key_id_c2sp(origin), trusted.key))
    return verify_checkpoint(note, found)


def _checkpoint_json(verified: VerifiedCheckpoint, note: str) -> dict[str, Any]:
    body = verified.checkpoint
    names = {line.name for line in parse_note(note).signatures}
    return {
        "origin": body.origin,
        "tree_size": body.tree_size,
        "root_hash": body.root_hash.hex(),
        "verified_by": list(verified.verified_by),
        "other_signers": sorted(names - {body.origin}),  # witness cosignatures, not checked here
    }


def _not_about(entry: Entry, digest: str, found: Sequence[Subject]) -> str | None:
    """Why the leaf is not filed as the registry says, or None when it is."""
    kinds = {subject.kind for subject in found}
    if entry.kind not in kinds:
        return f"the leaf is a {'/'.join(sorted(kinds))} entry, not a {entry.kind}"
    fields = {subject.field for subject in found if subject.digest == digest}
    missing = [field for field in entry.matched if field not in fields]
    if missing:
        return f"the leaf holds {digest} under {sorted(fields) or 'no field'}, not {missing}"
    return None


def _check_leaf(entry: Entry, digest: str, data: bytes | None) -> StepResult:
    name = f"leaf {entry.index}"
    if data is None:  # appended by hash only: the leaf hash is all there is
        found = [Subject("hash_only", "leaf_hash", entry.leaf_hash)]
    else:
        if leaf_hash(data).hex() != entry.leaf_hash:
            error = RegistryError(
                "lookup.leaf_mismatch",
                f"leaf {entry.index}'s bytes do not hash to the leaf hash of the answer",
            )
            return StepResult.failed(name, error, expected=entry.leaf_hash)
        found = subjects(data, statement=entry.statement)
    why = _not_about(entry, digest, found)
    if why is not None:
        return StepResult.failed(name, RegistryError("lookup.not_about", why))
    return StepResult.ok(name, kind=entry.kind, matched=list(entry.matched))


def _check_page(
    page: Answer, digest: str, leaves: Mapping[int, bytes | None], trust: TrustRoot
) -> tuple[list[StepResult], dict[str, Any] | None]:
    try:
        verified = _verified(page.checkpoint, trust)
    except errors.AffidavitError as e:
        return [StepResult.failed("checkpoint", e)], None
    body = verified.checkpoint
    steps = [StepResult.ok("checkpoint", tree_size=body.tree_size, origin=body.origin)]
    for entry in page.entries:
        name = f"inclusion {entry.index}"
        try:
            if entry.tree_size != body.tree_size:
                raise RegistryError(
                    "lookup.size_mismatch",
                    f"the proof of leaf {entry.index} is for size {entry.tree_size}, "
                    f"the checkpoint's is {body.tree_size}",
                )
            verify_inclusion(
                bytes.fromhex(entry.leaf_hash),
                entry.index,
                body.tree_size,
                [bytes.fromhex(h) for h in entry.hashes],
                body.root_hash,
            )
        except errors.AffidavitError as e:
            steps.append(StepResult.failed(name, e))
            continue
        if entry.index not in leaves:  # lookup() stopped reading at an earlier failure
            steps += [StepResult.ok(name), StepResult.not_checked(f"leaf {entry.index}", _UNREAD)]
            continue
        steps += [StepResult.ok(name), _check_leaf(entry, digest, leaves[entry.index])]
    return steps, _checkpoint_json(verified, page.checkpoint)


def check_answer(
    source: str,
    digest: str,
    pages: Sequence[Answer],
    leaves: Mapping[int, bytes | None],
    trust: TrustRoot,
    *,
    truncated: bool = False,
) -> Result:
    """Check every page of a lookup answer under ``trust``, offline; ``leaves`` maps each
    entry's index to its bytes (None: appended by hash only; absent: not read, ``not_checked``).
    The subject: ``{hash, found, entries, checkpoint, truncated}``, entries only once proven."""
    steps: list[StepResult] = []
    checkpoint: dict[str, Any] | None = None
    if not trust.keys:
        steps.append(StepResult.not_checked("checkpoint", "no trusted log key (fail closed)"))
    for number, page in enumerate(pages if trust.keys else ()):
        page_steps, page_checkpoint = _check_page(page, digest, leaves, trust)
        if number:  # "checkpoint" once; the pages after the first say which they are
            page_steps[0] = page_steps[0]._replace(name=f"checkpoint (page {number + 1})")
        steps += page_steps
        checkpoint = page_checkpoint or checkpoint
    entries = tuple(entry for page in pages for entry in page.entries)
    if entries:
        steps.append(StepResult.ok("found", entries=len(entries)))
    elif checkpoint is not None:
        steps.append(StepResult.not_checked("found", _NOT_FOUND[1]))
    proven = not any(step.status != "ok" for step in steps) and checkpoint is not None
    subject = {
        "hash": digest,
        "found": bool(entries) and proven,
        "entries": [entry.to_json() for entry in entries] if proven else [],
        "checkpoint": checkpoint,
        "truncated": truncated,
    }
    unproven = _NOT_FOUND if checkpoint is not None and not entries else None
    return Result("lookup", source, tuple(steps), subject, unproven=unproven)


# -- fetching ---------------------------------------------------------------------------------


def _too_big_leaf(url: str, size: str) -> RegistryError:
    return RegistryError(
        "registry.bad_response",
        f"{url}: {size}: a leaf is at most {MAX_ENTRY_BYTES} bytes, the log's entry limit "
        "(docs/adr/0018)",
        details={"url": url, "limit": MAX_ENTRY_BYTES},
    )


def _leaf(client: httpx.Client, base: str, index: int, ends: float) -> bytes | None:
    """The leaf's bytes, at most the log's entry limit; None when appended by hash only."""
    url = f"{base}/protocol/merkle/leaf/{index}"
    try:
        response = send(client, "GET", url, codes=REGISTRY, max_bytes=_MAX_LEAF_ANSWER, until=ends)
    except RegistryError as e:
        if e.code == "registry.bad_response":  # over the cap: refused before it is held
            raise _too_big_leaf(url, f"the answer is over {_MAX_LEAF_ANSWER} bytes") from None
        raise
    try:
        document = loads(response.body)
    except errors.ParseError as e:
        raise RegistryError("registry.bad_response", f"{url}: not strict JSON: {e.code}") from None
    if not response.ok:
        if isinstance(document, dict) and document.get("code") == "log.no_entry_data":
            return None
        raise RegistryError("registry.bad_response", f"{url}: HTTP {response.status}")
    data = document.get("leaf_data_b64") if isinstance(document, dict) else None
    leaf = _b64(data, RegistryError("registry.bad_response", f"{url}: leaf_data_b64 is not base64"))
    if len(leaf) > MAX_ENTRY_BYTES:
        raise _too_big_leaf(url, f"leaf {index} is {len(leaf)} bytes")
    return leaf


def _page(client: httpx.Client, target: str, ends: float | None = None) -> Answer:
    """One page at ``target``; ``registry.bad_response`` unless it is 200 and a lookup page."""
    response = send(client, "GET", target, max_bytes=_MAX_PAGE_BYTES, codes=REGISTRY, until=ends)
    if response.status != 200:
        raise RegistryError(
            "registry.bad_response",
            f"{target}: HTTP {response.status}",
            details={"status": response.status},
        )
    return parse_page(response.body)


def _proven(body: Checkpoint, entry: Entry) -> bool:
    """Whether ``entry``'s inclusion proof holds under ``body``: only then is its leaf read."""
    try:
        if entry.tree_size != body.tree_size:
            return False
        verify_inclusion(
            bytes.fromhex(entry.leaf_hash),
            entry.index,
            body.tree_size,
            [bytes.fromhex(h) for h in entry.hashes],
            body.root_hash,
        )
    except errors.AffidavitError:
        return False
    return True


def lookup(
    url: str,
    digest: str,
    trust: TrustRoot,
    *,
    max_entries: int = MAX_ENTRIES,
    timeout: float = LOOKUP_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> Result:
    """Ask the registry at ``url`` about ``digest``, read at most ``max_entries`` entries (and
    :data:`MAX_PAGES` pages) and their leaves, checking before reading (module docstring).
    ``timeout``: one deadline for the whole lookup. Without a trusted key nothing is read.

    Raises:
        ``usage.invalid``: ``url`` breaks the URL rule, or ``digest`` is not 64 lowercase hex.
        ``registry.unavailable``: the registry could not be read, or not within ``timeout``.
        ``registry.bad_response``, ``registry.remote_error``: it answered something else than a
            lookup (over a size cap, a cursor that does not move forward).
    """
    if not is_hex64(digest):
        raise errors.UsageError(f"{digest[:80]!r} is not a hash: 64 lowercase hex characters")
    parse_url(url, allow_query=False)
    ends = time.monotonic() + timeout  # one deadline for the whole command
    base = url.rstrip("/")
    pages: list[Answer] = []
    leaves: dict[int, bytes | None] = {}
    cursor: int | None = 0
    read = 0
    if not trust.keys:
        return check_answer(url, digest, pages, leaves, trust)
    with new_client(timeout=timeout, transport=transport) as client:
        while cursor is not None and read < max_entries and len(pages) < MAX_PAGES:
            page = _page(client, f"{base}/v1/lookup/{digest}?cursor={cursor}", ends)
            page = Answer(page.checkpoint, page.entries[: max_entries - read], page.next_cursor)
            pages.append(page)
            read += len(page.entries)
            if page.next_cursor is not None and page.next_cursor <= cursor:
                raise _bad("next_cursor does not move forward")
            cursor = page.next_cursor
            try:  # the checkpoint first: nothing more is read under one nobody trusts
                body = _verified(page.checkpoint, trust).checkpoint
            except errors.AffidavitError:
                break
            unproven = False
            for entry in page.entries:  # each leaf only once its proof holds
                unproven = not _proven(body, entry)
                if unproven:
                    break  # the answer fails: read no more
                leaves[entry.index] = _leaf(client, base, entry.index, ends)
            if unproven:
                break
    return check_answer(url, digest, pages, leaves, trust, truncated=cursor is not None)


# -- a monitor's check of the index ----------------------------------------------------------


def _answer(
    client: httpx.Client, base: str, filed: Subject, index: int, ends: float
) -> Entry | None:
    """The registry's first answer for ``filed`` from leaf ``index`` on, if it is that leaf
    matched in ``filed``'s field."""
    target = f"{base}/v1/lookup/{filed.digest}?cursor={index}&limit=1"
    first = _page(client, target, ends).entries[:1]
    if first and first[0].index == index and filed.field in first[0].matched:
        return first[0]
    return None


def audit_index(
    url: str,
    trust: TrustRoot,
    *,
    start: int = 0,
    timeout: float = AUDIT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> Result:
    """A monitor's check of a registry's lookup index, as docs/transparency.md "Lookup" says:
    every entry of ``[start, size)`` read from the tiles under the checkpoint ``trust`` verifies,
    each answered under every hash it is filed under. ``timeout``: one deadline for the whole
    audit. A Result of kind ``lookup_audit``, subject ``{origin, tree_size, start, entries,
    hashes}``.

    Raises:
        ``usage.invalid``: ``url`` breaks the URL rule.
        ``registry.unavailable``: the registry could not be read, or not within ``timeout``.
        ``registry.bad_response``: it answered something else than tiles and lookup pages.
    """
    parse_url(url, allow_query=False)
    ends = time.monotonic() + timeout  # one deadline for the whole audit
    base = url.rstrip("/")
    subject: dict[str, Any] = {"start": start, "entries": 0, "hashes": 0}
    with TileReader(
        base + "/tlog/", timeout=timeout, transport=transport, codes=REGISTRY, until=ends
    ) as tiles:
        note = tiles.checkpoint().decode("utf-8", "replace")
        try:
            body = _verified(note, trust).checkpoint
        except errors.AffidavitError as e:
            return Result("lookup_audit", url, (StepResult.failed("checkpoint", e),), subject)
        subject.update(origin=body.origin, tree_size=body.tree_size)
        tree = TiledTree.for_checkpoint(tiles.tile, body)
        with new_client(timeout=timeout, transport=transport) as client:
            audit = _Audit(client, base, ends, subject)
            last = audit.entries(tree, range(start, body.tree_size))
    steps = (StepResult.ok("checkpoint", tree_size=body.tree_size), last)
    return Result("lookup_audit", url, steps, subject)


@dataclass(frozen=True, slots=True)
class _Audit:
    """:func:`audit_index`'s requests after the checkpoint (counted in ``subject``)."""

    client: httpx.Client
    base: str
    ends: float
    subject: dict[str, Any]

    def entries(self, tree: TiledTree, indexes: range) -> StepResult:
        try:
            for index in indexes:
                data = tree.entry_bundle(index >> 8)[index & 0xFF]  # bound to the root
                self.subject["entries"] += 1
                failed = self._leaf(index, data)
                if failed is not None:
                    return failed
        except errors.ProofError as e:  # tlog.*: a tile or bundle that does not bind
            return StepResult.failed("entries", e)
        return StepResult.ok(
            "index", entries=self.subject["entries"], hashes=self.subject["hashes"]
        )

    def _leaf(self, index: int, data: bytes) -> StepResult | None:
        """The failed step for leaf ``index``, or None when every hash it is filed under
        answers it."""
        filed = subjects(data)
        statement: bytes | None = None
        for one in filed:
            entry = self._asked(index, one)
            if entry is None:
                return _missing(index, one)
            if filed[0].kind == "digest" and statement is None:
                statement = entry.statement  # a registered statement's entry (docs/formats.md §10)
        if statement is None:
            return None
        # docs/formats.md §11: a 32-byte leaf is also filed under its statement's subject and
        # issuer (registered_subjects: its SHA-256 is the leaf).
        registered = [one for one in subjects(data, statement=statement) if one not in filed]
        if not registered:
            error = RegistryError(
                "lookup.not_about",
                f"leaf {index} is answered with a statement whose SHA-256 is not the leaf",
                details={"index": index, "field": "statement"},
            )
            return StepResult.failed("index", error)
        for one in registered:
            if self._asked(index, one) is None:
                return _missing(index, one)
        return None

    def _asked(self, index: int, filed: Subject) -> Entry | None:
        self.subject["hashes"] += 1
        return _answer(self.client, self.base, filed, index, self.ends)


def _missing(index: int, filed: Subject) -> StepResult:
    error = RegistryError(
        "lookup.index_missing",
        f"leaf {index} is not answered under its {filed.field} {filed.digest}",
        details={"index": index, "field": filed.field},
    )
    return StepResult.failed("index", error)
