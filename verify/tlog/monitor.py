"""A monitor of a tiled log: check each new checkpoint against the tree it trusted last
(docs/transparency.md "Monitoring").

One round (:func:`check_round`) checks that the checkpoint the log serves now (1) verifies under
the trusted log key, or one that key handed over to (7), and under the tlog-policy when given;
(2) is for the state's log (``tlog.monitor_state_invalid``); (3) is not smaller than the trusted
one (``tlog.rollback``); (4) has every tile read bound to its root
(:class:`~affidavit.verify.tlog.tiles.TiledTree`, ``tlog.tile_mismatch``); (5) gives, from those
tiles, the trusted root at the trusted size (``tlog.fork``); (6) optionally, has every new entry
hash to its bound level-0 hash; (7) follows a key rotation (docs/adr/0011) only when the trusted
key did not sign it and the log's :data:`~affidavit.verify.tlog.rotation.ROTATIONS_PATH` chain
reaches a key that did (``tlog.rotation_unproven``), each handed-over tree extended.

The state (docs/formats.md §6 "Monitor state"; ``v1`` is still read) is returned for the caller
to keep, the trusted note whole: with the new note, it is the evidence of a fork. No I/O here
(docs/adr/0002).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Final

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import b64decode_strict
from affidavit.verify.json.strict import load_object
from affidavit.verify.results import Result, StepRun
from affidavit.verify.tlog.policy import Policy, verify_checkpoint_under_policy
from affidavit.verify.tlog.rotation import (
    ROTATIONS_PATH,
    KeyRotation,
    follow_rotations,
    parse_rotation,
)
from affidavit.verify.tlog.tiles import Fetch, TiledTree

__all__ = [
    "MAX_STATE_BYTES",
    "STATE_FORMAT",
    "MonitorState",
    "check_round",
    "monitor_round",
    "normalized_vkey",
    "parse_state",
    "state_json",
]

STATE_FORMAT: Final = "affidavit.tlog-monitor/v2"
STATE_FORMAT_V1: Final = "affidavit.tlog-monitor/v1"  # read, never written
MAX_STATE_BYTES: Final = 1 << 20
_V1_FIELDS: Final = frozenset({"format", "origin", "vkey", "tree_size", "root_hash", "checkpoint"})
_V2_FIELDS: Final = frozenset(
    {"format", "origin", "vkeys", "rotations", "tree_size", "root_hash", "checkpoint"}
)
_NO_TRUSTED_SIGNATURE: Final = "checkpoint.no_trusted_signature"


@dataclass(frozen=True, slots=True)
class MonitorState:
    """What a monitor trusts: the log's origin, its keys oldest first (``rotations[i]`` handed
    ``vkeys[i]`` over to ``vkeys[i + 1]``, docs/adr/0011) and its last verified checkpoint."""

    origin: str
    vkeys: tuple[str, ...]
    tree_size: int
    root_hash: bytes
    checkpoint: str
    rotations: tuple[KeyRotation, ...] = ()

    @property
    def vkey(self) -> str:
        """The key trusted to sign checkpoints now."""
        return self.vkeys[-1]


def parse_state(data: bytes, *, vkey: str) -> MonitorState:
    """Read a state file (v2 or v1) of the log named by verifier key ``vkey`` (:func:`check_round`
    checks the key itself).

    Raises:
        ``json.*``: not strict JSON.
        ``key.*``: ``vkey`` is not a note verifier key.
        ``tlog.monitor_state_invalid``: a missing or malformed field, a note not the state's
            checkpoint, a rotation that does not verify or join its keys, another log's state.
    """
    name = parse_verifier_key(vkey).name
    document = load_object(data, max_bytes=MAX_STATE_BYTES)
    if set(document) == _V1_FIELDS and document["format"] == STATE_FORMAT_V1:
        vkeys, statements = [document["vkey"]], []
    elif set(document) == _V2_FIELDS and document["format"] == STATE_FORMAT:
        vkeys, statements = document["vkeys"], document["rotations"]
    else:
        raise _bad_state(
            f"must be a {STATE_FORMAT} object with exactly {sorted(_V2_FIELDS)} (or a "
            f"{STATE_FORMAT_V1} object with exactly {sorted(_V1_FIELDS)})"
        )
    size, note = document["tree_size"], document["checkpoint"]
    if not isinstance(size, int) or isinstance(size, bool) or not isinstance(note, str):
        raise _bad_state("tree_size must be an integer and checkpoint a string")
    try:
        root = b64decode_strict(document["root_hash"])
        body = parse_checkpoint_body(parse_note(note).text)
    except (ValueError, TypeError, errors.SignatureError) as e:
        raise _bad_state(f"root_hash or checkpoint is malformed: {e}") from None
    if (body.origin, body.tree_size, body.root_hash) != (document["origin"], size, root):
        raise _bad_state("origin, tree_size and root_hash are not those of its checkpoint")
    if name != body.origin:
        raise _bad_state(f"it is for the log {body.origin!r}, not {name!r}")
    history, rotations = _key_history(body.origin, vkeys, statements)
    return MonitorState(body.origin, history, size, root, note, rotations)


def _key_history(
    origin: str, vkeys: object, statements: object
) -> tuple[tuple[str, ...], tuple[KeyRotation, ...]]:
    """The state's keys and the rotations joining them, verified again (docs/adr/0011)."""
    if (
        not isinstance(vkeys, list)
        or not isinstance(statements, list)
        or not vkeys
        or len(statements) != len(vkeys) - 1
        or not all(isinstance(v, str) for v in vkeys)
        or not all(isinstance(r, str) for r in statements)
    ):
        raise _bad_state("vkeys must be a non-empty list of strings, one rotation fewer")
    try:
        verifiers = [parse_verifier_key(v) for v in vkeys]
        rotations = tuple(parse_rotation(statement) for statement in statements)
        for rotation in rotations:
            rotation.verify()
    except errors.AffidavitError as e:
        raise _bad_state(f"a key or rotation is malformed or does not verify ({e.code})") from e
    canonical = tuple(verifier_key_string(v.name, v.key) for v in verifiers)
    if canonical != tuple(vkeys) or any(v.name != origin for v in verifiers):
        raise _bad_state(f"vkeys must be canonical verifier keys named {origin!r}")
    for position, rotation in enumerate(rotations):
        first = rotations[0]
        if (
            rotation.previous_key != verifiers[position].key
            or rotation.public_key != verifiers[position + 1].key
            or rotation.seq != first.seq + position
            or rotation.log_id != first.log_id
        ):
            raise _bad_state(f"rotation #{rotation.seq} does not join its two keys of vkeys")
    return canonical, rotations


