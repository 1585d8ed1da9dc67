"""Pin files read strictly (issue 36 mutation campaign; docs/formats.md §3
``pinned_adapters.json``): each malformed file is refused with ``pin.file_invalid``, and the
error's wire form (``{code, message, details}``: what ``--json`` and the one ``error:`` line
show) names the pin to fix; the keys beside ``pinned_adapters`` are kept for the rewrite."""

from __future__ import annotations

from typing import Any

import pytest
from affidavit.attest.publishing.publish import merge_pin
from affidavit.verify.contracts.pin_file import parse_pin_file

from tests.conftest import raises_code

HASH = "a" * 64
PIN: dict[str, Any] = {
    "adapter_id": "acme.eval_suite.v0",
    "adapter_version": "0.1.0",
    "contract_hash": HASH,
}
SECOND = {**PIN, "adapter_version": "0.2.0"}


def _second(**changes: Any) -> dict[str, Any]:
    """A pin file whose first pin is good and whose second (index 1) has ``changes``."""
    return {"pinned_adapters": [PIN, {**SECOND, **changes}]}


def _error(message: str, index: int | None = None) -> dict[str, Any]:
    details = {} if index is None else {"index": index}
    return {"code": "pin.file_invalid", "message": message, "details": details}


@pytest.mark.parametrize(
    ("document", "error"),
    [
        ([PIN], _error("a pin file must be a JSON object")),
        ({"pinned_adapters": {"0": PIN}}, _error("pinned_adapters must be an array")),
        ({"pinned_adapters": [PIN, 1]}, _error("pinned_adapters[1] must be an object", 1)),
        (
            _second(contract_hash=None),
            _error("pinned_adapters[1]: contract_hash missing or not a string"),
        ),
        (
            _second(adapter_id="Acme"),
            _error("pinned_adapters[1]: adapter id must be reverse-DNS style: 'Acme'", 1),
        ),
        (
            _second(adapter_version="01.0.0"),
            _error(
                "pinned_adapters[1]: version must be semver MAJOR.MINOR.PATCH without leading "
                "zeros: '01.0.0'",
                1,
            ),
        ),
        (
            _second(contract_hash=HASH.upper()),
            _error("pinned_adapters[1]: contract hash must be 64 lowercase hex characters", 1),
        ),
        (
            {"pinned_adapters": [PIN, SECOND, PIN]},
            _error("acme.eval_suite.v0@0.1.0 is pinned twice"),
        ),
    ],
)
def test_a_malformed_pin_file_names_the_pin_to_fix(document: Any, error: dict[str, Any]) -> None:
    with raises_code("pin.file_invalid") as info:
        parse_pin_file(document)
    assert info.value.to_json() == error


@pytest.mark.parametrize(
    "key",
    ["status", "entry_hash", "entry_hash_status", "entry_signature_status", "lifecycle_advice"],
)
def test_an_optional_pin_field_is_text_or_null(key: str) -> None:
    with raises_code("pin.file_invalid") as info:
        parse_pin_file(_second(**{key: 1}))
    assert info.value.to_json() == _error(f"pinned_adapters[1]: {key} must be a string or null")
    assert parse_pin_file(_second(**{key: None})).pins[1].key == ("acme.eval_suite.v0", "0.2.0")


@pytest.mark.parametrize("document", [{}, {"pinned_adapters": None}])
def test_no_pinned_adapters_is_an_empty_pin_file(document: dict[str, Any]) -> None:
    parsed = parse_pin_file({**document, "_note": "kept"})
    assert parsed.pins == ()
    assert parsed.extra == {"_note": "kept"}


def test_the_keys_beside_the_pins_are_kept_when_a_pin_is_added() -> None:
    """docs/formats.md §3: a rewrite keeps every other top-level key as read."""
    existing = parse_pin_file({"_note": "ours", "owner": "team-a", "pinned_adapters": [SECOND]})
    assert dict(existing.extra) == {"_note": "ours", "owner": "team-a"}
    assert merge_pin(existing, PIN) == {
        "_note": "ours",
        "owner": "team-a",
        "pinned_adapters": [PIN, SECOND],
    }
