"""The log collects witness cosignatures (C2SP tlog-witness, the client's side; docs/transparency.md
"The log collects cosignatures" and "The registry cosigns in the background").

:func:`request_cosignature` submits the log's checkpoint to one witness (``URL#VKEY``) from a size
hint (on 409 again from the witness's size) with a consistency proof, and keeps only the lines
that verify under the witness's configured cosigner keys; a witness size beyond the log's is
``tlog.rollback``, a proof refused from its size ``tlog.fork``. Failures are reported
(:class:`WitnessReport`), never raised: a witness that is down never fails the checkpoint.
:func:`record_cosignatures` re-records the checkpoint with the verified lines, unless a newer one
was signed meanwhile. :class:`CosigningTask` is the background loop (``AFFIDAVIT_WITNESSES``),
asking the witnesses that have not cosigned the log's size on a worker thread (never inside a
transaction), with exponential backoff for one that fails.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.clients.https import new_client
from affidavit.registry.clients.witness import (
    Conflict,
    Witness,
    add_checkpoint,
    bad_response,
    parse_witnesses,
)
from affidavit.registry.state import RegistryState
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    format_note,
    note_signature_line,
    parse_checkpoint_body,
    parse_note,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.tlog.cosignature import verify_cosignatures

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_TRIES",
    "CosigningTask",
    "ProofSource",
    "WitnessReport",
    "collect",
    "log_signed_note",
    "record_cosignatures",
    "request_cosignature",
    "start_cosigning",
]

_LOG = logging.getLogger("affidavit.registry")
DEFAULT_TIMEOUT: Final = 5.0  # seconds per request: the deadline of each exchange
DEFAULT_TRIES: Final = 3  # tries per witness (transport failures and 5xx only)
_BACKOFF: Final = 0.25  # seconds before the second try; x3 before each later one
_MAX_CONFLICTS: Final = 3  # 409 answers followed per try (the witness's size moves under us)
_MAX_BACKOFF: Final = 300.0  # the background task retries a failing witness at least this often

ProofSource = Callable[[int, int], Sequence[bytes]]
"""``proof(old, new)``: the log's consistency proof from size ``old`` to ``new`` (0 < old < new)."""


@dataclass(frozen=True, slots=True)
class WitnessReport:
    """What one witness did with the checkpoint: verified lines, or the error that stopped it."""

    witness: Witness
    lines: tuple[str, ...] = ()
    cosigners: tuple[str, ...] = ()  # labels (name+keyid) of the cosignatures that verified
    witness_size: int | None = None  # the witness's size before, when a 409 told it
    error: errors.AffidavitError | None = None
    requests: int = 0

    @property
    def ok(self) -> bool:
        """At least one cosignature verified."""
        return bool(self.lines)

    def to_json(self) -> dict[str, Any]:
        """``{url, cosigned, cosigners, requests, witness_size?, error?}`` for ``--json``."""
        document: dict[str, Any] = {
            "url": self.witness.url,
            "cosigned": self.ok,
            "cosigners": list(self.cosigners),
            "requests": self.requests,
        }
        if self.witness_size is not None:
            document["witness_size"] = self.witness_size
        if self.error is not None:
            document["error"] = self.error.to_json()
        return document


def log_signed_note(note: str, log_key: Ed25519PublicKey) -> str:
    """``note`` with only the log's own signature line(s): what is submitted to witnesses.

    Raises:
        ``checkpoint.malformed``: the note is malformed or has no line of the log's key.
    """
    parsed = parse_note(note)
    origin = parse_checkpoint_body(parsed.text).origin
    key_id = key_id_c2sp(origin, log_key.raw)
    own = [
        note_signature_line(s.name, s.key_id, s.signature)
        for s in parsed.signatures
        if s.name == origin and s.key_id == key_id
    ]
    if not own:
        raise errors.SignatureError(
            "checkpoint.malformed", "the checkpoint carries no signature of the log's key"
        )
    return format_note(parsed.text, own)