def normalized_vkey(vkey: str) -> str:
    """``vkey`` checked and spelled canonically (lowercase key ID).

    Raises:
        ``key.vkey_malformed``, ``key.*``: not an Ed25519 note verifier key.
    """
    verifier = parse_verifier_key(vkey)
    return verifier_key_string(verifier.name, verifier.key)


def state_json(state: MonitorState) -> bytes:
    """The state file's bytes (v2; sorted keys, one line, ending in a newline)."""
    document = {
        "checkpoint": state.checkpoint,
        "format": STATE_FORMAT,
        "origin": state.origin,
        "root_hash": base64.b64encode(state.root_hash).decode("ascii"),
        "rotations": [rotation.statement for rotation in state.rotations],
        "tree_size": state.tree_size,
        "vkeys": list(state.vkeys),
    }
    return json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"


def check_round(
    note: bytes,
    vkey: str,
    fetch: Fetch,
    previous: MonitorState | None,
    *,
    policy: Policy | None = None,
    entries: bool = False,
    source: str | None = None,
) -> tuple[Result, MonitorState]:
    """Check the log's checkpoint ``note`` against ``previous`` (None: trust ``vkey``; else
    ``vkey`` must be in its key history or reached by a rotation); the result and state to keep.

    Raises:
        ``key.*``: ``vkey`` is not a note verifier key.
        ``checkpoint.*``: the note is malformed or its log signature does not verify.
        ``tlog.rotation_unproven``: no trusted key signed it, nor one a proven rotation reaches.
        ``tlog.log_untrusted``, ``tlog.quorum_not_met``, ``tlog.cosignature_*``: under ``policy``.
        ``tlog.monitor_state_invalid``: ``previous`` is another origin's, or without ``vkey``.
        ``tlog.rollback``, ``tlog.fork``: the new tree does not extend the trusted one (or the
            tree a followed rotation handed over).
        ``tlog.tile_*``: a tile is missing or malformed, or a tile does not hash to the root.
        whatever ``fetch`` raises (a log that cannot be reached).
    """
    result, outcome = _round(note, vkey, fetch, previous, policy, entries, source)
    if isinstance(outcome, errors.AffidavitError):
        raise outcome
    return result, outcome


