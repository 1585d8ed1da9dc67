"""Every ``--json`` output of the CLI matches its schema in specs/output/ (tests/schemas.py).

Each test runs real commands (in-process with click's runner; the servers as processes) and checks
what they print with :func:`assert_output_schema`, the failure paths that still print a document
(exit 1 with a report or an ``error`` object) included. tests/cli/test_output_schemas_complete.py
checks that every command with ``--json`` has a schema and is checked here (or by another test).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import example_contract
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.lineage.facts import parse_fact
from affidavit.verify.lineage.stigmem import fact_record
from affidavit.witness.cosigner import WitnessKeys
from click.testing import CliRunner, Result

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    write_json,
    write_key_files,
)
from tests.processes import AFFIDAVIT, free_port, refused_port
from tests.registry.helpers import contract as registry_contract
from tests.registry.helpers import fact as registry_fact
from tests.schemas import (
    ROOT,
    assert_output_schema,
    output_errors,
)
from tests.verify.bundles.test_bundle_support import LOG_KEY as BUNDLE_LOG_KEY
from tests.verify.bundles.test_bundle_support import OUTPUTS, POLICY
from tests.verify.tlog.proof_fixtures import cosign_recorded, witness_policy

VECTORS = ROOT / "vectors"
LOG_ID = "schemas.test/log"
LOG_KEY = derive_test_key("TEST-ONLY affidavit output schema tests: log key")
NEW_LOG_KEY = derive_test_key("TEST-ONLY affidavit output schema tests: new log key")
WITNESS_NAME = "witness.example/schemas"


def run(line: str, *args: str | Path) -> Result:
    """``affidavit`` with the words of ``line`` then ``args``, in-process."""
    return CliRunner().invoke(affidavit, [*line.split(), *map(str, args)])


def cli(line: str, *args: str | Path, code: int = 0) -> Any:
    """``affidavit LINE ARGS --json``: the exit code must be ``code`` and stdout exactly one JSON
    document, which is returned."""
    result = run(line, *args, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def write_key(path: Path, key: Any) -> Path:
    """A private key file, mode 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(key))
    return path


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """``log.db``: a log of three entries (``entry0..2.txt``) under ``log.key``."""
    key = write_key(tmp_path / "log.key", LOG_KEY)
    assert run("log init", tmp_path / "log.db", "--key", key, "--log-id", LOG_ID).exit_code == 0
    for i in range(3):
        (tmp_path / f"entry{i}.txt").write_text(f"schema test entry {i}\n")
    entries = [tmp_path / f"entry{i}.txt" for i in range(3)]
    assert run("log append", tmp_path / "log.db", *entries).exit_code == 0
    return tmp_path


@contextlib.contextmanager
def http_server(handler: Any) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 in a thread; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclasses.dataclass
class Printed:
    """What a process printed."""

    stdout: bytes = b""
    stderr: bytes = b""


