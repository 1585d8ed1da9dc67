"""``affidavit log``'s verbs on a local log: an append-only RFC 6962 transparency log in one
SQLite file, its heads, proofs (C2SP tlog-proof, RFC 9162 inclusion), key rotation
(docs/adr/0011-log-key-rotation.md) and C2SP tlog-tiles; and ``log monitor``, one round of a
monitor of a tiled log (:mod:`affidavit.verify.tlog.monitor`; docs/transparency.md "Monitoring").

The signing key's path is recorded by ``log init``; each head binds it to its signed state file
(docs/adr/0005-log-state-binding.md).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import click
from affidavit.attest.errors import LogError
from affidavit.attest.files import atomic_write
from affidavit.attest.host import read_capped
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.log.proofs import attach_proof, build_proof
from affidavit.attest.log.state import state_path
from affidavit.attest.log.tiles import TilesReport, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli._common import (
    emit,
    emit_json,
    json_option,
    labelled,
    log_write_key_option,
    print_outcome,
    read_input,
    read_json_object,
)
from affidavit.registry.clients.log_entries import append_all, is_registry_url
from affidavit.registry.clients.tiles import TileReader
from affidavit.registry.clients.witness import parse_witnesses
from affidavit.registry.witnessing import collect, record_cosignatures
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    check_key_name,
    parse_checkpoint_body,
    parse_note,
    verifier_key_string,
)
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.crypto.windows import parse_rfc3339
from affidavit.verify.json.canonical import py_compact
from affidavit.verify.json.forms import parse_utc
from affidavit.verify.json.strict import loads
from affidavit.verify.results import Result
from affidavit.verify.tlog.monitor import (
    MAX_STATE_BYTES,
    monitor_round,
    normalized_vkey,
    parse_state,
    state_json,
)
from affidavit.verify.tlog.proof import MAX_EXTRA_BYTES

__all__ = [
    "append",
    "append_leaves",
    "consistency",
    "current_checkpoint",
    "db_argument",
    "head",
    "init",
    "keys",
    "log_key_option",
    "monitor",
    "proof",
    "prove",
    "rotate_key",
    "sign_with",
    "tiles",
    "vkey",
]

db_argument = click.argument("db", type=click.Path(dir_okay=False, path_type=Path))
# The key a verb signs a head with (:func:`sign_with`).
log_key_option = click.option(
    "--key",
    "key_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The log's private key (default: the path the log recorded).",
)


@click.command("init")
@db_argument
@click.option("--key", "key_file", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--log-id", required=True, help="Signed into every tree head; no '|' or spaces.")
@json_option
def init(db: Path, key_file: Path, log_id: str, as_json: bool) -> None:
    """Create an empty log in DB, signed by the Ed25519 key in KEYFILE (PKCS#8 PEM)."""
    key = load_signing_key(key_file)
    absolute = str(key_file.resolve())
    bound = state_path(key_file.resolve(), log_id)
    with TransparencyLog.create(db, key, log_id, key_path=absolute, state_file=bound) as created:
        document = {
            "ok": True,
            "db": str(db),
            "log_id": created.log_id,
            "public_key_base64": created.public_key.b64,
            "key_id": created.key_id,
            "key_path": absolute,
        }
    emit(as_json, document, f"created log {log_id!r} in {db} (key {created.key_id})")


@click.command("append")
@click.argument("db", metavar="DB|URL")
@click.argument("files", nargs=-1, required=True)
@click.option(
    "--leaf-form",
    type=click.Choice(["raw", "py-compact"]),
    default="raw",
    show_default=True,
    help="raw: the file's bytes; py-compact: strict JSON re-encoded as AiGentsy leaf data.",
)
@log_write_key_option
@json_option
def append(
    db: str, files: tuple[str, ...], leaf_form: str, api_key: str | None, as_json: bool
) -> None:
    """Append each FILE (or - for stdin) as one leaf, all in one transaction.

    With a registry's URL instead of DB (https://...), each FILE is one entry of its log
    (POST /v1/log/entries), answered once a signed checkpoint covers it and proven against
    the registry's key; a FILE already in the log keeps its first index.
    """
    leaves = [_leaf_data(source, leaf_form) for source in files]
    rows, log = append_leaves(db, leaves, api_key)
    appended = [{"file": source, **row} for source, row in zip(files, rows, strict=True)]
    emit(
        as_json,
        {"ok": True, "appended": appended, **log},
        *(f"{entry['index']}\t{entry['leaf_hash']}\t{entry['file']}" for entry in appended),
    )


def append_leaves(
    target: str, leaves: list[bytes], api_key: str | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Append ``leaves`` to the log DB ``target`` in one transaction, or each through the
    registry at URL ``target`` (``POST /v1/log/entries``, proven against its key; an entry
    already there keeps its first index). Returns each leaf's ``{index, leaf_hash}`` (and
    ``created`` through a registry), and the log's ``{tree_size}`` (and ``log``: the URL).

    Raises:
        ``usage.invalid``: ``api_key`` with a log DB.
        ``io.unreadable``, ``log.*``: the DB cannot be opened. ``registry.*``: the append failed.
    """
    if is_registry_url(target):
        proven = append_all(target, leaves, api_key=api_key)
        rows = [
            {"index": p.index, "leaf_hash": p.leaf_hash.hex(), "created": p.created} for p in proven
        ]
        return rows, {"tree_size": max(p.tree_size for p in proven), "log": target}
    if api_key is not None:
        raise errors.UsageError("--api-key goes with a registry URL, not a log DB")
    with TransparencyLog.open(Path(target)) as opened:
        indexes = opened.append(leaves)
        size = opened.size
    rows = [
        {"index": index, "leaf_hash": leaf_hash(data).hex()}
        for index, data in zip(indexes, leaves, strict=True)
    ]
    return rows, {"tree_size": size}


def _leaf_data(source: str, leaf_form: str) -> bytes:
    data = read_input(source)
    if leaf_form == "raw":
        return data
    with labelled(source):
        return py_compact(loads(data))  # docs/formats.md §1 py-compact, §4 leaf data


@click.command("head")
@db_argument
@click.option("--checkpoint", is_flag=True, help="A C2SP tlog-checkpoint signed note instead.")
@click.option("--origin", help="Checkpoint origin line and key name (default: the log ID).")
@log_key_option
@click.option("--timestamp", help="UTC time to sign, YYYY-MM-DDTHH:MM:SSZ (default: now).")
@click.option(
    "--witness",
    "witnesses",
    multiple=True,
    metavar="URL#VKEY",
    help="Ask this C2SP witness to cosign the checkpoint (repeatable; VKEY: witness vkey).",
)
@click.option(
    "--require-witnesses",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help="Exit 1 (tlog.quorum_not_met) unless at least K witnesses cosigned.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 60),
    default=5.0,
    show_default=True,
    help="Seconds each witness request may take in all (a deadline; 3 tries per witness).",
)
@json_option
def head(
    *,
    db: Path,
    checkpoint: bool,
    origin: str | None,
    key_file: Path | None,
    timestamp: str | None,
    witnesses: tuple[str, ...],
    require_witnesses: int | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Sign and print the tree head of everything committed (docs/formats.md §4, or §6
    checkpoint).

    With --witness the checkpoint is submitted to each witness (C2SP tlog-witness), the
    cosignatures that verify under the witness's key are recorded and printed with it; a witness
    that is down or refuses is reported on stderr (and in --json), never failing the command
    unless --require-witnesses.
    """
    if origin is not None and not checkpoint:
        raise errors.UsageError("--origin only applies with --checkpoint")
    if origin is not None:
        check_key_name(origin)  # the rule `log vkey --origin` applies too
    if (witnesses or require_witnesses is not None) and not checkpoint:
        raise errors.UsageError("--witness and --require-witnesses only apply with --checkpoint")
    parsed = parse_witnesses(witnesses)  # before signing: a bad URL#VKEY is exit 2, no head
    if require_witnesses is not None and require_witnesses > len(parsed):
        raise errors.UsageError(
            f"--require-witnesses {require_witnesses} but only {len(parsed)} witness(es) given"
        )
    when = _parse_timestamp(timestamp) if timestamp is not None else None
    with TransparencyLog.open(db) as opened:
        sign_with(opened, db, key_file)
        if checkpoint:
            note = opened.checkpoint(origin, when)
            if parsed:
                _witnessed(
                    opened, note, parsed, require_witnesses, as_json=as_json, timeout=timeout
                )
                return
            if as_json:
                emit_json({"ok": True, "checkpoint": note})
            else:
                click.echo(note, nl=False)
            return
        sth = opened.signed_tree_head(when).to_json()
    emit_json({"ok": True, "signed_tree_head": sth} if as_json else sth)


def _witnessed(
    opened: TransparencyLog,
    note: str,
    witnesses: tuple[Any, ...],
    required: int | None,
    *,
    as_json: bool,
    timeout: float,
) -> None:
    """Collect, record and print the cosignatures of ``witnesses`` (C2SP tlog-witness), each
    request within ``timeout`` seconds in all."""
    prove = opened.consistency_proof
    reports = collect(witnesses, note, lambda old, new: prove(old, new).path, timeout=timeout)
    lines = [line for report in reports for line in report.lines]
    cosigned = note
    if lines:
        recorded = record_cosignatures(opened, note, lines)
        cosigned = recorded if recorded is not None else note + "".join(dict.fromkeys(lines))
    count = sum(report.ok for report in reports)
    met = required is None or count >= required
    witnessed = [report.to_json() for report in reports]
    if as_json:
        emit_json({"ok": met, "checkpoint": cosigned, "cosigned_by": count, "witnesses": witnessed})
    else:
        click.echo(cosigned, nl=False)
        for report in reports:
            if report.ok:
                said = f"cosigned by {', '.join(report.cosigners)}"
            elif report.error is not None:
                said = f"{report.error.code}: {report.error.message}"
            else:
                continue
            click.echo(f"witness {report.witness.url}: {said}", err=True)
    if not met:
        raise errors.ProofError(
            "tlog.quorum_not_met",
            f"{count} of {len(reports)} witnesses cosigned the checkpoint; {required} required",
            details={"cosigned": count, "required": required},
        )


@click.command("vkey")
@db_argument
@click.option("--origin", help="The checkpoint origin the key signs as (default: the log ID).")
@json_option
def vkey(db: Path, origin: str | None, as_json: bool) -> None:
    """Print the log's C2SP verifier key, name+keyid+base64(0x01 || key) (signed-note).

    What a witness (witness serve --log-vkey), a tlog-policy log line and log monitor --vkey
    take. No private key is read. --origin follows the rule of log head --checkpoint --origin
    (a key name: no spaces, no '+'), so the key printed reads back.
    """
    if origin is not None:
        check_key_name(origin)
    with TransparencyLog.open(db) as opened:
        name = origin if origin is not None else opened.log_id
        document = {
            "ok": True,
            "log_id": opened.log_id,
            "name": name,
            "vkey": verifier_key_string(name, opened.public_key),
            "public_key_base64": opened.public_key.b64,
        }
    emit(as_json, document, document["vkey"])


def sign_with(log: TransparencyLog, db: Path, key_file: Path | None) -> None:
    """Make ``log`` sign with ``key_file``, else with the key whose path it recorded (``log
    init``, ``log rotate-key``), bound to that key's signed state (docs/adr/0005).

    Raises:
        ``log.no_signing_key``: no ``key_file`` and no path recorded.
        ``log.key_mismatch``, ``log.state_*``, ``key.*``: the key is not the log's, its state
            disagrees, or it cannot be read.
    """
    path = key_file if key_file is not None else log.key_path
    if path is None:
        raise LogError("log.no_signing_key", f"{db}: no key path recorded; pass --key KEYFILE")
    log.set_key(load_signing_key(path))
    log.bind_state(state_path(Path(path).resolve(), log.log_id))


def _parse_timestamp(text: str) -> dt.datetime:
    moment = parse_utc(text)
    if moment is None:
        raise LogError("log.bad_timestamp", f"--timestamp {text!r} is not YYYY-MM-DDTHH:MM:SSZ")
    return moment


@click.command("consistency")
@db_argument
@click.option("--from", "first", type=click.IntRange(min=1), required=True)
@click.option("--to", "second", type=click.IntRange(min=1), help="Default: the current size.")
@json_option
def consistency(db: Path, first: int, second: int | None, as_json: bool) -> None:
    """Print the consistency proof from tree size M to N (RFC 9162 §2.1.4)."""
    with TransparencyLog.open(db) as opened:
        proof = opened.consistency_proof(first, second).to_json()
    emit(
        as_json,
        {"ok": True, "consistency": proof},
        *(
            f"{name}: {proof[name]}"
            for name in ("first_size", "second_size", "first_root", "second_root")
        ),
        *(f"proof: {value}" for value in proof["proof"]),
    )


@click.command("proof")
@db_argument
@click.option("--index", type=click.IntRange(min=0), help="The leaf to prove.")
@click.option(
    "--bundle",
    "bundle_file",
    type=click.Path(dir_okay=False),
    help="A stamped bundle: write it with the tlog-proof of its leaf added (tlog_proof).",
)
@click.option(
    "--extra-file",
    type=click.Path(dir_okay=False),
    help="Opaque extra data for the proof's 'extra' line (not authenticated).",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write here instead of stdout.")
@click.option(
    "--inclusion",
    is_flag=True,
    help="Print leaf INDEX's RFC 9162 inclusion proof (a bundle's merkle_inclusion) instead.",
)
@click.option("--size", type=click.IntRange(min=0), help="With --inclusion: the tree size.")
@json_option
def proof(
    *,
    db: Path,
    index: int | None,
    bundle_file: str | None,
    extra_file: str | None,
    out: str | None,
    inclusion: bool,
    size: int | None,
    as_json: bool,
) -> None:
    """Print the C2SP tlog-proof of leaf INDEX, or add one to a stamped bundle (--bundle)."""
    if inclusion or size is not None:
        if not inclusion or index is None or bundle_file or extra_file or out:
            raise errors.UsageError("--inclusion takes --index I and --size N only (and --json)")
        _inclusion(db, index, size, as_json)
        return
    if (index is None) == (bundle_file is None):
        raise errors.UsageError("give exactly one of --index I and --bundle BUNDLE.json")
    if as_json and (bundle_file is not None or out is not None):
        raise errors.UsageError("--json prints the proof of --index to stdout (no --bundle, --out)")
    extra = None
    if extra_file is not None:
        extra = read_input(extra_file, max_bytes=MAX_EXTRA_BYTES)
        if not extra:
            raise errors.UsageError(f"{extra_file}: the extra data is empty")
    if index is None:
        bundle = read_json_object(str(bundle_file), what="bundle")
        with TransparencyLog.open(db) as opened:
            stamped = attach_proof(opened, bundle, extra=extra)
        _write((json.dumps(stamped, indent=2) + "\n").encode("utf-8"), out)
        if out is not None:
            leaf = stamped["merkle_inclusion"]["leaf_index"]
            click.echo(f"wrote {out}: the bundle with the tlog-proof of leaf {leaf}")
        return
    with TransparencyLog.open(db) as opened:
        built = build_proof(opened, index, extra=extra)
    text = built.to_text()
    if as_json:
        emit_json({"ok": True, "index": built.index, "tlog_proof": text})
        return
    _write(text.encode("utf-8"), out)
    if out is not None:
        click.echo(f"wrote {out}: the tlog-proof of leaf {index}")


@click.command("prove", hidden=True)
@db_argument
@click.option("--index", type=click.IntRange(min=0), required=True)
@click.option("--size", type=click.IntRange(min=0), help="Tree size (default: the current size).")
@json_option
def prove(db: Path, index: int, size: int | None, as_json: bool) -> None:
    """log proof --inclusion under its old name (hidden; kept for scripts)."""
    _inclusion(db, index, size, as_json)


def _inclusion(db: Path, index: int, size: int | None, as_json: bool) -> None:
    with TransparencyLog.open(db) as opened:
        document = opened.inclusion_proof(index, size).to_json(opened.log_id)
    emit(
        as_json,
        {"ok": True, "merkle_inclusion": document},
        *(
            f"{name}: {document[name]}"
            for name in ("log_id", "leaf_index", "tree_size", "leaf_hash", "merkle_root")
        ),
        *(f"proof: {step['position']} {step['hash']}" for step in document["proof"]),
    )


def _write(data: bytes, out: str | None) -> None:
    if out is None:
        click.echo(data.decode("utf-8"), nl=False)
    else:
        atomic_write(out, data)


@click.command("rotate-key")
@db_argument
@click.option(
    "--new-key",
    "new_key_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="New key (PEM).",
)
@log_key_option
@click.option("--at", "at", help="Rotation time, RFC 3339 with an offset (default: now).")
@json_option
def rotate_key(
    *, db: Path, new_key_file: Path, key_file: Path | None, at: str | None, as_json: bool
) -> None:
    """Hand the log in DB over from its current key to NEWKEY at time T (no gap, no overlap)."""
    moment = _parse_at(at) if at is not None else None
    with TransparencyLog.open(db) as opened:
        previous = opened.key_id
        sign_with(opened, db, key_file)
        new_key = load_signing_key(new_key_file)
        new_path = new_key_file.resolve()
        entry = opened.rotate_key(
            new_key,
            moment,
            new_key_path=str(new_path),
            new_state_file=state_path(new_path, opened.log_id),
        )
        history = [key.to_json() for key in opened.key_history()]
    document = {
        "ok": True,
        "db": str(db),
        "log_id": opened.log_id,
        "previous_key_id": previous,
        "key_id": entry.key_id,
        "public_key_base64": entry.public_key.b64,
        "valid_from": entry.valid_from,
        "tree_size": entry.tree_size,
        "root_hash": entry.root_hash,
        "key_path": str(new_path),
        "keys": history,
    }
    emit(
        as_json,
        document,
        f"rotated log {opened.log_id!r}: key {previous!r} valid until {entry.valid_from}, "
        f"key {entry.key_id!r} from {entry.valid_from} (tree size {entry.tree_size})",
    )


@click.command("keys")
@db_argument
@json_option
def keys(db: Path, as_json: bool) -> None:
    """Print the log's keys and their validity windows [valid_from, valid_until)."""
    with TransparencyLog.open(db) as opened:
        history = opened.key_history()
        log_id = opened.log_id
    emit(
        as_json,
        {"log_id": log_id, "keys": [entry.to_json() for entry in history]},
        *(
            f"{e.key_id}\t{e.public_key.b64}\t[{e.valid_from or '-inf'}, {e.valid_until or '+inf'})"
            for e in history
        ),
    )


def _parse_at(text: str) -> dt.datetime:
    moment = parse_rfc3339(text)
    if moment is None:
        raise LogError(
            "log.bad_timestamp",
            f"--at {text!r} is not an RFC 3339 date-time with an offset "
            "(e.g. 2026-01-01T00:00:00Z or 2026-01-01T01:00:00+01:00)",
        )
    return moment


@click.command("tiles")
@db_argument
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@log_key_option
@click.option("--origin", help="Checkpoint origin line and key name (default: the log ID).")
@json_option
def tiles(
    db: Path, directory: Path, key_file: Path | None, origin: str | None, as_json: bool
) -> None:
    """Write the log in DB as C2SP tlog-tiles into DIR (tiles, entry bundles, checkpoint)."""
    with TransparencyLog.open(db) as opened:
        note, signed = current_checkpoint(opened, db, key_file, origin)
        report = write_tiles(opened, directory, note)
    emit(
        as_json,
        {"ok": True, "checkpoint_signed": signed, **report.to_json()},
        _summary(report, signed),
    )


def current_checkpoint(
    log: TransparencyLog, db: Path, key_file: Path | None, origin: str | None
) -> tuple[str, bool]:
    """The checkpoint of the log's current size under ``origin`` (default: the log ID), and
    whether it was signed here: the latest recorded one when it covers that size (witness
    cosignatures kept), else one signed with ``log head --checkpoint``'s key rules.

    Raises:
        ``log.no_signing_key``: a new checkpoint is needed and no key path is known.
        ``log.key_mismatch``, ``log.state_*``: as ``log head``.
    """
    name = origin if origin is not None else log.log_id
    latest = log.latest_checkpoint()
    if latest is not None and latest.tree_size == log.size:
        recorded = parse_checkpoint_body(parse_note(latest.document).text)
        if recorded.origin == name:
            return latest.document, False
    sign_with(log, db, key_file)
    return log.checkpoint(name), True


def _summary(report: TilesReport, signed: bool) -> str:
    kept = report.tiles_kept + report.bundles_kept
    return (
        f"size {report.tree_size} (from {report.previous_size}): "
        f"{report.tiles_written} tiles, {report.bundles_written} entry bundles written"
        + (f", {kept} already present" if kept else "")
        + f", {report.bundles_skipped} bundles skipped (a leaf without data or over 65,535 bytes)"
        + f"; checkpoint {'signed' if signed else 'recorded'}"
        + ("" if report.checkpoint_written else ", unchanged")
        + f" in {report.directory}"
    )


@click.command("monitor")
@click.argument("url")
@click.option(
    "--vkey",
    required=True,
    help="The log's verifier key (as log vkey prints it); after a rotation, the old or the new.",
)
@click.option(
    "--state",
    "state_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The tree trusted last; created on the first round.",
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A C2SP tlog-policy: the checkpoint must also meet its witness quorum.",
)
@click.option("--entries", is_flag=True, help="Also read every new entry and check its hash.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True)
@json_option
def monitor(
    *,
    url: str,
    vkey: str,
    state_file: Path,
    policy_file: Path | None,
    entries: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """Check a tiled log's new checkpoint against the tree trusted last (C2SP tlog-tiles)."""
    from affidavit.cli.verify.bundle import read_policy  # noqa: PLC0415 - lazy

    if not url.startswith(("https://", "http://")):
        raise errors.UsageError(f"{url}: the log's URL prefix must be http:// or https://")
    vkey = normalized_vkey(vkey)
    previous = None
    if state_file.exists():
        data = read_capped(state_file, MAX_STATE_BYTES)
        if len(data) > MAX_STATE_BYTES:
            raise errors.ProofError("tlog.monitor_state_invalid", f"{state_file}: over 1 MiB")
        previous = parse_state(data, vkey=vkey)
    policy = None if policy_file is None else read_policy(str(policy_file))[0]
    with TileReader(url, timeout=timeout) as reader:
        try:
            note = reader.checkpoint()
        except errors.AffidavitError as e:  # the log cannot be read: the round cannot start
            result, state = Result.unreadable_input("monitor", url, e), None
        else:
            result, state = monitor_round(
                note, vkey, reader.tile, previous, policy=policy, entries=entries, source=url
            )
    if state is not None:  # kept only after every check passed
        atomic_write(state_file, state_json(state))
    print_outcome(result, as_json=as_json, brief=True)
