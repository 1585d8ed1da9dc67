"""The log's side of tlog-witness: submitting checkpoints, verifying and recording cosignatures,
and the registry's background cosigning task (a registry process with a witness process)."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key, generate_key_files, load_signing_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.clients.witness import (
    Witness,
    add_checkpoint_body,
    parse_witness,
    parse_witnesses,
)
from affidavit.registry.settings import Settings
from affidavit.registry.witnessing import (
    collect,
    log_signed_note,
    record_cosignatures,
    request_cosignature,
)
from affidavit.verify.crypto.checkpoint import (
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.tlog.cosignature import parse_cosigner_vkey, verify_cosignatures
from affidavit.witness.cosigner import WitnessKeys

from tests.conftest import raises_code
from tests.processes import RegistryProcess, refused_port
from tests.registry.helpers import contract
from tests.witness.helpers import AFFIDAVIT, WitnessProcess, free_port, write_key

pytestmark = pytest.mark.network_local

NAME = "witness.example/w1"
WITNESS_KEY = derive_test_key("witnessing tests: witness")
LOG_KEY = derive_test_key("witnessing tests: log")
OTHER_KEY = derive_test_key("witnessing tests: other log")
ORIGINS = [f"example.com/wlog{i}" for i in range(6)]


def witness_vkey() -> str:
    return WitnessKeys(NAME, WITNESS_KEY).vkeys()[0]


@pytest.fixture(scope="module")
def witness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WitnessProcess]:
    folder = tmp_path_factory.mktemp("witness")
    key = write_key(folder / "w.key", WITNESS_KEY)
    vkeys = [verifier_key_string(o, LOG_KEY.public_key) for o in ORIGINS]
    with WitnessProcess(key, folder / "state", vkeys, name=NAME) as process:
        yield process


def make_log(
    tmp_path: Path, origin: str, leaves: list[bytes], name: str = "log"
) -> TransparencyLog:
    log = TransparencyLog.create(tmp_path / f"{name}.db", LOG_KEY, origin)
    if leaves:
        log.append(leaves)
    return log


def spec(process: WitnessProcess) -> Witness:
    return parse_witness(f"{process.url}#{witness_vkey()}")


def proof_of(log: TransparencyLog) -> Callable[[int, int], tuple[bytes, ...]]:
    return lambda old, new: log.consistency_proof(old, new).path


def test_parse_witnesses() -> None:
    vkey = witness_vkey()
    other = WitnessKeys(NAME, OTHER_KEY).vkeys()[0]
    parsed = parse_witnesses(
        [f"http://127.0.0.1:1/#{vkey}", f"http://127.0.0.1:1#{other}", f"https://w.example#{vkey}"]
    )
    assert [w.url for w in parsed] == ["http://127.0.0.1:1", "https://w.example"]
    assert len(parsed[0].cosigners) == 2
    assert parse_witness(f"http://x#{vkey}#{other}").cosigners == parsed[0].cosigners
    with raises_code("usage.invalid"):
        parse_witness("http://127.0.0.1:1")
    with raises_code("usage.invalid"):
        parse_witness(f"ftp://x#{vkey}")
    with raises_code("tlog.cosigner_key_malformed"):
        parse_witness("http://x#name+00000000+AAAA")


def test_settings_take_witnesses_from_the_environment() -> None:
    vkey = witness_vkey()
    env = {
        "AFFIDAVIT_WITNESSES": f"http://a.example#{vkey}\n  http://b.example#{vkey}",
        "AFFIDAVIT_WITNESS_INTERVAL": "2.5",
        "AFFIDAVIT_WITNESS_TIMEOUT": "3",
    }
    settings = Settings.from_env(env)
    assert settings.witnesses == (f"http://a.example#{vkey}", f"http://b.example#{vkey}")
    assert (settings.witness_interval_s, settings.witness_timeout_s) == (2.5, 3.0)
    assert Settings().witnesses == ()
    with raises_code("tlog.cosigner_key_malformed"):
        Settings.from_env({"AFFIDAVIT_WITNESSES": "http://a.example#nonsense+00000000+AAAA"})
    with raises_code("usage.invalid"):
        Settings.from_env({"AFFIDAVIT_WITNESS_INTERVAL": "0"})


def test_a_fresh_witness_cosigns_then_follows_the_log(
    witness: WitnessProcess, tmp_path: Path
) -> None:
    log = make_log(tmp_path, ORIGINS[0], [b"a", b"b", b"c", b"d", b"e"])
    note = log.checkpoint()
    [report] = collect([spec(witness)], note, proof_of(log))
    assert (report.ok, report.requests, report.error) == (True, 1, None)
    assert report.cosigners == (f"{NAME}+{parse_cosigner_vkey(witness_vkey()).key_id.hex()}",)
    recorded = record_cosignatures(log, note, report.lines)
    assert recorded == note + "".join(report.lines)
    latest = log.latest_checkpoint()
    assert latest is not None
    assert latest.document == recorded
    assert verify_cosignatures(recorded, [parse_cosigner_vkey(witness_vkey())])

    log.append([b"f", b"g", b"h"])
    newer = log.checkpoint()
    [report] = collect([spec(witness)], newer, proof_of(log))  # no state: 409, then from 5
    assert (report.ok, report.requests, report.witness_size) == (True, 2, 5)
    [report] = collect([spec(witness)], newer, proof_of(log), hints={witness.url: 8})
    assert (report.ok, report.requests) == (True, 1)
    log.close()


def test_a_witness_ahead_of_the_log_is_a_rollback(witness: WitnessProcess, tmp_path: Path) -> None:
    ahead = make_log(tmp_path, ORIGINS[1], [b"1", b"2", b"3", b"4", b"5", b"6"], "ahead")
    [report] = collect([spec(witness)], ahead.checkpoint(), proof_of(ahead))
    assert report.ok
    ahead.close()
    behind = make_log(tmp_path, ORIGINS[1], [b"1", b"2", b"3"], "behind")  # same key and origin
    [report] = collect([spec(witness)], behind.checkpoint(), proof_of(behind))
    assert not report.ok
    assert report.error is not None
    assert report.error.code == "tlog.rollback"
    assert report.witness_size == 6
    behind.close()


def test_a_witness_on_another_tree_is_a_fork(witness: WitnessProcess, tmp_path: Path) -> None:
    first = make_log(tmp_path, ORIGINS[2], [b"1", b"2", b"3", b"4"], "first")
    assert collect([spec(witness)], first.checkpoint(), proof_of(first))[0].ok
    first.close()
    other = make_log(tmp_path, ORIGINS[2], [b"1", b"2", b"3", b"X", b"Y"], "other")
    [report] = collect([spec(witness)], other.checkpoint(), proof_of(other))
    assert report.error is not None
    assert report.error.code == "tlog.fork"
    assert report.witness_size == 4
    other.close()


def test_a_down_witness_is_retried_with_backoff_then_reported(tmp_path: Path) -> None:
    log = make_log(tmp_path, ORIGINS[3], [b"a"])
    slept: list[float] = []
    with refused_port() as port, httpx.Client(timeout=5) as client:
        down = parse_witness(f"http://127.0.0.1:{port}#{witness_vkey()}")
        report = request_cosignature(
            down, log.checkpoint(), proof_of(log), client=client, sleep=slept.append
        )
    assert report.error is not None
    assert report.error.code == "net.unavailable"  # a witness is not a registry (issue 22)
    assert (report.requests, slept) == (3, [0.25, 0.75])
    log.close()


# -- answers a real witness would not give: a mock transport through the same fetcher -----------


def _mock(
    tmp_path: Path, answers: list[Callable[[str], httpx.Response]]
) -> tuple[TransparencyLog, str, Witness, httpx.Client, list[bytes]]:
    log = make_log(tmp_path, ORIGINS[4], [b"a", b"b"])
    note = log.checkpoint()
    seen: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.content)
        return answers[min(len(seen), len(answers)) - 1](note)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return log, note, parse_witness(f"http://w.test#{witness_vkey()}"), client, seen


def _lines(note: str, keys: WitnessKeys | None = None, when: int = 1) -> str:
    text = parse_note(note).text
    signer = keys or WitnessKeys(NAME, WITNESS_KEY)
    return "".join(signer.cosign(text, parse_checkpoint_body(text), when))


def _report(tmp_path: Path, *answers: Callable[[str], httpx.Response]) -> object:
    log, note, witness, client, seen = _mock(tmp_path, list(answers))
    with client:
        report = request_cosignature(
            witness, note, proof_of(log), client=client, sleep=lambda s: None
        )
    log.close()
    return report, seen, note


def test_a_5xx_answer_is_retried(tmp_path: Path) -> None:
    report, seen, note = _report(
        tmp_path,
        lambda note: httpx.Response(503, text="busy\n"),
        lambda note: httpx.Response(200, text=_lines(note)),
    )
    assert report.ok  # type: ignore[attr-defined]
    assert seen == [b"old 0\n\n" + note.encode()] * 2  # type: ignore[operator]


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (lambda note: httpx.Response(200, text="hello\n"), "tlog.witness_bad_response"),
        (lambda note: httpx.Response(200, text=""), "tlog.witness_bad_response"),
        (lambda note: httpx.Response(409, text="07\n"), "tlog.witness_bad_response"),
        (lambda note: httpx.Response(409, text="0\n"), "tlog.witness_bad_response"),
        (lambda note: httpx.Response(403, text="no\n"), "tlog.witness_refused"),
        (lambda note: httpx.Response(404, text="unknown log\n"), "tlog.witness_refused"),
        (
            lambda note: httpx.Response(
                200, text=_lines(note, WitnessKeys(NAME, OTHER_KEY))
            ),  # only a key not configured for this witness
            "tlog.witness_bad_response",
        ),
        (
            lambda note: httpx.Response(200, text=_lines(note.replace("\n2\n", "\n3\n"))),
            "tlog.cosignature_bad",  # a cosignature over another checkpoint
        ),
    ],
)
def test_answers_that_are_not_cosignatures(
    tmp_path: Path, answer: Callable[[str], httpx.Response], code: str
) -> None:
    report, seen, _ = _report(tmp_path, answer)
    assert not report.ok  # type: ignore[attr-defined]
    assert report.error.code == code  # type: ignore[attr-defined]
    assert len(seen) == 1  # type: ignore[arg-type]  # a definite answer is not retried


def test_lines_of_unknown_keys_are_dropped(tmp_path: Path) -> None:
    stranger = WitnessKeys("stranger.example/w", OTHER_KEY)
    report, _, note = _report(
        tmp_path, lambda note: httpx.Response(200, text=_lines(note, stranger) + _lines(note))
    )
    assert report.lines == (_lines(note),)  # type: ignore[attr-defined]


def test_the_request_body_is_the_spec_form(tmp_path: Path) -> None:
    _, seen, note = _report(tmp_path, lambda note: httpx.Response(200, text=_lines(note)))
    assert seen == [b"old 0\n\n" + note.encode()]  # type: ignore[comparison-overlap]
    assert add_checkpoint_body(3, [b"\x00" * 32], note) == (
        b"old 3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n" + note.encode()
    )


def test_recording_keeps_earlier_lines_and_skips_a_superseded_checkpoint(tmp_path: Path) -> None:
    log = make_log(tmp_path, ORIGINS[5], [b"a", b"b"])
    note = log.checkpoint()
    first = _lines(note)
    second = _lines(note, WitnessKeys("w2.example/w", OTHER_KEY))
    assert record_cosignatures(log, note, [first]) == note + first
    assert record_cosignatures(log, note, [second]) == note + first + second
    cosigned = log.latest_checkpoint()
    assert cosigned is not None
    assert log_signed_note(cosigned.document, LOG_KEY.public_key) == note
    log.append([b"c"])
    log.checkpoint()
    assert record_cosignatures(log, note, [first]) is None  # would make an older head the latest
    log.close()


# -- the registry's background task, with real processes ----------------------------------------


def _registry(data_dir: Path, witnesses: str) -> RegistryProcess:
    """``affidavit registry serve`` with witnesses configured (a short interval), on 127.0.0.1."""
    return RegistryProcess(
        data_dir,
        {
            "AFFIDAVIT_WITNESSES": witnesses,
            "AFFIDAVIT_WITNESS_INTERVAL": "0.2",
            "AFFIDAVIT_WITNESS_TIMEOUT": "20",
        },
    )


def _wait(condition: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("condition not reached")


class BlackHole:
    """A TCP listener that accepts connections and never answers (a hung witness)."""

    def __init__(self, port: int) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen()
        self.listener.settimeout(0.05)
        self.accepted: list[socket.socket] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.accepted.append(connection)

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.listener.close()
        for connection in self.accepted:
            connection.close()


def _cosigned_size(url: str, path: str) -> int | None:
    """The size of the served checkpoint when it carries the witness's cosignature."""
    text = httpx.get(url + path, timeout=5).text
    if not verify_cosignatures(text, [parse_cosigner_vkey(witness_vkey())]):
        return None
    return parse_checkpoint_body(parse_note(text).text).tree_size


