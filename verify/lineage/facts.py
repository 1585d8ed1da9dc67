"""Facts: the typed, immutable fact model, FactHash and the Stigmem CID (docs/formats.md §5).

>>> from affidavit.verify.lineage.facts import parse_fact
>>> fact = parse_fact({
...     "entity": "https://example.com/entity/alice", "relation": "memory:role",
...     "value": {"type": "text", "v": "CEO"}, "source": "https://example.com/hr",
...     "scope": "team", "confidence": 0.97, "ts": "2026-01-01T00:00:00Z",
... })
>>> fact.hash
'edbe2b5f47e331d8353a37f9fcd579f5805e3d09d735baad5b3457cd12b26381'
>>> fact.cid
'sha256:e13d7df0b1894ffb7d23cd2c83ee56f1370f98a5a8fff46c2e5683c18a8ab9b3'

Validation implements ``specs/fact.schema.json`` exactly, refuses a hash listed twice in one
``derived_from`` and any number that would not read back after RFC 8785
(``canonical.unsafe_integer``). A quick pass (docs/architecture.md "Fast paths") writes the usual
shape's hashed bytes directly; anything unusual falls back to the field-by-field checks and ``jcs``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NewType, NoReturn, cast

from affidavit.verify import errors
from affidavit.verify.json.canonical import MAX_SAFE_INTEGER, es6_repr, jcs, sha256_hex
from affidavit.verify.json.forms import HEX64_PATTERN, is_hex64

__all__ = [
    "HASHED_FIELDS",
    "SCOPES",
    "VALUE_TYPES",
    "Fact",
    "FactHash",
    "FactSignature",
    "FactValue",
    "StigmemCid",
    "fact_hash_and_parents",
    "fact_hash_of",
    "is_fact_hash",
    "parse_fact",
    "stigmem_cid",
    "stigmem_value_v",
]

FactHash = NewType("FactHash", str)
"""64 lowercase hex characters: ``H(jcs(hashed fields))``."""
StigmemCid = NewType("StigmemCid", str)
"""``"sha256:" + 64 lowercase hex``: the Stigmem node's CID v2."""

# docs/formats.md §5: exactly the keys FactHash covers.
HASHED_FIELDS: Final = ("entity", "relation", "value", "scope", "source", "confidence", "ts")
SCOPES: Final = frozenset({"local", "team", "company", "public"})
VALUE_TYPES: Final = frozenset({"string", "text", "number", "boolean", "datetime", "ref", "null"})
_HASHED_SET: Final = frozenset(HASHED_FIELDS)
_STRING_VALUE_TYPES: Final = frozenset({"string", "text", "datetime", "ref"})
_INTERPRET_AS: Final = frozenset({"content", "instruction"})
_MAX_URI: Final = 2048
_MAX_TEXT: Final = 1024 * 1024
_MAX_DERIVED: Final = 1024
_MAX_KEY_ID: Final = 256
_MAX_SIG: Final = 256

# The same patterns as specs/fact.schema.json; fullmatch also refuses a trailing newline, which the
# schema refuses with its "not": {"pattern": "\n"} clauses.
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]+")
_RELATION: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*(:[A-Za-z0-9_.-]+)+")
_TS: Final = re.compile(
    r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{1,9})?(Z|\+00:00)"
)
_B64URL: Final = re.compile(r"[A-Za-z0-9_-]+={0,2}")
# The quick pass: entity, relation, source and ts joined by "\n" in one match. No part's pattern
# matches a newline, so the whole matches exactly when each part matches its own pattern.
_QUICK_STRINGS: Final = re.compile(
    "\n".join((_URI.pattern, _RELATION.pattern, _URI.pattern, _TS.pattern))
)
_HEX64_LIST: Final = re.compile(f"{HEX64_PATTERN}(?:,{HEX64_PATTERN})*")
_encode_string: Final = json.encoder.encode_basestring  # C; RFC 8785 §3.2.2.2 escapes
_KNOWN_KEYS: Final = _HASHED_SET | {"id", "derived_from", "signature"}
_TWO_53: Final = float(2**53)
_1E21: Final = 1e21  # RFC 8785 §3.2.2.3 / ES6: from here on numbers are written with an exponent


