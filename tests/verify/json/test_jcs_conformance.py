"""RFC 8785 conformance: the six cyberphone cases in ../shared/peer-vectors/jcs."""

from __future__ import annotations

from pathlib import Path

import pytest
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads

CASES = ["arrays", "french", "structures", "unicode", "values", "weird"]


@pytest.mark.parametrize("name", CASES)
def test_peer_jcs_vector(peer_vectors: Path, name: str) -> None:
    folder = peer_vectors / "jcs"
    source = (folder / "input" / f"{name}.json").read_bytes()
    expected = (folder / "output" / f"{name}.json").read_bytes()
    expected_hex = bytes.fromhex((folder / "outhex" / f"{name}.txt").read_text())
    assert expected == expected_hex, "the vector's two forms disagree"
    assert jcs(loads(source)) == expected
