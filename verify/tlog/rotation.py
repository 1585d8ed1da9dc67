"""Log key rotations as a client reads them (docs/adr/0011): the statement the old key signs to
hand the log over, parsed strictly and verified key by key.

A rotation statement (``affidavit.log_key_rotation.v1``, docs/formats.md §4 "Key history and
rotation statements") is one compact JSON object, signed over :func:`rotation_message` by the
previous key and countersigned by the new one. The log publishes its history next to its
checkpoint, one statement a line (:data:`ROTATIONS_PATH`); a client that trusts key ``K`` follows
the statements after ``K`` (:func:`follow_rotations`); anything else is ``tlog.rotation_unproven``.

>>> from affidavit.verify.crypto.keys import Ed25519PublicKey
>>> rotation_message(log_id="example/log", seq=1, previous_public_key="AAA=", public_key="BBB=",
...                  key_id="k2", valid_from="2026-01-01T00:00:00Z", tree_size=7, root_hash="ab")
b'affidavit.log_key_rotation.v1|example/log|1|AAA=|BBB=|k2|2026-01-01T00:00:00Z|7|ab'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519_b64
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.json.strict import load_object

__all__ = [
    "MAX_ROTATIONS_BYTES",
    "ROTATIONS_PATH",
    "ROTATION_FORMAT",
    "KeyRotation",
    "encode_rotations",
    "follow_rotations",
    "parse_rotation",
    "rotation_message",
]

ROTATION_FORMAT: Final = "affidavit.log_key_rotation.v1"
ROTATIONS_PATH: Final = "key-rotations"  # next to ``checkpoint`` under the log's prefix
MAX_ROTATIONS_BYTES: Final = 1 << 20
_FIELDS: Final = frozenset({
    "format", "log_id", "seq", "previous_public_key", "public_key", "key_id", "valid_from",
    "tree_size", "root_hash", "signature", "new_key_signature",
})  # fmt: skip


def rotation_message(
    *,
    log_id: str,
    seq: int,
    previous_public_key: str,
    public_key: str,
    key_id: str,
    valid_from: str,
    tree_size: int,
    root_hash: str,
) -> bytes:
    """The bytes both signatures of a rotation statement cover (docs/adr/0011 §3): the format
    and the eight fields, ``|``-separated, UTF-8 (never a tree-head or log-state message)."""
    fields = (ROTATION_FORMAT, log_id, seq, previous_public_key, public_key, key_id, valid_from,
              tree_size, root_hash)  # fmt: skip
    return "|".join(map(str, fields)).encode()


@dataclass(frozen=True, slots=True)
class KeyRotation:
    """A parsed, unverified (:meth:`verify`) rotation statement: key #``seq`` of ``log_id`` is
    ``public_key`` from ``valid_from``, taking over the tree of ``tree_size`` leaves and root
    ``root_hash`` from ``previous_key``; ``statement`` is the published text."""

    log_id: str
    seq: int
    previous_key: Ed25519PublicKey
    public_key: Ed25519PublicKey
    key_id: str
    valid_from: str
    tree_size: int
    root_hash: bytes
    statement: str
    signature: str
    new_key_signature: str

    def message(self) -> bytes:
        """The signed bytes (:func:`rotation_message`)."""
        fields = self.to_json()
        del fields["format"], fields["signature"], fields["new_key_signature"]
        return rotation_message(**fields)

    def verify(self) -> None:
        """Both signatures: by the previous key (the handover) and by the new key (possession).

        Raises:
            ``tlog.rotation_unproven``: either does not verify.
        """
        message = self.message()
        for signer, value, what in (
            (self.previous_key, self.signature, "the previous key's signature"),
            (self.public_key, self.new_key_signature, "the new key's countersignature"),
        ):
            try:
                verify_ed25519_b64(signer, message, value)
            except errors.SignatureError as e:
                raise _unproven(f"rotation #{self.seq}: {what} does not verify ({e.code})") from e

    def to_json(self) -> dict[str, Any]:
        """The statement's fields (signatures included), as published."""
        return {
            "format": ROTATION_FORMAT,
            "log_id": self.log_id,
            "seq": self.seq,
            "previous_public_key": self.previous_key.b64,
            "public_key": self.public_key.b64,
            "key_id": self.key_id,
            "valid_from": self.valid_from,
            "tree_size": self.tree_size,
            "root_hash": self.root_hash.hex(),
            "signature": self.signature,
            "new_key_signature": self.new_key_signature,
        }