def monitor_round(
    note: bytes,
    vkey: str,
    fetch: Fetch,
    previous: MonitorState | None,
    *,
    policy: Policy | None = None,
    entries: bool = False,
    source: str | None = None,
) -> tuple[Result, MonitorState | None]:
    """:func:`check_round`, reporting a failing round in its result, with no state to keep.

    Raises:
        ``key.*``: ``vkey`` is not a note verifier key.
    """
    result, outcome = _round(note, vkey, fetch, previous, policy, entries, source)
    return result, None if isinstance(outcome, errors.AffidavitError) else outcome


def _round(  # noqa: PLR0917 - check_round's arguments
    note: bytes,
    vkey: str,
    fetch: Fetch,
    previous: MonitorState | None,
    policy: Policy | None,
    entries: bool,
    source: str | None,
) -> tuple[Result, MonitorState | errors.AffidavitError]:
    """Steps ``checkpoint`` (1, 7), ``policy``, ``rollback`` (2, 3), ``consistency`` (4, 5) and
    ``entries`` (6)."""
    given = normalized_vkey(vkey)
    plan = ("checkpoint", *(("policy",) if policy is not None else ()), "rollback", "consistency")
    run = StepRun((*plan, *(("entries",) if entries else ())))
    try:
        if previous is not None and parse_verifier_key(given).name != previous.origin:
            raise _bad_state(f"it is for the log {previous.origin!r}, not the key {given!r}")
        trusted = previous.vkeys if previous is not None else (given,)
        checkpoint, followed, extra_bytes = _verified_checkpoint(note, fetch, previous, trusted[-1])
        run.passed("checkpoint", origin=checkpoint.origin, tree_size=checkpoint.tree_size)
        cosigned_by: tuple[str, ...] = ()
        if policy is not None:
            cosigned_by = verify_checkpoint_under_policy(note, policy).witnesses
            run.passed("policy", cosigned_by=list(cosigned_by))
        if previous is not None:
            _check_not_rolled_back(previous, checkpoint.origin, checkpoint.tree_size)
        run.passed("rollback")
        tree = TiledTree.for_checkpoint(fetch, checkpoint)  # tlog.tile_mismatch: binds every tile
        if previous is not None and tree.root(previous.tree_size) != previous.root_hash:
            raise errors.ProofError(
                "tlog.fork",
                f"the log's tree of size {checkpoint.tree_size} does not extend the trusted tree "
                f"of size {previous.tree_size}: the root at that size differs (a fork or split "
                "view)",
                details={
                    "trusted_checkpoint": previous.checkpoint,
                    "served_checkpoint": note.decode("utf-8"),
                },
            )
        for rotation in followed:
            _check_handover(rotation, tree, checkpoint, note)
        new_keys = tuple(verifier_key_string(checkpoint.origin, r.public_key) for r in followed)
        vkeys = trusted + new_keys
        if given not in vkeys:
            raise _bad_state(f"it trusts the log keys {list(vkeys)}, not {given!r}")
        run.passed("consistency")
        checked = 0
        if entries:
            start = previous.tree_size if previous is not None else 0
            checked = tree.check_entries(start, checkpoint.tree_size)
            run.passed("entries", entries_checked=checked)
    except errors.AffidavitError as e:
        run.fail(e)
        return run.result("monitor", source), e
    result = run.result(
        "monitor",
        source,
        origin=checkpoint.origin,
        previous_size=previous.tree_size if previous is not None else None,
        tree_size=checkpoint.tree_size,
        root_hash=base64.b64encode(checkpoint.root_hash).decode("ascii"),
        tiles_read=tree.tiles_read,
        bytes_read=tree.bytes_read + extra_bytes,
        entries_checked=checked,
        cosigned_by=list(cosigned_by),
        rotated_to=list(new_keys),
    )
    state = MonitorState(
        checkpoint.origin,
        vkeys,
        checkpoint.tree_size,
        checkpoint.root_hash,
        note.decode("utf-8"),
        (previous.rotations if previous is not None else ()) + followed,
    )
    return result, state


