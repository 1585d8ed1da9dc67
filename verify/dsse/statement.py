"""The in-toto Statement v1 (in-toto attestation spec v1, statement.md), read strictly from a
DSSE payload: each failure its own ``statement.*`` code (exit 1). Unknown fields are ignored
("consumers MUST ignore unrecognized fields") but kept in :attr:`Statement.document`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.dsse.envelope import IN_TOTO_PAYLOAD_TYPE, Envelope
from affidavit.verify.json.strict import loads

__all__ = [
    "HEX_DIGEST_LENGTHS",
    "STATEMENT_V1",
    "Statement",
    "Subject",
    "parse_statement",
    "statement_of",
]

STATEMENT_V1: Final = "https://in-toto.io/Statement/v1"
# Other versions of the in-toto Statement (v0.1, the v1.0 draft): named, refused.
_STATEMENT_PREFIX: Final = "https://in-toto.io/Statement/"

# digest_set.md: lowercase hex of the digest; the length each fixed-size algorithm gives.
HEX_DIGEST_LENGTHS: Final[Mapping[str, int]] = {
    "sha256": 64,
    "sha384": 96,
    "sha512": 128,
    "sha224": 56,
    "sha512_224": 56,
    "sha512_256": 64,
    "sha3_224": 56,
    "sha3_256": 64,
    "sha3_384": 96,
    "sha3_512": 128,
    "sha1": 40,
    "md5": 32,
}
_LOWER_HEX: Final = re.compile(r"[0-9a-f]+")
# RFC 3986 §3.1 scheme, then the rest without whitespace or control characters.
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]+")
_STRING_FIELDS: Final = ("name", "uri", "mediaType", "downloadLocation")


@dataclass(frozen=True, slots=True)
class Subject:
    """One subject: its name (``""`` when unset) and its digest set (algorithm -> value)."""

    name: str
    digest: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Statement:
    """An in-toto Statement v1; ``document`` is the whole object as parsed (unknown fields
    included), ``predicate`` None when absent."""

    subjects: tuple[Subject, ...]
    predicate_type: str
    predicate: Mapping[str, Any] | None
    document: Mapping[str, Any]


def statement_of(envelope: Envelope) -> Statement:
    """The Statement an envelope carries: its ``payloadType`` must be in-toto's (in-toto
    attestation spec v1, envelope.md: "payloadType MUST be set to application/vnd.in-toto+json").

    Raises:
        ``dsse.payload_type_unsupported``: another payloadType (the payload is not read).
        ``statement.*``: see :func:`parse_statement`.
    """
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
        raise errors.EnvelopeError(
            "dsse.payload_type_unsupported",
            f"payloadType is {envelope.payload_type!r}, not {IN_TOTO_PAYLOAD_TYPE!r}",
            details={"payload_type": envelope.payload_type},
        )
    return parse_statement(envelope.payload)


def parse_statement(payload: bytes) -> Statement:
    """Read ``payload`` as an in-toto Statement v1, strictly (module docstring).

    Raises:
        ``statement.not_json``, ``statement.malformed``, ``statement.version_unsupported``,
        ``statement.wrong_type``, ``statement.subject_invalid``, ``statement.digest_invalid``,
        ``statement.predicate_type_invalid``, ``statement.predicate_invalid``.
    """
    try:
        document = loads(payload)
    except errors.ParseError as e:
        raise errors.EnvelopeError(
            "statement.not_json",
            f"the payload is not strict JSON: {e.code}: {e.message}",
            details={"json_code": e.code},
        ) from None
    if not isinstance(document, dict):
        raise errors.EnvelopeError("statement.malformed", "the Statement is not a JSON object")
    _check_type(document.get("_type"))
    subjects = _subjects(document.get("subject"))
    predicate_type = document.get("predicateType")
    if not isinstance(predicate_type, str) or not _URI.fullmatch(predicate_type):
        raise errors.EnvelopeError(
            "statement.predicate_type_invalid",
            f"predicateType must be a non-empty URI string, got {_shown(predicate_type)}",
        )
    predicate = document.get("predicate")
    if "predicate" in document and not isinstance(predicate, dict):
        raise errors.EnvelopeError(
            "statement.predicate_invalid", "predicate, when present, must be a JSON object"
        )
    return Statement(subjects, predicate_type, predicate, document)


def _check_type(kind: Any) -> None:
    if kind == STATEMENT_V1:
        return
    if not isinstance(kind, str):
        raise errors.EnvelopeError(
            "statement.malformed", f"_type must be the string {STATEMENT_V1!r}"
        )
    if kind.startswith(_STATEMENT_PREFIX):
        raise errors.EnvelopeError(
            "statement.version_unsupported",
            f"_type is {kind!r}: only {STATEMENT_V1!r} is read",
            details={"type": kind},
        )
    raise errors.EnvelopeError(
        "statement.wrong_type",
        f"_type is {kind!r}, not an in-toto Statement ({STATEMENT_V1!r})",
        details={"type": kind},
    )


def _subjects(value: Any) -> tuple[Subject, ...]:
    if not isinstance(value, list) or not value:
        raise _subject_invalid("subject must be a non-empty array")
    subjects: list[Subject] = []
    for index, entry in enumerate(value):
        where = f"subject[{index}]"
        if not isinstance(entry, dict):
            raise _subject_invalid(f"{where} is not an object")
        for field in _STRING_FIELDS:
            if field in entry and not isinstance(entry[field], str):
                raise _subject_invalid(f"{where}.{field} must be a string")
        if "annotations" in entry and not isinstance(entry["annotations"], dict):
            raise _subject_invalid(f"{where}.annotations must be an object")
        if "digest" not in entry:
            raise _subject_invalid(f"{where} has no digest (statement.md: MUST be set)")
        subjects.append(Subject(entry.get("name", ""), _digest(entry["digest"], where)))
    return tuple(subjects)


def _digest(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        raise _digest_invalid(f"{where}.digest must be a non-empty object")
    for algorithm, digest in value.items():
        if not algorithm:
            raise _digest_invalid(f"{where}.digest has an empty algorithm name")
        if not isinstance(digest, str) or not digest:
            raise _digest_invalid(f"{where}.digest.{algorithm} must be a non-empty string")
        length = HEX_DIGEST_LENGTHS.get(algorithm)
        if length is not None and (len(digest) != length or not _LOWER_HEX.fullmatch(digest)):
            message = f"{where}.digest.{algorithm} must be {length} lowercase hex characters"
            raise _digest_invalid(message, algorithm=algorithm)
    return dict(value)


def _subject_invalid(message: str) -> errors.EnvelopeError:
    return errors.EnvelopeError("statement.subject_invalid", message)


def _digest_invalid(message: str, **details: Any) -> errors.EnvelopeError:
    return errors.EnvelopeError("statement.digest_invalid", message, details=details)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