def request_cosignature(
    witness: Witness,
    note: str,
    proof: ProofSource,
    *,
    client: Any,
    old_size: int = 0,
    tries: int = DEFAULT_TRIES,
    sleep: Callable[[float], None] = time.sleep,
) -> WitnessReport:
    """Submit ``note`` (signed by the log only) to ``witness`` and verify the answer (module
    docstring); ``old_size`` hints the witness's size. The witness's failures are reported.

    Raises:
        ``checkpoint.malformed``: ``note`` itself is malformed (the caller's bug).
    """
    size = parse_checkpoint_body(parse_note(note).text).tree_size
    old = old_size if 0 <= old_size <= size else 0
    learned: int | None = None
    sent = 0
    error: errors.AffidavitError | None = None
    for attempt in range(max(1, tries)):
        if attempt:
            sleep(_BACKOFF * 3 ** (attempt - 1))
        try:
            for _ in range(_MAX_CONFLICTS):
                if old > size:
                    raise _rollback(witness, old, size)
                hashes = proof(old, size) if 0 < old < size else ()
                sent += 1
                try:
                    answer = add_checkpoint(client, witness, old, hashes, note)
                except errors.ProofError as e:
                    if e.code == "tlog.witness_refused" and e.details.get("status") == 422 and old:
                        raise _fork(witness, old, e) from None
                    raise
                if isinstance(answer, Conflict):
                    if answer.size == old:
                        raise bad_response(
                            witness, f"it answered 409 with the old size {old} it was sent"
                        )
                    old = learned = answer.size
                    continue
                lines, labels = _verified(witness, note, answer.lines)
                return WitnessReport(witness, lines, labels, learned, None, sent)
            raise bad_response(witness, f"its size kept changing ({_MAX_CONFLICTS} answers 409)")
        except errors.AffidavitError as e:
            error = e
            if not _transient(e):
                break
    return WitnessReport(witness, witness_size=learned, error=error, requests=sent)


def _transient(error: errors.AffidavitError) -> bool:
    """Worth another try soon: no answer, or the witness's own failure (5xx)."""
    if error.code in ("net.unavailable", "net.timeout"):
        return True
    status = error.details.get("status")
    return error.code == "tlog.witness_refused" and isinstance(status, int) and status >= 500


