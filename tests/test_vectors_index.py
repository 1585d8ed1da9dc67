"""vectors/manifest.json indexes every area's manifest; each area manifest is well-formed."""

from __future__ import annotations

import json

from tests.conftest import VECTORS, assert_golden


def _areas() -> list[str]:
    # An area is a folder with a manifest, at any depth (tlog/tiles, tlog/proofs).
    return sorted(
        p.parent.relative_to(VECTORS).as_posix() for p in VECTORS.glob("*/**/manifest.json")
    )


def _index() -> bytes:
    areas = []
    for area in _areas():
        manifest = json.loads((VECTORS / area / "manifest.json").read_bytes())
        vectors = manifest.get("vectors", manifest.get("cases", []))
        areas.append({"area": area, "manifest": f"{area}/manifest.json", "count": len(vectors)})
    document = {
        "description": "Affidavit golden vectors: one manifest per area. Each vector names its "
        "input, expected bytes, hash or error code, and the spec clause it pins. See README.md.",
        "areas": areas,
    }
    return (json.dumps(document, indent=2) + "\n").encode()


def test_golden_vectors_index() -> None:
    assert_golden(VECTORS / "manifest.json", _index())


def test_every_vector_has_an_id_and_an_expected_outcome() -> None:
    for area in _areas():
        manifest = json.loads((VECTORS / area / "manifest.json").read_bytes())
        vectors = manifest.get("vectors", manifest.get("cases", []))
        assert vectors, area
        ids = [v["id"] for v in vectors]
        assert len(ids) == len(set(ids)), f"{area}: duplicate vector ids"
