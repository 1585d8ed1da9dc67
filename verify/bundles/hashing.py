"""The hashes a bundle is checked against, recomputed (docs/formats.md §4): ``bundle_hash``, each
event's hash and each proof's hash, from one encoding pass over the bundle.

>>> bundle = {"deal_id": "d", "proofs": [], "events": [], "merkle_inclusion": None}
>>> encode_once(bundle).bundle_hash == bundle_hash(bundle)
True

One encoding pass (docs/adr/0003-cold-start.md): events and proofs are written once as marked
py-* text (:func:`~affidavit.verify.json.canonical.py_marked`) and reused for the bundle hash, the
event hashes and the proof hashes; :func:`bundle_hash` and :func:`proof_hash` are the plain
definitions it must equal (tests/verify/bundles/test_bundle_fastpath.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from affidavit.verify.bundles.views import EVENT_FIELDS
from affidavit.verify.json.canonical import (
    ITEM_MARK,
    KEY_MARK,
    py_compact,
    py_marked,
    py_spaced,
    sha256_hex,
    unmark,
)

__all__ = ["Encoded", "bundle_hash", "encode_once", "proof_hash"]

_ascii: Final = json.encoder.encode_basestring_ascii  # how the encoder writes a str key or value


_HASH_PAIR: Final = f'{ITEM_MARK}"hash"{KEY_MARK}'
_EVENT_KEYS: Final = frozenset(EVENT_FIELDS)


def bundle_hash(unverified_bundle: Mapping[str, Any]) -> str:
    """Recompute ``bundle_hash`` (docs/formats.md §4): py-compact of ``{spec_version, deal_id,
    proofs,
    events, merkle_inclusion}``, or for a legacy bundle (no ``spec_version``) py-spaced without it.
    """
    body = {
        k: unverified_bundle.get(k) for k in ("deal_id", "proofs", "events", "merkle_inclusion")
    }
    if "spec_version" in unverified_bundle:
        body["spec_version"] = unverified_bundle["spec_version"]
        return sha256_hex(py_compact(body))
    return sha256_hex(py_spaced(body))


def proof_hash(proof: Any) -> str:
    """``H(py-compact(proof))``: what an Affidavit PROOF_READY event lists in ``proof_hashes``."""
    return sha256_hex(py_compact(proof))


class Encoded(NamedTuple):
    """What one encoding pass over a bundle yields: recomputed hashes, never read from it."""

    bundle_hash: str
    event_hashes: tuple[str | None, ...]  # None: not a plain eight-field event (chain recomputes)
    proof_hashes: tuple[str, ...]


def _marked_sha256(text: str, *, spaced: bool) -> str:
    """SHA-256 hex of marked text written as py-spaced (True) or py-compact (False) bytes."""
    return hashlib.sha256(unmark(text, "py-spaced" if spaced else "py-compact")).hexdigest()


def _hashed_fields_text(event: Any, text: str) -> str | None:
    """The marked text of an event's seven hashed fields, cut from the text of the whole event.

    Only for an object of exactly the eight event fields whose ``hash`` and the four keys sorted
    before it hold strings (no separator inside): the first marked ``"hash"`` key is then the
    top-level one. None otherwise (the chain step then encodes the event).
    """
    if type(event) is not dict or event.keys() != _EVENT_KEYS:
        return None
    if not (  # the keys sorted before "hash", and "hash"
        type(event["actor_id"]) is str
        and type(event["deal_id"]) is str
        and type(event["event_id"]) is str
        and type(event["event_type"]) is str
        and type(event["hash"]) is str
    ):
        return None
    pair = _HASH_PAIR + _ascii(event["hash"])
    start = text.find(_HASH_PAIR)
    if start < 0 or not text.startswith(pair + ITEM_MARK, start):
        return None
    return text[:start] + text[start + len(pair) :]


def encode_once(bundle: Mapping[str, Any], *, proof_hashes: bool = True) -> Encoded | None:
    """``bundle_hash`` (docs/formats.md §4), every event hash and every proof hash from one encoding
    of each event and proof. None when a value has no encoding: the plain path then reports it.

    ``proof_hashes=False``: only the work a verdict needs when no event binds the proofs (issue
    35): the proofs are written as one array, no text or hash per proof (``proof_hashes`` is
    then empty), so a bundle of millions of tiny proofs costs one encoding, not a hash each.
    """
    try:
        events = [py_marked(event) for event in bundle["events"]]
        if proof_hashes:
            proofs = [py_marked(proof) for proof in bundle["proofs"]]
            proofs_text = "[" + ITEM_MARK.join(proofs) + "]"
        else:
            proofs, proofs_text = [], py_marked(bundle["proofs"])
        pairs = [
            ("deal_id", py_marked(bundle["deal_id"])),
            ("events", "[" + ITEM_MARK.join(events) + "]"),
            ("merkle_inclusion", py_marked(bundle.get("merkle_inclusion"))),
            ("proofs", proofs_text),
        ]
        if "spec_version" in bundle:
            pairs.append(("spec_version", py_marked(bundle["spec_version"])))
    except (ValueError, TypeError, RecursionError):
        return None
    # The body's keys, already in sorted order, framed as the encoder frames an object.
    body = "{" + ITEM_MARK.join(_ascii(key) + KEY_MARK + value for key, value in pairs) + "}"
    event_hashes = []
    for event, text in zip(bundle["events"], events, strict=True):
        hashed = _hashed_fields_text(event, text)
        event_hashes.append(None if hashed is None else _marked_sha256(hashed, spaced=True))
    return Encoded(
        _marked_sha256(body, spaced="spec_version" not in bundle),
        tuple(event_hashes),
        tuple(_marked_sha256(text, spaced=False) for text in proofs),
    )
