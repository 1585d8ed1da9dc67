"""Cold start of ``affidavit verify bundle|attestation`` (docs/adr/0003): the click-free path.

The fast path must print the same bytes and exit with the same code as the click path, and hand
everything it does not fully understand back to click. Both paths run as real processes here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from affidavit.cli.verify import _fastpath
from affidavit.cli.verify import bundle as verify_bundle

ROOT = Path(__file__).resolve().parents[2]
BUNDLES = ROOT / "vectors" / "bundles"
KEY = json.loads((BUNDLES / "manifest.json").read_text())["vectors"][0]["trusted_public_key_base64"]
GOOD = str(BUNDLES / "stamped-accepted-2.0.0.json")
TAMPERED = str(BUNDLES / "tamper-payload-without-rehash.json")

# main() takes the fast path for these; the click group is invoked directly for the reference.
_FAST = "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"
_CLICK = (
    "import sys; from affidavit.cli.main import affidavit; "
    "affidavit.main(args=sys.argv[1:], prog_name='affidavit')"
)
_NO_CLICK = (
    "import sys; from affidavit.cli.main import main\n"
    "try:\n    main(sys.argv[1:])\nfinally:\n"
    "    sys.stderr.write('CLICK' if 'click' in sys.modules else 'NOCLICK')"
)


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


CASES: dict[str, list[str]] = {
    "good": ["bundle", GOOD, "--public-key-base64", KEY],
    "good-json": ["bundle", GOOD, "--json", "--public-key-base64=" + KEY],
    "unanchored": ["bundle", GOOD],
    "tampered": ["bundle", TAMPERED, "--public-key-base64", KEY],
    "tampered-json": ["bundle", "--json", TAMPERED, "--public-key-base64", KEY],
    "mixed": ["bundle", GOOD, TAMPERED, "{missing}", "{bad}", "--public-key-base64", KEY],
    "unreadable": ["bundle", "{missing}", "--public-key-base64", KEY],
    "bad-json": ["bundle", "{bad}", "--json"],
    "folder": ["bundle", "{sub}", "--publisher-doc", "{key}", "--jobs", "2"],
    "bad-key": ["bundle", GOOD, "--public-key-base64", "not-base64"],
    "missing-key-file": ["bundle", GOOD, "--publisher-doc", "{missing}"],
    "empty-key-dir": ["bundle", GOOD, "--trusted-keys", "{sub}/none"],
    "attestation-unreadable": ["attestation", "{missing}", "--public-key-base64", KEY],
    "attestation-not-object": ["attestation", "{list}", "--json", "--public-key-base64", KEY],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_is_byte_identical_to_click(name: str, files: dict[str, str]) -> None:
    args = ["verify", *(a.format(**files) for a in CASES[name])]
    # really the fast path:
    assert (
        _fastpath.parse(verify_bundle.COMMANDS[args[1]], args[2:]) is not None
    )  # really the fast path
    fast = _run(_FAST, args, Path(files["dir"]))
    reference = _run(_CLICK, args, Path(files["dir"]))
    assert fast == reference
    assert fast[0] in (0, 1, 2)


def test_exit_codes_are_the_verdicts(files: dict[str, str]) -> None:
    codes = {
        name: _run(_FAST, ["verify", *(a.format(**files) for a in CASES[name])], ROOT)[0]
        for name in ("good", "tampered", "unreadable", "bad-key")
    }
    assert codes == {"good": 0, "tampered": 1, "unreadable": 2, "bad-key": 2}


def test_fast_path_does_not_import_click() -> None:
    code, _, err = _run(_NO_CLICK, ["verify", "bundle", GOOD, "--public-key-base64", KEY], ROOT)
    assert (code, err) == (0, b"NOCLICK")


# Modules the verify-bundle path must not load (docs/adr/0003-cold-start.md): each costs
# milliseconds at start-up (dataclasses pulls in inspect, ast, dis, tokenize; pathlib pulls in
# urllib.parse and ipaddress) or belongs to another layer (click, httpx).
_HEAVY = ("dataclasses", "inspect", "pathlib", "click", "httpx", "jsonschema", "cryptography")
_LOADED = (
    "import sys; from affidavit.cli.main import main\n"
    "try:\n    main(sys.argv[1:])\nfinally:\n"
    f"    sys.stderr.write(' '.join(m for m in {_HEAVY!r} if m in sys.modules))"
)


@pytest.mark.parametrize("name", ["good", "good-json", "tampered", "unanchored", "bad-json"])
def test_fast_path_loads_no_heavy_module(name: str, files: dict[str, str]) -> None:
    args = ["verify", *(a.format(**files) for a in CASES[name])]
    code, out, err = _run(_LOADED, args, ROOT)
    assert code in (0, 1, 2)
    assert out  # the command really ran (a report was printed)
    assert err.rsplit(b"\n", 1)[-1] == b""  # none of _HEAVY was imported


def test_heavy_module_check_can_fail(files: dict[str, str]) -> None:
    # The same probe sees pathlib when an option that needs it is used (--publisher-doc).
    args = ["verify", *(a.format(**files) for a in CASES["folder"])]
    code, _, err = _run(_LOADED, args, ROOT)
    assert code == 0
    assert b"pathlib" in err.rsplit(b"\n", 1)[-1]


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        [GOOD, "-h"],
        [GOOD, "--unknown"],
        [GOOD, "--jobs", "0"],
        [GOOD, "--jobs", "x"],
        [GOOD, "--jobs", "1", "--jobs", "2"],
        [GOOD, "--json=yes"],
        [GOOD, "--public-key-base64"],
        [GOOD, "--publisher-doc", str(BUNDLES)],
        [GOOD, "--trusted-keys", GOOD],
        [GOOD, "--profile", "lenient"],
        [GOOD, "--profile", "default", "--profile", "swarm-strict"],
        [GOOD, "--strict=yes"],
        [GOOD, "--", "x"],
        [],
        ["--json"],
    ],
)
def test_falls_back_to_click_for_what_it_does_not_understand(argv: list[str]) -> None:
    assert _fastpath.parse(verify_bundle.COMMANDS["bundle"], argv) is None
    code, _, err = _run(_NO_CLICK, ["verify", "bundle", *argv], ROOT)
    assert err.endswith(b"CLICK")
    assert not err.endswith(b"NOCLICK")
    assert code in (0, 1, 2)  # click ran it (help, usage error, or the command itself)


def test_attestation_takes_one_source_only() -> None:
    assert _fastpath.parse(verify_bundle.COMMANDS["attestation"], [GOOD, GOOD]) is None
    assert _fastpath.parse(verify_bundle.COMMANDS["attestation"], [GOOD]) == {
        "source": GOOD, "keys_b64": (), "key_files": (), "key_dirs": (), "vkeys": (),
        "fetch_urls": (), "strict": False, "as_json": False,
    }  # fmt: skip


def test_one_option_table_builds_both_parsers() -> None:
    for command in ("bundle", "attestation"):
        built = getattr(verify_bundle, command)
        assert isinstance(built, click.Command)
        click_flags = {opt for p in built.params if isinstance(p, click.Option) for opt in p.opts}
        options = verify_bundle.COMMANDS[command].options
        table = {flag for o in options for flag in (o.flag, *o.aliases)}
        assert click_flags == table
        fast_keys = set(_fastpath.parse(verify_bundle.COMMANDS[command], [GOOD]) or {})
        assert fast_keys == {p.name for p in built.params}
