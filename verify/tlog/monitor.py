"""A monitor of a tiled log: check each new checkpoint against the tree it trusted last.

One round (:func:`check_round`), given the checkpoint the log serves now, a way to read its tiles
and the state the monitor kept from its last round:

1. the checkpoint verifies under the log's verifier key (signed-note; ``checkpoint.*``), and under
   the tlog-policy when one is given (its log list and witness quorum; ``tlog.*``);
2. it is for the same log as the state (origin and key; ``tlog.monitor_state_invalid``);
3. it is not smaller than the trusted one (``tlog.rollback``);
4. every tile it reads is bound to the checkpoint's root before it is used
   (:class:`~affidavit.verify.tlog.tiles.TiledTree`: the partial tiles fold to the root, each
   full tile hashes to its hash in the bound tile above; tlog-tiles: "Clients MUST NOT fetch
   arbitrary partial tiles without verifying a checkpoint with a size that requires their
   existence"; ``tlog.tile_mismatch``);
5. the same bound tiles give the trusted root at the trusted size: the new tree extends the old
   one (RFC 9162 §2.1.4 consistency, computed from the tiles instead of a proof; ``tlog.fork``).
   A split view, where the log shows another tree to someone else, fails here for whichever
   monitor saw the other branch first;
6. optionally, every new entry is read from its entry bundle and hashed to its bound level-0
   hash (a mirror that checks every entry).

Only the tiles those checks need are read; the round reports how many and how many bytes. The
state is returned for the caller to keep (atomically): this module does no I/O of its own
(docs/adr/0002), and nothing here trusts a byte before its check.

The state file is strict JSON::

    {"format": "affidavit.tlog-monitor/v1", "origin": "...", "vkey": "name+id+key",
     "tree_size": 1234, "root_hash": "<base64>", "checkpoint": "<the note trusted last>"}

The trusted note is kept whole: with the new note, it is the evidence of a fork.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import b64decode_strict
from affidavit.verify.json.strict import load_object
from affidavit.verify.tlog.tiles import Fetch, TiledTree

if TYPE_CHECKING:
    from affidavit.verify.tlog.policy import Policy

__all__ = [
    "STATE_FORMAT",
    "MonitorState",
    "RoundReport",
    "check_round",
    "normalized_vkey",
    "parse_state",
    "state_json",
]

STATE_FORMAT: Final = "affidavit.tlog-monitor/v1"
MAX_STATE_BYTES: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class MonitorState:
    """What a monitor trusts: the log (origin, verifier key) and its last verified checkpoint."""

    origin: str
    vkey: str
    tree_size: int
    root_hash: bytes
    checkpoint: str


@dataclass(frozen=True, slots=True)
class RoundReport:
    """One round: the sizes compared, what was read, and what the checkpoint carried."""

    origin: str
    previous_size: int | None  # None: the first round (trust on first use)
    tree_size: int
    root_hash: bytes
    tiles_read: int
    bytes_read: int
    entries_checked: int
    cosigned_by: tuple[str, ...]  # witnesses of the policy whose cosignatures verified

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (``log monitor --json``)."""
        return {
            "origin": self.origin,
            "previous_size": self.previous_size,
            "tree_size": self.tree_size,
            "root_hash": base64.b64encode(self.root_hash).decode("ascii"),
            "tiles_read": self.tiles_read,
            "bytes_read": self.bytes_read,
            "entries_checked": self.entries_checked,
            "cosigned_by": list(self.cosigned_by),
        }