def test_the_registry_collects_cosignatures_in_the_background(tmp_path: Path) -> None:
    data = tmp_path / "data"
    written = generate_key_files(data / "keys", "affidavit-local", "registry-1")
    registry_key = load_signing_key(written.private_key)
    log_vkey = verifier_key_string("affidavit-registry", registry_key.public_key)
    key = write_key(tmp_path / "w.key", WITNESS_KEY)
    witness = WitnessProcess(key, tmp_path / "wstate", [log_vkey], name=NAME)
    registry = _registry(data, f"{witness.url}#{witness_vkey()}")
    token = json.loads(
        subprocess.run(
            [
                AFFIDAVIT,
                "registry",
                "keys",
                "create",
                "--data-dir",
                str(data),
                "--json",
                "--scope",
                "publish",
                "--publisher",
                "acme",
            ],
            check=True,
            capture_output=True,
        ).stdout
    )["api_key"]
    auth = {"Authorization": f"Bearer {token}"}

    def publish(version: str) -> int:
        response = httpx.post(
            f"{registry.url}/protocol/adapter-contracts",
            json=contract(version=version),
            headers=auth,
            timeout=15,  # far below the witness timeout (20 s): a publish never waits for it
        )
        assert response.status_code in (200, 201), response.text
        return int(response.json()["signed_tree_head"]["tree_size"])

    witness.start()
    registry.start()
    hole: BlackHole | None = None
    try:
        size = publish("0.1.0")
        for path in ("/tlog/checkpoint", "/protocol/merkle/checkpoint"):
            _wait(lambda path=path: _cosigned_size(registry.url, path) == size)  # type: ignore[misc]
        served = httpx.get(registry.url + "/tlog/checkpoint", timeout=5).text
        verify_checkpoint(served, [parse_verifier_key(log_vkey)])

        # The witness hangs (accepts, never answers): publishing goes on regardless.
        witness.stop()
        hole = BlackHole(witness.port)
        sizes = [publish("0.2.0")]
        _wait(lambda: bool(hole is not None and hole.accepted))  # a round now hangs on it
        sizes += [publish(f"0.2.{i}") for i in (1, 2)]
        assert sizes == sorted(sizes)
        assert sizes[-1] > size
        assert _cosigned_size(registry.url, "/tlog/checkpoint") is None  # not cosigned (yet)
        hole.close()
        hole = None

        # The witness comes back (same state): a later round cosigns the new size.
        witness.start()
        latest = publish("0.3.0")
        _wait(lambda: _cosigned_size(registry.url, "/tlog/checkpoint") == latest)
    finally:
        if hole is not None:
            hole.close()
        registry.stop()
        log_text = registry.stderr_text
        witness.stop()
    assert b"did not cosign" in log_text  # the failure was reported, and then recovered
    assert b"cosigns again" in log_text


def test_registry_serve_refuses_a_bad_witness_before_starting(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            AFFIDAVIT,
            "registry",
            "serve",
            "--port",
            str(free_port()),
            "--data-dir",
            str(tmp_path / "data"),
            "--witness",
            "http://127.0.0.1:1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: usage.invalid: witness ")
    assert not (tmp_path / "data").exists()  # refused before anything was made
