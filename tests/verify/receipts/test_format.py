"""The receipt document: strict parse, receipt_hash, the signed message, the capability rule."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.errors import AffidavitError
from affidavit.verify.json.canonical import jcs
from affidavit.verify.receipts.format import (
    SIGNING_PREFIX,
    Digest,
    key_id_of,
    load_receipt,
    parse_receipt,
    receipt_body,
    receipt_hash_of,
    signing_message,
)

from tests.conftest import raises_code
from tests.verify.receipts.receipt_fixtures import ADAPTER, CONTENT, LOSSY, SOURCE, TS, receipt


def test_parse_round_trip() -> None:
    document = receipt()
    parsed = parse_receipt(document)
    assert parsed.source == Digest.of(SOURCE)
    assert parsed.content == Digest.of(CONTENT)
    assert parsed.source_uri == "notes/a.txt"
    assert (parsed.adapter_name, parsed.adapter_version) == ("demo-lossy", "1.0.0")
    assert parsed.transformations == LOSSY
    assert parsed.capability == "declared_lossy"
    assert parsed.chunks is None
    assert parsed.issued_at == TS
    assert parsed.to_json() == document


def test_receipt_hash_is_jcs_without_signature() -> None:
    document = receipt()
    unsigned = {k: v for k, v in document.items() if k != "signature"}
    expected = hashlib.sha256(jcs(unsigned)).hexdigest()
    assert parse_receipt(document).receipt_hash == expected == receipt_hash_of(document)
    # key order and spacing do not matter: the hash is over the canonical form
    shuffled = json.loads(json.dumps(dict(reversed(list(document.items())))))
    assert load_receipt(json.dumps(shuffled, indent=3).encode()).receipt_hash == expected


def test_signed_message_bytes() -> None:
    parsed = parse_receipt(receipt())
    message = signing_message(parsed.receipt_hash)
    assert message == b"affidavit-receipt-v1\n" + parsed.receipt_hash.encode("ascii")
    assert len(message) == len(SIGNING_PREFIX) + 64 == 85
    verify_ed25519(ADAPTER.public_key, message, parsed.signature.raw)
    assert parsed.signature.key_id == key_id_of(ADAPTER.public_key.raw)
    assert parsed.signature.key_id == hashlib.sha256(ADAPTER.public_key.raw).hexdigest()


def test_domain_separation() -> None:
    """A signature over the bare hex hash (the manifest/fact form) is not a receipt signature."""
    parsed = parse_receipt(receipt())
    from affidavit.verify import errors

    bare = ADAPTER.sign(parsed.receipt_hash.encode("ascii"))
    with pytest.raises(errors.SignatureError):
        verify_ed25519(ADAPTER.public_key, parsed.signing_message, bare)


def test_byte_preserving() -> None:
    document = receipt(SOURCE, SOURCE, transformations=())
    parsed = parse_receipt(document)
    assert parsed.capability == "byte_preserving"
    assert parsed.transformations == ()
    assert parsed.source == parsed.content


def _edit(path: list[Any], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(receipt())
    target: Any = document
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["extra"], 1),
        (["adapter"], _DELETE),
        (["source", "sha256"], "AB" * 32),
        (["source", "sha256"], "ab" * 31),
        (["source", "size"], -1),
        (["source", "size"], True),
        (["source", "size"], 1.0),
        (["source", "size"], 2**53),
        (["source", "uri"], ""),
        (["source", "uri"], "a\nb"),
        (["source", "other"], "x"),
        (["content", "size"], "29"),
        (["adapter", "name"], ""),
        (["adapter", "name"], "has space"),
        (["adapter", "version"], "1 0"),
        (["transformations"], "newline_normalize"),
        (["transformations"], ["newline_normalize", "newline_normalize"]),
        (["transformations"], ["newline_normalize", 3]),
        (["capability"], "lossy"),
        (["issued_at"], "2026-01-01T00:00:00+00:00"),
        (["issued_at"], "2026-02-30T00:00:00Z"),
        (["signature", "alg"], "RSA"),
        (["signature", "key_id"], "nope"),
        (["signature", "sig"], "AAAA"),
        (["signature", "sig"], 5),
        (["signature", "extra"], 5),
        (["signature"], _DELETE),
        (["receipt_version"], 1),
    ],
)
def test_malformed(path: list[Any], value: Any) -> None:
    with raises_code("receipt.malformed"):
        parse_receipt(_edit(path, value))


def test_not_an_object() -> None:
    with raises_code("receipt.malformed"):
        parse_receipt([])


def test_version_unsupported() -> None:
    with raises_code("receipt.version_unsupported"):
        parse_receipt(_edit(["receipt_version"], "2.0.0"))


@pytest.mark.parametrize(
    ("transformations", "capability"),
    [([], "declared_lossy"), (["newline_normalize"], "byte_preserving")],
)
def test_capability_inconsistent(transformations: list[str], capability: str) -> None:
    document = _edit(["transformations"], transformations)
    document["capability"] = capability
    with raises_code("receipt.capability_inconsistent"):
        parse_receipt(document)


def test_transformation_name_invalid() -> None:
    with raises_code("transform.name_invalid"):
        parse_receipt(_edit(["transformations"], ["Not A Name!"]))


def test_chunk_sizes_must_add_up() -> None:
    document = receipt(chunks=[CONTENT[:10], CONTENT[10:]])
    assert parse_receipt(document).chunks == (Digest.of(CONTENT[:10]), Digest.of(CONTENT[10:]))
    document["content"]["chunks"][0]["size"] = 11
    with raises_code("receipt.malformed", match="add up"):
        parse_receipt(document)
    document["content"]["chunks"] = []
    with raises_code("receipt.malformed"):
        parse_receipt(document)


def test_strict_json() -> None:
    text = json.dumps(receipt())
    with raises_code("json.duplicate_key"):
        load_receipt(text.replace('"capability"', '"capability": "x", "capability"', 1).encode())
    with raises_code("json.bom"):
        load_receipt(b"\xef\xbb\xbf" + text.encode())


def test_body_is_checked_like_a_receipt() -> None:
    with raises_code("receipt.malformed"):
        receipt_body(
            source=b"", content=b"", adapter="bad name", adapter_version="1", transformations=()
        )


def _schema_errors(document: Any) -> list[str]:
    import jsonschema

    from tests.schemas import ROOT

    schema = json.loads((ROOT / "specs" / "receipt.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    return [e.message for e in validator.iter_errors(document)]


def test_schema_accepts_what_the_parser_accepts() -> None:
    chunked = receipt(chunks=[CONTENT[:10], CONTENT[10:]])
    for document in (receipt(), receipt(SOURCE, SOURCE, transformations=()), chunked):
        parse_receipt(document)
        assert _schema_errors(document) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["extra"], 1),
        (["source", "sha256"], "AB" * 32),
        (["source", "size"], -1),
        (["adapter", "name"], "has space"),
        (["capability"], "byte_preserving"),
        (["signature", "alg"], "RSA"),
        (["signature", "sig"], "AAAA"),
        (["issued_at"], "2026-01-01"),
        (["receipt_version"], "2.0.0"),
    ],
)
def test_schema_refuses_what_the_parser_refuses(path: list[Any], value: Any) -> None:
    document = _edit(path, value)
    with pytest.raises(AffidavitError):
        parse_receipt(document)
    assert _schema_errors(document)
