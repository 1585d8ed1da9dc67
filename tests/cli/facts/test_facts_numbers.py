"""One rule for numbers at every door (docs/formats.md "Facts", "Numbers").

A number is accepted only if its RFC 8785 form reads back, under the strict reader, as the same
number; otherwise it is refused at the door (``canonical.unsafe_integer``: exit 2 in the CLI, 400
in the registry). Every accepted value is written, read back, exported and re-imported through
the fact store, the CLI and the registry, and stays the same fact (same FactHash, equal value).

The bug this pins: ``{"type": "number", "v": 1e16}`` was accepted, stored as the integer
10000000000000000, and then no door could read the store back.
"""

from __future__ import annotations

import io
import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.stores.facts import FactStore
from affidavit.cli.main import affidavit
from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings
from affidavit.verify import errors
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import parse_fact
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code
from tests.registry.conftest import make_key, registry_key

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SAFE = 2**53 - 1
EDGES = [
    0, -0.0, 5, 5.0, SAFE, -SAFE, SAFE + 1, 2**53, 2.0**53, 2.0**53 - 1, 1e15, 1e16, -1e16,
    9.999999999999999e20, 1e21, -1e21, 1e300, 5e-324, 1e-7, 0.1, 1.7976931348623157e308,
]  # fmt: skip
numbers = st.one_of(
    st.sampled_from(EDGES),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _document(v: Any, entity: str = "urn:n:x") -> dict[str, Any]:
    return {
        "entity": entity,
        "relation": "memory:amount",
        "value": {"type": "number", "v": v},
        "source": "urn:n:source",
        "scope": "team",
        "confidence": 1,
        "ts": "2026-01-01T00:00:00Z",
    }


def _refused_by_rule(v: Any) -> bool:
    """The rule, written out: integers beyond +-(2^53-1); whole floats in [2^53, 1e21)."""
    if type(v) is int:
        return abs(v) > SAFE
    return 2.0**53 <= abs(v) < 1e21


def _same_number(a: Any, b: Any) -> bool:
    return a == b and (
        not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b) or a == 0
    )


@settings(max_examples=300, deadline=None)
@given(numbers)
@example(1e16)
@example(2.0**53)
@example(1e21)
def test_parse_refuses_exactly_what_cannot_round_trip(v: Any) -> None:
    try:
        fact = parse_fact(_document(v))
    except errors.CanonicalError as e:
        if e.code != "canonical.unsafe_integer":
            raise
        assert _refused_by_rule(v)
        return
    assert not _refused_by_rule(v)
    # what the store writes reads back, under the strict reader, as the same fact
    from affidavit.verify.json.canonical import jcs

    again = parse_fact(loads(jcs(dict(fact.document))))
    assert again.hash == fact.hash
    assert again.value.v == v


def test_store_cli_and_registry_round_trip_every_accepted_number(tmp_path: Path) -> None:
    """Write, read back, export, re-import: store, CLI and registry, one example at a time."""
    app_settings = Settings(data_dir=tmp_path / "reg", contracts_dir=tmp_path / "contracts")
    app = create_app(app_settings, signing_key=registry_key())
    runner = CliRunner()
    with TestClient(app, raise_server_exceptions=False) as http:
        key = make_key(app_settings.data_dir, "facts:write", "facts:read:*")
        auth = {"Authorization": f"Bearer {key}"}
        counter = iter(range(10**9))

        @settings(
            max_examples=120,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(numbers)
        @example(1e16)
        @example(-(2.0**53))
        @example(1e21)
        @example(5.0)
        @example(SAFE)
        def check(v: Any) -> None:
            n = next(counter)
            document = _document(v, entity=f"urn:n:x{n}")
            line = json.dumps(document).encode()
            folder = tmp_path / f"case{n}"
            folder.mkdir()
            source = folder / "in.jsonl"
            source.write_bytes(line + b"\n")
            db = folder / "facts.db"
            added = runner.invoke(affidavit, ["facts", "add", "--json", str(db), str(source)])
            put = http.put("/v1/facts", content=line, headers=auth)
            if _refused_by_rule(v):
                # refused at every door: exit 2 with one line, 400, nothing stored
                assert added.exit_code == 2, added.output
                assert added.stderr.startswith("error: canonical.unsafe_integer: ")
                assert added.stderr.count("\n") == 1
                assert (put.status_code, put.json()["code"]) == (400, "canonical.unsafe_integer")
                assert not db.exists() or len(FactStore.open(db)) == 0
                return
            fact_hash = parse_fact(document).hash
            assert added.exit_code == 0, added.output
            assert json.loads(added.output)["added"] == [fact_hash]
            assert put.status_code == 201, put.text
            # read back: store, walk, audit
            with FactStore.open(db) as store:
                stored = store.get(fact_hash)
                assert stored is not None
                assert _same_number(stored.value.v, v)
                exported = io.BytesIO()
                store.export_jsonl(exported)
            for args in (
                ["walk", "--json", fact_hash, "--store", str(db)],
                ["audit", "--store", str(db)],
            ):
                assert runner.invoke(affidavit, ["facts", *args]).exit_code == 0
            # export, then re-import the export (CLI) into a fresh store
            out = runner.invoke(affidavit, ["facts", "export", str(db)])
            assert out.exit_code == 0
            assert out.stdout_bytes == exported.getvalue()
            export_file = folder / "export.jsonl"
            export_file.write_bytes(out.stdout_bytes)
            again = runner.invoke(
                affidavit, ["facts", "add", "--json", str(folder / "b.db"), str(export_file)]
            )
            assert again.exit_code == 0, again.output
            assert json.loads(again.output)["added"] == [fact_hash]
            assert (
                runner.invoke(affidavit, ["facts", "audit", "--store", str(export_file)]).exit_code
                == 0
            )
            # registry: read back one and in the listing, write again (same fact, 200)
            got = http.get(f"/v1/facts/{fact_hash}", headers=auth)
            assert got.status_code == 200
            assert _same_number(got.json()["fact"]["value"]["v"], v)
            listed = http.get("/v1/facts", params={"entity": f"urn:n:x{n}"}, headers=auth)
            assert listed.status_code == 200
            assert listed.json()["count"] == 1
            walk = http.get(f"/v1/facts/{fact_hash}/provenance", headers=auth)
            assert walk.status_code == 200
            assert http.put("/v1/facts", content=line, headers=auth).status_code == 200
            # the registry's listing re-imports through the CLI unchanged
            relisted = folder / "listed.jsonl"
            relisted.write_text(json.dumps(listed.json()["facts"][0]["fact"]) + "\n")
            hashed = runner.invoke(affidavit, ["facts", "hash", str(relisted)])
            assert hashed.output.strip() == fact_hash

        check()
        # the whole registry store is still readable by every door after all of that
        listing = http.get("/v1/facts", params={"limit": 1000}, headers=auth)
        assert listing.status_code == 200
    with FactStore.open(app_settings.database_path) as store:
        assert store.audit().ok


@pytest.mark.parametrize("v", [1e16, -(2.0**53), 2**53, 10**30])
def test_unsafe_number_elsewhere_in_the_document_is_refused(v: Any) -> None:
    # keys outside the hash are stored too: the same rule holds for them
    document = _document(1) | {"meta": {"nested": [v]}}
    with raises_code("canonical.unsafe_integer") as caught:
        parse_fact(document)
    assert "meta" in caught.value.message
