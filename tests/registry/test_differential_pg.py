"""The same random operations against a SQLite registry and a PostgreSQL registry: every answer
matches (issue 27, "A differential"; docs/adr/0017-one-store-contract.md).

Two real ``affidavit registry serve`` processes on 127.0.0.1 (tests/processes.py), one on its data
folder's SQLite file, one on a fresh database of the test cluster (tests/pg.py), with the same key
folder, public URL and API keys (the same rows written into both stores), so any difference is the
store's. Each operation goes to both, in turn; the status and the body must be equal after
:func:`_normal`, which blanks only what the clock decides: timestamps, and the signatures, entry
hashes, roots and proof hashes computed over them (each process reads its own clock). What is
blanked is still checked: each side's checkpoints and signed tree heads are verified under that
side's own log key, then compared by origin and tree size only; a leaf is compared as the JSON it
holds. A first phase publishes the same contract on each side in a different second, so every root
differs, and requires every log read to compare equal (the seed 741390617 failure of issue 31: same
size, different roots); a proof's hashes are the tree's, so they are blanked whatever their key.
Operations: facts with edge strings and lengths (U+0000, lone surrogates escaped in the JSON, 2,048
CJK characters, one past every limit), derivations (cycles, immutability), Stigmem POSTs, contracts
at and past the id bounds, lifecycle patches, every key and scope (none, unknown, revoked,
malformed), queries and paths with odd parameters, log and discovery reads. No answer may be a 5xx.
Then each store is exported, imported into a fresh store of the other kind and re-exported: the
tables come back byte for byte.

Bounded: ``AFFIDAVIT_DIFFERENTIAL_SECONDS`` of operations (default 4; 30 when ``CI=true``);
``AFFIDAVIT_DIFFERENTIAL_SEED`` replays a run (the seed is printed with any failure).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import httpx
import pytest
from affidavit.attest.keyring import generate_key_files, load_public_key
from affidavit.registry.auth import ApiKey, hash_token, new_token, parse_token
from affidavit.registry.db import open_tables
from affidavit.verify.crypto.checkpoint import (
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.treehead import verify_sth

from tests.processes import AFFIDAVIT, RegistryProcess
from tests.registry.helpers import contract, fact_hash

pytestmark = pytest.mark.network_local

CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SECONDS = float(os.environ.get("AFFIDAVIT_DIFFERENTIAL_SECONDS") or (30 if CI else 4))
SEED = int(os.environ.get("AFFIDAVIT_DIFFERENTIAL_SEED") or random.SystemRandom().randrange(2**32))
PUBLIC_URL = "https://registry.example"
CONTRACTS = "/protocol/adapter-contracts"
KEY_NAMES = ("publish", "admin", "write", "team", "all", "revoked")


# -- the two registries ------------------------------------------------------------------------


@dataclass
class Pair:
    sqlite: RegistryProcess
    postgres: RegistryProcess
    tokens: dict[str, str]
    key_folder: Path
    pg_url: str


def _keys(data_dirs: list[Path], database_urls: list[str | None]) -> dict[str, str]:
    """The same API keys (id, digest, scopes, bindings) written into both stores."""
    specs: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
        "publish": (("publish",), ("acme",)),
        "admin": (("admin", "facts:write", "facts:read:*"), ()),
        "write": (("facts:write",), ()),
        "team": (("facts:read:team", "facts:write"), ()),
        "all": (("facts:read:*", "facts:write"), ()),
        "revoked": (("facts:read:*",), ()),
    }
    tokens = {name: new_token() for name in specs}
    for data_dir, url in zip(data_dirs, database_urls, strict=True):
        tables = open_tables(url or data_dir / "registry.db", key_dir=data_dir / "keys")
        try:
            for name, (scopes, publishers) in specs.items():
                token = tokens[name]
                key = ApiKey(parse_token(token).key_id, hash_token(token), scopes, name, publishers)
                tables.add_api_key(key, "2025-06-01T12:00:00Z")
            tables.revoke_api_key(parse_token(tokens["revoked"]).key_id)
        finally:
            tables.close()
    return tokens


@pytest.fixture
def pair(tmp_path: Path, pg_url: str) -> Iterator[Pair]:
    keys = tmp_path / "keys"
    generate_key_files(
        keys, "affidavit-local", "registry-1", f"{PUBLIC_URL}/specs/adapter-contracts.manifest.json"
    )
    dirs = [tmp_path / "sqlite", tmp_path / "postgres"]
    for data in dirs:
        data.mkdir(mode=0o700)
        shutil.copytree(keys, data / "keys")
        (data / "keys").chmod(0o700)
    tokens = _keys(dirs, [None, pg_url])
    env = {"AFFIDAVIT_PUBLIC_URL": PUBLIC_URL, "AFFIDAVIT_READ_THREADS": "2"}
    lite = RegistryProcess(dirs[0], env)
    post = RegistryProcess(dirs[1], {**env, "AFFIDAVIT_DATABASE_URL": pg_url})
    lite.start()
    try:
        post.start()
        try:
            yield Pair(lite, post, tokens, keys, pg_url)
        finally:
            post.stop()
    finally:
        lite.stop()


# -- what may differ ---------------------------------------------------------------------------

_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)")
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Keys whose value the clock decides (directly, or as a hash or signature over a timestamp).
_CLOCKED = frozenset(  # entry_hash covers published_at, manifest_hash generated_at
    {
        "published_at",
        "generated_at",
        "timestamp",
        "signature",
        "entry_hash",
        "entry_signature",
        "manifest_hash",
        "manifest_signature",
    }
)
# Content hashes the clock never touches: compared as they are.
_STABLE_HEX = frozenset({"contract_hash", "input_schema_hash", "id", "hash", "root_fact_id"})
_PROOFS = frozenset({"proof", "path", "inclusion", "consistency"})
_CHECKPOINTS = frozenset({"/protocol/merkle/checkpoint", "/tlog/checkpoint"})


def _normal(
    value: Any,
    key: str = "",
    *,
    clocked_hashes: bool,
    log_key: Ed25519PublicKey,
    stable: frozenset[str] = _STABLE_HEX,
) -> Any:
    """``value`` with what each process's own clock decides blanked (module docstring): a
    signed tree head is verified under ``log_key`` first (so a blanked signature is still a
    checked one), and a leaf's bytes are compared as the JSON they hold, its timestamps blanked."""

    def again(item: Any, name: str) -> Any:
        # a proof's hashes are the tree's (clock-decided), whatever their key is called
        inner = frozenset() if clocked_hashes and name in _PROOFS else stable
        return _normal(item, name, clocked_hashes=clocked_hashes, log_key=log_key, stable=inner)

    if isinstance(value, dict):
        if {"tree_size", "root_hash", "signature"} <= value.keys():
            verify_sth(value, log_key)  # docs/formats.md §4: this side's head, under its key
        return {k: again(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [again(v, key) for v in value]
    if key in _CLOCKED:
        return "<clock>"
    if key == "leaf_data_b64" and isinstance(value, str):
        data = base64.b64decode(value, validate=True)
        try:  # registry leaves are JSON (their published_at is the clock's); raw ones are bytes
            return {"leaf": again(json.loads(data), "")}
        except ValueError:
            return value
    if isinstance(value, str):
        text = _TIME.sub("<time>", value)
        if clocked_hashes and key not in stable:
            text = _HEX64.sub("<hash>", text)
        return text
    return value


def _checkpoint(note: str, log_key: Ed25519PublicKey) -> dict[str, Any]:
    """A checkpoint note verified under ``log_key`` (docs/formats.md §6), as what the clock does
    not decide: its origin, size and extension lines (the root covers leaves that hold the
    publication time, and the signature covers the root)."""
    signatures = parse_note(note).signatures
    assert signatures, f"an unsigned checkpoint: {note!r}"
    name = signatures[0].name  # the key is ours; a name the note picks only selects it
    verified = verify_checkpoint(note, [parse_verifier_key(verifier_key_string(name, log_key))])
    body = verified.checkpoint
    return {"origin": body.origin, "tree_size": body.tree_size, "extensions": body.extensions}


def _clocked(path: str) -> bool:
    """Routes whose answers carry the log's roots and proofs (leaves hold signed entries, which
    hold the publication time): their hashes are blanked. Fact routes are compared exactly."""
    return not path.startswith("/v1/facts")


# -- operations --------------------------------------------------------------------------------


def _cjk(rng: random.Random, n: int) -> str:
    return "".join(chr(0x4E00 + rng.randrange(20000)) for _ in range(n))


@dataclass
class World:
    """What the operations build on: entities, facts sent, contracts tried."""

    rng: random.Random
    entities: list[str] = field(default_factory=lambda: ["urn:d:alpha"])
    relations: list[str] = field(default_factory=lambda: ["memory:role"])
    hashes: list[str] = field(default_factory=list)
    contracts: list[tuple[str, str]] = field(default_factory=lambda: [("acme.d0.v0", "1.0.0")])

    def entity(self) -> str:
        """An accepted entity: reused, plain, with U+0000, long CJK, 2,048 characters, astral."""
        rng = self.rng
        if rng.random() < 0.4:
            return rng.choice(self.entities)
        made = rng.choice(
            [
                f"urn:d:{rng.randrange(50)}",
                f"urn:d:\x00{rng.randrange(9)}",
                "urn:" + _cjk(rng, rng.choice([1, 700, 2044])),
                "urn:" + "a" * 2044,
                "https://example.com/\U0001f600/" + str(rng.randrange(9)),
            ]
        )
        self.entities.append(made)
        return made

    def relation(self) -> str:
        rng = self.rng
        if rng.random() < 0.8:
            return rng.choice(self.relations)
        made = "memory:" + rng.choice(["r" * 2041, "kind", _cjk(rng, 0) + "x.y-z"])
        self.relations.append(made)
        return made

    def value(self) -> dict[str, Any]:
        rng = self.rng
        return rng.choice(
            [
                {"type": "text", "v": "nul \x00 inside"},
                {"type": "text", "v": _cjk(rng, 50)},
                {"type": "number", "v": 2**53 - 1},
                {"type": "number", "v": 0.1},
                {"type": "number", "v": 1e21},
                {"type": "number", "v": -0.0},
                {"type": "boolean", "v": True},
                {"type": "null"},
                {"type": "datetime", "v": "2025-01-01T00:00:00Z"},
                {"type": "text", "v": "x", "interpret_as": rng.choice(["content", "instruction"])},
            ]
        )

    # One field made wrong (each past a limit or outside a rule), for a refused fact.
    _WRONG: ClassVar[list[tuple[str, Any]]] = [
        ("entity", "urn:" + "a" * 2045),  # 2,049 characters
        ("entity", "urn:d: space"),
        ("entity", ""),
        ("relation", "memory:\x00"),
        ("relation", "memory:" + "r" * 2042),
        ("relation", "norelation"),
        ("value", {"type": "string", "v": "LONE_SURROGATE"}),
        ("value", {"type": "number", "v": 2**53}),
        ("value", {"type": "blob", "v": "x"}),
        ("scope", "secret"),
        ("confidence", 1.5),
        ("ts", "yesterday"),
        ("derived_from", ["not-a-hash"]),
    ]

    def fact(self) -> dict[str, Any]:
        """A fact, accepted four times in five; else one field is wrong."""
        rng = self.rng
        document: dict[str, Any] = {
            "entity": self.entity(),
            "relation": self.relation(),
            "value": self.value(),
            "source": rng.choice(["urn:s:1", "urn:s:\x00", "urn:" + "s" * 2044]),
            "scope": rng.choice(["local", "team", "company", "public", "public"]),
            "confidence": rng.choice([0, 0.5, 1, 0.97]),
            "ts": rng.choice(["2025-06-01T12:00:00Z", "2025-06-01T12:00:00.5+00:00"]),
        }
        if rng.random() < 0.3 and self.hashes:
            # earlier facts, or ones not sent yet: cycles and dangling references both happen
            document["derived_from"] = rng.sample(self.hashes, min(len(self.hashes), 2))
        if rng.random() < 0.1:
            document["id"] = "id-\x00-" + _cjk(rng, 5)
        if rng.random() < 0.2:
            name, wrong = rng.choice(self._WRONG)
            document[name] = wrong
        with contextlib.suppress(Exception):  # a value jcs refuses: no hash to refer to
            self.hashes.append(fact_hash(document))
        return document

    def token(self) -> str | None:
        return self.rng.choice(
            [*KEY_NAMES, "all", "all", "all", "admin", "team", None, "unknown", "malformed"]
        )

    def contract_id(self) -> tuple[str, str]:
        rng = self.rng
        if rng.random() < 0.6:
            return rng.choice(self.contracts)
        made = rng.choice(
            [
                (f"acme.d{rng.randrange(8)}.v0", f"1.{rng.randrange(3)}.0"),
                ("acme." + "a" * 248, "1.0.0"),  # 253 characters: the bound
                ("acme." + "a" * 249, "1.0.0"),
                ("acme.long.v0", "1.0." + "1" * 60),  # 64 characters
                ("acme.long.v0", "1.0." + "1" * 61),
                ("other.d.v0", "1.0.0"),
                ("affidavit.examples.langgraph.v0", "9.0.0"),
            ]
        )
        self.contracts.append(made)
        return made


def _body(document: Any) -> bytes:
    """JSON with "LONE_SURROGATE" written as an escaped lone surrogate (``\\ud800``)."""
    return json.dumps(document, ensure_ascii=False).replace("LONE_SURROGATE", "\\ud800").encode()


def _param(world: World) -> str:
    rng = world.rng
    return rng.choice(
        ["", "\x00", "0", "1", "-1", "01", "1e309", "abc", "9" * 30, "0.5", " 2", _cjk(rng, 3)]
    )


def _segment(world: World) -> str:
    rng = world.rng
    raw = rng.choice(["%00", "a%00b", "x" * 3000, quote("漢"), "..", "%2F"])
    return raw if "%" in raw or raw == ".." else quote(raw, safe="")


@dataclass(frozen=True)
class Op:
    method: str
    path: str
    key: str | None = None
    params: dict[str, str] | None = None
    body: bytes | None = None


def _next_op(world: World) -> Op:
    rng = world.rng
    kind = rng.randrange(100)
    key = world.token()
    if kind < 28:
        documents = [world.fact() for _ in range(rng.choice([1, 1, 1, 3]))]
        payload: Any = documents[0] if len(documents) == 1 else {"facts": documents}
        return Op("PUT", "/v1/facts", key, body=_body(payload))
    if kind < 33:
        document = world.fact()
        document.pop("scope", None) if rng.random() < 0.3 else None
        if rng.random() < 0.5:
            document["timestamp"] = document.pop("ts")
        return Op("POST", "/v1/facts", key, body=_body(document))
    if kind < 50:
        params = {}
        for name in ("entity", "relation", "scope", "min_confidence", "limit"):
            if rng.random() < 0.5:
                params[name] = (
                    world.entity()
                    if name == "entity"
                    else world.relation()
                    if name == "relation"
                    else rng.choice(["team", "public", "secret"])
                    if name == "scope" and rng.random() < 0.6
                    else _param(world)
                )
        return Op("GET", "/v1/facts", key, params=params)
    if kind < 58:
        target = (
            rng.choice(world.hashes) if world.hashes and rng.random() < 0.8 else _segment(world)
        )
        suffix = rng.choice(["", "", "/provenance"])
        params = {"depth": _param(world)} if suffix and rng.random() < 0.5 else None
        return Op("GET", f"/v1/facts/{target}{suffix}", key, params=params)
    if kind < 70:
        adapter_id, version = world.contract_id()
        fields = rng.choice([("signal_a",), ("signal_a", "signal_b"), ("f" * 128,), ("f" * 129,)])
        extra = {"distribution_channel": "aigentsy.builtin"} if rng.random() < 0.1 else {}
        declaration = contract(adapter_id, version, fields, **extra)
        key = rng.choice(["publish", "publish", "admin", None, "write"])
        return Op("POST", CONTRACTS, key, body=_body(declaration))
    if kind < 80:
        adapter_id, version = world.contract_id()
        pointer_id, pointer_version = world.contract_id()
        patch = rng.choice(
            [
                {"status": rng.choice(["deprecated", "revoked", "active", "gone"])},
                {"status": "deprecated", "replaced_by": f"{pointer_id}@{pointer_version}"},
                {"min_verifier_version": rng.choice(["1.0.0", "1.0." + "1" * 61])},
                {"adapter_id": "acme.x.v0"},
                {"status": 3},
                {},
            ]
        )
        a, v = quote(adapter_id, safe=""), quote(version, safe="")
        if rng.random() < 0.1:
            a = _segment(world)
        key = rng.choice(["publish", "publish", "admin", None])
        return Op("PATCH", f"{CONTRACTS}/{a}/{v}", key, body=_body(patch))
    if kind < 88:
        adapter_id, version = world.contract_id()
        a = quote(adapter_id, safe="") if rng.random() < 0.9 else _segment(world)
        path = rng.choice([CONTRACTS, f"{CONTRACTS}/{a}", f"{CONTRACTS}/{a}/{version}"])
        params = (
            {"status": rng.choice(["active", "revoked", "\x00", ""])} if path == CONTRACTS else None
        )
        return Op("GET", path, None, params=params)
    path, params = rng.choice(
        [
            ("/specs/adapter-contracts.manifest.json", None),
            ("/protocol/merkle/latest", None),
            ("/protocol/merkle/checkpoint", None),
            (
                "/protocol/merkle/inclusion",
                {"leaf_index": _param(world), "tree_size": _param(world)},
            ),
            ("/protocol/merkle/consistency", {"first": _param(world), "second": _param(world)}),
            ("/protocol/merkle/entries", {"start": _param(world), "end": _param(world)}),
            (f"/protocol/merkle/leaf/{rng.randrange(-1, 40)}", None),
            (f"/protocol/merkle/sth/{rng.randrange(0, 40)}", None),
            ("/.well-known/affidavit", None),
        ]
    )
    return Op("GET", path, None, params=params)


def _headers(op: Op, tokens: dict[str, str]) -> dict[str, str]:
    headers = {"Content-Type": "application/json"} if op.body is not None else {}
    if op.key == "unknown":
        headers["Authorization"] = "Bearer " + new_token()
    elif op.key == "malformed":
        headers["Authorization"] = "Bearer afk_\x7f"
    elif op.key is not None:
        headers["X-API-Key"] = tokens[op.key]
    return headers


def _answer(response: httpx.Response, path: str, log_key: Ed25519PublicKey) -> tuple[int, Any]:
    kind = response.headers.get("content-type", "")
    if response.status_code == 200 and path in _CHECKPOINTS:
        return response.status_code, _checkpoint(response.text, log_key)
    body: Any = response.json() if kind.startswith("application/json") else response.text
    return response.status_code, _normal(body, clocked_hashes=_clocked(path), log_key=log_key)


def _log_key(server: RegistryProcess) -> Ed25519PublicKey:
    """The log key this side signs with, read from its own key folder (what the test trusts)."""
    return load_public_key(server.data_dir / "keys" / "registry-1.pub")


def _run_ops(pair: Pair) -> Counter[tuple[str, int]]:
    """Run operations until the time is up; returns how many of each (method, status)."""
    world = World(random.Random(SEED))
    deadline = time.monotonic() + SECONDS
    seen: Counter[tuple[str, int]] = Counter()
    count = 0
    with httpx.Client(timeout=30) as client:
        while time.monotonic() < deadline:
            op = _next_op(world)
            answers = []
            for server in (pair.sqlite, pair.postgres):
                response = client.request(
                    op.method,
                    server.url + op.path,
                    params=op.params,
                    content=op.body,
                    headers=_headers(op, pair.tokens),
                )
                answers.append(_answer(response, op.path, _log_key(server)))
            where = f"seed {SEED}, operation {count}: {op.method} {op.path} {op.params} {op.key}"
            assert answers[0][0] < 500, f"{where}: {answers[0]}"
            assert answers[0] == answers[1], (
                f"{where}:\nsqlite   {answers[0]}\npostgres {answers[1]}"
            )
            seen[(op.method, answers[0][0])] += 1
            count += 1
    return seen


# -- export, cross-import, re-export ----------------------------------------------------------


def _cli(*args: str | Path) -> dict[str, Any]:
    done = subprocess.run(
        [AFFIDAVIT, "registry", *map(str, args), "--json"], capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    return dict(json.loads(done.stdout))


def _tables(dump: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(dump.iterdir()) if p.suffix == ".jsonl"}


def _round_trip(source: list[str | Path], target: list[str | Path], tmp: Path, name: str) -> None:
    """Export ``source``, import into the empty ``target``, export again: the same tables."""
    first, second = tmp / f"{name}-1", tmp / f"{name}-2"
    _cli("export", first, *source)
    _cli("import", first, *target)
    _cli("export", second, *target)
    assert _tables(first) == _tables(second), f"{name}: the re-export differs"
    assert _tables(first), f"{name}: no tables exported"


# Reads whose answers carry the log's roots, heads, proofs and leaves (all clock-decided).
_LOG_READS: tuple[tuple[str, dict[str, str] | None], ...] = (
    ("/protocol/merkle/checkpoint", None),
    ("/tlog/checkpoint", None),
    ("/protocol/merkle/latest", None),
    ("/protocol/merkle/entries", {"start": "0"}),
    ("/protocol/merkle/leaf/0", None),
    ("/protocol/merkle/inclusion", {"leaf_index": "0"}),
    ("/protocol/merkle/consistency", {"first": "1"}),
    ("/specs/adapter-contracts.manifest.json", None),
)


def _skewed_clocks(pair: Pair) -> None:
    """The same contract published on each side in a different second (so every root, head and
    leaf differs by the clock alone): every log read still compares equal. Deterministic: the
    second publication waits for the wall clock's second to change (issue 31, the differential
    that failed by chance at seed 741390617)."""
    body = _body(contract("acme.skew.v0", "1.0.0", ("signal_a",)))
    headers = {"Content-Type": "application/json", "X-API-Key": pair.tokens["publish"]}
    with httpx.Client(timeout=30) as client:
        for server in (pair.sqlite, pair.postgres):
            second = int(time.time())
            response = client.post(server.url + CONTRACTS, content=body, headers=headers)
            assert response.status_code == 201, response.text
            while int(time.time()) == second:  # the next side publishes in a later second
                time.sleep(0.05)
        for path, params in _LOG_READS:
            answers = [
                _answer(client.get(server.url + path, params=params), path, _log_key(server))
                for server in (pair.sqlite, pair.postgres)
            ]
            assert answers[0][0] == 200, f"{path}: {answers[0]}"
            assert answers[0] == answers[1], (
                f"{path}:\nsqlite   {answers[0]}\npostgres {answers[1]}"
            )


def test_sqlite_and_postgresql_answer_alike(
    pair: Pair, tmp_path: Path, pg_cluster: Any, request: pytest.FixtureRequest
) -> None:
    _skewed_clocks(pair)
    started = time.monotonic()
    seen = _run_ops(pair)
    elapsed = time.monotonic() - started
    count = sum(seen.values())
    print(f"differential: {count} operations in {elapsed:.1f} s (seed {SEED}): {dict(seen)}")
    # Both sides of the contract were exercised: writes kept, writes refused, reads found.
    for expected in (("PUT", 201), ("PUT", 400), ("GET", 200), ("GET", 404), ("POST", 201)):
        assert seen[expected] > 0 or count < 200, f"no {expected} in {dict(seen)}"
    pair.sqlite.stop()
    pair.postgres.stop()
    # SQLite -> PostgreSQL -> export, and PostgreSQL -> SQLite -> export: the same tables.
    empty = pg_cluster.create_database(pg_cluster.new_database_name(request.node.name + "_x"))
    to_pg = tmp_path / "to-pg"
    to_lite = tmp_path / "to-sqlite"
    for folder in (to_pg, to_lite):
        folder.mkdir(mode=0o700)
        shutil.copytree(pair.key_folder, folder / "keys")
    _round_trip(
        ["--data-dir", pair.sqlite.data_dir],
        ["--data-dir", to_pg, "--database-url", empty],
        tmp_path,
        "sqlite-to-postgresql",
    )
    _round_trip(
        ["--data-dir", pair.postgres.data_dir, "--database-url", pair.pg_url],
        ["--data-dir", to_lite],
        tmp_path,
        "postgresql-to-sqlite",
    )
