"""``affidavit lookup`` checks before it reads, and every read is bounded (issue 31, hole 3).

A hostile registry, a real HTTP server on 127.0.0.1 (``ThreadingHTTPServer``), answers the
lookup with what it likes; the command runs as its own process, as a user runs it, and must:

- verify the checkpoint of a page before it reads anything more: a page whose checkpoint no
  trusted key signed is the last request (``checkpoint.no_trusted_signature``), whatever pages
  and leaves it promises;
- cap a leaf at the log's entry limit (65,535 bytes, docs/adr/0018): a leaf of 65,535 bytes is
  found; one byte more, or a megabyte, is ``registry.bad_response`` (exit 2), refused before its
  body is held;
- keep one deadline for the whole command (``--timeout``), not a fresh one per request: a server
  that answers each request in 0.4 s cannot stretch a 1 s lookup over five requests
  (``registry.unavailable``, "deadline"); it is served at most three.

Every case is bounded: the server holds nothing open past the test, and each run of the command
has a 60 s limit.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    verifier_key_string,
)
from affidavit.verify.crypto.merkle import inclusion_proof, leaf_hash, root_of

from tests.processes import AFFIDAVIT

pytestmark = pytest.mark.network_local
ORIGIN = "hostile.example/log"
LOG_KEY = derive_test_key("the hostile log's TEST-ONLY key")
OTHER_KEY = derive_test_key("a key nobody trusts, TEST-ONLY")
VKEY = verifier_key_string(ORIGIN, LOG_KEY.public_key)
ENTRY_LIMIT = 65535  # docs/adr/0018


def _note(size: int, root: bytes, key: Any = LOG_KEY) -> str:
    body = checkpoint_body(ORIGIN, size, root)
    line = note_signature_line(ORIGIN, key.public_key.key_id_c2sp(ORIGIN), key.sign(body.encode()))
    return format_note(body, [line])


def _entry(leaves: list[bytes], index: int) -> dict[str, Any]:
    hashes = [leaf_hash(data) for data in leaves]
    return {
        "index": index,
        "leaf_hash": hashes[index].hex(),
        "kind": "raw",
        "matched": ["data_sha256"],
        "inclusion_proof": {
            "tree_size": len(leaves),
            "hashes": [h.hex() for h in inclusion_proof(hashes, index)],
        },
    }


class Hostile:
    """What the server answers: ``page(cursor) -> document`` and ``leaf(index) -> bytes``
    (``None``: a 404), each answer after ``delay`` seconds. Counts requests."""

    def __init__(
        self,
        page: Callable[[int], dict[str, Any]],
        leaf: Callable[[int], bytes | None],
        delay: float = 0.0,
    ) -> None:
        self.page, self.leaf, self.delay = page, leaf, delay
        self.requests: list[str] = []
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    server: Any
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        hostile: Hostile = self.server.hostile
        with hostile.lock:
            hostile.requests.append(self.path)
        time.sleep(hostile.delay)
        url = urlsplit(self.path)
        if url.path.startswith("/v1/lookup/"):
            cursor = int(parse_qs(url.query).get("cursor", ["0"])[0])
            self._send(200, json.dumps(hostile.page(cursor)).encode())
        elif url.path.startswith("/protocol/merkle/leaf/"):
            index = int(url.path.rsplit("/", 1)[1])
            data = hostile.leaf(index)
            if data is None:
                self._send(404, b'{"code":"log.no_entry_data","message":"none"}')
            else:
                b64 = base64.b64encode(data).decode()
                self._send(200, json.dumps({"leaf_index": index, "leaf_data_b64": b64}).encode())
        else:
            self._send(404, b'{"code":"registry.not_found","message":"none"}')

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client hung up: what a bounded client does
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(hostile: Hostile) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.hostile = hostile  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def lookup(url: str, digest: str, *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    """``affidavit lookup`` as a process: (exit code, its JSON or None, stderr)."""
    done = subprocess.run(
        [AFFIDAVIT, "lookup", url, digest, "--vkey", VKEY, "--json", *extra],
        capture_output=True, timeout=60, check=False, text=True,
    )  # fmt: skip
    document = json.loads(done.stdout) if done.stdout else None
    return done.returncode, document, done.stderr


def _served(hostile: Hostile) -> Iterator[str]:
    yield from serve(hostile)


def test_a_checkpoint_nobody_trusted_signed_is_the_last_thing_read() -> None:
    """The first page promises 1,000 entries over ten pages; its checkpoint is signed by a key
    the caller does not trust. Nothing after that page is asked for."""
    leaves = [b"entry %d" % n for n in range(1000)]
    root = root_of([leaf_hash(data) for data in leaves])

    def page(cursor: int) -> dict[str, Any]:
        entries = [_entry(leaves[:1], 0) for _ in range(100)]
        following = cursor + 100 if cursor + 100 < len(leaves) else None
        return {"hash": "a" * 64, "entries": entries, "checkpoint": _note(1000, root, OTHER_KEY),
                "next_cursor": following}  # fmt: skip

    hostile = Hostile(page, lambda index: b"x" * 1_000_000)
    for url in _served(hostile):
        code, document, stderr = lookup(url, "a" * 64)
    assert code == 1, stderr
    assert document is not None
    assert (document["verdict"], document["code"]) == ("failed", "checkpoint.no_trusted_signature")
    assert [path.split("?")[0] for path in hostile.requests] == ["/v1/lookup/" + "a" * 64]


def _one_leaf(data: bytes) -> Hostile:
    leaves = [data]
    note = _note(1, leaf_hash(data))

    def page(cursor: int) -> dict[str, Any]:
        return {"hash": hashlib.sha256(data).hexdigest(), "entries": [_entry(leaves, 0)],
                "checkpoint": note, "next_cursor": None}  # fmt: skip

    return Hostile(page, lambda index: data)


@pytest.mark.parametrize(
    ("size", "expected"),
    [(ENTRY_LIMIT, 0), (ENTRY_LIMIT + 1, 2), (4 * 1024 * 1024, 2)],
    ids=["at-the-limit", "one-byte-over", "4MiB"],
)
def test_a_leaf_is_capped_at_the_entry_limit(size: int, expected: int) -> None:
    data = bytes(n % 251 for n in range(size))
    hostile = _one_leaf(data)
    for url in _served(hostile):
        code, document, stderr = lookup(url, hashlib.sha256(data).hexdigest())
    assert code == expected, stderr
    if expected == 0:
        assert document is not None
        assert document["found"] is True
    else:
        assert document is None
        assert stderr.startswith("error: registry.bad_response: "), stderr
        assert stderr.count("\n") == 1
        assert "65535" in stderr


def test_one_deadline_for_the_whole_lookup() -> None:
    """Four identical leaves (one page, four leaf requests), each answer 0.4 s late: within a
    per-request 1 s timeout every time, but not within one 1 s deadline for the whole
    command. A request cannot start after the deadline, so at most three are served."""
    data = b"the same bytes, four times"
    leaves = [data] * 4
    note = _note(4, root_of([leaf_hash(item) for item in leaves]))

    def page(cursor: int) -> dict[str, Any]:
        return {"hash": hashlib.sha256(data).hexdigest(),
                "entries": [_entry(leaves, n) for n in range(4)], "checkpoint": note,
                "next_cursor": None}  # fmt: skip

    hostile = Hostile(page, lambda index: data, delay=0.4)
    for url in _served(hostile):
        code, document, stderr = lookup(url, hashlib.sha256(data).hexdigest(), "--timeout", "1")
    assert (code, document) == (2, None), stderr
    assert stderr.startswith("error: registry.unavailable: "), stderr
    assert "deadline" in stderr
    assert len(hostile.requests) <= 3, hostile.requests
