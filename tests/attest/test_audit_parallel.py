"""``audit(..., mapper=pool.map)`` and ``facts audit --jobs N``: the serial audit's report.

The per-record checks move to worker processes (issue 5 item 10); the report must not change by a
byte, whatever the store holds: tampered bodies, altered keys, cycles, dangling references,
malformed records, a changed derived_from.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from affidavit.attest.factstore import FactStore
from affidavit.cli.main import affidavit
from affidavit.verify import lineage_audit
from affidavit.verify.canonical import jcs
from affidavit.verify.lineage import StoredRecord
from affidavit.verify.lineage_audit import audit
from click.testing import CliRunner

from tests.verify.test_lineage import ABSENT, _Records, chain, make_fact


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    with ProcessPoolExecutor(2) as executor:
        yield executor


def _messy_store(path: Path) -> Path:
    """A store with every kind of finding, and enough facts for several batches."""
    facts = chain(40)
    with FactStore.open(path, create=True) as store:
        store.add_batch(facts)
        store.add_batch([make_fact(f"dangling {i}", ABSENT) for i in range(5)])
    db = sqlite3.connect(path)
    db.execute(  # a body edited in place: content no longer hashes to its key
        'UPDATE facts SET body = replace(body, \'"v":"f3"\', \'"v":"forged"\') WHERE hash = ?',
        (bytes.fromhex(facts[3].hash),),
    )
    a, b = make_fact("cycle a"), make_fact("cycle b", make_fact("cycle a"))
    a_cyclic = make_fact("cycle a", b)
    bad_ref = {**facts[6].document, "derived_from": ["NOT-HEX"]}
    rows = [
        (a.hash, jcs(dict(a_cyclic.document))),
        (b.hash, jcs(dict(b.document))),
        ("0" * 64, jcs(dict(facts[5].document))),  # an altered key
        ("1" * 64, b"{not json"),
        ("2" * 64, jcs(bad_ref)),
    ]
    db.executemany(
        "INSERT INTO facts (hash, scope, body) VALUES (?, 'team', ?)",
        [(bytes.fromhex(key), body) for key, body in rows],
    )
    db.commit()
    db.close()
    return path


def test_parallel_report_is_byte_identical(
    tmp_path: Path, pool: ProcessPoolExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _messy_store(tmp_path / "facts.db")
    monkeypatch.setattr(lineage_audit, "_BATCH", 7)  # several batches, a short last one
    with FactStore.open(path) as store:
        serial = audit(store)
        parallel = audit(store, mapper=pool.map)
    codes = {finding.code for finding in serial.findings}
    assert codes == {"lineage.fact_hash_mismatch", "lineage.cycle_found",
                     "lineage.fact_malformed", "lineage.reference_malformed"}  # fmt: skip
    assert {finding.code for finding in serial.info} == {lineage_audit.DANGLING}
    assert jcs(parallel.to_json()) == jcs(serial.to_json())
    assert parallel == serial


def test_parallel_changed_derived_from_and_empty(pool: ProcessPoolExecutor) -> None:
    a, again = make_fact("a"), make_fact("a", ABSENT)
    records = [StoredRecord(None, jcs(dict(f.document)), f"r{i}") for i, f in enumerate([a, again])]
    serial = audit(_Records(records))
    assert [f.code for f in serial.findings] == ["lineage.derived_from_changed"]
    assert audit(_Records(records), mapper=pool.map) == serial
    assert audit(_Records([]), mapper=pool.map) == audit(_Records([]))


def test_cli_jobs_gives_the_same_output(tmp_path: Path) -> None:
    path = _messy_store(tmp_path / "facts.db")
    runner = CliRunner()
    outputs = []
    for jobs in ("1", "2"):
        for extra in ([], ["--json"]):
            result = runner.invoke(
                affidavit, ["facts", "audit", "--store", str(path), "--jobs", jobs, *extra]
            )
            outputs.append((jobs, extra, result.exit_code, result.output))
    serial = [(e, c, o) for j, e, c, o in outputs if j == "1"]
    parallel = [(e, c, o) for j, e, c, o in outputs if j == "2"]
    assert serial == parallel
    assert serial[0][1] == 1
    assert json.loads(serial[1][2])["ok"] is False