@dataclass(frozen=True, slots=True)
class FactValue:
    """A typed value ``{type, v}`` with an optional ``interpret_as`` (Stigmem ADR-003)."""

    type: str
    v: Any
    interpret_as: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form as read (``interpret_as`` only when it was present; a null value that
        omitted ``v`` has ``"v": null``)."""
        out: dict[str, Any] = {"type": self.type, "v": self.v}
        if self.interpret_as is not None:
            out["interpret_as"] = self.interpret_as
        return out


@dataclass(frozen=True, slots=True)
class FactSignature:
    """An optional Ed25519 signature over the FactHash hex string (docs/formats.md §5), b64url."""

    key_id: str
    sig: str
    alg: str = "Ed25519"

    def to_json(self) -> dict[str, str]:
        """The wire form ``{alg, key_id, sig}``."""
        return {"alg": self.alg, "key_id": self.key_id, "sig": self.sig}


@dataclass(frozen=True, slots=True)
class Fact:
    """One parsed, validated fact: ``hash`` recomputed, never read; ``document`` the object as
    received (extra keys kept, e.g. Stigmem metadata), read-only."""

    entity: str
    relation: str
    value: FactValue
    source: str
    scope: str
    confidence: float
    ts: str
    hash: FactHash
    derived_from: tuple[FactHash, ...] = ()
    fact_id: str | None = None
    signature: FactSignature | None = None
    document: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def cid(self) -> StigmemCid:
        """The Stigmem node's CID v2 of this fact (docs/formats.md §5)."""
        return stigmem_cid(self)


def is_fact_hash(value: object) -> bool:
    """True when ``value`` is a 64-character lowercase hex string (seed 002 §20.6.1 rule 1)."""
    return is_hex64(value)


def fact_hash_of(document: Mapping[str, Any]) -> FactHash:
    """``H(jcs({entity, relation, value, scope, source, confidence, ts}))`` of a fact document.

    The document is not validated here; use :func:`parse_fact` for untrusted input.

    Raises:
        ``canonical.*``: a hashed value has no RFC 8785 form.
    """
    # docs/formats.md §5: only these keys, the value in its normal form ("Facts").
    body = {name: document[name] for name in HASHED_FIELDS}
    body["value"] = _hashed_value(body["value"])
    return FactHash(sha256_hex(jcs(body)))


def parse_fact(unverified: object, *, what: str = "fact") -> Fact:
    """Validate ``unverified`` against specs/fact.schema.json and return a :class:`Fact`.

    Raises:
        ``fact.invalid``: the object does not match the schema (``fact.invalid``).
        ``fact.derived_from_malformed``: a derived_from entry is malformed or repeated.
        ``canonical.*``: a hashed value has no RFC 8785 form (e.g. an integer past 2^53).
    """
    doc = _document(unverified, what)
    derived, body = _validated(doc, what)
    signature = _signature(doc["signature"], what) if "signature" in doc else None
    value = doc["value"]
    return Fact(
        entity=doc["entity"],
        relation=doc["relation"],
        value=FactValue(
            type=value["type"], v=value.get("v"), interpret_as=value.get("interpret_as")
        ),
        source=doc["source"],
        scope=doc["scope"],
        confidence=doc["confidence"],
        ts=doc["ts"],
        hash=_hash_of(doc, body),
        derived_from=derived,
        fact_id=doc.get("id"),
        signature=signature,
        document=doc,
    )


def fact_hash_and_parents(
    unverified: object, *, what: str = "fact"
) -> tuple[FactHash, tuple[FactHash, ...]]:
    """Validate exactly as :func:`parse_fact` does; return only ``(FactHash, derived_from)``.

    Raises:
        ``fact.invalid``, ``fact.derived_from_malformed``, ``canonical.*``: as :func:`parse_fact`.
    """
    doc = _document(unverified, what)
    derived, body = _validated(doc, what)
    if "signature" in doc:
        _signature(doc["signature"], what)
    return _hash_of(doc, body), derived


def stigmem_value_v(value: FactValue) -> str:
    """The Stigmem node's string form of ``v`` (docs/formats.md §5): "null", "true"/"false" by
    truthiness, else ``str(v)`` (``1.0`` stays ``"1.0"``)."""
    if value.type == "null":
        return "null"
    if value.type == "boolean":
        return "true" if value.v else "false"
    return str(value.v)


