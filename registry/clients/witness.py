"""The log's client of a C2SP tlog-witness: one ``add-checkpoint`` request, through the one
fetcher (:mod:`affidavit.registry.clients.https`).

A witness is named ``URL#VKEY``: ``URL`` its submission prefix (the request goes to
``URL/add-checkpoint``), ``VKEY`` a cosigner verifier key of it (type 0x04 Ed25519 or 0x06
ML-DSA-44, ``affidavit witness vkey``). More keys of one witness: ``URL#VKEY1#VKEY2``, or the same
URL given again (:func:`parse_witnesses` merges them). :func:`add_checkpoint` returns a 200's
signature lines as :class:`Cosigned` (verified by :mod:`affidavit.registry.witnessing`) and a
409's size as :class:`Conflict`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from affidavit.registry.clients.https import parse_url, send
from affidavit.verify import errors
from affidavit.verify.tlog.cosignature import Cosigner, parse_cosigner_vkey

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MAX_ANSWER_BYTES",
    "Conflict",
    "Cosigned",
    "Witness",
    "add_checkpoint",
    "add_checkpoint_body",
    "bad_response",
    "parse_witness",
    "parse_witnesses",
]

MAX_ANSWER_BYTES: Final = 256 * 1024  # a few signature lines; ML-DSA-44 lines are ~3.3 KB
_SIZE: Final = re.compile(r"(0|[1-9][0-9]{0,19})\n")
_EM_DASH: Final = "\u2014 "


@dataclass(frozen=True, slots=True)
class Witness:
    """A witness: its submission prefix (no trailing slash) and the cosigner keys trusted for
    it."""

    url: str
    cosigners: tuple[Cosigner, ...]


@dataclass(frozen=True, slots=True)
class Cosigned:
    """A 200 answer: the signature lines, each ending in a newline (not yet verified)."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conflict:
    """A 409 answer: the size of the latest checkpoint the witness cosigned for the log."""

    size: int


def parse_witness(text: str) -> Witness:
    """Parse ``URL#VKEY[#VKEY...]``.

    Raises:
        ``usage.invalid``: no ``#``, or the URL breaks the one URL rule
            (:func:`~affidavit.registry.clients.https.parse_url`; a prefix: no query).
        ``tlog.cosigner_key_malformed``, ``tlog.cosigner_unsupported``, ``key.*``: a bad vkey.
    """
    url, *vkeys = text.strip().split("#")
    url = url.rstrip("/")
    if not vkeys or not all(vkeys):
        raise errors.UsageError(f"witness {text!r} must be URL#VKEY (the witness's cosigner key)")
    try:
        parse_url(url, allow_query=False)
    except errors.UsageError as e:
        raise errors.UsageError(f"witness {e.message}") from None
    return Witness(url, tuple(dict.fromkeys(parse_cosigner_vkey(v) for v in vkeys)))


def parse_witnesses(texts: Iterable[str]) -> tuple[Witness, ...]:
    """Parse every ``URL#VKEY``; one URL given several times is one witness with all its keys.

    Raises:
        as :func:`parse_witness`.
    """
    merged: dict[str, list[Cosigner]] = {}
    for text in texts:
        parsed = parse_witness(text)
        keys = merged.setdefault(parsed.url, [])
        keys.extend(c for c in parsed.cosigners if c not in keys)
    return tuple(Witness(url, tuple(keys)) for url, keys in merged.items())


def add_checkpoint_body(old_size: int, proof: Sequence[bytes], note: str) -> bytes:
    """The request body: ``old <size>``, the proof hashes in base64, an empty line, the note.

    Raises:
        ``usage.invalid``: a negative size, more than 63 hashes, or a note without a final
            newline.
    """
    if old_size < 0 or len(proof) > 63 or not note.endswith("\n"):
        raise errors.UsageError("add-checkpoint needs old >= 0, at most 63 hashes and a note")
    lines = [f"old {old_size}", *(base64.b64encode(h).decode("ascii") for h in proof)]
    return ("\n".join(lines) + "\n\n" + note).encode("utf-8")


def add_checkpoint(
    client: httpx.Client, witness: Witness, old_size: int, proof: Sequence[bytes], note: str
) -> Cosigned | Conflict:
    """POST one add-checkpoint request to ``witness`` and read its answer (tlog-witness).

    Raises:
        ``net.unavailable``, ``net.timeout``: the witness could not be reached (transport,
            deadline).
        ``tlog.witness_refused``: it answered a status other than 200 and 409.
        ``tlog.witness_bad_response``: the 200 or 409 body is not what tlog-witness defines.
    """
    url = f"{witness.url}/add-checkpoint"
    answer = send(
        client,
        "POST",
        url,
        max_bytes=MAX_ANSWER_BYTES,
        content=add_checkpoint_body(old_size, proof, note),
        headers={"content-type": "text/plain; charset=utf-8"},
    )
    if answer.status == 409:
        text = answer.body.decode("ascii", "replace")
        matched = _SIZE.fullmatch(text)
        if matched is None:
            raise bad_response(witness, "a 409 answer must be the cosigned size and a newline")
        return Conflict(int(matched.group(1)))
    if answer.status != 200:
        first = answer.body[:200].decode("utf-8", "replace").splitlines()
        reason = first[0] if first else ""
        raise errors.ProofError(
            "tlog.witness_refused",
            f"{witness.url}: HTTP {answer.status}" + (f": {reason}" if reason else ""),
            details={"url": witness.url, "status": answer.status, "reason": reason},
        )
    try:
        text = answer.body.decode("utf-8")
    except UnicodeDecodeError:
        raise bad_response(witness, "the cosignature lines are not UTF-8") from None
    lines = text.splitlines(keepends=True)
    if not lines or not all(line.startswith(_EM_DASH) and line.endswith("\n") for line in lines):
        raise bad_response(
            witness, "a 200 answer must be note signature lines, each ending in a newline"
        )
    return Cosigned(tuple(lines))


def bad_response(witness: Witness, message: str) -> errors.ProofError:
    """``tlog.witness_bad_response``: ``witness`` answered what tlog-witness does not define."""
    return errors.ProofError(
        "tlog.witness_bad_response", f"{witness.url}: {message}", details={"url": witness.url}
    )
