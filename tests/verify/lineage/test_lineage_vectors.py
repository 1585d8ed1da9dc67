"""Golden lineage vectors (vectors/lineage/): generated here, byte-compared, then checked from disk.

Regenerate with ``UPDATE_GOLDENS=1 python -m pytest tests/verify/lineage/test_lineage_vectors.py``.
Every input is built from fixed values; the one signing key is TEST-ONLY, derived from a fixed seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from affidavit.cli.render.lineage import render
from affidavit.verify.json.canonical import jcs
from affidavit.verify.lineage.audit import audit
from affidavit.verify.lineage.facts import Fact, parse_fact
from affidavit.verify.lineage.signing import TrustedFactKeys, signed_document, signing_message
from affidavit.verify.lineage.walk import JsonlFactSource, walk

from tests.conftest import VECTORS, assert_golden, raises_code

HERE = VECTORS / "lineage"
TEST_KEY_LABEL = "TEST-ONLY affidavit lineage vectors"


def _fact(name: str, *parents: Fact | str, scope: str = "team", **value: Any) -> Fact:
    document: dict[str, Any] = {
        "entity": f"urn:affidavit:test:{name}",
        "relation": "affidavit:derived",
        "value": value or {"type": "text", "v": name},
        "source": "urn:affidavit:test:generator",
        "scope": scope,
        "confidence": 0.75,
        "ts": "2026-01-02T03:04:05Z",
    }
    if parents:
        document["derived_from"] = [p.hash if isinstance(p, Fact) else p for p in parents]
    return parse_fact(document)


def _lines(documents: list[Any]) -> bytes:
    return b"".join(jcs(d) + b"\n" for d in documents)


def _export(facts: list[Fact]) -> list[Any]:
    return [{"fact": dict(f.document), "fact_hash": f.hash} for f in facts]


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def generate() -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """Every vector file's bytes, and the manifest entries."""
    files: dict[str, bytes] = {}
    manifest: list[dict[str, Any]] = []
    # Single facts: FactHash and Stigmem CID for each value type (docs/formats.md §5).
    singles = [
        _fact("text", type="text", v="Zürich \u2603"),
        _fact("number-int", type="number", v=250),
        _fact("number-float", type="number", v=1.5),
        _fact("boolean", type="boolean", v=True),
        _fact("null", type="null", v=None),
        _fact("ref", type="ref", v="urn:affidavit:test:text"),
        _fact("datetime", type="datetime", v="2026-01-01T00:00:00Z"),
        _fact("instruction", type="text", v="do x", interpret_as="instruction"),
    ]
    files["facts.jsonl"] = _lines([dict(f.document) for f in singles])
    manifest.extend(
        {
            "id": f"fact-hash-{index}",
            "input": f"facts.jsonl#line{index + 1}",
            "expected": {"fact_hash": f.hash, "stigmem_cid": f.cid},
            "clause": "docs/formats.md §5 FactHash; Stigmem CID v2",
        }
        for index, f in enumerate(singles)
    )
    # A store: chain c0 <- c1 <- ... <- c5, a diamond, a dangling reference, a hidden-scope fact.
    chain = [_fact("c0")]
    for index in range(1, 6):
        chain.append(_fact(f"c{index}", chain[-1]))
    dangling = "d" * 64
    top = _fact("top", chain[5], chain[2], dangling)  # c2 reachable at 1 and 4 hops: shortest wins
    gp = _fact("secret-parent")
    secret = _fact("secret", gp, scope="company")
    leaf = _fact("leaf", secret, chain[0])
    store = [*chain, top, gp, secret, leaf]
    files["store.jsonl"] = _lines(_export(store))
    files["store-without-secret.jsonl"] = _lines(_export([f for f in store if f is not secret]))
    walks = [
        ("walk-chain-depth3", "store.jsonl", chain[5], 3, None, "seed 002 §20.6.2 default depth 3"),
        ("walk-chain-depth5", "store.jsonl", chain[5], 5, None, "seed 002 §20.6.2 max depth 5"),
        (
            "walk-top-shortest-path",
            "store.jsonl",
            top,
            5,
            None,
            "docs/formats.md §5 shortest path wins",
        ),
        ("walk-hidden-scope", "store.jsonl", leaf, 3, "team", "seed 002 §20.6.2 hidden == absent"),
        ("walk-absent", "store-without-secret.jsonl", leaf, 3, None, "seed 002 §20.6.2 absent"),
    ]
    for name, store_name, root, depth, scopes, clause in walks:
        manifest.append(
            {
                "id": name,
                "input": store_name,
                "root": root.hash,
                "depth": depth,
                "readable_scopes": scopes,
                "expected": f"{name}.json",
                "clause": clause,
            }
        )
    # A cycle (possible because derived_from is outside FactHash) and a tampered fact.
    a = _fact("cycle-a")
    b = _fact("cycle-b", a)
    a_cyclic = _fact("cycle-a", b)
    files["cycle.jsonl"] = _lines(_export([a_cyclic, b]))
    manifest.append(
        {
            "id": "cycle-audit",
            "input": "cycle.jsonl",
            "expected": "audit-cycle.json",
            "expected_codes": ["lineage.cycle_found"],
            "insert_error": "provenance_cycle_detected",
            "clause": "seed 002 §20.6.1 rule 2",
        }
    )
    tampered = _export(chain[:3])
    tampered[1]["fact"]["value"] = {"type": "text", "v": "forged"}
    files["tampered.jsonl"] = _lines(tampered)
    manifest.append(
        {
            "id": "tampered-content",
            "input": "tampered.jsonl",
            "expected": "audit-tampered.json",
            "expected_codes": ["lineage.fact_hash_mismatch"],
            "clause": "docs/formats.md §1 verify over what you received",
        }
    )
    # Signed facts, a TEST-ONLY key; the second signature was moved onto another fact.
    from affidavit.attest.keyring import derive_test_key

    key = derive_test_key(TEST_KEY_LABEL, key_id="test-lineage")
    good = signed_document(
        chain[0].document, key_id="test-lineage", signature=key.sign(signing_message(chain[0].hash))
    )
    moved = {**dict(chain[1].document), "signature": good["signature"]}
    files["signed.jsonl"] = _lines([good, moved, dict(chain[2].document)])
    files["test-lineage.pub"] = (key.public_key.b64 + "\n").encode()
    manifest.append(
        {
            "id": "signatures",
            "input": "signed.jsonl",
            "trusted_key": "test-lineage.pub",
            "expected": "audit-signed.json",
            "expected_codes": ["lineage.signature_bad"],
            "clause": "docs/formats.md §5 optional fact signature",
        }
    )
    return files, manifest


