"""``affidavit log`` basics: an append-only RFC 6962 transparency log in one SQLite file.

Leaf data (``log append``): the file's exact bytes, or with ``--leaf-form py-compact`` the
py-compact bytes of its strict JSON, AiGentsy's Merkle leaf form (docs/formats.md §4). Every file
is read before anything is appended: every file becomes a leaf or none does.

Signing key: ``log init`` records the key file's absolute path; ``log head`` uses ``--key``, else
that path, and the key must be the log's (``log.key_mismatch``); the private key is never copied
into the database. Each head of a new size also rewrites a signed state file beside the key, and
a database that does not extend it is refused, as is a second ``log init`` of a key and log ID
that already signed heads (``log.state_mismatch``; docs/adr/0005-log-state-binding.md). Before
a head is signed the tree is proven consistent with the last one (``log.integrity``, exit 1).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import click
from affidavit.attest.errors import LogError
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.log.state import state_path
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli._common import (
    emit,
    emit_json,
    json_option,
    labelled,
    log_write_key_option,
    read_input,
)
from affidavit.registry.clients.log_entries import append_all, is_registry_url
from affidavit.registry.clients.witness import parse_witnesses
from affidavit.registry.witnessing import collect, record_cosignatures
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import check_key_name, verifier_key_string
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.json.canonical import py_compact
from affidavit.verify.json.forms import parse_utc
from affidavit.verify.json.strict import loads

__all__ = [
    "append",
    "append_leaves",
    "consistency",
    "db_argument",
    "head",
    "init",
    "log_key_option",
    "sign_with",
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
