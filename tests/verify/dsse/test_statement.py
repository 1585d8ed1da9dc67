"""The in-toto Statement v1 parser: accepted shapes and every refusal with its code."""

from __future__ import annotations

from typing import Any

import pytest
from affidavit.verify.dsse.envelope import Envelope
from affidavit.verify.dsse.statement import parse_statement, statement_of

from tests.conftest import raises_code
from tests.verify.dsse.dsse_fixtures import DIGEST, PREDICATE_TYPE, payload_of, statement


def test_a_valid_statement() -> None:
    parsed = parse_statement(payload_of(statement()))
    assert parsed.predicate_type == PREDICATE_TYPE
    assert parsed.predicate == {"result": "PASSED"}
    assert [(s.name, dict(s.digest)) for s in parsed.subjects] == [("artifact", {"sha256": DIGEST})]


def test_optional_parts() -> None:
    """predicate is optional in v1; a subject without name reads as ""; unknown fields and
    other digest algorithms are kept as given."""
    document = statement(
        predicate=None, subject=[{"digest": {"gitCommit": "abc", "sha512": "b" * 128}}]
    )
    document["future"] = {"x": 1}
    parsed = parse_statement(payload_of(document))
    assert parsed.predicate is None
    assert parsed.subjects[0].name == ""
    assert parsed.document["future"] == {"x": 1}


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"_type": "https://in-toto.io/Statement/v0.1"}, "statement.version_unsupported"),
        ({"_type": "https://in-toto.io/Statement/v1.0"}, "statement.version_unsupported"),
        ({"_type": "https://example.com/Statement/v1"}, "statement.wrong_type"),
        ({"_type": "https://in-toto.io/statement/v1"}, "statement.wrong_type"),
        ({"_type": 1}, "statement.malformed"),
        ({"_type": None}, "statement.malformed"),
        ({"subject": None}, "statement.subject_invalid"),
        ({"subject": []}, "statement.subject_invalid"),
        ({"subject": {"name": "a"}}, "statement.subject_invalid"),
        ({"subject": ["a"]}, "statement.subject_invalid"),
        ({"subject": [{"name": "a"}]}, "statement.subject_invalid"),
        ({"subject": [{"name": 1, "digest": {"sha256": DIGEST}}]}, "statement.subject_invalid"),
        ({"subject": [{"uri": [], "digest": {"sha256": DIGEST}}]}, "statement.subject_invalid"),
        (
            {"subject": [{"annotations": 1, "digest": {"sha256": DIGEST}}]},
            "statement.subject_invalid",
        ),
        ({"subject": [{"digest": {}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": []}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha256": DIGEST.upper()}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha256": DIGEST[:-1]}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha256": DIGEST + "a"}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha256": "g" * 64}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha384": "a" * 64}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha512": "a" * 96}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"sha256": 1}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"other": ""}}]}, "statement.digest_invalid"),
        ({"subject": [{"digest": {"": "ab"}}]}, "statement.digest_invalid"),
        (
            {"subject": [{"digest": {"sha256": DIGEST}}, {"digest": {"sha256": "A" * 64}}]},
            "statement.digest_invalid",
        ),
        ({"predicateType": None}, "statement.predicate_type_invalid"),
        ({"predicateType": ""}, "statement.predicate_type_invalid"),
        ({"predicateType": 3}, "statement.predicate_type_invalid"),
        ({"predicateType": "not a uri"}, "statement.predicate_type_invalid"),
        ({"predicateType": "https://x.y/a b"}, "statement.predicate_type_invalid"),
        ({"predicateType": "no-scheme/v1"}, "statement.predicate_type_invalid"),
        ({"predicate": []}, "statement.predicate_invalid"),
        ({"predicate": "x"}, "statement.predicate_invalid"),
    ],
)
def test_refused_statements(overrides: dict[str, Any], code: str) -> None:
    with raises_code(code):
        parse_statement(payload_of(statement(**overrides)))


def test_null_predicate_is_not_an_object() -> None:
    document = statement()
    document["predicate"] = None
    with raises_code("statement.predicate_invalid"):
        parse_statement(payload_of(document))


@pytest.mark.parametrize(
    "payload",
    [b"", b"{", b'{"a": 1, "a": 2}', b'{"n": NaN}', b"\xff", b"\xef\xbb\xbf{}"],
)
def test_payload_not_strict_json(payload: bytes) -> None:
    with raises_code("statement.not_json") as caught:
        parse_statement(payload)
    assert caught.value.details["json_code"].startswith("json.")
    assert caught.value.exit_code == 1


@pytest.mark.parametrize("payload", [b"[]", b'"x"', b"1", b"null"])
def test_payload_not_an_object(payload: bytes) -> None:
    with raises_code("statement.malformed"):
        parse_statement(payload)


def test_payload_type_must_be_in_toto() -> None:
    payload = payload_of(statement())
    assert statement_of(Envelope("application/vnd.in-toto+json", payload, ())).predicate_type
    with raises_code("dsse.payload_type_unsupported"):
        statement_of(Envelope("application/json", payload, ()))
