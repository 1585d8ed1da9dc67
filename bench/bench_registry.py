"""Registry throughput: discovery GETs (req/s, p50/p99), publications/s, fact writes/s.

Run: ``python bench/bench_registry.py [--seconds 5] [--connections 64]``. The server runs as
``affidavit registry serve`` (uvicorn on uvloop and httptools) in one process, from ``pip install
'<checkout>[registry]'`` (not editable) in build/bench-venv, as a user installs it
(bench/_install.py); the load generator runs in this virtualenv, in a second process, and speaks
raw HTTP/1.1 keep-alive over asyncio (so the client's own cost stays small). Targets: >= 3,000
req/s, p99 <= 25 ms for discovery GETs. The floor printed beside it is the same generator against
a minimal ASGI app on the same server stack (the same install), measured in the same run: the
ratio is what the registry's own code costs.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _http import drive, request  # noqa: E402 - bench/ is the script's folder
from _install import Install, server_env, user_install  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(port: int, path: str = "/v1/health") -> None:
    import httpx

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise SystemExit("server did not start")


def generate(  # noqa: PLR0917 - a bench helper
    port: int,
    paths: list[str],
    seconds: float,
    connections: int,
    headers: str = "",
    body: list[bytes] | None = None,
    method: str = "GET",
) -> dict[str, float]:
    requests = [
        request(method, path, headers, body[i % len(body)] if body else None)
        for i, path in enumerate(paths)
    ]
    # every connection sends the same list, round and round (bench/_http.py drive)
    result = drive([port], [requests] * connections, seconds)
    errors = sum(count for status, count in result["codes"].items() if status >= 400)
    return {**result, "errors": errors}


def start_registry(install: Install, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = server_env({**os.environ, "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(data_dir / "none")})
    process = subprocess.Popen(
        [
            install.affidavit,
            "registry",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_ready(port)
    return process


FLOOR_APP = """
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})
"""


def start_floor(install: Install, folder: Path, port: int) -> subprocess.Popen[bytes]:
    (folder / "floor_app.py").write_text(FLOOR_APP)
    process = subprocess.Popen(
        [
            install.python,
            "-m",
            "uvicorn",
            "floor_app:app",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
            "--loop",
            "auto",
            "--http",
            "auto",
        ],
        cwd=folder,
        env=server_env(dict(os.environ)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_ready(port, "/")
    return process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    from tests.registry.helpers import contract, fact

    install = user_install()
    print(f"servers from {install.header()}; the load generator from this virtualenv")
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        floor = start_floor(install, folder, port)
        try:
            rows.append(
                (
                    "floor: minimal ASGI app, same stack",
                    generate(port, ["/"], args.seconds, args.connections),
                )
            )
        finally:
            floor.send_signal(signal.SIGTERM)
            floor.wait()
        data = folder / "data"
        token = json.loads(
            subprocess.run(
                [
                    install.affidavit,
                    "registry",
                    "keys",
                    "create",
                    "--scope",
                    "publish",
                    "--publisher",
                    "acme",
                    "--scope",
                    "facts:write",
                    "--data-dir",
                    str(data),
                    "--json",
                ],
                check=True,
                capture_output=True,
            ).stdout
        )["api_key"]
        port = free_port()
        server = start_registry(install, data, port)
        try:
            discovery = [
                "/protocol/adapter-contracts",
                "/protocol/adapter-contracts/affidavit.examples.crewai.v0",
                "/.well-known/affidavit",
                "/specs/adapter-contracts.manifest.json",
                "/v1/health",
            ]
            rows.append(
                (
                    "discovery GETs (5 routes)",
                    generate(port, discovery, args.seconds, args.connections),
                )
            )
            rows.append(
                (
                    "GET /protocol/merkle/latest",
                    generate(port, ["/protocol/merkle/latest"], args.seconds, args.connections),
                )
            )
            auth = f"Authorization: Bearer {token}\r\n"
            facts = [json.dumps(fact(f"urn:bench:{i}")).encode() for i in range(200_000)]
            rows.append(
                (
                    "PUT /v1/facts (one fact each)",
                    generate(port, ["/v1/facts"], args.seconds, 16, auth, facts, "PUT"),
                )
            )
            contracts = [json.dumps(contract(f"acme.bench_{i}.v0")).encode() for i in range(50_000)]
            rows.append(
                (
                    "POST contracts (publish)",
                    generate(
                        port,
                        ["/protocol/adapter-contracts"],
                        args.seconds,
                        16,
                        auth,
                        contracts,
                        "POST",
                    ),
                )
            )
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait()
    floor_rps = rows[0][1]["rps"]
    print(f"{'what':40} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'4xx/5xx':>8} {'vs floor':>9}")
    for name, r in rows:
        print(
            f"{name:40} {r['rps']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
            f"{r['errors']:8.0f} {r['rps'] / floor_rps:9.2f}"
        )
    print(
        "targets: discovery >= 3000 req/s and p99 <= 25 ms "
        f"({args.connections} connections, {args.seconds:.0f} s each)"
    )


if __name__ == "__main__":
    main()