def parse_rotation(statement: str) -> KeyRotation:
    """One rotation statement, strictly: exactly the eleven fields, each of its type.

    Raises:
        ``tlog.rotation_unproven``: not such a statement.
    """
    try:
        document = load_object(statement.encode(), what="key rotation")
    except errors.ParseError as e:
        raise _unproven(f"a rotation statement is not strict JSON ({e.code})") from e
    if set(document) != _FIELDS or document["format"] != ROTATION_FORMAT:
        raise _unproven(f"a rotation statement must be a {ROTATION_FORMAT} with {sorted(_FIELDS)}")
    texts = ("log_id", "previous_public_key", "public_key", "key_id", "valid_from", "signature")
    if (
        not all(isinstance(document[name], str) for name in (*texts, "new_key_signature"))
        or not all(type(document[n]) is int and document[n] >= 0 for n in ("seq", "tree_size"))
        or not is_hex64(document["root_hash"])
        or document["seq"] < 1
    ):
        raise _unproven("a rotation statement has a field of the wrong type or form")
    try:
        previous = Ed25519PublicKey.from_b64(document["previous_public_key"])
        public = Ed25519PublicKey.from_b64(document["public_key"])
    except errors.AffidavitError as e:
        raise _unproven(f"rotation #{document['seq']}: a key is malformed ({e.code})") from e
    return KeyRotation(
        document["log_id"],
        document["seq"],
        previous,
        public,
        document["key_id"],
        document["valid_from"],
        document["tree_size"],
        bytes.fromhex(document["root_hash"]),
        statement,
        document["signature"],
        document["new_key_signature"],
    )


def encode_rotations(statements: list[str]) -> bytes:
    """The :data:`ROTATIONS_PATH` document: each statement on its own line, oldest first."""
    return "".join(statement + "\n" for statement in statements).encode()


def follow_rotations(
    document: bytes,
    trusted: Ed25519PublicKey,
    *,
    log_id: str | None = None,
    seq: int | None = None,
) -> tuple[KeyRotation, ...]:
    """The rotations of ``document`` (:data:`ROTATIONS_PATH`) after ``trusted`` (``()`` when it is
    the last key), each verified and following the one before: consecutive ``seq`` (after the
    given ``seq``), one ``log_id`` (the given one). Earlier statements are only parsed.

    Raises:
        ``tlog.rotation_unproven``: the document is malformed, does not name ``trusted``, or a
            statement after it does not verify or does not follow.
    """
    if len(document) > MAX_ROTATIONS_BYTES:
        raise _unproven(f"{ROTATIONS_PATH} is over {MAX_ROTATIONS_BYTES} bytes")
    try:
        text = document.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _unproven(f"{ROTATIONS_PATH} is not UTF-8") from e
    if text and not text.endswith("\n"):
        raise _unproven(f"{ROTATIONS_PATH}: every statement ends with a newline")
    rotations = [parse_rotation(line) for line in text.split("\n")[:-1]]
    start = next((i for i, r in enumerate(rotations) if r.previous_key == trusted), None)
    if start is None:
        if rotations and rotations[-1].public_key == trusted:
            return ()
        raise _unproven(f"no rotation in {ROTATIONS_PATH} is signed by the trusted key")
    followed = rotations[start:]
    key, expected_seq = trusted, followed[0].seq if seq is None else seq + 1
    expected_log = log_id if log_id is not None else followed[0].log_id
    for rotation in followed:
        if rotation.previous_key != key or rotation.seq != expected_seq:
            raise _unproven(
                f"rotation #{rotation.seq} does not follow the key before it (seq {expected_seq})"
            )
        if rotation.log_id != expected_log:
            raise _unproven(
                f"rotation #{rotation.seq} is for log {rotation.log_id!r}, not {expected_log!r}"
            )
        rotation.verify()  # docs/adr/0011 §3: signed by the key it replaces, countersigned
        key, expected_seq = rotation.public_key, expected_seq + 1
    return tuple(followed)


def _unproven(message: str) -> errors.ProofError:
    return errors.ProofError("tlog.rotation_unproven", f"key rotation: {message}")
