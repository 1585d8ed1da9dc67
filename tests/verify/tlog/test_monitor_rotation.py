"""The monitor across a log key rotation (docs/adr/0011, docs/transparency.md "Monitoring"): it
follows a handover the old key signed and refuses one it did not (``tlog.rotation_unproven``)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.attest.log.keys import Rotation
from affidavit.attest.log.tiles import folder_fetch, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    verifier_key_string,
)
from affidavit.verify.tlog.monitor import MonitorState, check_round, parse_state, state_json
from affidavit.verify.tlog.rotation import ROTATIONS_PATH

from tests.conftest import raises_code

ORIGIN = "rotation.monitor.example/log"
K1 = derive_test_key("monitor rotation key 1", key_id="k1")  # TEST-ONLY
K2 = derive_test_key("monitor rotation key 2", key_id="k2")  # TEST-ONLY
K3 = derive_test_key("monitor rotation key 3", key_id="k3")  # TEST-ONLY
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
V1, V2, V3 = (verifier_key_string(ORIGIN, k.public_key) for k in (K1, K2, K3))


class Clock:
    """A settable clock (a rotation may not be in the future of the log's clock)."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now


class Log:
    """A log under K1, published as tiles into one folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.clock = Clock()
        self.log = TransparencyLog.create(tmp_path / "log.db", K1, ORIGIN, clock=self.clock)
        self.folder = tmp_path / "tiles"
        self.size = 0

    def grow(self, count: int) -> bytes:
        """Append ``count`` leaves, publish, return the checkpoint."""
        self.log.append([f"leaf {i}".encode() for i in range(self.size, self.size + count)])
        self.size += count
        self.clock.now += HOUR
        note = self.log.checkpoint()
        write_tiles(self.log, self.folder, note)
        return note.encode()

    def rotate(self, key: SigningKey) -> None:
        self.clock.now += HOUR
        self.log.rotate_key(key)

    def round(self, vkey: str, state: MonitorState | None, **kw: bool) -> MonitorState:
        note = (self.folder / "checkpoint").read_bytes()
        return check_round(note, vkey, folder_fetch(self.folder), state, **kw)[1]


@pytest.fixture
def log(tmp_path: Path) -> Log:
    return Log(tmp_path)


def test_a_rotation_the_old_key_signed_is_followed(log: Log) -> None:
    # Issue 21, hole 3: after `log rotate-key` the monitor refused the new key's checkpoint
    # (checkpoint.no_trusted_signature) and a state file under the new vkey (state invalid).
    log.grow(300)
    state = log.round(V1, None)
    log.rotate(K2)
    log.grow(200)
    followed = log.round(V1, state, entries=True)
    assert (followed.tree_size, followed.vkeys) == (500, (V1, V2))
    # The operator may now give the new vkey (or keep the old one): the state holds both.
    assert parse_state(state_json(followed), vkey=V2) == followed
    assert parse_state(state_json(followed), vkey=V1) == followed
    log.grow(10)
    assert log.round(V2, followed).vkeys == (V1, V2)
    # The new vkey given before the monitor followed the rotation: it is reached this round.
    assert parse_state(state_json(state), vkey=V2) == state
    assert log.round(V2, state).vkeys == (V1, V2)


def _served(log: Log, rotations: bytes | None) -> dict[str, bytes | None]:
    """The log's folder as served, with ``key-rotations`` replaced (None: absent)."""
    served: dict[str, bytes | None] = {
        str(p.relative_to(log.folder)): p.read_bytes() for p in log.folder.rglob("*") if p.is_file()
    }
    served[ROTATIONS_PATH] = rotations
    return served


def _statement(old: SigningKey, new: SigningKey, size: int, root: bytes, seq: int = 1) -> str:
    rotation = Rotation(
        ORIGIN, seq, old.public_key, new.public_key, new.key_id, "2026-01-01T05:00:00Z", size,
        root.hex(),
    )  # fmt: skip
    return rotation.sign(old, new)


def _rotated(log: Log) -> tuple[MonitorState, bytes]:
    """A state trusting K1 at size 300, and the checkpoint of size 500 the log signs after
    rotating to K2."""
    log.grow(300)
    state = log.round(V1, None)
    log.rotate(K2)
    return state, log.grow(200)


def test_a_rotation_the_old_key_did_not_sign_is_refused(log: Log) -> None:
    state, note = _rotated(log)
    genuine = (log.folder / ROTATIONS_PATH).read_bytes()
    stranger = derive_test_key("monitor rotation stranger")  # TEST-ONLY
    forged = _statement(stranger, K2, 300, log.log.root(300))
    # signed by a key that is not K1, yet naming K1 as the previous key
    document = json.loads(genuine)
    document["signature"] = json.loads(forged)["signature"]
    cases = {
        "absent": None,
        "not signed by K1": json.dumps(document, separators=(",", ":")).encode() + b"\n",
        "from another key": forged.encode() + b"\n",
        "empty": b"",
        "no final newline": genuine[:-1],
        "not JSON": b"{\n",
        "a byte changed": genuine.replace(b'"tree_size":300', b'"tree_size":301'),
    }
    for name, rotations in cases.items():
        code = "checkpoint.no_trusted_signature" if rotations is None else "tlog.rotation_unproven"
        with raises_code(code):
            check_round(note, V1, _served(log, rotations).get, state)
        assert name
    # not countersigned by the new key
    document = json.loads(genuine)
    document["new_key_signature"] = document["signature"]
    served = _served(log, json.dumps(document, separators=(",", ":")).encode() + b"\n")
    with raises_code("tlog.rotation_unproven", match="countersignature"):
        check_round(note, V1, served.get, state)


def test_a_handover_the_new_tree_does_not_extend_is_a_fork_or_rollback(log: Log) -> None:
    state, note = _rotated(log)
    other_root = bytes(32)
    served = _served(log, _statement(K1, K2, 300, other_root).encode() + b"\n")
    with raises_code("tlog.fork") as caught:
        check_round(note, V1, served.get, state)
    assert "rotation" in caught.value.details
    served = _served(log, _statement(K1, K2, 600, log.log.root(500)).encode() + b"\n")
    with raises_code("tlog.rollback"):
        check_round(note, V1, served.get, state)


def test_two_rotations_are_followed_up_to_the_key_that_signed(log: Log) -> None:
    log.grow(10)
    state = log.round(V1, None)
    log.rotate(K2)
    log.grow(5)
    log.rotate(K3)  # K3 exists, but the folder's checkpoint is still K2's
    note = (log.folder / "checkpoint").read_bytes()
    write_tiles(log.log, log.folder, note.decode())
    report, at_k2 = check_round(note, V1, folder_fetch(log.folder), state)
    assert (report.subject["rotated_to"], at_k2.vkeys) == ([V2], (V1, V2))
    log.grow(7)
    report, at_k3 = check_round(
        (log.folder / "checkpoint").read_bytes(), V1, folder_fetch(log.folder), state
    )
    assert (report.subject["rotated_to"], at_k3.vkeys, at_k3.tree_size) == (
        [V2, V3], (V1, V2, V3), 22
    )  # fmt: skip
    assert [r.seq for r in at_k3.rotations] == [1, 2]
    assert parse_state(state_json(at_k3), vkey=V3) == at_k3
    # once K2 is followed, a checkpoint only K1 signed is no longer the log's
    assert log.round(V2, at_k2).vkeys == (V1, V2, V3)


def test_the_old_key_is_retired_once_the_rotation_is_followed(log: Log) -> None:
    state, _ = _rotated(log)
    followed = log.round(V1, state)
    log.log.set_key(K1)  # an earlier key may still sign inside its window (docs/adr/0011 §2)
    old_note = log.log.checkpoint(timestamp=T0 + HOUR)
    # a monitor that has not seen the rotation accepts it (checkpoints carry no time) ...
    assert check_round(old_note.encode(), V1, folder_fetch(log.folder), state)[1].vkeys == (V1,)
    # ... one that followed it no longer trusts K1
    with raises_code("tlog.rotation_unproven"):
        check_round(old_note.encode(), V1, folder_fetch(log.folder), followed)


def test_state_v1_is_read_and_v2_is_verified_when_read(log: Log) -> None:
    state, _ = _rotated(log)
    v1 = {
        "checkpoint": state.checkpoint,
        "format": "affidavit.tlog-monitor/v1",
        "origin": ORIGIN,
        "root_hash": json.loads(state_json(state))["root_hash"],
        "tree_size": state.tree_size,
        "vkey": V1,
    }
    assert parse_state(json.dumps(v1).encode(), vkey=V1) == state
    followed = log.round(V1, parse_state(json.dumps(v1).encode(), vkey=V2))
    document = json.loads(state_json(followed))
    assert (document["format"], document["vkeys"]) == ("affidavit.tlog-monitor/v2", [V1, V2])
    for field, value in [
        ("vkeys", [V2, V1]),
        ("vkeys", [V1]),
        ("vkeys", [V1, V3]),
        ("vkeys", []),
        ("vkeys", [V1.upper(), V2]),
        ("rotations", []),
        ("rotations", [document["rotations"][0].replace('"seq":1', '"seq":2')]),
        ("rotations", [_statement(K1, K3, 300, state.root_hash)]),
        ("rotations", "x"),
    ]:
        changed = {**document, field: value}
        with raises_code("tlog.monitor_state_invalid"):
            parse_state(json.dumps(changed).encode(), vkey=V1)
    other_log = verifier_key_string("another.example/log", K1.public_key)
    with raises_code("tlog.monitor_state_invalid"):
        parse_state(state_json(followed), vkey=other_log)


def test_a_vkey_the_state_does_not_hold_is_refused(log: Log) -> None:
    log.grow(3)
    state = log.round(V1, None)
    with raises_code("tlog.monitor_state_invalid"):
        log.round(V3, state)  # K3 was never a key of this log


# -- issue 36: what the first mutation run showed no test judged --------------------------------


def test_a_handover_at_the_served_size_is_followed_and_reported(log: Log) -> None:
    state, note = _rotated(log)
    statement = _statement(K1, K2, 500, log.log.root(500))
    served = _served(log, statement.encode() + b"\n")
    read: list[int] = []

    def fetch(path: str) -> bytes | None:
        data = served.get(path)
        if data is not None:
            read.append(len(data))
        return data

    result, followed = check_round(note, V1, fetch, state)
    assert followed.vkeys == (V1, V2)
    assert [r.statement for r in followed.rotations] == [statement]
    assert result.subject["rotated_to"] == [V2]
    assert result.subject["bytes_read"] == sum(read)  # the rotations read count too


def test_handover_and_unproven_rotation_details(log: Log) -> None:
    state, note = _rotated(log)
    evidence_of = {"served_checkpoint": note.decode()}
    for statement, code in (
        (_statement(K1, K2, 300, bytes(32)), "tlog.fork"),
        (_statement(K1, K2, 600, log.log.root(500)), "tlog.rollback"),
    ):
        with raises_code(code) as caught:
            check_round(note, V1, _served(log, statement.encode() + b"\n").get, state)
        assert caught.value.details == {"rotation": statement, **evidence_of}
        assert isinstance(caught.value.message, str)
        assert caught.value.message
    # a genuine handover, to K3, while K2 signed the checkpoint: no rotation reaches its signer
    elsewhere = _statement(K1, K3, 300, log.log.root(300))
    with raises_code("tlog.rotation_unproven") as unproven:
        check_round(note, V1, _served(log, elsewhere.encode() + b"\n").get, state)
    assert unproven.value.details == {"trusted_vkey": V1, **evidence_of}
    assert isinstance(unproven.value.message, str)
    assert unproven.value.message


def test_a_later_handover_continues_the_rotations_the_state_followed(log: Log) -> None:
    # docs/adr/0011 §3: once the state holds rotation #1 of this log, the next handover is #2 of
    # the same log. A statement K2 signed for another log, or out of sequence, hands nothing over
    # (the state's last rotation pins both; unpinned, either was followed to K3).
    log.grow(10)
    log.rotate(K2)
    log.grow(5)
    state = log.round(V1, log.round(V1, None))
    assert [r.seq for r in state.rotations] == [1]
    log.rotate(K3)
    note = log.grow(7)
    first, second = (log.folder / ROTATIONS_PATH).read_bytes().splitlines(keepends=True)
    genuine = json.loads(second)

    def handover(log_id: str, seq: int) -> bytes:
        rotation = Rotation(
            log_id, seq, K2.public_key, K3.public_key, K3.key_id, genuine["valid_from"],
            genuine["tree_size"], genuine["root_hash"],
        )  # fmt: skip
        return first + rotation.sign(K2, K3).encode() + b"\n"

    honest = handover(ORIGIN, genuine["seq"])
    at_k3 = check_round(note, V1, _served(log, honest).get, state)[1]
    # the state keeps the rotation it held and adds the one it followed: the whole history
    assert (at_k3.vkeys, [r.seq for r in at_k3.rotations]) == ((V1, V2, V3), [1, 2])
    assert parse_state(state_json(at_k3), vkey=V3) == at_k3
    assert log.round(V3, at_k3).rotations == at_k3.rotations  # a round with no handover keeps it
    for log_id, seq in ((ORIGIN, 5), (ORIGIN, 1), ("another.example/log", genuine["seq"])):
        with raises_code("tlog.rotation_unproven"):
            check_round(note, V1, _served(log, handover(log_id, seq)).get, state)


def test_a_successor_key_signs_for_this_origin_only(log: Log) -> None:
    # A checkpoint K2 signed under the log's name (the signature line names the successor key)
    # whose body is another origin's: the handover is genuine, but the origin pin on the
    # successor refuses the checkpoint (checkpoint.origin_mismatch), as it does for K1.
    state, _note = _rotated(log)
    body = checkpoint_body("elsewhere.example/log", 500, log.log.root(500))
    line = note_signature_line(ORIGIN, K2.public_key.key_id_c2sp(ORIGIN), K2.sign(body.encode()))
    note = format_note(body, [line]).encode()
    for previous in (state, None):  # a first round too: no state's origin to fall back on
        with raises_code("checkpoint.origin_mismatch"):
            check_round(note, V1, folder_fetch(log.folder), previous)


def test_a_state_whose_rotations_do_not_follow_one_another_is_refused(log: Log) -> None:
    # docs/adr/0011: a state's history is verified whenever it is read. Its second rotation must
    # continue the first: the next seq, of the same log; either alone breaking it is refused.
    log.grow(10)
    log.rotate(K2)
    log.grow(5)
    log.rotate(K3)
    log.grow(7)
    at_k3 = log.round(V1, None)
    assert [r.seq for r in at_k3.rotations] == [1, 2]
    document = json.loads(state_json(at_k3))
    second = json.loads(document["rotations"][1])
    for log_id, seq in ((ORIGIN, 3), ("another.example/log", 2)):
        rotation = Rotation(
            log_id, seq, K2.public_key, K3.public_key, K3.key_id, second["valid_from"],
            second["tree_size"], second["root_hash"],
        )  # fmt: skip
        document["rotations"][1] = rotation.sign(K2, K3)
        with raises_code("tlog.monitor_state_invalid"):
            parse_state(json.dumps(document), vkey=V3)