def stigmem_cid(fact: Fact, *, value_v: str | None = None) -> StigmemCid:
    """``"sha256:" + H(json.dumps(body, sort_keys, compact, ensure_ascii=False))`` (CID v2).

    The body is ``{confidence, entity, interpret_as, relation, scope, source, value_type,
    value_v}`` as the node computes it (docs/formats.md "Facts"): confidence a float,
    ``interpret_as`` "content" by default, entity and source lowercased. ``value_v`` replaces
    :func:`stigmem_value_v` (the node's stored string of a number is not in its response).
    """
    body = {
        "confidence": float(fact.confidence),
        "entity": fact.entity.lower(),
        "interpret_as": fact.value.interpret_as or "content",
        "relation": fact.relation,
        "scope": fact.scope,
        "source": fact.source.lower(),
        "value_type": fact.value.type,
        "value_v": stigmem_value_v(fact.value) if value_v is None else value_v,
    }
    encoded = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return StigmemCid("sha256:" + sha256_hex(encoded.encode("utf-8", "surrogatepass")))


def _document(unverified: object, what: str) -> dict[str, Any]:
    if not isinstance(unverified, dict):
        raise errors.LineageError("fact.invalid", f"{what} must be a JSON object")
    doc: dict[str, Any] = unverified
    if not doc.keys() >= _HASHED_SET:
        missing = [name for name in HASHED_FIELDS if name not in doc]
        raise errors.LineageError(
            "fact.invalid", f"{what}: missing {', '.join(missing)}", details={"missing": missing}
        )
    return doc


def _validated(doc: dict[str, Any], what: str) -> tuple[tuple[FactHash, ...], bytes | None]:
    """Every check but the signature's: derived_from and, when the quick pass wrote them, the
    hashed body's RFC 8785 bytes."""
    if len(doc) > len(HASHED_FIELDS) and not doc.keys() <= _KNOWN_KEYS:
        # Keys outside the hash are stored too: the same number rule holds for them.
        for name in doc.keys() - _KNOWN_KEYS:
            _check_numbers(doc[name], what, name)
    quick = _quick(doc)
    if quick is None:
        return _checks(doc, what), None
    return quick


def _hash_of(doc: dict[str, Any], body: bytes | None) -> FactHash:
    # docs/formats.md §5: FactHash = H(jcs(hashed fields)); jcs decides when the quick pass did not.
    return fact_hash_of(doc) if body is None else FactHash(hashlib.sha256(body).hexdigest())


def _checks(doc: dict[str, Any], what: str) -> tuple[FactHash, ...]:
    # The field-by-field checks, in schema order; each failure raises its own message.
    _uri(doc["entity"], what, "entity")
    _uri(doc["source"], what, "source")
    relation = doc["relation"]
    if not (
        isinstance(relation, str) and len(relation) <= _MAX_URI and _RELATION.fullmatch(relation)
    ):
        _bad(what, "relation", "must be namespaced, e.g. memory:role")
    scope = doc["scope"]
    if not (isinstance(scope, str) and scope in SCOPES):
        _bad(what, "scope", f"must be one of {', '.join(sorted(SCOPES))}")
    confidence = doc["confidence"]
    if type(confidence) not in (int, float) or not 0 <= confidence <= 1:
        _bad(what, "confidence", "must be a number in [0, 1]")
    ts = doc["ts"]
    if not (isinstance(ts, str) and _TS.fullmatch(ts)):
        _bad(what, "ts", "must be RFC 3339 UTC, e.g. 2026-01-01T00:00:00Z")
    _value(doc["value"], what)
    fact_id = doc.get("id")
    if "id" in doc and not (isinstance(fact_id, str) and 0 < len(fact_id) <= _MAX_URI):
        _bad(what, "id", "must be a non-empty string")
    return _derived_from(doc["derived_from"], what) if "derived_from" in doc else ()


