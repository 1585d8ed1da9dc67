"""Run a real Stigmem node (stigmem-node 0.9.0a12, a dev dependency) on 127.0.0.1, for the docs
and the tests (tests/cli/facts/test_stigmem_pull.py starts its node with this script).

``python tools/docs_stigmem_node.py --port PORT --key KEY --dir DIR`` prepares DIR, bootstraps
KEY as the node's API key and then becomes the node (``exec``), so ``kill`` stops it. The node
runs on SQLite, its default, with authentication on. The node's wheel lacks its SQL migrations
(its Dockerfile copies them from the source tree to ``<python lib>/migrations``, the path
``stigmem_node/db.py`` resolves three folders up): they come from the pinned sdist, downloaded
once with pip into ``build/test-cache/`` and laid out the same way in DIR (a symlink to the
installed package three levels below them, first on ``PYTHONPATH``). Nothing in the virtualenv
changes.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

NODE_VERSION = "0.9.0a12"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "build" / "test-cache" / f"stigmem-node-{NODE_VERSION}"


def migrations() -> Path:
    """``migrations/`` from the pinned sdist (downloaded once with pip, then cached)."""
    target = CACHE / "migrations"
    if (target / "001_init.sql").is_file():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"stigmem_node-{NODE_VERSION}.tar.gz"
    if not sdist.is_file():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
             ":all:", f"stigmem-node=={NODE_VERSION}", "-d", str(CACHE)],
            check=True, timeout=300,
        )  # fmt: skip
    staging = CACHE / f"staging-{os.getpid()}"
    prefix = f"stigmem_node-{NODE_VERSION}/migrations/"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix) and m.isfile()]
        archive.extractall(staging, members=members, filter="data")
    try:
        (staging / prefix).rename(target)
    except OSError:  # another process put it there first
        if not (target / "001_init.sql").is_file():
            raise
    shutil.rmtree(staging, ignore_errors=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--key", required=True, help="the API key to bootstrap (hex)")
    parser.add_argument("--dir", type=Path, required=True, help="a new folder for the node")
    args = parser.parse_args()
    spec = importlib.util.find_spec("stigmem_node")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("stigmem-node is not installed (pip install -e '.[dev]')")
    package = Path(next(iter(spec.submodule_search_locations)))
    root = args.dir.resolve()
    site = root / "lib" / "site"
    site.mkdir(parents=True)
    (site / "stigmem_node").symlink_to(package, target_is_directory=True)
    shutil.copytree(migrations(), root / "lib" / "migrations")  # = db.py's parent x3
    run_dir = root / "run"
    run_dir.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(run_dir),
        "PYTHONPATH": str(site),
        "PYTHONDONTWRITEBYTECODE": "1",
        "STIGMEM_DB_PATH": str(run_dir / "stigmem.db"),
        "STIGMEM_HOST": "127.0.0.1",  # never the node's default 0.0.0.0
        "STIGMEM_PORT": str(args.port),
        "STIGMEM_NODE_URL": f"http://127.0.0.1:{args.port}",
        "STIGMEM_AUTH_REQUIRED": "true",
        "STIGMEM_LOG_LEVEL": "warning",
    }
    for code, *rest in (
        ("from stigmem_node.db import apply_migrations; apply_migrations()",),
        ("import sys; from stigmem_node.cli import main; sys.exit(main())",
         "auth", "bootstrap-key", "--key", args.key),
    ):  # fmt: skip
        subprocess.run(
            [sys.executable, "-c", code, *rest], env=env, cwd=run_dir, check=True,
            stdout=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
    os.chdir(run_dir)
    os.execve(
        sys.executable, [sys.executable, "-c", "from stigmem_node.main import run; run()"], env
    )


if __name__ == "__main__":
    main()