def parse_state(data: bytes, *, vkey: str) -> MonitorState:
    """Read a state file kept by an earlier round, for the log whose verifier key is ``vkey``.

    Raises:
        ``json.*``: not strict JSON.
        ``tlog.monitor_state_invalid``: a field is missing or malformed, the note is not the
            state's checkpoint, or the state is for another log key.
    """
    vkey = normalized_vkey(vkey)
    document = load_object(data, max_bytes=MAX_STATE_BYTES)
    expected = {"format", "origin", "vkey", "tree_size", "root_hash", "checkpoint"}
    if set(document) != expected or document["format"] != STATE_FORMAT:
        raise _bad_state(f"must be a {STATE_FORMAT} object with exactly {sorted(expected)}")
    if document["vkey"] != vkey:
        raise _bad_state(f"it is for the log key {document['vkey']!r}, not {vkey!r}")
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
    return MonitorState(body.origin, vkey, size, root, note)


def normalized_vkey(vkey: str) -> str:
    """``vkey`` checked and spelled canonically (lowercase key ID), as the state records it.

    Raises:
        ``key.vkey_malformed``, ``key.*``: not an Ed25519 note verifier key.
    """
    verifier = parse_verifier_key(vkey)
    return verifier_key_string(verifier.name, verifier.key)


def state_json(state: MonitorState) -> bytes:
    """The state file's bytes (sorted keys, one line, ending in a newline)."""
    document = {
        "checkpoint": state.checkpoint,
        "format": STATE_FORMAT,
        "origin": state.origin,
        "root_hash": base64.b64encode(state.root_hash).decode("ascii"),
        "tree_size": state.tree_size,
        "vkey": state.vkey,
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
) -> tuple[RoundReport, MonitorState]:
    """Check the log's current checkpoint ``note`` against ``previous`` (module docstring).

    ``fetch`` reads a tile path relative to the log's prefix (:mod:`affidavit.verify.tlog.tiles`).
    Returns the report and the state to keep. ``previous`` None is the first round: the
    checkpoint and its tiles are checked, and trusted from then on.

    Raises:
        ``checkpoint.*``: the note is malformed or its log signature does not verify.
        ``tlog.log_untrusted``, ``tlog.quorum_not_met``, ``tlog.cosignature_*``: under ``policy``.
        ``tlog.monitor_state_invalid``: ``previous`` is for another origin.
        ``tlog.rollback``, ``tlog.fork``: the new tree does not extend the trusted one.
        ``tlog.tile_*``: a tile is missing or malformed, or the tiles do not hash to the root.
    """
    verifier = parse_verifier_key(vkey)
    checkpoint = verify_checkpoint(note, [verifier], origin=verifier.name).checkpoint
    cosigned_by: tuple[str, ...] = ()
    if policy is not None:
        from affidavit.verify.tlog.policy import verify_checkpoint_under_policy  # noqa: PLC0415

        cosigned_by = verify_checkpoint_under_policy(note, policy).witnesses
    if previous is not None:
        _check_not_rolled_back(previous, checkpoint.origin, checkpoint.tree_size)
    tree = TiledTree.for_checkpoint(fetch, checkpoint)  # tlog.tile_mismatch: binds every tile
    if previous is not None and tree.root(previous.tree_size) != previous.root_hash:
        raise errors.ProofError(
            "tlog.fork",
            f"the log's tree of size {checkpoint.tree_size} does not extend the trusted tree of "
            f"size {previous.tree_size}: the root at that size differs (a fork or split view)",
            details={
                "trusted_checkpoint": previous.checkpoint,
                "served_checkpoint": note.decode("utf-8"),
            },
        )
    checked = 0
    if entries:
        start = previous.tree_size if previous is not None else 0
        checked = tree.check_entries(start, checkpoint.tree_size)
    report = RoundReport(
        checkpoint.origin,
        previous.tree_size if previous is not None else None,
        checkpoint.tree_size,
        checkpoint.root_hash,
        tree.tiles_read,
        tree.bytes_read,
        checked,
        cosigned_by,
    )
    state = MonitorState(
        checkpoint.origin,
        normalized_vkey(vkey),
        checkpoint.tree_size,
        checkpoint.root_hash,
        note.decode("utf-8"),
    )
    return report, state


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
