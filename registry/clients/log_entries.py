"""Remote log writers: append entries to a registry's log and prove every byte of the answer.

>>> # with LogWriter("https://registry.example", api_key=KEY) as writer:
>>> #     proven = writer.append(b"entry bytes")      # POST /v1/log/entries?wait=integrated
>>> #     proven.inclusion, proven.signed_tree_head   # docs/formats.md §4, verified

:class:`LogWriter` uses nothing of the answer it has not proven (docs/transparency.md "Writing to
the log") against the log's key and ID, read once from ``/protocol/merkle/public-key``: (1) the
leaf hash is SHA-256(0x00 || the bytes sent) at a non-negative index; (2) the checkpoint is
signed by that key under that log ID and is past the index; (3) the inclusion path proves the
leaf under its root; (4) the signed tree head verifies and names the same log, size and root.
Any failure is ``registry.bad_response`` (``details.cause``: the check's own code). Transient
503s are retried after 1, 2, 3... seconds, at most :data:`RETRIES` times (the registry
deduplicates). The key the registry serves gives consistency, not trust: verifiers pin theirs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from affidavit.attest.log.types import InclusionProof
from affidavit.registry.clients.https import DEFAULT_TIMEOUT
from affidavit.registry.errors import RegistryError
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import NoteVerifier, verify_checkpoint
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import inclusion_ranges, leaf_hash, verify_inclusion
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.crypto.trusted_keys import key_from_document

__all__ = ["ENTRIES_PATH", "RETRIES", "LogWriter", "ProvenEntry", "append_all", "is_registry_url"]

ENTRIES_PATH: Final = "/v1/log/entries"
RETRIES: Final = 5
WORKERS: Final = 8  # entries sent at once by append_all
_TRANSIENT: Final = frozenset(
    {"registry.queue_full", "registry.integration_pending", "store.busy", "store.unreadable"}
)
_MAX_WAIT_S: Final = 5.0


@dataclass(frozen=True, slots=True)
class ProvenEntry:
    """An entry in a registry's log, proven; ``created``: this request sequenced it."""

    index: int
    leaf_hash: bytes
    created: bool
    tree_size: int
    checkpoint: str
    inclusion: dict[str, Any]
    signed_tree_head: dict[str, Any]


