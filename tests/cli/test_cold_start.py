"""``affidavit verify bundle|attestation`` as whole processes through the console entry point
(docs/adr/0003-cold-start.md, docs/adr/0022-click-alone.md): the exit code of each verdict and
usage mistake, and the modules a run must not load at start-up.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLES = ROOT / "vectors" / "bundles"
KEY = json.loads((BUNDLES / "manifest.json").read_text())["vectors"][0]["trusted_public_key_base64"]
GOOD = str(BUNDLES / "stamped-accepted-2.0.0.json")
TAMPERED = str(BUNDLES / "tamper-payload-without-rehash.json")

_MAIN = "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"


def _run(script: str, args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, check=False, cwd=cwd
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("cold")
    (folder / "bad.json").write_text('{"a": 1,}')
    (folder / "list.json").write_text("[]")
    (folder / "key.json").write_text(json.dumps({"public_key_base64": KEY}))
    (folder / "sub").mkdir()
    (folder / "sub" / "one.json").write_bytes(Path(GOOD).read_bytes())
    return {"dir": str(folder), "bad": str(folder / "bad.json"), "list": str(folder / "list.json"),
            "key": str(folder / "key.json"), "sub": str(folder / "sub"),
            "missing": str(folder / "missing.json")}  # fmt: skip


# name -> (arguments after ``verify``, exit code, what the last line starts with: stderr's, or
# stdout's when stderr is empty)
CASES: dict[str, tuple[list[str], int, str]] = {
    "good": (["bundle", GOOD, "--public-key-base64", KEY], 0, ""),
    "good-json": (["bundle", GOOD, "--json", "--public-key-base64=" + KEY], 0, ""),
    "unanchored": (["bundle", GOOD], 1, "1 bundle(s): 1 unanchored"),
    "tampered": (["bundle", TAMPERED, "--public-key-base64", KEY], 1, "1 bundle(s): 1 failed"),
    "tampered-json": (["bundle", "--json", TAMPERED, "--public-key-base64", KEY], 1, ""),
    "mixed": (["bundle", GOOD, TAMPERED, "{missing}", "{bad}", "--public-key-base64", KEY], 2,
              "error: json.syntax: "),
    "unreadable": (["bundle", "{missing}", "--public-key-base64", KEY], 2,
                   "error: io.unreadable: "),
    "bad-json": (["bundle", "{bad}", "--json"], 2, ""),
    "folder": (["bundle", "{sub}", "--publisher-doc", "{key}", "--jobs", "2"], 0, ""),
    "bad-key": (["bundle", GOOD, "--public-key-base64", "not-base64"], 2,
                "error: key.bad_base64: "),
    "missing-key-file": (["bundle", GOOD, "--publisher-doc", "{missing}"], 2,
                         "error: io.unreadable: "),
    "empty-key-dir": (["bundle", GOOD, "--trusted-keys", "{sub}/none"], 2,
                      "error: io.unreadable: "),
    "attestation-unreadable": (["attestation", "{missing}", "--public-key-base64", KEY], 2,
                               "error: io.unreadable: "),
    "attestation-not-object": (["attestation", "{list}", "--json", "--public-key-base64", KEY],
                               2, ""),
    # click takes the last of a repeated option, as for every other command
    "jobs-twice": (["bundle", GOOD, "--jobs", "1", "--jobs", "2"], 1, "1 bundle(s): 1 unanchored"),
    "after-dashes": (["bundle", GOOD, "--", "{missing}"], 2, "error: io.unreadable: "),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_exit_codes_are_the_verdicts(name: str, files: dict[str, str]) -> None:
    argv, code, last_line = CASES[name]
    done = _run(_MAIN, ["verify", *(a.format(**files) for a in argv)], Path(files["dir"]))
    assert done[0] == code, done
    err = done[2].decode()
    last = (err or done[1].decode()).rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith(last_line), done
    assert "Traceback" not in err
    if "--json" in argv:
        assert json.loads(done[1])["results"]  # one document, whatever the verdict


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--json=yes"], "usage.invalid", "Option '--json' does not take a value"),
        (["--strict=yes"], "usage.invalid", "Option '--strict' does not take a value"),
        (["--public-key-base64"], "usage.invalid", "requires an argument"),
        (["--jobs", "0"], "usage.invalid", "Invalid value for '--jobs'"),
        (["--jobs", "x"], "usage.invalid", "Invalid value for '--jobs'"),
        (["--publisher-doc", str(BUNDLES)], "usage.invalid", "is a directory"),
        (["--trusted-keys", GOOD], "usage.invalid", "is a file"),
        (["--profile", "lenient"], "usage.invalid", "Invalid value for '--profile'"),
        (["--unknown"], "usage.no_such_option", "No such option '--unknown'"),
        (["--out", "o"], "usage.invalid", "--attest-result KEYFILE and --out VSA go together"),
    ],
)
def test_a_usage_mistake_is_one_line(argv: list[str], code: str, says: str) -> None:
    done = _run(_MAIN, ["verify", "bundle", GOOD, *argv], ROOT)
    assert (done[0], done[1]) == (2, b""), done
    line = re.fullmatch(rb"error: ([a-z_.]+): (.+)\n", done[2])
    assert line, done[2]
    assert line[1].decode() == code
    assert says in line[2].decode()


@pytest.mark.parametrize("argv", [["bundle", "--help"], ["bundle", GOOD, "-h"]])
def test_help_wins_over_the_rest(argv: list[str]) -> None:
    code, out, err = _run(_MAIN, ["verify", *argv], ROOT)
    assert (code, err) == (0, b"")
    assert out.startswith(b"Usage: affidavit verify bundle [OPTIONS] INPUTS...")


# Modules the verify-bundle path must not load (docs/adr/0003-cold-start.md, as amended by
# docs/adr/0022-click-alone.md): each costs milliseconds at start-up (dataclasses; pathlib pulls
# in urllib.parse and ipaddress) or belongs to another layer (httpx). click is the parser now
# (ADR 0022), and with it inspect.
_HEAVY = ("dataclasses", "pathlib", "httpx", "jsonschema", "cryptography")
_LOADED = (
    "import sys; from affidavit.cli.main import main\n"
    "try:\n    main(sys.argv[1:])\nfinally:\n"
    f"    sys.stderr.write(' '.join(m for m in {_HEAVY!r} if m in sys.modules))"
)


@pytest.mark.parametrize("name", ["good", "good-json", "tampered", "unanchored", "bad-json"])
def test_verify_bundle_loads_no_heavy_module(name: str, files: dict[str, str]) -> None:
    args = ["verify", *(a.format(**files) for a in CASES[name][0])]
    code, out, err = _run(_LOADED, args, ROOT)
    assert code in (0, 1, 2)
    assert out  # the command really ran (a report was printed)
    assert err.rsplit(b"\n", 1)[-1] == b""  # none of _HEAVY was imported


def test_heavy_module_check_can_fail(files: dict[str, str]) -> None:
    # The same probe sees pathlib when a command that needs it runs (a folder input no longer
    # does: verify bundle lists it with os.scandir, docs/adr/0023).
    code, _, err = _run(_LOADED, ["log", "head", "--help"], ROOT)
    assert code == 0
    assert b"pathlib" in err.rsplit(b"\n", 1)[-1]