@contextlib.contextmanager
def serving(args: list[str], ready: str, env: dict[str, str] | None = None) -> Iterator[Printed]:
    """``affidavit ARGS --json`` as a process until the block ends (then SIGTERM), once ``ready``
    (a URL) answers; afterwards ``.stdout``/``.stderr`` hold all it printed."""
    process = subprocess.Popen(
        [AFFIDAVIT, *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    printed = Printed()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and process.poll() is None:
            try:
                httpx.get(ready, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        yield printed
    finally:
        process.terminate()
        printed.stdout, printed.stderr = process.communicate(timeout=30)


# -- canon, hash, keys ------------------------------------------------------------------------


def test_canon_hash_and_keys_generate(tmp_path: Path) -> None:
    source = VECTORS / "canonical" / "nested-structures.input.json"
    for form in ("jcs", "py-compact", "py-spaced"):
        assert_output_schema("canon", cli("canon --form", form, source))
        assert_output_schema("hash", cli("hash --form", form, source))
    made = cli("keys generate --publisher-id acme --key-id k1 --dir", tmp_path / "k")
    assert_output_schema("keys generate", made)


# -- log --------------------------------------------------------------------------------------


def test_log_init_append_head_prove_consistency(tmp_path: Path) -> None:
    key, db = write_key(tmp_path / "log.key", LOG_KEY), tmp_path / "log.db"
    assert_output_schema("log init", cli("log init", db, "--key", key, "--log-id", LOG_ID))
    (tmp_path / "a.json").write_text('{"b": 1, "a": 2}')
    appended = cli(
        "log append --leaf-form py-compact", db, tmp_path / "a.json", tmp_path / "a.json"
    )
    assert_output_schema("log append", appended)
    assert_output_schema("log head", cli("log head --timestamp 2026-01-01T00:00:00Z", db))
    assert_output_schema("log head", cli("log head --checkpoint", db))
    assert_output_schema("log prove", cli("log prove --index 1", db))
    assert_output_schema("log consistency", cli("log consistency --from 1 --to 2", db))


def test_log_vkey(log_dir: Path) -> None:
    # issue 22: every command takes --json; the text form is the vkey alone, as before
    db = log_dir / "log.db"
    printed = cli("log vkey", db)
    assert_output_schema("log vkey", printed)
    assert printed["vkey"] == verifier_key_string(LOG_ID, LOG_KEY.public_key)
    assert printed["vkey"] + "\n" == run("log vkey", db).stdout
    renamed = cli("log vkey --origin example.com/log", db)
    assert renamed["name"] == "example.com/log"
    assert_output_schema("log vkey", renamed)


def test_log_head_with_a_witness_that_is_down(log_dir: Path) -> None:
    # A --witness that refuses is reported with its error object and the checkpoint is printed
    # (tests/cli/test_log_head_witness.py checks the cosigned case with a real witness).
    vkey = WitnessKeys(WITNESS_NAME, derive_test_key("TEST-ONLY schemas witness")).vkeys()[0]
    with refused_port() as port:
        witness = f"http://127.0.0.1:{port}#{vkey}"
        document = cli("log head --checkpoint", log_dir / "log.db", "--witness", witness)
    assert document["witnesses"][0]["error"]["code"] == "net.unavailable"
    assert_output_schema("log head", document)


def test_log_keys_and_rotate_key(log_dir: Path) -> None:
    db = log_dir / "log.db"
    assert_output_schema("log keys", cli("log keys", db))
    assert run("log head --timestamp 2026-01-01T00:00:00Z", db).exit_code == 0
    new_key = write_key(log_dir / "new.key", NEW_LOG_KEY)
    rotated = cli("log rotate-key --at 2026-01-02T00:00:00Z", db, "--new-key", new_key)
    assert_output_schema("log rotate-key", rotated)
    history = cli("log keys", db)
    assert [k["rotation"] is None for k in history["keys"]] == [True, False]
    assert_output_schema("log keys", history)


def test_log_tiles_and_proof(log_dir: Path) -> None:
    db, folder = log_dir / "log.db", log_dir / "tiles"
    assert_output_schema("log tiles", cli("log tiles", db, folder))
    again = cli("log tiles", db, folder)  # nothing new: the recorded checkpoint is kept
    assert again["checkpoint_signed"] is False
    assert_output_schema("log tiles", again)
    assert_output_schema("log proof", cli("log proof --index 2", db))
    assert_output_schema("log proof", cli("log proof --index 2 --inclusion --size 3", db))


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.network_local
def test_log_monitor_round_and_rollback(log_dir: Path) -> None:
    db, www = log_dir / "log.db", log_dir / "www"
    assert run("log tiles", db, www / "old").exit_code == 0
    (log_dir / "entry3.txt").write_text("one more\n")
    assert run("log append", db, log_dir / "entry3.txt").exit_code == 0
    assert run("log tiles", db, www / "new").exit_code == 0
    vkey = run("log vkey", db).stdout.strip()
    args = ("--entries", "--vkey", vkey, "--state", log_dir / "monitor.json")
    with http_server(partial(_QuietFiles, directory=str(www))) as url:
        first = cli("log monitor", f"{url}/new/", *args)
        assert (first["previous_size"], first["tree_size"]) == (None, 4)
        assert_output_schema("log monitor", first)
        assert_output_schema("log monitor", cli("log monitor", f"{url}/new/", *args))
        rollback = cli("log monitor", f"{url}/old/", *args, code=1)
    assert (rollback["verdict"], rollback["code"]) == ("failed", "tlog.rollback")
    assert_output_schema("log monitor", rollback)


# -- facts ------------------------------------------------------------------------------------


def test_facts_hash_add_sign(tmp_path: Path) -> None:
    facts, db = VECTORS / "lineage" / "facts.jsonl", tmp_path / "facts.db"
    assert_output_schema("facts hash", cli("facts hash", facts))
    assert_output_schema("facts add", cli("facts add", db, facts))
    again = cli("facts add", db, facts)
    assert again["added"] == []
    assert_output_schema("facts add", again)
    key = write_key(tmp_path / "fact.key", derive_test_key("TEST-ONLY schemas fact key"))
    assert_output_schema("facts sign", cli("facts sign --key", key, facts))


def test_facts_export(tmp_path: Path) -> None:
    # issue 22: every command takes --json; the default stays JSON Lines (what facts add reads)
    facts, db = VECTORS / "lineage" / "facts.jsonl", tmp_path / "facts.db"
    cli("facts add", db, facts)
    exported = cli("facts export", db)
    assert_output_schema("facts export", exported)
    lines = run("facts export", db).stdout.splitlines()
    assert exported["facts"] == [json.loads(line) for line in lines]
    assert exported["count"] == len(lines) > 0


def test_facts_walk_and_audit(tmp_path: Path) -> None:
    lineage = VECTORS / "lineage"
    store, signed, pub = (
        lineage / "store.jsonl",
        lineage / "signed.jsonl",
        lineage / "test-lineage.pub",
    )
    for vector, scopes in (("walk-chain-depth3.json", ()), ("walk-hidden-scope.json", ("team",))):
        expected = json.loads((lineage / vector).read_text())
        readable = [a for s in scopes for a in ("--readable-scopes", s)]
        walked = cli("facts walk --depth 3", expected["root_fact_id"], "--store", store, *readable)
        assert walked == expected  # hidden-scope: a node with exists false
        assert_output_schema("facts walk", walked)
    child = cli("facts hash", signed)["facts"][1]["fact_hash"]
    checked = cli("facts walk", child, "--store", signed, "--trusted-key", pub)
    assert "signature" in checked["nodes"][0]
    assert_output_schema("facts walk", checked)

    assert_output_schema("facts audit", cli("facts audit --store", store))
    tampered = cli("facts audit --store", lineage / "tampered.jsonl", code=1)
    assert tampered["findings"]
    assert_output_schema("facts audit", tampered)
    signatures = cli("facts audit --store", signed, "--trusted-key", pub, code=1)
    assert signatures["signatures"] is not None
    assert_output_schema("facts audit", signatures)
    assert run("facts add", tmp_path / "facts.db", lineage / "facts.jsonl").exit_code == 0
    assert_output_schema("facts audit", cli("facts audit --store", tmp_path / "facts.db"))


class _StigmemNode(BaseHTTPRequestHandler):
    """``GET /v1/facts``: one page of the node's FactRecords (``records``), no cursor."""

    records: ClassVar[list[dict[str, Any]]] = []

    def do_GET(self) -> None:
        body = json.dumps({"facts": type(self).records, "cursor": None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.network_local
def test_facts_pull(tmp_path: Path) -> None:
    # tests/cli/facts/test_stigmem_pull.py checks the same against a real stigmem-node.
    parent = parse_fact(registry_fact("urn:test:parent"))
    child = parse_fact(registry_fact("urn:test:child", derived_from=[parent.hash]))
    records = [fact_record(parent), fact_record(child)]

    class Node(_StigmemNode):
        pass

    Node.records = records
    with http_server(Node) as url:
        pulled = cli("facts pull", url, "--out", tmp_path / "a.jsonl")
        assert (pulled["ok"], pulled["written"]) == (True, 2)
        assert_output_schema("facts pull", pulled)
        Node.records = [*records, {**records[0], "id": "x", "cid": "sha256:" + "0" * 64}]
        findings = cli("facts pull", url, "--out", tmp_path / "b.jsonl", code=1)
    assert findings["findings"]
    assert_output_schema("facts pull", findings)


# -- adapter ----------------------------------------------------------------------------------


@pytest.fixture
def adapter_ws(tmp_path: Path) -> dict[str, Path]:
    """A publisher key (the demo key), two contracts, and an empty root for what is written."""
    key, doc = write_key_files(tmp_path / "keys", demo_key())
    contracts = tmp_path / "contracts"
    write_json(contracts / "a.json", make_contract())
    write_json(contracts / "b.json", make_contract("acme.other.v0", "1.2.0"))
    return {"key": key, "doc": doc, "contracts": contracts, "root": tmp_path}


def _attest_out(ws: dict[str, Path], name: str) -> Any:
    contract, out = ws["contracts"] / f"{name}.json", ws["root"] / f"{name}.entry.json"
    when = "--published-at 2025-01-01T00:00:00Z"
    return cli(f"adapter attest {when}", contract, "--sign-with", ws["key"], "--out", out)


def test_adapter_authoring(tmp_path: Path) -> None:
    scaffold = cli("adapter scaffold --id acme.schemas.v0 --out", tmp_path)
    assert_output_schema("adapter scaffold", scaffold)
    path, old = scaffold["out"], tmp_path / "old.json"
    shutil.copy(path, old)
    for vector in sorted((VECTORS / "contracts").glob("*.json")):
        if vector.name.endswith(".lint.json") or vector.name.startswith(
            ("reject-strict", "reject-not-object")  # not JSON objects: exit 2, no document
        ):
            continue
        linted = cli("adapter lint", vector, code=0 if vector.name.startswith("valid-") else 1)
        assert_output_schema("adapter lint", linted)
    assert_output_schema("adapter bump", cli("adapter bump --version 0.2.0", path))
    diff = cli("adapter diff", old, path, code=1)
    assert diff["diff_field_count"] > 0
    assert_output_schema("adapter diff", diff)
    assert_output_schema("adapter diff", cli("adapter diff", old, old))
    # a contract that does not lint after the bump: nothing written, its lint report printed
    leak = tmp_path / "leak.json"
    shutil.copy(VECTORS / "contracts" / "reject-policy-field-leak.json", leak)
    refused = cli("adapter bump --version 9.0.0", leak, code=1)
    assert refused["ok"] is False
    assert_output_schema("adapter bump", refused)


def test_adapter_attest_shapes(adapter_ws: dict[str, Path]) -> None:
    contract, ids = adapter_ws["contracts"] / "a.json", "--publisher-id p.q --key-id k1"
    unsigned = cli(f"adapter attest {ids}", contract)  # the attest document, no --out
    assert unsigned["signed"] is False
    assert_output_schema("adapter attest", unsigned)
    signed = cli("adapter attest", contract, "--sign-with", adapter_ws["key"])
    assert signed["signed"] is True
    assert_output_schema("adapter attest", signed)
    assert_output_schema("adapter attest", _attest_out(adapter_ws, "a"))  # what --out wrote
    broken = {**make_contract(), "contract_hash": "0" * 64}
    refused = cli(
        f"adapter attest {ids}", write_json(adapter_ws["root"] / "x.json", broken), code=1
    )
    assert refused["ok"] is False  # the lint report, then entry.lint_failed on stderr
    assert_output_schema("adapter attest", refused)


def _manifest(ws: dict[str, Path]) -> tuple[list[str], Path, Any]:
    """Both contracts attested (signed) and built into a signed manifest: the entry files, the
    manifest, and what ``adapter manifest build --json`` printed."""
    entries = [_attest_out(ws, name)["out"] for name in ("a", "b")]
    manifest = ws["root"] / "manifest.json"
    built = cli("adapter manifest build", *entries, "--sign-with", ws["key"], "--out", manifest)
    return entries, manifest, built


def test_adapter_manifest_and_list(adapter_ws: dict[str, Path]) -> None:
    root, key = adapter_ws["root"], ("--public-key-base64", demo_key().public_key.b64)
    entries, manifest, built = _manifest(adapter_ws)
    assert_output_schema("adapter manifest build", built)
    assert_output_schema("adapter manifest verify", cli("adapter manifest verify", manifest, *key))
    unkeyed = cli("adapter manifest verify", manifest, code=1)
    assert unkeyed["ok"] is False
    assert_output_schema("adapter manifest verify", unkeyed)
    tampered = json.loads(manifest.read_text())
    tampered["contracts"][0]["release_notes"] = "edited"
    tampered["manifest_hash"] = "0" * 64
    edited = write_json(root / "tampered.json", tampered)
    mismatch = cli("adapter manifest verify", edited, *key, code=1)
    assert "expected" in mismatch["entries"][0]
    assert "manifest_hash_expected" in mismatch
    assert_output_schema("adapter manifest verify", mismatch)
    entry = cli("adapter manifest verify-entry", entries[0], *key)
    assert_output_schema("adapter manifest verify-entry", entry)
    unsigned = cli("adapter manifest verify-entry", entries[0], code=1)
    assert_output_schema("adapter manifest verify-entry", unsigned)
    assert_output_schema("adapter list", cli("adapter list --manifest", manifest))


def test_adapter_lifecycle_pin_and_pins_check(adapter_ws: dict[str, Path]) -> None:
    root, key = adapter_ws["root"], ("--public-key-base64", demo_key().public_key.b64)
    copy = write_json(root / "lifecycle" / "a.json", make_contract())
    changed = cli("adapter lifecycle --status deprecated", copy, "--replaced-by", "acme.x.v0@0.2.0")
    assert_output_schema("adapter lifecycle", changed)

    _, manifest, _ = _manifest(adapter_ws)
    pins = root / "contracts" / "pinned_adapters.json"
    for declaration, extra in ((make_contract(), ("--manifest", manifest, *key)),
                               (make_contract("acme.other.v0", "1.2.0"), ())):  # fmt: skip
        ident = f"--id {declaration['adapter_id']} --version {declaration['adapter_version']}"
        pinned = cli(
            f"adapter pin {ident}", "--hash", declaration["contract_hash"], "--file", pins, *extra
        )
        assert_output_schema("adapter pin", pinned)
    assert len(pinned["pinned"]) == 2
    holds = cli("adapter pins check --file", pins, "--manifest", manifest, *key)
    assert (holds["ok"], holds["manifest"] is not None) == (True, True)
    assert_output_schema("adapter pins check", holds)
    write_json(root / "contracts" / "a.json", {**make_contract(), "output_fields": ["x"]})
    fails = cli("adapter pins check --file", pins, code=1)
    assert (fails["ok"], fails["manifest"]) == (False, None)
    assert_output_schema("adapter pins check", fails)


# -- stamp ------------------------------------------------------------------------------------


def test_stamp_and_stamp_batch(tmp_path: Path) -> None:
    key = write_key(tmp_path / "log.key", BUNDLE_LOG_KEY)
    with TransparencyLog.create(tmp_path / "log.db", BUNDLE_LOG_KEY, "cli-log"):
        pass
    contract = write_json(tmp_path / "contract.json", example_contract())
    policy = write_json(tmp_path / "policy.json", POLICY.to_json())
    outputs = [write_json(tmp_path / "in" / f"{n}.json", v) for n, v in sorted(OUTPUTS.items())]
    common = ("--contract", contract, "--policy", policy, "--log", tmp_path / "log.db",
              "--key", key, "--time", "2026-03-01T12:00:00Z")  # fmt: skip
    one = cli(
        "stamp --deal-id deal-1",
        *common,
        "--adapter-output",
        outputs[0],
        "--out",
        tmp_path / "b.json",
    )
    assert_output_schema("stamp", one)
    many = cli("stamp batch", *common, "--out-dir", tmp_path / "out", *outputs)
    assert len(many["bundles"]) == len(outputs)
    assert_output_schema("stamp batch", many)


# -- verify -----------------------------------------------------------------------------------


def test_verify_bundle_and_attestation(tmp_path: Path) -> None:
    bundles = VECTORS / "bundles"
    every = cli(
        "verify bundle", bundles, "--public-key-base64", BUNDLE_LOG_KEY.public_key.b64, code=1
    )
    assert {"verified", "failed"} <= {r["verdict"] for r in every["results"]}
    assert every["summary"]["skipped"] == 1  # manifest.json there is no bundle (ADR 0023)
    assert_output_schema("verify bundle", every)
    unanchored = cli("verify bundle", bundles / "stamped-accepted-3.0.0.json", code=1)
    assert_output_schema("verify bundle", unanchored)

    signer = derive_test_key("TEST-ONLY schemas attestation key")
    body = {"deal_id": "d-1", "outcome": "accepted"}
    attestation = write_json(tmp_path / "attestation.json", {
        "attestation": body,
        "payload_hash": sha256_hex(py_compact(body)),
        "signature": base64.b64encode(signer.sign(py_compact(body))).decode(),
        "algorithm": "Ed25519",
        "public_key_base64": signer.public_key.b64,
    })  # fmt: skip
    verified = cli("verify attestation", attestation, "--public-key-base64", signer.public_key.b64)
    assert verified["results"][0]["verdict"] == "verified"
    assert_output_schema("verify attestation", verified)
    assert_output_schema("verify attestation", cli("verify attestation", attestation, code=1))
    missing = cli("verify attestation", tmp_path / "none.json", code=2)
    assert_output_schema("verify attestation", missing)
    assert output_errors("verify attestation", every)  # the kind is pinned per command


def test_verify_anchor() -> None:
    anchor = VECTORS / "anchor"
    valid = anchor / "receipt-valid-rsa-sha256.json"
    verified = cli("verify anchor", valid, "--tsa-cert", anchor / "tsa.pem")
    assert verified["verdict"] == "verified"
    assert_output_schema("verify anchor", verified)
    assert_output_schema("verify anchor", cli("verify anchor", valid, code=1))
    bad = cli("verify anchor", anchor / "receipt-digest-mismatch.json", code=1)
    assert_output_schema("verify anchor", bad)
    assert_output_schema("verify anchor", cli("verify anchor", anchor / "none.json", code=2))


def test_verify_checkpoint_and_inclusion() -> None:
    crypto = VECTORS / "crypto"
    vkey = ("--vkey", (crypto / "log.vkey").read_text().strip())
    verified = cli("verify checkpoint", crypto / "checkpoint-valid.txt", *vkey)
    assert_output_schema("verify checkpoint", verified)
    tampered = cli("verify checkpoint", crypto / "checkpoint-tampered-size.txt", *vkey, code=1)
    assert tampered["verdict"] == "failed"
    assert_output_schema("verify checkpoint", tampered)
    proof = json.loads((crypto / "inclusion-valid.json").read_text())
    path = [a for h in proof["proof"] for a in ("--proof", h)]
    args = (
        "--leaf-hash",
        proof["leaf_hash"],
        "--index",
        str(proof["index"]),
        "--size",
        str(proof["size"]),
        *path,
    )
    assert_output_schema("verify inclusion", cli("verify inclusion --root", proof["root"], *args))
    wrong = cli("verify inclusion --root", "00" * 32, *args, code=1)
    assert_output_schema("verify inclusion", wrong)


def test_verify_tlog_proof(log_dir: Path) -> None:
    db = log_dir / "log.db"
    head = run("log head --checkpoint", db)
    assert head.exit_code == 0, head.stderr
    with TransparencyLog.open(db) as log:
        cosign_recorded(log, head.stdout)
    policy = log_dir / "policy.txt"
    policy.write_text(witness_policy(verifier_key_string(LOG_ID, LOG_KEY.public_key)))
    proof = log_dir / "leaf1.tlog-proof"
    proof.write_text(cli("log proof --index 1", db)["tlog_proof"])
    verified = cli(
        "verify tlog-proof", proof, "--policy", policy, "--entry", log_dir / "entry1.txt"
    )
    assert_output_schema("verify tlog-proof", verified)
    wrong = cli(
        "verify tlog-proof", proof, "--policy", policy, "--entry", log_dir / "entry0.txt", code=1
    )
    assert wrong["code"] == "tlog.entry_mismatch"
    assert_output_schema("verify tlog-proof", wrong)


# -- registry and witness ---------------------------------------------------------------------


def test_registry_keys_and_transfer(tmp_path: Path) -> None:
    data = ("--data-dir", tmp_path / "data")
    assert_output_schema("registry migrate", cli("registry migrate", *data))
    scopes = "--scope publish --publisher acme --scope facts:read:team --label ci"
    created = cli(f"registry keys create {scopes}", *data)
    assert_output_schema("registry keys create", created)
    bound = cli("registry keys bind", created["key_id"], "--publisher", "acme.tools", *data)
    assert_output_schema("registry keys bind", bound)
    assert_output_schema("registry keys list", cli("registry keys list", *data))
    assert_output_schema(
        "registry keys revoke", cli("registry keys revoke", created["key_id"], *data)
    )
    keys = tmp_path / "data" / "keys"  # the registry's key (its first start would make it)
    cli("keys generate --publisher-id affidavit-local --key-id registry-1 --dir", keys)
    assert_output_schema("registry export", cli("registry export", tmp_path / "dump", *data))
    trusted = ("--log-key", keys / "registry-1.pub")
    moved = cli("registry import", tmp_path / "dump", "--data-dir", tmp_path / "moved", *trusted)
    assert_output_schema("registry import", moved)


@pytest.mark.network_local
def test_registry_serve_probe_publish(tmp_path: Path) -> None:
    data = tmp_path / "data"
    token = cli("registry keys create --scope publish --publisher acme --data-dir", data)["api_key"]
    declaration = write_json(tmp_path / "c.json", registry_contract("acme.schemas.v0"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ["registry", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--data-dir", str(data), "--no-access-log"]  # fmt: skip
    env = {"AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(tmp_path / "none")}
    with serving(args, f"{url}/v1/health", env) as printed:
        assert_output_schema("registry probe", cli("registry probe --registry", url))
        published = cli("registry publish", declaration, "--registry", url, "--api-key", token)
        assert published["created"] is True
        assert_output_schema("registry publish", published)
        again = cli("registry publish", declaration, "--registry", url, "--api-key", token)
        assert_output_schema("registry publish", again)
    banner = json.loads(printed.stdout)  # the banner is all it printed, start to shutdown
    assert banner["listening"] == url, printed.stderr[-2000:]
    assert_output_schema("registry serve", banner)


@pytest.mark.network_local
def test_witness_keygen_vkey_serve(tmp_path: Path) -> None:
    ed, ml = tmp_path / "w.key", tmp_path / "w.mldsa"
    made = cli("witness keygen --name", WITNESS_NAME, "--key", ed, "--ml-dsa-key", ml)
    assert len(made["vkeys"]) == 2
    assert_output_schema("witness keygen", made)
    assert_output_schema("witness keygen", cli("witness keygen --key", tmp_path / "x.key"))
    vkeys = cli("witness vkey --name", WITNESS_NAME, "--key", ed, "--ml-dsa-key", ml)
    assert_output_schema("witness vkey", vkeys)
    port = free_port()
    args = ["witness", "serve", "--name", WITNESS_NAME, "--key", str(ed), "--ml-dsa-key", str(ml),
            "--log-vkey", verifier_key_string(LOG_ID, LOG_KEY.public_key),
            "--state", str(tmp_path / "state"),
            "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with serving(args, f"http://127.0.0.1:{port}/{'0' * 64}/checkpoint") as printed:
        pass
    banner = json.loads(printed.stdout)
    assert banner["vkeys"] == vkeys["vkeys"], printed.stderr[-2000:]
    assert_output_schema("witness serve", banner)