def _verified_checkpoint(
    note: bytes, fetch: Fetch, previous: MonitorState | None, vkey: str
) -> tuple[Checkpoint, tuple[KeyRotation, ...], int]:
    """The checkpoint verified under ``vkey`` or a key it handed over to (step 7), the rotations
    followed, and the bytes read for them."""
    trusted = parse_verifier_key(vkey)
    try:
        return verify_checkpoint(note, [trusted], origin=trusted.name).checkpoint, (), 0
    except errors.SignatureError as e:
        if e.code != _NO_TRUSTED_SIGNATURE:
            raise
        unsigned = e
    document = fetch(ROTATIONS_PATH)
    if document is None:  # nothing claims a handover: the checkpoint is simply not the log's
        raise unsigned
    known = previous.rotations[-1] if previous is not None and previous.rotations else None
    rotations = follow_rotations(
        bytes(document),
        trusted.key,
        log_id=known.log_id if known is not None else None,
        seq=known.seq if known is not None else None,
    )
    for count, rotation in enumerate(rotations, 1):
        successor = parse_verifier_key(verifier_key_string(trusted.name, rotation.public_key))
        try:
            verified = verify_checkpoint(note, [successor], origin=trusted.name)
        except errors.SignatureError as e:
            if e.code != _NO_TRUSTED_SIGNATURE:
                raise
            continue
        return verified.checkpoint, rotations[:count], len(document)
    raise errors.ProofError(
        "tlog.rotation_unproven",
        f"the checkpoint is not signed by the trusted key {vkey!r}, and no rotation it signed "
        f"(in {ROTATIONS_PATH}) hands the log over to a key that signed it",
        details={"trusted_vkey": vkey, "served_checkpoint": note.decode("utf-8", "replace")},
    )


def _check_handover(
    rotation: KeyRotation, tree: TiledTree, checkpoint: Checkpoint, note: bytes
) -> None:
    """docs/adr/0011 §3: the tree a rotation hands over is one every later head extends."""
    evidence = {"rotation": rotation.statement, "served_checkpoint": note.decode("utf-8")}
    if rotation.tree_size > checkpoint.tree_size:
        raise errors.ProofError(
            "tlog.rollback",
            f"the log serves a checkpoint of size {checkpoint.tree_size}, smaller than the tree "
            f"of size {rotation.tree_size} its rotation #{rotation.seq} handed over",
            details=evidence,
        )
    if tree.root(rotation.tree_size) != rotation.root_hash:
        raise errors.ProofError(
            "tlog.fork",
            f"the log's tree of size {checkpoint.tree_size} does not extend the tree of size "
            f"{rotation.tree_size} that rotation #{rotation.seq} handed over (signed by the old "
            "key): a fork",
            details=evidence,
        )


def _check_not_rolled_back(previous: MonitorState, origin: str, size: int) -> None:
    if origin != previous.origin:
        raise _bad_state(f"it is for the log {previous.origin!r}, not {origin!r}")
    if size < previous.tree_size:
        raise errors.ProofError(
            "tlog.rollback",
            f"the log serves a checkpoint of size {size}, smaller than the trusted size "
            f"{previous.tree_size} (a rollback)",
            details={"trusted_size": previous.tree_size, "served_size": size},
        )


def _bad_state(message: str) -> errors.ProofError:
    return errors.ProofError("tlog.monitor_state_invalid", f"monitor state: {message}")
