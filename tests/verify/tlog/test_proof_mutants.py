"""What a mutation run of ``verify/tlog/proof.py`` asked of its tests (issue 36).

A refused tlog-proof names the part where reading stopped (C2SP tlog-proof: the header, the
optional extra line, the index line, the proof hashes, the empty line, the checkpoint), and a
bad proof hash its position, so a reader can find it.
"""

from __future__ import annotations

import base64

import pytest
from affidavit.verify.crypto import merkle
from affidavit.verify.tlog.proof import HEADER, parse_proof

from tests.conftest import raises_code

HASH = base64.b64encode(merkle.leaf_hash(b"entry")).decode()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "the proof ends before the header"),
        (f"{HEADER}\n", "the proof ends before the index line"),
        (f"{HEADER}\nextra b3BhcXVl\n", "the proof ends before the index line"),
        (f"{HEADER}\nextra b3B!cXVl\n", "the extra data is not standard base64"),
        (
            f"{HEADER}\nindex 3\n{HASH}\n",
            "the proof ends before the empty line before the checkpoint",
        ),
        (f"{HEADER}\nindex 3\n{HASH}\n{HASH}\n{HASH[:-2]}!=\n\n", "inclusion proof hash 2 "),
    ],
)
def test_a_refused_proof_names_where_it_stopped(text: str, named: str) -> None:
    with raises_code("tlog.proof_malformed") as caught:
        parse_proof(text)
    assert named in caught.value.message
    assert "None" not in caught.value.message