def _quick(doc: dict[str, Any]) -> tuple[tuple[FactHash, ...], bytes | None] | None:
    """``(derived_from, hashed body or None)`` when the usual shape passes every check of
    :func:`_checks` (exact types, same patterns and limits); None means "ask the slow checks"."""
    entity, relation, source, ts = doc["entity"], doc["relation"], doc["source"], doc["ts"]
    scope, confidence, value = doc["scope"], doc["confidence"], doc["value"]
    if not (
        type(entity) is str
        and type(relation) is str
        and type(source) is str
        and type(ts) is str
        and type(scope) is str
        and len(entity) <= _MAX_URI
        and len(relation) <= _MAX_URI
        and len(source) <= _MAX_URI
        and scope in SCOPES
        and (type(confidence) is float or type(confidence) is int)
        and 0 <= confidence <= 1
        and type(value) is dict
        and _QUICK_STRINGS.fullmatch(f"{entity}\n{relation}\n{source}\n{ts}")
    ):
        return None
    value_text = _quick_value(value)
    if value_text is None:
        return None
    if "id" in doc:
        fact_id = doc["id"]
        if not (type(fact_id) is str and 0 < len(fact_id) <= _MAX_URI):
            return None
    derived = _quick_derived(doc["derived_from"]) if "derived_from" in doc else ()
    if derived is None:
        return None
    if not value_text:  # a number jcs must write (or refuse)
        return derived, None
    confidence_text = es6_repr(confidence) if type(confidence) is float else repr(confidence)
    if confidence_text is None:
        return derived, None  # 1e-05, 0.0, 1.0: not their ES6 form (RFC 8785 §3.2.2.3)
    # docs/formats.md §5, RFC 8785 §3.2.3: fixed ASCII keys, written in sorted order.
    text = (
        f'{{"confidence":{confidence_text},"entity":{_encode_string(entity)},'
        f'"relation":{_encode_string(relation)},"scope":"{scope}",'
        f'"source":{_encode_string(source)},"ts":"{ts}","value":{value_text}}}'
    )
    try:
        return derived, text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: jcs raises the right error
        return derived, None


def _quick_value(value: dict[str, Any]) -> str | None:
    """The value's RFC 8785 text when it passes :func:`_value`'s checks; "" when it does but
    jcs must write it; None when the slow checks must decide."""
    kind = value.get("type")
    if type(kind) is not str or "v" not in value:
        return None
    head = f'{{"type":"{kind}","v":'
    if len(value) != 2:
        interpret_as = value.get("interpret_as")
        if len(value) != 3 or type(interpret_as) is not str or interpret_as not in _INTERPRET_AS:
            return None
        if interpret_as == "instruction":  # "content" is the default: outside the hash
            head = f'{{"interpret_as":"instruction","type":"{kind}","v":'
    v = value["v"]
    if kind in _STRING_VALUE_TYPES:
        return head + _encode_string(v) + "}" if type(v) is str and len(v) <= _MAX_TEXT else None
    if kind == "number":
        if type(v) is int:
            return head + str(v) + "}" if -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER else ""
        if type(v) is not float or _unsafe_float(v):
            return None
        text = es6_repr(v)  # RFC 8785 §3.2.2.3
        return head + text + "}" if text is not None else ""
    if kind == "boolean":
        return head + ("true}" if v is True else "false}") if v is True or v is False else None
    return head + "null}" if kind == "null" and v is None else None


def _quick_derived(entries: object) -> tuple[FactHash, ...] | None:
    # seed 002 §20.6.1 rule 1, the usual form: distinct bare FactHash strings.
    if type(entries) is not list or len(entries) > _MAX_DERIVED:
        return None
    if not entries:
        return ()
    try:
        joined = ",".join(entries)
    except TypeError:  # e.g. a Stigmem {hash, fact_id} entry
        return None
    if not _HEX64_LIST.fullmatch(joined):
        return None
    hashes = tuple(joined.split(","))  # plain str, as _derived_from gives
    return cast("tuple[FactHash, ...]", hashes) if len(set(hashes)) == len(hashes) else None


def _hashed_value(value: object) -> object:
    # docs/formats.md "Facts": the value's normal form FactHash covers: {type, v}, plus
    # interpret_as only when it is "instruction" ("content" is the default).
    if not isinstance(value, dict):
        return value
    out = {"type": value.get("type"), "v": value.get("v")}
    if value.get("interpret_as") == "instruction":
        out["interpret_as"] = "instruction"
    return out


def _unsafe_float(v: float) -> bool:
    """A float RFC 8785 writes as an integer outside +-(2^53-1), which strict readers refuse."""
    return _TWO_53 <= abs(v) < _1E21


def _unsafe_number(v: float, what: str, name: str) -> NoReturn:
    raise errors.CanonicalError(
        "canonical.unsafe_integer",
        f"{what}: {name} {v!r} is a whole number outside +-(2^53-1): RFC 8785 writes it as the "
        f"integer {int(v)}, which strict readers refuse; send it as a string or a smaller number",
        details={"field": name, "value": repr(v)},
    )