def _verified(
    witness: Witness, note: str, lines: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines of the witness's configured keys, verified, and their labels."""
    trusted = {(c.name, c.key_id) for c in witness.cosigners}
    text = parse_note(note).text
    kept: list[str] = []
    for line in lines:
        try:
            signature = parse_note(text + "\n" + line).signatures[0]
        except errors.SignatureError:
            raise bad_response(witness, "it returned a malformed signature line") from None
        if (signature.name, signature.key_id) in trusted and line not in kept:
            kept.append(line)
    if not kept:
        raise bad_response(witness, "no line it returned is from its configured cosigner key(s)")
    found = verify_cosignatures(note + "".join(kept), witness.cosigners)  # tlog.cosignature_*
    if any(v.timestamp == 0 for v in found):
        raise bad_response(witness, "a cosignature has a zero timestamp (tlog-witness forbids it)")
    return tuple(kept), tuple(v.cosigner.label for v in found)


def _rollback(witness: Witness, witness_size: int, size: int) -> errors.ProofError:
    return errors.ProofError(
        "tlog.rollback",
        f"{witness.url} cosigned size {witness_size} of this log, beyond its size {size}: the "
        "log lost leaves, or another log signs under this key and origin",
        details={"url": witness.url, "witness_size": witness_size, "tree_size": size},
    )


def _fork(witness: Witness, witness_size: int, refused: errors.AffidavitError) -> errors.ProofError:
    return errors.ProofError(
        "tlog.fork",
        f"{witness.url} refused the consistency proof from its size {witness_size}: the tree it "
        f"cosigned at that size is not this log's ({refused.message})",
        details={"url": witness.url, "witness_size": witness_size},
    )


def collect(
    witnesses: Sequence[Witness],
    note: str,
    proof: ProofSource,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    tries: int = DEFAULT_TRIES,
    hints: dict[str, int] | None = None,
) -> list[WitnessReport]:
    """Ask every witness at once, one thread and client each; ``hints``: URL -> known size."""

    def one(witness: Witness) -> WitnessReport:
        with new_client(timeout=timeout, follow_redirects=False) as client:
            return request_cosignature(
                witness,
                note,
                proof,
                client=client,
                old_size=(hints or {}).get(witness.url, 0),
                tries=tries,
            )

    with concurrent.futures.ThreadPoolExecutor(
        max(1, len(witnesses)), thread_name_prefix="witness"
    ) as pool:
        return list(pool.map(one, witnesses))


def record_cosignatures(log: TransparencyLog, note: str, lines: Sequence[str]) -> str | None:
    """Record ``note`` again with the verified ``lines`` added to its latest recorded copy;
    None when a newer checkpoint was signed meanwhile (an older head must not become the latest).

    Raises:
        as :meth:`TransparencyLog.add_cosignatures`.
    """
    text = parse_note(note).text
    checkpoint = parse_checkpoint_body(text)
    latest = log.latest_checkpoint()
    signed = (checkpoint.tree_size, checkpoint.root_hash.hex())
    if latest is None or (latest.tree_size, latest.root_hash) != signed:
        return None
    base = latest.document if parse_note(latest.document).text == text else note
    return log.add_cosignatures(base, lines)


def start_cosigning(state: RegistryState) -> CosigningTask | None:
    """Start the background task when witnesses are configured (None otherwise).

    Raises:
        as :func:`~affidavit.registry.clients.witness.parse_witnesses`.
    """
    witnesses = parse_witnesses(state.settings.witnesses)
    if not witnesses:
        return None
    task = CosigningTask(
        state,
        witnesses,
        interval=state.settings.witness_interval_s,
        timeout=state.settings.witness_timeout_s,
    )
    task.start()
    return task


@dataclass(slots=True)
class CosigningTask:
    """The registry's background cosigning loop (module docstring)."""

    state: RegistryState
    witnesses: tuple[Witness, ...]
    interval: float
    timeout: float
    _cosigned: dict[str, int] = field(default_factory=dict)  # witness URL -> size it cosigned
    _hints: dict[str, int] = field(default_factory=dict)  # witness URL -> its last known size
    _failures: dict[str, int] = field(default_factory=dict)
    _next_try: dict[str, float] = field(default_factory=dict)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run the loop on the current event loop."""
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="cosigning")

    async def stop(self) -> None:
        """Stop after the round in flight (at most one request timeout)."""
        self._stopping.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, self.timeout + 2)
            except TimeoutError:  # pragma: no cover - a round stuck past its timeouts
                _LOG.warning("cosigning: the last round did not finish; abandoned")

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.run_round()
            except Exception:  # the loop must survive anything; the next round tries again
                _LOG.exception("cosigning round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval)

    async def run_round(self) -> list[WitnessReport]:
        """Ask the witnesses due (not cosigned the current size, not backing off)."""
        state = self.state
        if state.unhealthy is not None:
            return []
        size = await state.read(lambda view: view.log.size)
        now = time.monotonic()
        due = [
            w
            for w in self.witnesses
            if self._cosigned.get(w.url) != size and self._next_try.get(w.url, 0.0) <= now
        ]
        if not due:
            return []
        recorded = await state.read(lambda view: view.log.largest_head("checkpoint"))
        if recorded is None:  # nothing signed yet (docs/adr/0024: the writer signs, not this)
            return []
        signed = recorded.document
        note = log_signed_note(signed, state.key.public_key)
        reports = await asyncio.to_thread(  # no database transaction open there; the next
            collect, due, note, self._proof, timeout=self.timeout, tries=1, hints=self._hints
        )  # round is the retry; proofs come from the reader threads
        lines = [line for report in reports for line in report.lines]
        cosigned_size = parse_checkpoint_body(parse_note(note).text).tree_size
        if lines:
            cosigned = await state.db.run(record_cosignatures, state.log, note, lines)
            if cosigned is not None:
                state.writer.cosigned(cosigned_size, cosigned)
        for report in reports:
            self._account(report, cosigned_size)
        return reports

    def _proof(self, old: int, new: int) -> Sequence[bytes]:
        return self.state.read_sync(lambda view: view.log.consistency_proof(old, new).path)

    def _account(self, report: WitnessReport, size: int) -> None:
        url = report.witness.url
        if report.ok:
            self._cosigned[url] = self._hints[url] = size
            if self._failures.pop(url, 0):
                _LOG.info("cosigning: %s cosigns again", url)
            self._next_try.pop(url, None)
            return
        if report.witness_size is not None:
            self._hints[url] = report.witness_size
        failures = self._failures.get(url, 0) + 1
        self._failures[url] = failures
        delay = min(self.interval * 2 ** (failures - 1), _MAX_BACKOFF)
        self._next_try[url] = time.monotonic() + delay
        error = report.error
        _LOG.warning(
            "cosigning: %s did not cosign size %d (%s: %s); retry in %.0f s",
            url,
            size,
            error.code if error else "-",
            error.message if error else "-",
            delay,
        )
