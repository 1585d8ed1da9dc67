"""``affidavit registry import`` takes a dump only when it is authentic (issues 21.8, 27.6, 27.7).

The export signs its manifest with the registry's key (docs/formats.md, "The signed dump
manifest"); the import verifies that signature under a key the operator trusts (``--log-key``, or
the destination data folder's key), the file hashes and row counts it names, and proves the log:
every leaf up to the root, every stored node, the checkpoint and every recorded head under the
trusted key. Each tampered dump below is one an attacker can make (a table and its hash rewritten,
the manifest re-signed with a key of their own) or, to reach the deeper checks, one the trusted
key signed over an inconsistent log; each is refused with its own code, exit 1, and nothing is
written to the destination. Everything runs through the real command line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import SigningKey, generate_keypair, load_signing_key
from affidavit.cli.main import affidavit
from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings
from affidavit.verify.crypto.checkpoint import checkpoint_body, format_note, note_signature_line
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.merkle import leaf_hash, node_hash, root_of
from click.testing import CliRunner

from tests.registry.conftest import Clock, make_key
from tests.registry.helpers import contract, fact, fact_hash

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

Rows = list[list[Any]]
# docs/formats.md, "The signed dump manifest": the context line, then manifest.json's bytes.
CONTEXT = b"affidavit.registry-export/v1\n"


def _run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(affidavit, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry data folder holding contracts, a public and a team fact, API keys, signed
    heads and a checkpoint, and its export ``dump`` beside it (made once for the module)."""
    base = tmp_path_factory.mktemp("origin")
    settings = Settings(data_dir=base / "data", contracts_dir=base / "none")
    with TestClient(create_app(settings, clock=Clock())) as client:
        publish = make_key(settings, "publish")
        write = make_key(settings, "facts:write")
        for i in range(3):
            answer = client.post(
                "/protocol/adapter-contracts",
                json=contract(f"acme.signed_{i}.v0"),
                headers={"Authorization": f"Bearer {publish}"},
            )
            assert answer.status_code == 201, answer.text
            assert client.get("/protocol/merkle/latest").status_code == 200
        secret = fact("urn:team:secret", scope="team")
        shared = fact("urn:public:note", scope="public", derived_from=[fact_hash(secret)])
        answer = client.put(
            "/v1/facts",
            json={"facts": [secret, shared]},
            headers={"Authorization": f"Bearer {write}"},
        )
        assert answer.status_code in (200, 201), answer.text
        assert client.get("/tlog/checkpoint").status_code == 200
    code, _, err = _run("registry", "export", base / "dump", "--data-dir", settings.data_dir)
    assert (code, err) == (0, ""), err
    return base


@pytest.fixture
def dump(origin: Path, tmp_path: Path) -> Path:
    """A fresh copy of the honest dump, to tamper with."""
    return Path(shutil.copytree(origin / "dump", tmp_path / "dump"))


@pytest.fixture
def destination(origin: Path, tmp_path: Path) -> Path:
    """An empty data folder holding the origin's key folder (it moves with the data folder)."""
    data = tmp_path / "moved"
    data.mkdir()
    shutil.copytree(origin / "data" / "keys", data / "keys")
    return data


def _trusted_key(origin: Path) -> SigningKey:
    return load_signing_key(origin / "data" / "keys" / "registry-1.key")


# -- the tamperer's tools: edit a table consistently, re-sign the manifest ------------------------


