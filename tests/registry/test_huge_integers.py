"""A JSON integer over 4,300 digits is the strict parser's 400, never a logged 500.

CPython refuses to convert such an integer (``int_max_str_digits``); before the strict parser
named it, every JSON route answered 500 ``http.internal`` and logged a traceback.
"""

from __future__ import annotations

import logging

import pytest

from tests.registry.conftest import SpecClient
from tests.registry.helpers import contract, fact

HUGE = b"9" * 4301


@pytest.mark.parametrize(
    ("method", "path", "scope"),
    [
        ("POST", "/protocol/adapter-contracts", "publish"),
        ("PUT", "/v1/facts", "write"),
        ("PATCH", "/protocol/adapter-contracts/acme.eval_suite.v0/0.1.0", "publish"),
    ],
)
def test_huge_integer_is_400_with_the_parser_code(  # noqa: PLR0917 - fixtures and parameters
    client: SpecClient,
    keys: dict[str, str],
    caplog: pytest.LogCaptureFixture,
    method: str,
    path: str,
    scope: str,
) -> None:
    client.request("POST", "/protocol/adapter-contracts", json_body=contract(), key=keys["publish"])
    body = b'{"status": "revoked",\n "n": ' + HUGE + b"}"
    with caplog.at_level(logging.DEBUG):
        response = client.request(method, path, raw=body, key=keys[scope])
    assert response.status_code == 400, response.text
    document = response.json()
    assert document["code"] == "json.number_too_large"
    assert (
        "line 2, column 7" in document["message"] or document.get("details", {}).get("line") == 2
    ), document
    logged_errors = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert logged_errors == []


def test_integers_at_the_limit_are_not_refused_by_the_parser(
    client: SpecClient, keys: dict[str, str]
) -> None:
    document = fact("urn:test:big")
    raw = (
        b'{"entity": "urn:test:big", "relation": "memory:role", "value": {"type": "number", '
        b'"v": ' + b"9" * 4300 + b'}, "source": "urn:test:source", "scope": "team", '
        b'"confidence": 0.9, "ts": "2025-06-01T12:00:00Z"}'
    )
    assert document["entity"] == "urn:test:big"
    response = client.request("PUT", "/v1/facts", raw=raw, key=keys["write"])
    # Past the parser: whatever the fact rules say, it is not the parser's number code.
    assert response.json().get("code") != "json.number_too_large"
    assert response.status_code < 500
