"""Publication refuses versions SemVer 2.0.0 §2 forbids and lifecycle fields lint refuses.

Before, ``1.0.0``, ``01.0.0`` and ``001.0.0`` published as three versions that compare equal, and
a contract could name itself in ``supersedes``/``replaced_by``.
"""

from __future__ import annotations

from typing import Any

import pytest
from affidavit.registry.contracts import CatalogRecord, Snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.registry.conftest import SpecClient
from tests.registry.helpers import contract

CONTRACTS = "/protocol/adapter-contracts"


def _publish(client: SpecClient, keys: dict[str, str], declaration: dict[str, Any]) -> Any:
    return client.request("POST", CONTRACTS, json_body=declaration, key=keys["publish"])


@pytest.mark.parametrize("version", ["01.0.0", "001.0.0", "1.00.0", "1.0.01"])
def test_leading_zero_versions_are_refused(
    client: SpecClient, keys: dict[str, str], version: str
) -> None:
    assert _publish(client, keys, contract("acme.x.v0", "1.0.0")).status_code == 201
    response = _publish(client, keys, contract("acme.x.v0", version))
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "registry.contract_rejected"
    assert [e["code"] for e in body["details"]["errors"]] == ["contract.bad_semver"]
    listed = client.get(f"{CONTRACTS}/acme.x.v0").json()
    assert "01.0.0" not in str(listed)


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"supersedes": "acme.x.v0@1.0.0"}, "contract.lifecycle_self_reference"),
        ({"replaced_by": "acme.x.v0@1.0.0"}, "contract.lifecycle_self_reference"),
        ({"replaced_by": "acme.x.v0@1.0.0\n"}, "contract.lifecycle_invalid"),
        ({"replaced_by": "acme.x.v0@01.0.1"}, "contract.lifecycle_invalid"),
        ({"min_verifier_version": "1.6.3\u0000"}, "contract.lifecycle_invalid"),
        ({"published_at": "2025-01-01T00:00:00\u0000"}, "contract.lifecycle_invalid"),
    ],
)
def test_lifecycle_fields_are_linted_on_publication(
    client: SpecClient, keys: dict[str, str], fields: dict[str, str], code: str
) -> None:
    response = _publish(client, keys, contract("acme.x.v0", "1.0.0", **fields))
    assert response.status_code == 422, response.text
    assert [e["code"] for e in response.json()["details"]["errors"]] == [code]


@pytest.mark.parametrize(
    ("patch", "code"),
    [
        ({"min_verifier_version": "1.6.3\u0000"}, "contract.lifecycle_invalid"),
        ({"replaced_by": "acme.x.v0@1.0.0"}, "entry.lifecycle_invalid"),
        ({"supersedes": "acme.x.v0@1.0.0"}, "entry.lifecycle_invalid"),
    ],
)
def test_lifecycle_patch_is_linted_before_it_is_logged(
    client: SpecClient, keys: dict[str, str], patch: dict[str, str], code: str
) -> None:
    assert _publish(client, keys, contract("acme.x.v0", "1.0.0")).status_code == 201
    size = client.get("/protocol/merkle/latest").json()["tree_size"]
    response = client.request(
        "PATCH", f"{CONTRACTS}/acme.x.v0/1.0.0", json_body=patch, key=keys["publish"]
    )
    assert response.status_code in (400, 422), response.text
    body = response.json()
    assert code in [body["code"]] + [e["code"] for e in body["details"].get("errors", [])]
    assert client.get("/protocol/merkle/latest").json()["tree_size"] == size


def test_a_legacy_leading_zero_row_still_lists() -> None:
    from affidavit.registry.contracts import CatalogRecord, Snapshot

    rows = [
        CatalogRecord({"adapter_id": "acme.x.v0", "adapter_version": v}, {}, "published")
        for v in ("1.0.0", "01.0.0")
    ]
    snapshot = Snapshot.build(rows, node_url="http://127.0.0.1")
    assert [r.adapter_version for r in snapshot.records] == ["01.0.0", "1.0.0"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["acme.a.v0", "acme.b.v0", "acme.c.v0"]), st.integers(0, 3)),
        max_size=12,
    ),
    st.lists(
        st.tuples(st.sampled_from(["acme.a.v0", "acme.b.v0", "acme.d.v0"]), st.integers(0, 3)),
        max_size=6,
    ),
)
def test_an_updated_snapshot_is_the_snapshot_of_everything(
    before: list[tuple[str, int]], changes: list[tuple[str, int]]
) -> None:
    # issue 24: a write batch puts its few records into the snapshot by bisection instead of
    # sorting the whole catalog again; the result must be what a full build gives.
    def record(adapter_id: str, minor: int, tag: str) -> CatalogRecord:
        declaration = {"adapter_id": adapter_id, "adapter_version": f"1.{minor}.0", "tag": tag}
        return CatalogRecord(declaration=declaration, entry={"tag": tag}, source="published")

    old = [record(a, m, "old") for a, m in before]
    new = [record(a, m, "new") for a, m in changes]
    built = Snapshot.build([*old, *new], node_url="http://x")
    before_snapshot = Snapshot.build(old, node_url="http://x")
    before_snapshot.find("acme.a.v0")  # its by-id index is built, then carried over
    updated = before_snapshot.updated({(r.adapter_id, r.adapter_version): r for r in new}.values())
    assert updated.records == built.records
    for adapter_id in ("acme.a.v0", "acme.b.v0", "acme.c.v0", "acme.d.v0"):
        assert updated.find(adapter_id) == built.find(adapter_id)
        for minor in range(4):
            assert updated.find(adapter_id, f"1.{minor}.0") == built.find(
                adapter_id, f"1.{minor}.0"
            )
