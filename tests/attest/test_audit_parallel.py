"""``FactStore.audit(jobs=N)`` and ``facts audit --jobs N`` give exactly the serial audit's report.

The per-record checks move to worker processes; the report must not change by a
byte, whatever the store holds: tampered bodies, altered keys, cycles, dangling references,
malformed records, a changed derived_from, keys SQLite sorts outside the blob ranges, an empty
store. ``FactStore.audit`` workers read their own key ranges from the file.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from affidavit.attest.stores.facts import FactStore, range_bounds
from affidavit.cli.main import affidavit
from affidavit.verify.json.canonical import jcs
from affidavit.verify.lineage import audit as lineage_audit
from affidavit.verify.lineage.audit import audit
from affidavit.verify.lineage.walk import StoredRecord
from click.testing import CliRunner

from tests.conftest import raises_code
from tests.verify.lineage.test_lineage import ABSENT, _Records, chain, make_fact


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


def test_parallel_report_is_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _messy_store(tmp_path / "facts.db")
    monkeypatch.setattr(lineage_audit, "_BATCH", 7)  # several batches, a short last one
    with FactStore.open(path) as store:
        serial = audit(store)
        parallel = store.audit(jobs=2)
    codes = {finding.code for finding in serial.findings}
    assert codes == {"lineage.fact_hash_mismatch", "lineage.cycle_found",
                     "lineage.fact_malformed", "lineage.reference_malformed",
                     "lineage.edge_index_mismatch"}  # fmt: skip
    assert {finding.code for finding in serial.info} == {lineage_audit.DANGLING}
    assert jcs(parallel.to_json()) == jcs(serial.to_json())
    assert parallel == serial


def test_changed_derived_from_is_found_by_the_record_checks() -> None:
    a, again = make_fact("a"), make_fact("a", ABSENT)
    records = [StoredRecord(None, jcs(dict(f.document)), f"r{i}") for i, f in enumerate([a, again])]
    serial = audit(_Records(records))
    assert [f.code for f in serial.findings] == ["lineage.derived_from_changed"]
    checked = lineage_audit.check_records((r.key, r.body, r.where) for r in records)
    assert lineage_audit.audit_checked(checked) == serial


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


# FactStore.audit: workers read their own key ranges straight from SQLite -----------------


def _odd_keys_store(path: Path) -> Path:
    """The messy store plus keys SQLite sorts outside the 32-byte blob ranges, and a text body."""
    _messy_store(path)
    good = chain(2)[1]
    db = sqlite3.connect(path)
    db.executemany(
        "INSERT INTO facts (hash, scope, body) VALUES (?, 'team', ?)",
        [
            ("a text key", jcs(dict(good.document))),  # TEXT sorts before every blob
            (7, jcs(dict(good.document))),  # INTEGER sorts before TEXT
            (b"\x05", jcs(dict(good.document))),  # a one-byte blob, inside a range
            (b"\xff" * 40, jcs(dict(good.document))),  # past the last cut
            (bytes.fromhex("3" * 64), jcs(dict(good.document)).decode()),  # a TEXT body
            (bytes.fromhex("4" * 64), '{"x": "\udc80"}'.encode("utf-8", "surrogatepass")),
        ],
    )
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("ranges", [1, 2, 7, 64, 4096])
def test_store_audit_in_workers_is_the_serial_report(tmp_path: Path, ranges: int) -> None:
    path = _odd_keys_store(tmp_path / "facts.db")
    with FactStore.open(path) as store:
        serial = audit(store)
        one = store.audit()
        parallel = store.audit(jobs=2, ranges=ranges)
    assert serial.facts == 40 + 5 + 5 + 6
    codes = [finding.code for finding in serial.findings]
    assert codes.count("lineage.fact_hash_mismatch") == 7  # altered key and body, odd keys
    assert [f.where for f in serial.findings[:2]] == ["fact 7", "fact a text key"]  # SQLite order
    assert jcs(one.to_json()) == jcs(serial.to_json())
    assert jcs(parallel.to_json()) == jcs(serial.to_json())


def test_a_cycle_split_across_ranges_is_found(tmp_path: Path) -> None:
    path = _messy_store(tmp_path / "facts.db")
    a = make_fact("cycle a")
    b = make_fact("cycle b", a)
    ranges = 256
    bounds = range_bounds(ranges)

    def share_of(key: str) -> int:
        raw = bytes.fromhex(key)
        return next(
            i
            for i, (low, high) in enumerate(bounds)
            if (low is None or raw >= low) and (high is None or raw < high)
        )

    assert share_of(a.hash) != share_of(b.hash)  # the two members go to different workers
    with FactStore.open(path) as store:
        parallel = store.audit(jobs=2, ranges=ranges)
        serial = audit(store)
    cycles = [f for f in parallel.findings if f.code == "lineage.cycle_found"]
    assert [sorted(f.details["members"]) for f in cycles] == [sorted([a.hash, b.hash])]
    assert parallel == serial
    assert [f.fact for f in parallel.info] == [f.fact for f in serial.info]
    assert len(parallel.info) == 5  # the dangling references, information only


def test_empty_store_and_a_clean_store(tmp_path: Path) -> None:
    with FactStore.open(tmp_path / "empty.db", create=True) as store:
        assert store.audit(jobs=2) == store.audit() == audit(store)
        empty = {"ok": True, "facts": 0, "findings": [], "info": [], "signatures": None}
        assert store.audit(jobs=2).to_json() == empty
        store.add_batch(chain(30))
        report = store.audit(jobs=2, ranges=5)
    assert report.ok
    assert report.facts == 30
    assert report.info == ()


def test_an_unreadable_store_is_store_invalid(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    with FactStore.open(path, create=True) as store:
        store.add_batch(chain(3))
        db = sqlite3.connect(path)
        db.execute("ALTER TABLE facts RENAME TO gone")
        db.commit()
        db.close()
        for jobs in (1, 2):
            with raises_code("lineage.store_invalid") as caught:
                store.audit(jobs=jobs)
            assert caught.value.code == "lineage.store_invalid"


def test_range_bounds_cover_every_key_in_order() -> None:
    for count in (1, 2, 3, 16, 4096, 10_000):
        bounds = range_bounds(count)
        assert len(bounds) == min(count, 4096)
        assert bounds[0][0] is None
        assert bounds[-1][1] is None
        assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))
        cuts = [high for _, high in bounds[:-1]]
        assert cuts == sorted(cuts)
        assert len(set(cuts)) == len(cuts)


def test_cli_jobs_two_matches_the_generic_audit(tmp_path: Path) -> None:
    path = _odd_keys_store(tmp_path / "facts.db")
    with FactStore.open(path) as store:
        expected = audit(store).to_json()
    result = CliRunner().invoke(
        affidavit, ["facts", "audit", "--store", str(path), "--jobs", "2", "--json"]
    )
    assert result.exit_code == 1
    assert json.loads(result.output) == expected


def _clean_store(path: Path) -> Path:
    with FactStore.open(path, create=True) as store:
        store.add_batch(chain(12))
    return path


def _edge_findings(report: lineage_audit.AuditReport) -> list[lineage_audit.Finding]:
    return [f for f in report.findings if f.code == "lineage.edge_index_mismatch"]


def test_a_clean_store_has_a_matching_edge_index(tmp_path: Path) -> None:
    with FactStore.open(_clean_store(tmp_path / "facts.db")) as store:
        assert audit(store).ok
        assert store.audit(jobs=2).ok


@pytest.mark.parametrize("edit", ["delete", "insert", "redirect"])
def test_an_edited_edge_index_is_a_finding(tmp_path: Path, edit: str) -> None:
    path = _clean_store(tmp_path / "facts.db")
    db = sqlite3.connect(path)
    source, derived = db.execute("SELECT source, derived FROM edges LIMIT 1").fetchone()
    bogus = bytes(32)
    if edit == "delete":
        db.execute("DELETE FROM edges WHERE source = ? AND derived = ?", (source, derived))
        missing, extra = [[source.hex(), derived.hex()]], []
    elif edit == "insert":
        db.execute("INSERT INTO edges (source, derived) VALUES (?, ?)", (bogus, derived))
        missing, extra = [], [[bogus.hex(), derived.hex()]]
    else:
        db.execute("UPDATE edges SET source = ? WHERE source = ? AND derived = ?",
                   (bogus, source, derived))  # fmt: skip
        missing, extra = [[source.hex(), derived.hex()]], [[bogus.hex(), derived.hex()]]
    db.commit()
    db.close()
    with FactStore.open(path) as store:
        serial, parallel = audit(store), store.audit(jobs=2)
    (finding,) = _edge_findings(serial)
    assert finding.details == {"missing": missing, "extra": extra}
    assert [f.code for f in serial.findings] == ["lineage.edge_index_mismatch"]
    assert jcs(parallel.to_json()) == jcs(serial.to_json())
