"""Start-up checks do not race (issue 31, hole 9): the check a starting instance runs on the log
(:func:`affidavit.registry.startup.check_log`: open it bound to the key's signed state file, then
the tree against every head it signed, every node) never refuses a healthy log, however busy the
instances already running on the same database and key folder are.

Two real registry processes on one PostgreSQL database and one data folder (tests/pg.py,
tests/processes.py), loaded by writers that wait for integration on both, so heads are signed and
the state file advances all the time; meanwhile this process runs the start-up check again and
again. Bounded: ``CHECKS`` checks (tests/budget.py) within ``SECONDS``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.log.state import state_path
from affidavit.attest.stores.store import Store
from affidavit.registry.startup import check_log

from tests.budget import budget
from tests.processes import RegistryProcess, api_key

pytestmark = pytest.mark.network_local

CHECKS = budget(120, 400)
SECONDS = budget(30, 90)
LOG_ID = "affidavit-registry"


@pytest.fixture
def pair(tmp_path: Path, pg_url: str) -> Iterator[tuple[RegistryProcess, RegistryProcess, str]]:
    data = tmp_path / "data"
    data.mkdir()
    env = {"AFFIDAVIT_DATABASE_URL": pg_url, "AFFIDAVIT_READ_THREADS": "2"}
    first, second = RegistryProcess(data, env), RegistryProcess(data, env)
    first.start()
    token = api_key(data, "log:write", database_url=pg_url)
    try:
        second.start()
        yield first, second, token
    finally:
        second.stop()
        first.stop()


def _write(url: str, token: str, stop: threading.Event, written: list[int]) -> None:
    """Entries that wait for their checkpoint (each a signed head) until ``stop``."""
    headers = {"Authorization": f"Bearer {token}"}
    n = 0
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            n += 1
            answer = client.post(
                url + "/v1/log/entries?wait=integrated",
                content=f"{url} {n} {time.monotonic()}".encode(),
                headers=headers,
            )
            if answer.status_code in (200, 201):
                written.append(1)


def test_the_start_up_check_never_refuses_a_healthy_busy_log(
    pair: tuple[RegistryProcess, RegistryProcess, str], pg_url: str
) -> None:
    first, second, token = pair
    data = first.data_dir
    key = load_signing_key(data / "keys" / "registry-1.key")
    state_file = state_path(data / "keys" / "registry-1.key", LOG_ID)
    stop = threading.Event()
    written: list[int] = []
    writers = [
        threading.Thread(target=_write, args=(server.url, token, stop, written), daemon=True)
        for server in (first, second, first, second)
    ]
    for writer in writers:
        writer.start()
    sizes: list[int] = []
    refusals: list[str] = []
    deadline = time.monotonic() + SECONDS
    try:
        while len(sizes) < CHECKS and time.monotonic() < deadline:
            store = Store.connect(pg_url)
            try:
                log = check_log(store, key, state_file, LOG_ID)
                sizes.append(log.size)
            except Exception as e:  # every refusal is the failure counted
                refusals.append(f"{type(e).__name__}: {e}")
            finally:
                store.close()
    finally:
        stop.set()
        for writer in writers:
            writer.join(timeout=60)
    assert not refusals, (
        f"{len(refusals)} of {len(sizes) + len(refusals)} checks refused: {refusals[:3]}"
    )
    print(f"start-up checks: {len(sizes)}, log {sizes[:1]} -> {sizes[-1:]}, {len(written)} written")
    assert len(written) > 20, "the instances were not loaded"
    assert sizes[-1] > sizes[0], "the log did not grow during the checks"