class LogWriter:
    """Appends entries to one registry's log (module docstring); thread-safe."""

    def __init__(
        self, url: str | None, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        """``url`` and ``api_key`` (scope ``log:write``) default to the environment;
        ``timeout`` is each exchange's deadline, the registry's wait for a checkpoint included.

        Raises:
            ``registry.url_missing``: no URL, or it breaks the one URL rule.
            ``usage.invalid``: the API key cannot be sent as a header.
        """
        # httpx only now: a local command that imports this module needs none
        from affidavit.registry.clients.registry import RegistryClient  # noqa: PLC0415

        self._client = RegistryClient(url, api_key=api_key, timeout=timeout)
        self.url = self._client.url
        self._key: tuple[Ed25519PublicKey, str] | None = None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log_key(self) -> tuple[Ed25519PublicKey, str]:
        """The log's key and log ID, from ``/protocol/merkle/public-key`` (read once).

        Raises:
            ``registry.unavailable``, ``registry.bad_response``, ``registry.remote_error``.
        """
        if self._key is None:
            document = self._client.get("/protocol/merkle/public-key")
            if not isinstance(document, dict) or not isinstance(document.get("log_id"), str):
                raise RegistryError(
                    "registry.bad_response", f"{self.url}: the public-key document has no log_id"
                )
            key = key_from_document(document, source=f"{self.url}/protocol/merkle/public-key")
            self._key = (key, document["log_id"])
        return self._key

    def append(self, data: bytes) -> ProvenEntry:
        """Append ``data`` as one entry; the proven answer once a signed checkpoint covers it.

        Raises:
            ``registry.remote_error``: the registry refused (details carry its error), after the
                retries for the transient ones.
            ``registry.bad_response``: the answer does not verify (``details.cause``).
            ``registry.unavailable``: no answer in time.
        """
        key, log_id = self.log_key()
        return _proven(self.url, data, self._post(data), key, log_id)

    def _post(self, data: bytes) -> tuple[Any, int]:
        for attempt in range(RETRIES):
            try:
                return self._client.post_bytes(ENTRIES_PATH, data, params={"wait": "integrated"})
            except RegistryError as e:
                error = e.details.get("error") if e.code == "registry.remote_error" else None
                if not isinstance(error, dict) or error.get("code") not in _TRANSIENT:
                    raise
            time.sleep(min(_MAX_WAIT_S, 1.0 + attempt))  # past the Retry-After (1 s)
        return self._client.post_bytes(ENTRIES_PATH, data, params={"wait": "integrated"})


def _bad(url: str, message: str, cause: str | None = None) -> RegistryError:
    return RegistryError(
        "registry.bad_response",
        f"{url}{ENTRIES_PATH}: {message}",
        details={"cause": cause} if cause else {},
    )


def _proven(
    url: str, data: bytes, answer: tuple[Any, int], key: Ed25519PublicKey, log_id: str
) -> ProvenEntry:
    """Checks 1-4 of the module docstring over an untrusted answer (document, status)."""
    document, status = answer
    unverified = document if isinstance(document, dict) else {}
    index, proof = unverified.get("index"), unverified.get("inclusion_proof")
    expected = leaf_hash(data)  # step 1, RFC 9162 §2.1.1
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise _bad(url, "no entry index in the answer")
    if unverified.get("leaf_hash") != expected.hex():
        raise _bad(url, "the leaf hash is not the hash of the entry sent")
    note, sth = unverified.get("checkpoint"), unverified.get("signed_tree_head")
    if not isinstance(note, str) or not isinstance(proof, dict) or not isinstance(sth, dict):
        raise _bad(url, "the answer lacks the checkpoint, the inclusion proof or the tree head")
    try:
        verifier = NoteVerifier(log_id, key_id_c2sp(log_id, key.raw), key)
        checkpoint = verify_checkpoint(note, [verifier], origin=log_id).checkpoint  # step 2
        size, hashes = proof.get("tree_size"), proof.get("hashes")
        if size != checkpoint.tree_size or not isinstance(hashes, list) or index >= size:
            raise _bad(url, "the inclusion proof is not at the checkpoint's size past the entry")
        path = [bytes.fromhex(h) if isinstance(h, str) else b"" for h in hashes]
        verify_inclusion(expected, index, size, path, checkpoint.root_hash)  # step 3
        head = verify_sth(sth, key)  # step 4
    except ValueError as e:
        raise _bad(url, f"a proof hash is not hex ({e})") from None
    except errors.AffidavitError as e:
        if e.code == "registry.bad_response":
            raise
        raise _bad(url, f"the answer does not verify: {e.code}: {e.message}", e.code) from None
    if (head.log_id, head.tree_size, head.root_hash) != (log_id, size, checkpoint.root_hash.hex()):
        raise _bad(url, "the tree head is not of the checkpoint's log, size and root")
    sides = tuple("left" if a <= index else "right" for a, _ in inclusion_ranges(index, size))
    proven = InclusionProof(index, size, expected, checkpoint.root_hash, tuple(path), sides)
    inclusion = proven.to_json(log_id)  # docs/formats.md §4 merkle_inclusion
    return ProvenEntry(index, expected, status == 201, size, note, inclusion, dict(sth))


def is_registry_url(location: str | None) -> bool:
    """Whether a command's log argument is a registry's http(s) URL rather than a log DB."""
    return location is not None and location.lower().startswith(("http://", "https://"))


def append_all(
    url: str, leaves: Sequence[bytes], *, api_key: str | None = None, timeout: float = 60.0
) -> list[ProvenEntry]:
    """Append and prove every leaf (up to :data:`WORKERS` at once), answers in ``leaves`` order.
    The first failure is raised once every request ended; appended leaves stay appended.

    Raises:
        as :class:`LogWriter` and :meth:`LogWriter.append`.
    """
    with LogWriter(url, api_key=api_key, timeout=timeout) as writer:
        writer.log_key()  # once, before the threads
        with ThreadPoolExecutor(max(1, min(WORKERS, len(leaves)))) as pool:
            return list(pool.map(writer.append, leaves))