def _check_numbers(value: object, what: str, name: str) -> None:
    """Refuse, anywhere in ``value``, a number that would not read back after RFC 8785."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is float and _unsafe_float(item):
            _unsafe_number(item, what, name)
        elif type(item) is int and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
            raise errors.CanonicalError(
                "canonical.unsafe_integer",
                f"{what}: {name} holds the integer {item}, outside +-(2^53-1)",
                details={"field": name, "value": str(item)},
            )
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _bad(what: str, name: str, rule: str) -> NoReturn:
    raise errors.LineageError("fact.invalid", f"{what}: {name} {rule}", details={"field": name})


def _uri(value: object, what: str, name: str) -> str:
    if isinstance(value, str) and len(value) <= _MAX_URI and _URI.fullmatch(value):
        return value
    _bad(what, name, "must be a URI (scheme:rest, no whitespace)")


def _value(value: object, what: str) -> FactValue:
    if not isinstance(value, dict) or "type" not in value:
        _bad(what, "value", "must be an object {type, v}")
    if "v" not in value and value["type"] != "null":  # {"type": "null"} may omit v (Stigmem)
        _bad(what, "value", "must be an object {type, v}")
    if set(value) - {"type", "v", "interpret_as"}:
        _bad(what, "value", "may hold only type, v and interpret_as")
    kind, v = value["type"], value.get("v")
    if not (isinstance(kind, str) and kind in VALUE_TYPES):
        _bad(what, "value.type", f"must be one of {', '.join(sorted(VALUE_TYPES))}")
    if kind in _STRING_VALUE_TYPES:
        ok = isinstance(v, str) and len(v) <= _MAX_TEXT
    elif kind == "number":
        ok = type(v) in (int, float)
        if ok and type(v) is float and _unsafe_float(v):
            _unsafe_number(v, what, "value.v")
    elif kind == "boolean":
        ok = type(v) is bool
    else:
        ok = v is None
    if not ok:
        _bad(what, "value.v", f"does not fit value type {kind}")
    interpret_as = value.get("interpret_as")
    if "interpret_as" in value and interpret_as not in _INTERPRET_AS:
        _bad(what, "value.interpret_as", "must be content or instruction")
    return FactValue(type=kind, v=v, interpret_as=interpret_as)


def _derived_from(entries: object, what: str) -> tuple[FactHash, ...]:
    # seed 002 §20.6.1 rule 1: each entry a 64-character lowercase hex FactHash.
    if not isinstance(entries, list):
        raise _bad_derived(what, "derived_from must be an array")
    if len(entries) > _MAX_DERIVED:
        raise _bad_derived(what, f"derived_from has over {_MAX_DERIVED} entries")
    hashes: list[FactHash] = []
    for index, entry in enumerate(entries):
        candidate = entry.get("hash") if isinstance(entry, dict) else entry
        if isinstance(entry, dict):  # Stigmem form {hash, fact_id}
            fact_id = entry.get("fact_id")
            if fact_id is not None and not isinstance(fact_id, str):
                candidate = None
        if not is_fact_hash(candidate):
            hint = ""
            if isinstance(entry, dict) and (
                "fact_id" in entry or str(entry.get("hash", "")).startswith("sha256:")
            ):
                hint = " (a Stigmem node reference: map it with affidavit facts pull)"
            message = f"derived_from[{index}] is not a 64-character lowercase hex FactHash{hint}"
            raise _bad_derived(what, message, index=index)
        hashes.append(FactHash(str(candidate)))
    if len(set(hashes)) != len(hashes):
        raise _bad_derived(what, "derived_from lists the same hash twice")
    return tuple(hashes)


def _bad_derived(what: str, message: str, **details: Any) -> errors.LineageError:
    return errors.LineageError("fact.derived_from_malformed", f"{what}: {message}", details=details)


def _signature(value: object, what: str) -> FactSignature:
    if not isinstance(value, dict) or set(value) != {"alg", "key_id", "sig"}:
        _bad(what, "signature", "must be an object {alg, key_id, sig}")
    alg, key_id, sig = value["alg"], value["key_id"], value["sig"]
    if alg != "Ed25519" or type(alg) is not str:
        _bad(what, "signature.alg", "must be Ed25519")
    if not (isinstance(key_id, str) and 0 < len(key_id) <= _MAX_KEY_ID):
        _bad(what, "signature.key_id", "must be a non-empty string")
    if not (isinstance(sig, str) and len(sig) <= _MAX_SIG and _B64URL.fullmatch(sig)):
        _bad(what, "signature.sig", "must be b64url")
    return FactSignature(key_id=key_id, sig=sig)
