"""``affidavit registry check``: lists stored records the registry cannot index or read, on both
stores (docs/adr/0017-one-store-contract.md); exit 1 when it lists any, 0 when none, 2 when there
is no registry to check. In-process, against real databases (SQLite file, PostgreSQL cluster)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.stores.store import Store
from affidavit.verify.json.canonical import jcs

from tests.cli.test_output_schemas import cli, run
from tests.registry.helpers import contract, fact, fact_hash
from tests.schemas import assert_output_schema


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """``--data-dir D [--database-url U]`` of a store ``registry migrate`` made."""
    args = ["--data-dir", str(tmp_path / "data")]
    if request.param == "postgresql":
        args += ["--database-url", request.getfixturevalue("pg_url")]
    cli("registry migrate", *args)
    return args


def _execute(args: list[str], sql: str, *params: Any) -> None:
    location = args[3] if len(args) > 2 else str(Path(args[1]) / "registry.db")
    store = Store.at(location)
    try:
        with store.write() as db:
            db.execute(sql, params)
    finally:
        store.close()


def test_a_clean_store_checks_ok(where: list[str]) -> None:
    document = fact("urn:check:\x00clean")
    _execute(
        where,
        "INSERT INTO facts (hash, scope, body) VALUES ($1, $2, $3)",
        bytes.fromhex(fact_hash(document)),
        document["scope"],
        jcs(document),
    )
    report = cli("registry check", *where)
    assert_output_schema("registry check", report)
    assert report == {"ok": True, "facts": 1, "unindexed": 1, "contracts": 0, "problems": []}
    text = run("registry check", *where)
    assert text.exit_code == 0
    assert text.stdout == "1 facts (1 to index at the next start), 0 contracts: ok\n"


def test_every_record_that_cannot_be_indexed_or_read_is_listed(where: list[str]) -> None:
    bad_body, moved = "ab" * 32, fact("urn:check:moved")
    _execute(
        where,
        "INSERT INTO facts (hash, scope, body) VALUES ($1, $2, $3)",
        bytes.fromhex(bad_body),
        "team",
        b"{not json",
    )
    _execute(
        where,
        "INSERT INTO facts (hash, scope, body) VALUES ($1, $2, $3)",
        bytes.fromhex("cd" * 32),
        "team",
        jcs(moved),
    )
    long_id = "acme." + "a" * 300  # stored before ids were bounded; PostgreSQL can hold this one
    declaration = contract(long_id)
    for adapter_id, text in ((long_id, json.dumps(declaration)), ("acme.torn.v0", "{torn")):
        _execute(
            where,
            "INSERT INTO registry_contracts VALUES ($1, $2, $3, $4, $5, $6, $7)",
            adapter_id,
            "0.1.0",
            declaration["contract_hash"],
            text,
            text,
            0,
            1 if adapter_id == long_id else 2,
        )
    report = cli("registry check", *where, code=1)
    assert_output_schema("registry check", report)
    assert [(p["kind"], p["id"], p["code"]) for p in report["problems"]] == [
        ("fact", bad_body, "lineage.fact_malformed"),
        ("fact", "cd" * 32, "lineage.fact_hash_mismatch"),
        ("contract", "acme.torn.v0@0.1.0", "store.corrupt"),
        ("contract", f"{long_id}@0.1.0", "contract.bad_adapter_id"),
    ]
    assert (report["ok"], report["facts"], report["contracts"]) == (False, 2, 2)
    text = run("registry check", *where)
    assert text.exit_code == 1
    assert text.stdout.splitlines()[0].startswith(f"fact {bad_body}: lineage.fact_malformed: ")
    assert text.stdout.endswith(
        "2 facts (0 to index at the next start), 2 contracts: 4 records cannot be indexed or read\n"
    )


def test_no_registry_to_check_is_exit_2(tmp_path: Path) -> None:
    result = run("registry check --data-dir", tmp_path / "none", "--json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: store.missing: ")
