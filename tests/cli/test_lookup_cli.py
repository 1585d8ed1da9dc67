"""``affidavit lookup URL HASH``: a real registry process on 127.0.0.1, and a man in the middle
(tests/registry/tamper_proxy.py) that changes one thing of what the registry answers. The command
says "found" only when every proof and leaf holds under the trusted key; else exit 1 naming the
step that failed (its code), or exit 2 for bad input."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.registry.index import name_digest
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey

from tests.cli.test_output_schemas import cli, run
from tests.processes import RegistryProcess, api_key, free_port, refused_port
from tests.registry.helpers import contract
from tests.registry.openapi_check import check_response
from tests.registry.tamper_proxy import tamper_proxy, untouched
from tests.schemas import assert_output_schema
from tests.verify.scitt.support import ISSUER, statement

pytestmark = pytest.mark.network_local
ORIGIN = "affidavit-registry"
DECLARATION = contract()


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A registry with two contracts published (leaf 0 and 1), and its log's verifier key."""
    data = tmp_path_factory.mktemp("lookup") / "data"
    token = api_key(data, "publish")
    process = RegistryProcess(data)
    process.start()
    try:
        for declaration in (DECLARATION, contract(version="0.2.0")):
            response = httpx.post(
                process.url + "/protocol/adapter-contracts",
                json=declaration,
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
            assert response.status_code == 201, response.text
        served = httpx.get(process.url + "/protocol/merkle/public-key", timeout=10).json()
        key = Ed25519PublicKey.from_b64(served["public_key_base64"])
        yield {"url": process.url, "vkey": verifier_key_string(ORIGIN, key), "key": key}
    finally:
        process.stop()


@pytest.fixture
def proxy(registry: dict[str, Any]) -> Iterator[ThreadingHTTPServer]:
    with tamper_proxy(registry["url"]) as server:
        yield server


def test_found_every_entry_proven_under_the_vkey(registry: dict[str, Any]) -> None:
    document = cli(
        "lookup", registry["url"], DECLARATION["contract_hash"], "--vkey", registry["vkey"]
    )
    assert_output_schema("lookup", document)
    assert (document["verdict"], document["found"], document["kind"]) == (
        "verified",
        True,
        "lookup",
    )
    assert "code" not in document
    assert [(e["index"], e["kind"], e["matched"]) for e in document["entries"]] == [
        (0, "contract", ["contract_hash"])
    ]
    assert document["checkpoint"]["tree_size"] == 2
    assert [s["name"] for s in document["steps"]] == [
        "checkpoint", "inclusion 0", "leaf 0", "found"
    ]  # fmt: skip
    text = run("lookup", registry["url"], DECLARATION["contract_hash"], "--vkey", registry["vkey"])
    assert text.exit_code == 0
    assert text.stdout.startswith(
        f"found: 1 entry about {DECLARATION['contract_hash']} in {ORIGIN}"
    )


def test_a_bare_key_is_named_by_the_checkpoint_origin(registry: dict[str, Any]) -> None:
    digest = name_digest("acme.eval_suite.v0")  # a name, looked up by its SHA-256
    key = registry["key"].b64
    document = cli("lookup", registry["url"], digest, "--public-key-base64", key)
    assert [(e["index"], e["matched"]) for e in document["entries"]] == [
        (0, ["adapter_id"]),
        (1, ["adapter_id"]),
    ]


def test_not_found_is_exit_1_and_says_absence_is_not_proven(registry: dict[str, Any]) -> None:
    document = cli("lookup", registry["url"], "0" * 64, "--vkey", registry["vkey"], code=1)
    assert_output_schema("lookup", document)
    assert (document["verdict"], document["entries"], document["code"]) == (
        "unanchored",
        [],
        "lookup.not_found",
    )
    assert document["steps"][-1]["status"] == "not_checked"
    text = run("lookup", registry["url"], "0" * 64, "--vkey", registry["vkey"])
    assert text.exit_code == 1
    assert "not found" in text.stdout
    assert "proves presence only" in text.stdout


def _flip_hex(text: str) -> str:
    return ("0" if text[0] != "0" else "1") + text[1:]


def _lookup_json(change: Callable[[dict[str, Any]], None]) -> Callable[[str, bytes], bytes]:
    def tamper(path: str, body: bytes) -> bytes:
        if not path.startswith("/v1/lookup/"):
            return body
        document = json.loads(body)
        change(document)
        return json.dumps(document).encode()

    return tamper


def _first(document: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = document["entries"][0]
    return entry


def _other_leaf(path: str, body: bytes) -> bytes:
    if not path.startswith("/protocol/merkle/leaf/"):
        return body
    document = json.loads(body)
    data = base64.b64decode(document["leaf_data_b64"]).replace(b"signal_a", b"signal_z")
    document["leaf_data_b64"] = base64.b64encode(data).decode()
    return json.dumps(document).encode()


def _forged_checkpoint(path: str, body: bytes) -> bytes:
    if not path.startswith("/v1/lookup/"):
        return body
    from affidavit.verify.crypto.checkpoint import checkpoint_body, format_note, note_signature_line

    document = json.loads(body)
    forger = derive_test_key("a forger's TEST-ONLY key")
    text = checkpoint_body(ORIGIN, 2, b"\x00" * 32)
    line = note_signature_line(
        ORIGIN, forger.public_key.key_id_c2sp(ORIGIN), forger.sign(text.encode())
    )
    document["checkpoint"] = format_note(text, [line])
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("tamper", "code"),
    [
        (_lookup_json(lambda d: _first(d)["inclusion_proof"]["hashes"].__setitem__(
            0, _flip_hex(_first(d)["inclusion_proof"]["hashes"][0]))), "merkle.root_mismatch"),
        (_lookup_json(lambda d: _first(d).__setitem__("index", 1)), "merkle.root_mismatch"),
        (_lookup_json(lambda d: _first(d)["inclusion_proof"].__setitem__("tree_size", 1)),
         "lookup.size_mismatch"),
        (_lookup_json(lambda d: _first(d).__setitem__("matched", ["entry_hash"])),
         "lookup.not_about"),
        (_lookup_json(lambda d: _first(d).__setitem__("kind", "fact")), "lookup.not_about"),
        (_other_leaf, "lookup.leaf_mismatch"),
        (_forged_checkpoint, "checkpoint.no_trusted_signature"),
    ],
    ids=["proof-hash", "index", "tree-size", "matched", "kind", "leaf-bytes", "checkpoint"],
)  # fmt: skip
def test_one_change_in_the_answer_is_not_found_but_failed(
    proxy: ThreadingHTTPServer, registry: dict[str, Any], tamper: Any, code: str
) -> None:
    proxy.tamper = untouched  # type: ignore[attr-defined]
    url = proxy.url  # type: ignore[attr-defined]
    digest = DECLARATION["contract_hash"]
    assert cli("lookup", url, digest, "--vkey", registry["vkey"])["found"] is True
    proxy.tamper = tamper  # type: ignore[attr-defined]
    document = cli("lookup", url, digest, "--vkey", registry["vkey"], code=1)
    assert_output_schema("lookup", document)
    assert (document["verdict"], document["found"], document["entries"]) == ("failed", False, [])
    assert document["code"] == code
    text = run("lookup", url, digest, "--vkey", registry["vkey"])
    assert text.exit_code == 1
    assert re.fullmatch(rf"not verified: [a-z0-9 ]+: {re.escape(code)}: .+\n", text.stdout)


def _no_leaf_data(path: str, body: bytes) -> bytes:
    if not path.startswith("/protocol/merkle/leaf/"):
        return body
    document = json.loads(body)
    del document["leaf_data_b64"]
    return json.dumps(document).encode()


def test_a_leaf_answer_without_its_bytes_is_a_bad_response(
    proxy: ThreadingHTTPServer, registry: dict[str, Any]
) -> None:
    """A leaf answer lacking ``leaf_data_b64`` is not a leaf: it was read as the base64 of the
    text "None" and reported as a leaf that does not hash to its leaf hash."""
    proxy.tamper = _no_leaf_data  # type: ignore[attr-defined]
    url = proxy.url  # type: ignore[attr-defined]
    result = run("lookup", url, DECLARATION["contract_hash"], "--vkey", registry["vkey"], "--json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: registry.bad_response: "), result.stderr


def test_a_key_the_log_does_not_sign_with_verifies_nothing(registry: dict[str, Any]) -> None:
    other = derive_test_key("not the registry's TEST-ONLY key").public_key
    document = cli(
        "lookup", registry["url"], DECLARATION["contract_hash"],
        "--vkey", verifier_key_string(ORIGIN, other), code=1,
    )  # fmt: skip
    assert (document["verdict"], document["code"]) == ("failed", "checkpoint.no_trusted_signature")


@pytest.mark.parametrize(
    ("digest", "keys", "code"),
    [
        ("A" * 64, ("--public-key-base64", "K"), "usage.invalid"),
        ("deal-1", ("--public-key-base64", "K"), "usage.invalid"),
        ("a" * 64, (), "usage.invalid"),  # no trusted key: fail closed, before any request
    ],
)
def test_bad_input_is_one_line_and_exit_2(digest: str, keys: tuple[str, ...], code: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = run("lookup", url, digest, *keys)
    assert result.exit_code == 2
    assert re.fullmatch(rf"error: {re.escape(code)}: .+\n", result.stderr), result.stderr
    assert result.stdout == ""


def test_a_registry_that_does_not_answer_is_exit_2(
    registry: dict[str, Any], tmp_path: Path
) -> None:
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}"
        result = run("lookup", url, "a" * 64, "--vkey", registry["vkey"], "--json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: registry.unavailable: ")


# -- a registered SCITT statement, found by its subject and issuer (issue 26) ------------------

SUBJECT = "pkg:lookup-scitt@1"


@pytest.fixture(scope="module")
def scitt_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A registry whose SCITT service registered one statement (leaf 0: its 32-byte entry)."""
    tmp = tmp_path_factory.mktemp("lookup-scitt")
    issuers = tmp / "issuers"
    issuers.mkdir()
    (issuers / "issuer.pub").write_text(ISSUER.public_key.b64 + "\n")
    (issuers / "issuer.pub.iss").write_text("https://issuer.example\n")  # what it signs for
    process = RegistryProcess(tmp / "data", env={"AFFIDAVIT_SCITT_ISSUERS": str(issuers)})
    process.start()
    try:
        signed = statement(subject=SUBJECT)
        response = httpx.post(
            process.url + "/entries",
            content=signed,
            headers={"Content-Type": "application/cose"},
            timeout=10,
        )
        assert response.status_code == 201, response.content
        served = httpx.get(process.url + "/protocol/merkle/public-key", timeout=10).json()
        key = Ed25519PublicKey.from_b64(served["public_key_base64"])
        yield {
            "url": process.url,
            "vkey": verifier_key_string(ORIGIN, key),
            "data": tmp / "data",
            "statement": signed,
        }
    finally:
        process.stop()


@pytest.fixture
def scitt_proxy(scitt_registry: dict[str, Any]) -> Iterator[ThreadingHTTPServer]:
    with tamper_proxy(scitt_registry["url"]) as server:
        yield server


def test_a_registered_statement_is_found_by_its_subject_and_issuer(
    scitt_registry: dict[str, Any],
) -> None:
    url, vkey = scitt_registry["url"], scitt_registry["vkey"]
    for name, field in [(SUBJECT, "subject"), ("https://issuer.example", "issuer")]:
        document = cli("lookup", url, name_digest(name), "--vkey", vkey)
        assert_output_schema("lookup", document)
        assert (document["verdict"], document["found"]) == ("verified", True), document
        assert [(e["index"], e["kind"], e["matched"]) for e in document["entries"]] == [
            (0, "digest", [field])
        ]
    # the answer carries the statement as registered: its SHA-256 is the leaf's entry
    path = f"/v1/lookup/{name_digest(SUBJECT)}"
    response = httpx.get(url + path, timeout=10)
    answer = check_response("GET", path, 200, response.headers["content-type"], response.content)
    registered = base64.b64decode(answer["entries"][0]["statement"])
    leaf = httpx.get(f"{url}/protocol/merkle/leaf/0", timeout=10).json()
    assert hashlib.sha256(registered).digest() == base64.b64decode(leaf["leaf_data_b64"])
    assert registered == scitt_registry["statement"]  # its unprotected header was empty
    # `registry reindex` files them again from the SCITT store
    report = cli("registry reindex", "--data-dir", str(scitt_registry["data"]))
    assert (report["entries"], report["tree_size"]) == (1, 1)
    assert report["rows"] == 5  # leaf_hash, data_sha256, statement_hash, subject, issuer
    document = cli("lookup", url, name_digest(SUBJECT), "--vkey", vkey)
    assert [(e["index"], e["matched"]) for e in document["entries"]] == [(0, ["subject"])]


def _statement_changed(entry: dict[str, Any]) -> None:
    data = bytearray(base64.b64decode(entry["statement"]))
    data[-1] ^= 0x01  # one bit of the signature
    entry["statement"] = base64.b64encode(bytes(data)).decode()


@pytest.mark.parametrize(
    "change",
    [_statement_changed, lambda entry: entry.pop("statement")],
    ids=["statement-bytes", "no-statement"],
)
def test_a_subject_match_without_the_statement_that_proves_it_is_not_about(
    scitt_proxy: ThreadingHTTPServer, scitt_registry: dict[str, Any], change: Any
) -> None:
    url = scitt_proxy.url  # type: ignore[attr-defined]
    digest, vkey = name_digest(SUBJECT), scitt_registry["vkey"]
    scitt_proxy.tamper = untouched  # type: ignore[attr-defined]
    assert cli("lookup", url, digest, "--vkey", vkey)["found"] is True
    scitt_proxy.tamper = _lookup_json(lambda d: change(_first(d)))  # type: ignore[attr-defined]
    document = cli("lookup", url, digest, "--vkey", vkey, code=1)
    assert_output_schema("lookup", document)
    assert (document["verdict"], document["found"], document["code"]) == (
        "failed",
        False,
        "lookup.not_about",
    )
