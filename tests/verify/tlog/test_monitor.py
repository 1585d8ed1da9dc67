"""The monitor's round: first use, extension, rollback, fork, bad tiles and state, each by code."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.attest.log.tiles import folder_fetch, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    verifier_key_string,
)
from affidavit.verify.tlog.monitor import (
    MonitorState,
    check_round,
    monitor_round,
    normalized_vkey,
    parse_state,
    state_json,
)
from affidavit.verify.tlog.policy import parse_policy

from tests.conftest import raises_code
from tests.verify.tlog.proof_fixtures import (
    ed_cosignature,
    ed_cosigner,
    policy_text,
    vkey_of,
    with_lines,
)

ORIGIN = "monitor.example/log"


@pytest.fixture
def key() -> SigningKey:
    return derive_test_key("monitor test log")  # TEST-ONLY key


def _vkey(key: SigningKey) -> str:
    return verifier_key_string(ORIGIN, key.public_key)


def _log(path: Path, key: SigningKey, leaves: list[bytes]) -> TransparencyLog:
    log = TransparencyLog.create(path, key, ORIGIN)
    if leaves:
        log.append(leaves)
    return log


def _publish(log: TransparencyLog, folder: Path) -> bytes:
    note = log.checkpoint()
    write_tiles(log, folder, note)
    return note.encode("utf-8")


def _leaves(start: int, stop: int, tag: str = "") -> list[bytes]:
    return [f"entry {i}{tag}".encode() for i in range(start, stop)]


def test_first_round_trusts_then_extension_passes_and_reads_few_tiles(
    tmp_path: Path, key: SigningKey
) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 300))
    folder = tmp_path / "tiles"
    note = _publish(log, folder)
    report, state = check_round(note, _vkey(key), folder_fetch(folder), None, entries=True)
    fields = report.subject
    assert (fields["previous_size"], fields["tree_size"], fields["entries_checked"]) == (
        None, 300, 300
    )  # fmt: skip
    assert state.tree_size == 300
    assert state.checkpoint == note.decode()

    log.append(_leaves(300, 1000))
    note = _publish(log, folder)
    report, state = check_round(note, _vkey(key), folder_fetch(folder), state)
    assert (report.subject["previous_size"], report.subject["tree_size"]) == (300, 1000)
    assert report.subject["root_hash"] == base64.b64encode(log.root()).decode()
    # Without --entries only hash tiles are read: a handful, never the whole tree.
    assert 0 < report.subject["tiles_read"] <= 8
    assert report.subject["entries_checked"] == 0

    again, same = check_round(note, _vkey(key), folder_fetch(folder), state)
    assert (again.subject["previous_size"], again.subject["tree_size"]) == (1000, 1000)
    assert same == state


def test_rollback_is_refused(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 10))
    folder = tmp_path / "tiles"
    old_note = _publish(log, folder)
    log.append(_leaves(10, 20))
    new_note = _publish(log, folder)
    _, state = check_round(new_note, _vkey(key), folder_fetch(folder), None)
    with raises_code("tlog.rollback"):
        check_round(old_note, _vkey(key), folder_fetch(folder), state)
    # The same round, reported: the failing step, the rest not checked, no state to keep.
    result, kept = monitor_round(old_note, _vkey(key), folder_fetch(folder), state, source="u")
    assert (result.verdict, result.code, kept) == ("failed", "tlog.rollback", None)
    assert [(s.name, s.status) for s in result.steps] == [
        ("checkpoint", "ok"), ("rollback", "failed"), ("consistency", "not_checked")
    ]  # fmt: skip
    missing, _ = monitor_round(new_note, _vkey(key), folder_fetch(tmp_path / "gone"), None)
    assert (missing.verdict, missing.failed_step.name) == ("unreadable", "consistency")  # type: ignore[union-attr]


def test_split_view_is_a_fork(tmp_path: Path, key: SigningKey) -> None:
    # Two logs under one key and origin that share 5 leaves and then diverge: a split view.
    honest = _log(tmp_path / "a.db", key, _leaves(0, 5))
    evil = _log(tmp_path / "b.db", key, _leaves(0, 5))
    honest.append(_leaves(5, 9))
    evil.append(_leaves(5, 12, tag=" (other branch)"))
    seen_a = _publish(honest, tmp_path / "a")
    seen_b = _publish(evil, tmp_path / "b")
    _, state = check_round(seen_a, _vkey(key), folder_fetch(tmp_path / "a"), None)
    with raises_code("tlog.fork") as caught:
        check_round(seen_b, _vkey(key), folder_fetch(tmp_path / "b"), state)
    assert isinstance(caught.value.message, str)
    assert caught.value.details["trusted_checkpoint"] == seen_a.decode()
    assert caught.value.details["served_checkpoint"] == seen_b.decode()


def test_same_size_other_root_is_a_fork(tmp_path: Path, key: SigningKey) -> None:
    a = _log(tmp_path / "a.db", key, _leaves(0, 7))
    b = _log(tmp_path / "b.db", key, _leaves(0, 7, tag="!"))
    _, state = check_round(
        _publish(a, tmp_path / "a"), _vkey(key), folder_fetch(tmp_path / "a"), None
    )
    with raises_code("tlog.fork"):
        check_round(_publish(b, tmp_path / "b"), _vkey(key), folder_fetch(tmp_path / "b"), state)


def test_tiles_that_do_not_match_the_checkpoint(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 3))
    folder = tmp_path / "tiles"
    note = _publish(log, folder)
    tile = folder / "tile" / "0" / "000.p" / "3"
    data = bytearray(tile.read_bytes())
    data[0] ^= 1
    tile.write_bytes(bytes(data))
    with raises_code("tlog.tile_mismatch"):
        check_round(note, _vkey(key), folder_fetch(folder), None)


def test_bad_signature_and_foreign_key(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 3))
    folder = tmp_path / "tiles"
    note = _publish(log, folder).decode()
    body, signature = note.split("\n\n")
    forged = body.replace("\n3\n", "\n4\n") + "\n\n" + signature
    with raises_code("checkpoint.signature_bad"):
        check_round(forged.encode(), _vkey(key), folder_fetch(folder), None)
    other = verifier_key_string(ORIGIN, derive_test_key("someone else").public_key)
    with raises_code("checkpoint.no_trusted_signature"):
        check_round(note.encode(), other, folder_fetch(folder), None)


def test_state_round_trip_and_tampering(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 4))
    folder = tmp_path / "tiles"
    _, state = check_round(_publish(log, folder), _vkey(key), folder_fetch(folder), None)
    data = state_json(state)
    assert parse_state(data, vkey=_vkey(key)) == state
    # The key ID may be spelled in upper case by a user; the state records one spelling.
    name, key_id, rest = _vkey(key).split("+", 2)
    assert parse_state(data, vkey=f"{name}+{key_id.upper()}+{rest}") == state
    assert normalized_vkey(f"{name}+{key_id.upper()}+{rest}") == _vkey(key)

    # Another key of the same origin: the state is read (a round may follow a rotation to that
    # key), and the round refuses it when it does not (tests/verify/tlog/test_monitor_rotation.py)
    other = verifier_key_string(ORIGIN, derive_test_key("another").public_key)
    assert parse_state(data, vkey=other) == state
    with raises_code("tlog.monitor_state_invalid"):
        check_round(state.checkpoint.encode(), other, folder_fetch(folder), state)
    with raises_code("tlog.monitor_state_invalid"):  # another origin
        parse_state(data, vkey=verifier_key_string("elsewhere", key.public_key))
    document = json.loads(data)
    document["tree_size"] = 3  # no longer the size of its checkpoint
    with raises_code("tlog.monitor_state_invalid"):
        parse_state(json.dumps(document).encode(), vkey=_vkey(key))
    document = json.loads(data)
    document["extra"] = 1
    with raises_code("tlog.monitor_state_invalid"):
        parse_state(json.dumps(document).encode(), vkey=_vkey(key))
    with raises_code("json.duplicate_key"):
        parse_state(b'{"format": 1, "format": 2}', vkey=_vkey(key))


def test_state_of_another_origin_is_refused(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 2))
    folder = tmp_path / "tiles"
    note = _publish(log, folder)
    _, state = check_round(note, _vkey(key), folder_fetch(folder), None)
    elsewhere = MonitorState("other.example/log", state.vkeys, 1, state.root_hash, state.checkpoint)
    with raises_code("tlog.monitor_state_invalid"):
        check_round(note, _vkey(key), folder_fetch(folder), elsewhere)


# -- issue 21: bytes the checkpoint does not bind ----------------------------------------------


def _overlay(base: Path, **files: bytes) -> dict[str, bytes | None]:
    """A served log: the files of ``base``, with ``files`` (``__`` for ``/``) replaced."""
    served: dict[str, bytes | None] = {
        str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*") if p.is_file()
    }
    served.update({name.replace("__", "/"): data for name, data in files.items()})
    return served


def test_fork_hidden_in_an_unbound_level0_tile_is_caught(tmp_path: Path, key: SigningKey) -> None:
    # Issue 21, hole 1: the log signs size 300 (tree A), then size 512 (tree B, leaf 260
    # rewritten), and serves B's checkpoint and tiles, except tile/0/001 whose first 44 hashes
    # are A's. The root of 512 comes from tile/1/000.p/2 only, so the old root computed from
    # tile/0/000 + tile/0/001[:44] was A's and the round passed.
    a = _log(tmp_path / "a.db", key, _leaves(0, 300))
    b_leaves = _leaves(0, 512)
    b_leaves[260] = b"entry 260 (rewritten)"
    b = _log(tmp_path / "b.db", key, b_leaves)
    _, trusted = check_round(
        _publish(a, tmp_path / "a"), _vkey(key), folder_fetch(tmp_path / "a"), None
    )
    seen_b = _publish(b, tmp_path / "b")
    a_tile = (tmp_path / "a" / "tile" / "0" / "001.p" / "44").read_bytes()
    b_tile = (tmp_path / "b" / "tile" / "0" / "001").read_bytes()
    served = _overlay(tmp_path / "b", tile__0__001=a_tile + b_tile[len(a_tile) :])
    with raises_code("tlog.tile_mismatch") as caught:
        check_round(seen_b, _vkey(key), served.get, trusted)
    assert caught.value.details["path"] == "tile/0/001"


def test_entries_of_another_log_in_an_unbound_full_tile_are_refused(
    tmp_path: Path, key: SigningKey
) -> None:
    # Issue 21, hole 2: at size 300 the root comes from tile/1/000.p/1 and tile/0/001.p/44;
    # tile/0/000 and tile/entries/000 were never tied to it, so --entries accepted 256 entries
    # of another log (served with that log's matching level-0 tile).
    log = _log(tmp_path / "log.db", key, _leaves(0, 300))
    other = _log(tmp_path / "other.db", key, _leaves(0, 300, tag=" (another log)"))
    note = _publish(log, tmp_path / "log")
    _publish(other, tmp_path / "other")
    theirs = tmp_path / "other" / "tile"
    served = _overlay(
        tmp_path / "log",
        tile__0__000=(theirs / "0" / "000").read_bytes(),
        tile__entries__000=(theirs / "entries" / "000").read_bytes(),
    )
    with raises_code("tlog.tile_mismatch") as caught:
        check_round(note, _vkey(key), served.get, None, entries=True)
    assert caught.value.details["path"] == "tile/0/000"


# -- issue 36: what the first mutation run showed no test judged --------------------------------


def _recording(folder: Path) -> tuple[list[int], object]:
    read: list[int] = []
    fetch = folder_fetch(folder)

    def recorded(path: str) -> bytes | None:
        data = fetch(path)
        if data is not None:
            read.append(len(data))
        return data

    return read, recorded


def test_round_documents_first_and_later_rounds(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 300))
    folder = tmp_path / "tiles"
    note = _publish(log, folder)
    read, fetch = _recording(folder)
    result, state = monitor_round(note, _vkey(key), fetch, None, entries=True, source="log")  # type: ignore[arg-type]
    assert state is not None
    assert result.to_json() == {
        "kind": "monitor",
        "source": "log",
        "verdict": "verified",
        "verified": True,
        "origin": ORIGIN,
        "previous_size": None,
        "tree_size": 300,
        "root_hash": base64.b64encode(log.root()).decode(),
        "tiles_read": len(read),
        "bytes_read": sum(read),
        "entries_checked": 300,
        "cosigned_by": [],
        "rotated_to": [],
        "steps": [
            {"name": "checkpoint", "status": "ok", "details": {"origin": ORIGIN, "tree_size": 300}},
            {"name": "rollback", "status": "ok"},
            {"name": "consistency", "status": "ok"},
            {"name": "entries", "status": "ok", "details": {"entries_checked": 300}},
        ],
    }
    assert state == MonitorState(ORIGIN, (_vkey(key),), 300, log.root(), note.decode())
    # a later round checks only the new entries, from the trusted size on
    log.append(_leaves(300, 400))
    later = _publish(log, folder)
    result, _ = check_round(later, _vkey(key), folder_fetch(folder), state, entries=True)
    assert (result.subject["previous_size"], result.subject["entries_checked"]) == (300, 100)
    assert result.steps[-1].details == {"entries_checked": 100}
    # a failing round keeps its kind and source
    failed, kept = monitor_round(
        note, _vkey(key), folder_fetch(tmp_path / "gone"), None, source="x"
    )
    assert (failed.to_json()["kind"], failed.to_json()["source"], kept) == ("monitor", "x", None)


def test_a_checkpoint_of_another_origin_signed_under_the_trusted_name_is_refused(
    tmp_path: Path, key: SigningKey
) -> None:
    # the signature line names the trusted key (name and key ID): only the origin pin refuses it
    log = _log(tmp_path / "log.db", key, _leaves(0, 3))
    folder = tmp_path / "tiles"
    _publish(log, folder)
    body = checkpoint_body("elsewhere.example/log", 3, log.root())
    line = note_signature_line(ORIGIN, key.public_key.key_id_c2sp(ORIGIN), key.sign(body.encode()))
    with raises_code("checkpoint.origin_mismatch"):
        check_round(format_note(body, [line]).encode(), _vkey(key), folder_fetch(folder), None)


def _upper_id(vkey: str) -> str:
    name, key_id, rest = vkey.split("+", 2)
    return f"{name}+{key_id.upper()}+{rest}"


def test_rollback_details_and_state_refusals_say_why(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 4))
    folder = tmp_path / "tiles"
    small = _publish(log, folder)
    log.append(_leaves(4, 6))
    _, state = check_round(_publish(log, folder), _vkey(key), folder_fetch(folder), None)
    with raises_code("tlog.rollback") as caught:
        check_round(small, _vkey(key), folder_fetch(folder), state)
    assert caught.value.details == {"trusted_size": 6, "served_size": 4}
    assert caught.value.message
    elsewhere = MonitorState("other.example/log", state.vkeys, 6, state.root_hash, state.checkpoint)
    with raises_code("tlog.monitor_state_invalid") as bad:
        check_round(small, _vkey(key), folder_fetch(folder), elsewhere)
    assert bad.value.message
    document = json.loads(state_json(state))
    changes: list[dict[str, object]] = [
        {"tree_size": "6"},
        {"tree_size": True},
        {"checkpoint": 6},
        {"root_hash": "not base64"},
        {"origin": "other.example/log"},
        {"vkeys": "x"},
        {"vkeys": []},
        {"rotations": "x"},
        {"rotations": ["x"]},
        {"vkeys": [6]},
        {"vkeys": [_vkey(key).replace("+", "+0", 1)]},
        {"vkeys": [verifier_key_string(ORIGIN, key.public_key).lower() + "x"]},
        {"format": "affidavit.tlog-monitor/v1"},  # the v2 fields under the v1 name
        {"rotations": ""},  # no list, though as long as one
        {"vkeys": [_upper_id(_vkey(key))]},  # the right key, not spelled canonically
    ]
    for change in changes:
        with raises_code("tlog.monitor_state_invalid") as invalid:
            parse_state(json.dumps({**document, **change}).encode(), vkey=_vkey(key))
        assert isinstance(invalid.value.message, str), change
        assert invalid.value.message.startswith("monitor state: "), change


def test_state_json_is_sorted_utf8_on_one_line(tmp_path: Path, key: SigningKey) -> None:
    # a C2SP origin may be any text without spaces or '+': another log's, signed here by hand
    # (the tiles do not depend on the origin)
    origin = "journal.example/é"
    log = _log(tmp_path / "log.db", key, _leaves(0, 2))
    folder = tmp_path / "tiles"
    _publish(log, folder)
    body = checkpoint_body(origin, 2, log.root())
    line = note_signature_line(origin, key.public_key.key_id_c2sp(origin), key.sign(body.encode()))
    vkey = verifier_key_string(origin, key.public_key)
    _, state = check_round(format_note(body, [line]).encode(), vkey, folder_fetch(folder), None)
    data = state_json(state)
    assert data.endswith(b"}\n")
    assert data.count(b"\n") == 1
    assert origin.encode() in data  # UTF-8, not \\u escapes
    keys = list(json.loads(data))
    assert keys == sorted(keys)
    assert parse_state(data, vkey=vkey) == state


def test_a_round_under_a_policy_needs_the_witness_quorum(tmp_path: Path, key: SigningKey) -> None:
    log = _log(tmp_path / "log.db", key, _leaves(0, 3))
    folder = tmp_path / "tiles"
    note = _publish(log, folder).decode()
    policy = parse_policy(
        policy_text(logs=[_vkey(key)], witnesses=[("ed", vkey_of(ed_cosigner()))], quorum="ed")
    )
    cosigned = with_lines(note, [ed_cosignature(note)]).encode()
    result, state = check_round(
        cosigned, _vkey(key), folder_fetch(folder), None, policy=policy, source="p"
    )
    assert result.to_json()["source"] == "p"
    assert result.subject["cosigned_by"] == ["ed"]
    assert [(s.name, s.status, s.details) for s in result.steps[:2]] == [
        ("checkpoint", "ok", {"origin": ORIGIN, "tree_size": 3}),
        ("policy", "ok", {"cosigned_by": ["ed"]}),
    ]
    assert state.checkpoint == cosigned.decode()
    with raises_code("tlog.quorum_not_met"):
        check_round(note.encode(), _vkey(key), folder_fetch(folder), None, policy=policy)
    failed, kept = monitor_round(
        note.encode(), _vkey(key), folder_fetch(folder), None, policy=policy
    )
    assert (failed.code, failed.failed_step.name, kept) == ("tlog.quorum_not_met", "policy", None)  # type: ignore[union-attr]


def test_a_state_whose_tree_size_is_true_is_refused(tmp_path: Path, key: SigningKey) -> None:
    # a one-leaf tree: true == 1 in Python, so only the type check refuses it
    log = _log(tmp_path / "log.db", key, _leaves(0, 1))
    folder = tmp_path / "tiles"
    _, state = check_round(_publish(log, folder), _vkey(key), folder_fetch(folder), None)
    document = {**json.loads(state_json(state)), "tree_size": True}
    with raises_code("tlog.monitor_state_invalid"):
        parse_state(json.dumps(document).encode(), vkey=_vkey(key))


def test_a_state_file_is_at_most_1_mib(key: SigningKey) -> None:
    with raises_code("json.too_large"):
        parse_state(b"{}" + b" " * ((1 << 20) - 1), vkey=_vkey(key))
    with raises_code("tlog.monitor_state_invalid"):  # read, then refused for its fields
        parse_state(b"{}" + b" " * ((1 << 20) - 2), vkey=_vkey(key))
