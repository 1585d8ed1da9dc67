"""What a mutation run of ``verify/crypto/checkpoint.py`` asked of its tests (issue 36).

A refused signature line names the signer it claims (C2SP signed-note: ``— <name> <base64>``),
not its base64 part: with several signature lines, the name is how a reader finds the bad one.
"""

from __future__ import annotations

import base64

import pytest
from affidavit.verify.crypto.checkpoint import parse_note

from tests.conftest import raises_code

NAME = "witness.example/w1"


@pytest.mark.parametrize(
    "blob",
    [
        "AAAA!AA=",  # not base64
        base64.b64encode(b"\x01\x02\x03\x04").decode(),  # a key ID and no signature byte
    ],
)
def test_a_bad_signature_line_names_its_signer(blob: str) -> None:
    good = "— log.example/1 " + base64.b64encode(bytes(range(5, 73))).decode()
    with raises_code("checkpoint.malformed") as caught:
        parse_note(f"text\n\n{good}\n— {NAME} {blob}\n")
    assert repr(NAME) in caught.value.message
    assert blob not in caught.value.message