def _read(dump: Path, table: str) -> Rows:
    lines = (dump / f"{table}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _manifest(dump: Path) -> dict[str, Any]:
    return dict(json.loads((dump / "manifest.json").read_bytes()))


def _write_manifest(dump: Path, manifest: dict[str, Any]) -> None:
    (dump / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def _write(
    dump: Path, table: str, rows: Rows, *, rehash: bool = True, recount: bool = True
) -> None:
    """Rewrite ``table``; update its hash (and count) in the manifest as a careful tamperer does."""
    body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    (dump / f"{table}.jsonl").write_bytes(body)
    if not (rehash or recount):
        return  # the manifest's bytes untouched: only the file differs
    manifest = _manifest(dump)
    if rehash:
        manifest["files"][f"{table}.jsonl"] = hashlib.sha256(body).hexdigest()
    if recount:
        manifest["counts"][table] = len(rows)
    _write_manifest(dump, manifest)


def _sign(dump: Path, key: SigningKey) -> None:
    """Sign manifest.json as the export does (docs/formats.md), with ``key``."""
    signature = key.sign(CONTEXT + (dump / "manifest.json").read_bytes())
    document = {
        "format": "affidavit.registry-export-signature/v1",
        "algorithm": "Ed25519",
        "public_key": key.public_key.b64,
        "signature": base64.b64encode(signature).decode("ascii"),
    }
    (dump / "manifest.sig").write_text(json.dumps(document, indent=2) + "\n")


def _b64(value: bytes) -> dict[str, str]:
    return {"b64": base64.b64encode(value).decode("ascii")}


def _nodes(leaves: list[bytes]) -> Rows:
    """Every complete subtree's hash, as the log stores them (attest/log/storage.py)."""
    rows: Rows = [[0, i, _b64(h)] for i, h in enumerate(leaves)]
    level, current = 0, leaves
    while len(current) > 1:
        level += 1
        current = [node_hash(current[i], current[i + 1]) for i in range(0, len(current) - 1, 2)]
        rows += [[level, i, _b64(h)] for i, h in enumerate(current)]
    return rows


def _checkpoint(key: SigningKey, name: str, leaves: list[bytes]) -> str:
    body = checkpoint_body(name, len(leaves), root_of(leaves))
    line = note_signature_line(name, key_id_c2sp(name, key.public_key.raw), key.sign(body.encode()))
    return format_note(body, [line])


def _import(dump: Path, destination: Path, *extra: object) -> tuple[int, str]:
    code, out, err = _run("registry", "import", dump, "--data-dir", destination, *extra)
    return code, err or out


def _refused(dump: Path, destination: Path, code: str, *extra: object) -> None:
    exit_code, message = _import(dump, destination, *extra)
    assert (exit_code, message.split(": ")[:2]) == (1, ["error", code]), message
    assert message.count("\n") == 1  # one line
    assert sorted(p.name for p in destination.iterdir()) == ["keys"]  # nothing written


# -- the honest dump ----------------------------------------------------------------------------


def test_the_honest_dump_is_signed_and_imports(dump: Path, destination: Path) -> None:
    assert (dump / "manifest.sig").is_file()
    code, out = _import(dump, destination, "--json")
    assert code == 0, out
    result = json.loads(out)
    trusted = load_signing_key(destination / "keys" / "registry-1.key").public_key
    assert result["trusted_key"] == trusted.b64
    assert result["counts"]["facts"] == 2


def test_an_unsigned_dump_is_refused(dump: Path, destination: Path) -> None:
    (dump / "manifest.sig").unlink(missing_ok=True)
    _refused(dump, destination, "registry.dump_unsigned")


# -- issue 27.6: edited tables, their hashes rewritten ------------------------------------------


def test_an_injected_admin_api_key_is_refused(dump: Path, destination: Path) -> None:
    rows = _read(dump, "registry_api_keys")
    injected = list(rows[0])
    injected[0], injected[1], injected[2] = (
        "injected",
        hashlib.sha256(b"x").hexdigest(),
        '["admin"]',
    )
    _write(dump, "registry_api_keys", [*rows, injected])
    _refused(dump, destination, "registry.dump_signature_invalid")


def test_a_team_fact_made_public_and_resigned_by_another_key_is_refused(
    dump: Path, destination: Path
) -> None:
    for table, scope_column in (("facts", 1), ("registry_fact_index", 4)):
        rows = _read(dump, table)
        for row in rows:
            row[scope_column] = "public"
        _write(dump, table, rows)
    _sign(dump, generate_keypair())  # the tamperer's own key
    _refused(dump, destination, "registry.dump_signature_invalid")


def test_an_edited_contract_is_refused_by_its_file_hash(dump: Path, destination: Path) -> None:
    rows = _read(dump, "registry_contracts")
    rows[0][3] = rows[0][3].replace("starter_boolean_validator", "lenient_validator")
    _write(dump, "registry_contracts", rows, rehash=False, recount=False)
    _refused(dump, destination, "registry.dump_file_mismatch")


def test_a_deleted_fact_is_refused_by_the_signed_counts(
    origin: Path, dump: Path, destination: Path
) -> None:
    _write(dump, "facts", _read(dump, "facts")[1:], recount=False)
    _sign(dump, _trusted_key(origin))  # even under the trusted key, the count must match
    _refused(dump, destination, "registry.dump_count_mismatch")


def test_a_fact_filed_under_another_hash_is_refused(
    origin: Path, dump: Path, destination: Path
) -> None:
    rows = _read(dump, "facts")
    rows[0][0], rows[1][0] = rows[1][0], rows[0][0]
    _write(dump, "facts", rows)
    _sign(dump, _trusted_key(origin))
    _refused(dump, destination, "registry.dump_fact_mismatch")


# -- issue 27.7: a rewritten log -------------------------------------------------------------------


def _rewrite_log(
    dump: Path,
    key: SigningKey,
    edit: Callable[[list[bytes]], list[bytes]],
    *,
    claim_key: bool = False,
) -> None:
    """Rebuild the log from edited leaf data: nodes recomputed, heads removed, a checkpoint of
    the new tree signed by ``key``, the manifest's size, root and checkpoint updated; with
    ``claim_key`` the dump also names ``key`` as the log's key (meta, key history, manifest)."""
    entries = _read(dump, "log_entries")
    data = edit([base64.b64decode(row[1]["b64"]) for row in entries])
    leaves = [leaf_hash(d) for d in data]
    log_id = dict(_read(dump, "log_meta"))["log_id"]
    note = _checkpoint(key, log_id, leaves)
    _write(dump, "log_entries", [[i, _b64(d)] for i, d in enumerate(data)])
    _write(dump, "log_nodes", _nodes(leaves))
    root = root_of(leaves).hex()
    _write(dump, "log_heads", [[1, "checkpoint", len(leaves), root, "2025-06-01T12:00:00Z", note]])
    if claim_key:
        meta = [
            [k, key.public_key.b64 if k == "public_key" else v] for k, v in _read(dump, "log_meta")
        ]
        _write(dump, "log_meta", meta)
        history = _read(dump, "log_keys")
        history[0][2] = key.public_key.b64
        _write(dump, "log_keys", history)
    manifest = _manifest(dump)
    manifest["log"].update(tree_size=len(leaves), root_hash=root, checkpoint=note)
    if claim_key:
        manifest["log"]["public_key"] = key.public_key.b64
    _write_manifest(dump, manifest)


def test_a_rewritten_log_signed_by_a_fresh_key_is_refused(dump: Path, destination: Path) -> None:
    fresh = generate_keypair()
    swapped = lambda data: [data[1], data[0], *data[2:]]  # noqa: E731 - leaves swapped
    _rewrite_log(dump, fresh, swapped, claim_key=True)
    _sign(dump, fresh)
    _refused(dump, destination, "registry.dump_signature_invalid")
    # ... and the operator trusting the real key explicitly changes nothing.
    trusted = destination.parent / "trusted.pub"
    shutil.copy(destination / "keys" / "registry-1.pub", trusted)
    _refused(dump, destination, "registry.dump_signature_invalid", "--log-key", trusted)


def test_a_rewritten_log_is_refused_even_in_a_manifest_the_trusted_key_signed(
    origin: Path, dump: Path, destination: Path
) -> None:
    _rewrite_log(dump, generate_keypair(), lambda data: [data[1], data[0], *data[2:]])
    _sign(dump, _trusted_key(origin))
    _refused(dump, destination, "registry.dump_checkpoint_invalid")


def test_a_removed_checkpoint_is_refused(origin: Path, dump: Path, destination: Path) -> None:
    heads = _read(dump, "log_heads")
    _write(dump, "log_heads", [r for r in heads if r[1] != "checkpoint"])
    manifest = _manifest(dump)
    manifest["log"]["checkpoint"] = None
    _write_manifest(dump, manifest)
    _refused(dump, destination, "registry.dump_signature_invalid")
    # Signed by the trusted key, a manifest naming no checkpoint over heads that hold one.
    _write(dump, "log_heads", heads)
    _sign(dump, _trusted_key(origin))
    _refused(dump, destination, "registry.dump_checkpoint_invalid")


def test_a_dropped_last_leaf_is_refused(origin: Path, dump: Path, destination: Path) -> None:
    size = _manifest(dump)["log"]["tree_size"]
    _write(dump, "log_entries", [r for r in _read(dump, "log_entries") if r[0] != size - 1])
    _write(dump, "log_nodes", [r for r in _read(dump, "log_nodes") if r[:2] != [0, size - 1]])
    _refused(dump, destination, "registry.dump_signature_invalid")
    _sign(dump, _trusted_key(origin))  # the manifest still names the full tree
    _refused(dump, destination, "registry.dump_root_mismatch")


def test_a_head_that_contradicts_the_tree_is_refused(
    origin: Path, dump: Path, destination: Path
) -> None:
    rows = _read(dump, "log_heads")
    sth = next(r for r in rows if r[1] == "sth")
    sth[3] = "00" * 32
    _write(dump, "log_heads", rows)
    _sign(dump, _trusted_key(origin))
    _refused(dump, destination, "registry.dump_head_invalid")


# -- trust and unreadable input -----------------------------------------------------------------


def test_the_trusted_key_comes_from_the_operator(
    origin: Path, dump: Path, destination: Path, tmp_path: Path
) -> None:
    keyless = tmp_path / "keyless"
    keyless.mkdir()
    code, message = _import(dump, keyless)
    assert (code, message.split(": ")[:2]) == (2, ["error", "usage.invalid"]), message
    assert sorted(p.name for p in keyless.iterdir()) == []
    other = tmp_path / "other.pub"
    other.write_text(generate_keypair().public_key.b64 + "\n")
    _refused(dump, destination, "registry.dump_signature_invalid", "--log-key", other)
    pub = tmp_path / "registry-1.pub"
    shutil.copy(origin / "data" / "keys" / "registry-1.pub", pub)
    code, message = _import(dump, keyless, "--log-key", pub)
    assert code == 0, message


@pytest.mark.parametrize(
    ("name", "content"),
    [("manifest.json", None), ("manifest.sig", b"{}"), ("manifest.sig", b"\xff")],
)
def test_an_unreadable_dump_is_exit_2(
    dump: Path, destination: Path, name: str, content: bytes | None
) -> None:
    if content is None:
        (dump / name).unlink()
    else:
        (dump / name).write_bytes(content)
    code, message = _import(dump, destination)
    assert (code, message.split(": ")[:2]) == (2, ["error", "registry.dump_invalid"]), message
    assert message.count("\n") == 1
    assert sorted(p.name for p in destination.iterdir()) == ["keys"]


def test_a_malformed_manifest_the_trusted_key_signed_is_exit_2(
    origin: Path, dump: Path, destination: Path
) -> None:
    (dump / "manifest.json").write_bytes(b'{"format": "something else"}')
    _sign(dump, _trusted_key(origin))
    code, message = _import(dump, destination)
    assert (code, message.split(": ")[:2]) == (2, ["error", "registry.dump_invalid"]), message
    assert sorted(p.name for p in destination.iterdir()) == ["keys"]


def test_a_refused_dump_leaves_a_postgresql_destination_untouched(
    dump: Path, destination: Path, pg_url: str
) -> None:
    import psycopg

    rows = _read(dump, "registry_api_keys")
    _write(
        dump, "registry_api_keys", [*rows, ["injected", "00" * 32, '["admin"]', "", "", 0, "[]"]]
    )
    code, message = _import(dump, destination, "--database-url", pg_url)
    assert (code, message.split(": ")[:2]) == (1, ["error", "registry.dump_signature_invalid"])
    with psycopg.connect(pg_url) as db:
        tables = db.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert tables == (0,)  # not even a schema was created
    assert sorted(p.name for p in destination.iterdir()) == ["keys"]