def _expected_outputs(manifest: list[dict[str, Any]]) -> dict[str, bytes]:
    """Walk and audit outputs computed from the input files as stored on disk."""
    from affidavit.attest.keyring import load_public_key

    out: dict[str, bytes] = {}
    for entry in manifest:
        if "root" in entry:
            scopes = frozenset({entry["readable_scopes"]}) if entry["readable_scopes"] else None
            result = walk(
                JsonlFactSource((HERE / entry["input"]).read_bytes(), entry["input"]),
                entry["root"],
                depth=entry["depth"],
                readable_scopes=scopes,
            )
            out[entry["expected"]] = render(result, "json").encode()
            if entry["id"].startswith(("walk-hidden", "walk-absent")):
                out[entry["id"] + ".svg"] = render(result, "svg").encode()
                out[entry["id"] + ".html"] = render(result, "html").encode()
        elif str(entry["expected"]).startswith("audit-"):
            checker = None
            if "trusted_key" in entry:
                public = load_public_key(HERE / entry["trusted_key"])
                checker = TrustedFactKeys({"test-lineage": public}).check
            report = audit(
                JsonlFactSource((HERE / entry["input"]).read_bytes(), entry["input"]),
                check_signature=checker,
            )
            out[entry["expected"]] = _json(report.to_json())
    return out


def test_lineage_inputs_golden() -> None:
    files, manifest = generate()
    for name, data in files.items():
        assert_golden(HERE / name, data)
    assert_golden(HERE / "manifest.json", _json({"vectors": manifest}))


def test_lineage_outputs_golden() -> None:
    _, manifest = generate()
    for name, data in _expected_outputs(manifest).items():
        assert_golden(HERE / name, data)


def test_manifest_expectations_hold_on_disk() -> None:
    manifest = json.loads((HERE / "manifest.json").read_bytes())["vectors"]
    lines = (HERE / "facts.jsonl").read_bytes().splitlines()
    for entry in manifest:
        if entry["id"].startswith("fact-hash-"):
            index = int(entry["input"].rsplit("line", 1)[1]) - 1
            fact = parse_fact(json.loads(lines[index]))
            assert {"fact_hash": fact.hash, "stigmem_cid": fact.cid} == entry["expected"]
        elif "expected_codes" in entry:
            report = json.loads((HERE / entry["expected"]).read_bytes())
            assert [f["code"] for f in report["findings"]] == entry["expected_codes"]


def test_hidden_and_absent_vectors_are_byte_identical() -> None:
    for suffix in (".json", ".svg", ".html"):
        hidden = (HERE / f"walk-hidden-scope{suffix}").read_bytes()
        assert hidden == (HERE / f"walk-absent{suffix}").read_bytes(), suffix


def test_cycle_vector_is_refused_on_insert(tmp_path: Path) -> None:
    from affidavit.attest.stores.facts import FactStore

    facts = [
        parse_fact(json.loads(line)["fact"])
        for line in (HERE / "cycle.jsonl").read_bytes().splitlines()
    ]
    with (
        FactStore.open(tmp_path / "c.db", create=True) as store,
        raises_code("provenance_cycle_detected"),
    ):
        store.add_batch(facts)
