"""``affidavit verify receipt``: one receipt and folders of them (--jobs 2), exit codes, --json and
its schema, the key options, the bulk layout."""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from click.testing import CliRunner, Result

from tests.schemas import assert_output_schema
from tests.verify.receipts.receipt_fixtures import (
    ADAPTER,
    CONTENT,
    LOSSY,
    OTHER,
    SOURCE,
    forged,
    lossy,
    receipt,
    write_json,
)

KEY = ("--public-key-base64", ADAPTER.public_key.b64)


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["verify", "receipt", *args])


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    result = _run(*args, "--json")
    document = json.loads(result.stdout)
    assert_output_schema("verify receipt", document)
    return result.exit_code, document


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "src.txt").write_bytes(SOURCE)
    (tmp_path / "out.txt").write_bytes(CONTENT)
    write_json(tmp_path / "out.txt.receipt.json", receipt())
    return {
        "receipt": str(tmp_path / "out.txt.receipt.json"),
        "source": str(tmp_path / "src.txt"),
        "content": str(tmp_path / "out.txt"),
    }


def _single(files: dict[str, str], *extra: str) -> tuple[str, ...]:
    return (files["receipt"], "--source", files["source"], "--content", files["content"], *extra)


def test_verified_human(files: dict[str, str]) -> None:
    result = _run(*_single(files, *KEY))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"{files['receipt']}: verified"
    assert [line.split()[:2] for line in lines[1:5]] == [
        ["signature", "ok"],
        ["source_hash", "ok"],
        ["replay", "ok"],
        ["content_hash", "ok"],
    ]
    assert (
        lines[5] == "  adapter demo-lossy 1.0.0, declared_lossy: newline_normalize, whitespace_trim"
    )
    assert lines[-1] == "1 receipt(s): 1 verified"


def test_verified_json(files: dict[str, str]) -> None:
    code, document = _json(*_single(files, *KEY))
    assert code == 0
    (result,) = document["results"]
    assert result["verdict"] == "verified"
    assert result["transformations"] == list(LOSSY)
    assert document["summary"] == {
        "total": 1,
        "verified": 1,
        "failed": 0,
        "unanchored": 0,
        "unreadable": 0,
        "by_code": {},
    }


def test_trusted_keys_folder(files: dict[str, str], tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "adapter.pub").write_text(ADAPTER.public_key.b64 + "\n")
    assert _run(*_single(files, "--trusted-keys", str(keys))).exit_code == 0
    (keys / "adapter.pub").write_text(OTHER.public_key.b64 + "\n")
    code, document = _json(*_single(files, "--trusted-keys", str(keys)))
    assert (code, document["results"][0]["code"]) == (1, "receipt.key_untrusted")


def test_no_key_is_not_verified(files: dict[str, str]) -> None:
    code, document = _json(*_single(files))
    assert code == 1
    assert document["results"][0]["verdict"] == "unanchored"
    assert document["results"][0]["code"] == "receipt.unanchored"


def test_bad_key_is_usage(files: dict[str, str]) -> None:
    result = _run(*_single(files, "--public-key-base64", "not-a-key"))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: key.")


def _tampered(tmp_path: Path, files: dict[str, str], case: str) -> tuple[str, ...]:
    """The command line of one tamper case."""
    document = receipt()
    args = dict(files)
    if case == "edited":
        document = copy.deepcopy(document)
        document["transformations"] = ["newline_normalize"]
    elif case == "untrusted":
        document = receipt(key=OTHER)
    elif case == "source":
        Path(files["source"]).write_bytes(SOURCE + b"!")
    elif case == "content":
        Path(files["content"]).write_bytes(CONTENT + b"!")
    elif case == "replay":
        document = forged(SOURCE, CONTENT + b"!", LOSSY)
        Path(files["content"]).write_bytes(CONTENT + b"!")
    elif case == "unimplemented":
        document = forged(SOURCE, CONTENT, (*LOSSY, "acme.secret_sauce"))
    write_json(Path(files["receipt"]), document)
    return _single(args, *KEY)


@pytest.mark.parametrize(
    ("case", "verdict", "code"),
    [
        ("edited", "failed", "receipt.signature_bad"),
        ("untrusted", "failed", "receipt.key_untrusted"),
        ("source", "failed", "receipt.source_mismatch"),
        ("content", "failed", "receipt.content_mismatch"),
        ("replay", "failed", "receipt.replay_mismatch"),
        ("unimplemented", "unanchored", "transform.unimplemented"),
    ],
)
def test_tamper_cases(
    tmp_path: Path, files: dict[str, str], case: str, verdict: str, code: str
) -> None:
    args = _tampered(tmp_path, files, case)
    result = _run(*args)
    assert result.exit_code == 1, result.output
    assert f"{files['receipt']}: {verdict}" in result.stdout
    assert f" {code}: " in result.stdout
    exit_code, document = _json(*args)
    assert exit_code == 1
    assert document["results"][0]["verdict"] == verdict
    assert document["results"][0]["code"] == code


def test_chunks(tmp_path: Path, files: dict[str, str]) -> None:
    chunks = [CONTENT[:7], CONTENT[7:19], CONTENT[19:]]
    paths = []
    for index, chunk in enumerate(chunks):
        path = tmp_path / f"chunk{index}"
        path.write_bytes(chunk)
        paths.append(str(path))
    write_json(Path(files["receipt"]), receipt(chunks=chunks))
    in_order = [a for p in paths for a in ("--chunk", p)]
    result = _run(files["receipt"], "--source", files["source"], *in_order, *KEY)
    assert result.exit_code == 0, result.output
    assert "chunks" in result.stdout
    swapped = ["--chunk", paths[1], "--chunk", paths[0], "--chunk", paths[2]]
    code, document = _json(files["receipt"], "--source", files["source"], *swapped, *KEY)
    assert code == 1
    assert document["results"][0]["code"] == "receipt.chunk_mismatch"
    # content and chunks together must agree
    code, _ = _json(*_single(files, *in_order, *KEY))
    assert code == 0


def test_unreadable_receipt(files: dict[str, str]) -> None:
    Path(files["receipt"]).write_text('{"receipt_version": "1.0.0"}')
    result = _run(*_single(files, *KEY))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: receipt.malformed: {files['receipt']}: ")
    code, document = _json(*_single(files, *KEY))
    assert code == 2
    assert document["results"][0]["verdict"] == "unreadable"
    assert document["summary"]["by_code"] == {"receipt.malformed": 1}


def test_missing_source_file(files: dict[str, str]) -> None:
    result = _run(files["receipt"], "--source", "/nonexistent", "--content", files["content"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: io.unreadable: /nonexistent")


@pytest.mark.parametrize(
    "extra",
    [
        (),  # no --source
        ("--source", "x"),  # no content
        ("--source", "x", "--content", "y", "--source-root", "z"),
    ],
)
def test_single_usage(files: dict[str, str], extra: tuple[str, ...]) -> None:
    result = _run(files["receipt"], *extra)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: ")


# -- folders --------------------------------------------------------------------------------


def _corpus(root: Path, count: int) -> tuple[Path, Path]:
    """``count`` receipts under root/receipts (contents beside them), sources under root/src."""
    receipts, sources = root / "receipts", root / "src"
    for index in range(count):
        source = f"  doc {index}\r\n" * (index % 7 + 1) + "\r\n"
        data = source.encode()
        uri = f"d{index % 5}/doc{index}.txt"
        (sources / uri).parent.mkdir(parents=True, exist_ok=True)
        (sources / uri).write_bytes(data)
        out = receipts / f"d{index % 5}" / f"doc{index}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(lossy(data))
        write_json(out.with_name(out.name + ".receipt.json"), receipt(data, lossy(data), uri=uri))
    return receipts, sources


def test_bulk_jobs_2(tmp_path: Path) -> None:
    receipts, sources = _corpus(tmp_path, 50)
    args = (str(receipts), "--source-root", str(sources), "--jobs", "2", *KEY)
    result = _run(*args)
    assert result.exit_code == 0, result.output
    assert result.stdout == "50 receipt(s): 50 verified\n"
    # now break three of them, each a different way
    (receipts / "d0" / "doc5.txt").write_bytes(b"silently altered")
    (sources / "d1" / "doc6.txt").write_bytes(b"another source")
    (receipts / "d2" / "doc7.txt.receipt.json").write_text("{}")
    code, document = _json(*args)
    assert code == 2  # an unreadable receipt is bad input: the largest exit code wins
    assert document["summary"] == {
        "total": 50,
        "verified": 47,
        "failed": 2,
        "unanchored": 0,
        "unreadable": 1,
        "by_code": {
            "receipt.content_mismatch": 1,
            "receipt.malformed": 1,
            "receipt.source_mismatch": 1,
        },
    }
    bad = {r["source"]: r for r in document["results"] if not r["verified"]}
    content = bad[str(receipts / "d0" / "doc5.txt.receipt.json")]
    assert content["files"] == {
        "source": str(sources / "d0" / "doc5.txt"),
        "content": str(receipts / "d0" / "doc5.txt"),
    }
    # the same report, in the same order, with one process
    serial = _json(str(receipts), "--source-root", str(sources), "--jobs", "1", *KEY)[1]
    assert serial == document
    human = _run(*args)
    assert human.stdout.splitlines()[-2:] == [
        "50 receipt(s): 47 verified, 2 failed, 1 unreadable",
        "by code: receipt.content_mismatch 1, receipt.malformed 1, receipt.source_mismatch 1",
    ]


def test_bulk_exit_1_without_unreadable(tmp_path: Path) -> None:
    receipts, sources = _corpus(tmp_path, 4)
    (receipts / "d3" / "doc3.txt").write_bytes(b"x")
    result = _run(str(receipts), "--source-root", str(sources), "--jobs", "2", *KEY)
    assert result.exit_code == 1
    assert f"{receipts / 'd3' / 'doc3.txt.receipt.json'}: failed" in result.stdout


def test_bulk_content_root(tmp_path: Path) -> None:
    receipts, sources = _corpus(tmp_path, 3)
    contents = tmp_path / "contents"
    for path in receipts.rglob("*.txt"):
        target = contents / path.relative_to(receipts)
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)
    args = (str(receipts), "--source-root", str(sources), *KEY)
    assert _run(*args).exit_code == 2  # contents not beside the receipts any more
    assert _run(*args, "--content-root", str(contents)).exit_code == 0


@pytest.mark.parametrize("uri", [None, "../escape.txt", "/abs.txt", "a/./b.txt", "a\\b.txt"])
def test_bulk_layout_invalid(tmp_path: Path, uri: str | None) -> None:
    receipts, sources = tmp_path / "receipts", tmp_path / "src"
    sources.mkdir()
    (receipts).mkdir()
    (receipts / "out.txt").write_bytes(CONTENT)
    write_json(receipts / "out.txt.receipt.json", receipt(uri=uri))
    code, document = _json(str(receipts), "--source-root", str(sources), *KEY)
    assert code == 2
    assert document["results"][0]["code"] == "receipt.layout_invalid"


def test_bulk_symlink_out_of_root(tmp_path: Path) -> None:
    receipts, sources = tmp_path / "receipts", tmp_path / "src"
    sources.mkdir()
    receipts.mkdir()
    (tmp_path / "secret.txt").write_bytes(SOURCE)
    (sources / "link").symlink_to(tmp_path)
    (receipts / "out.txt").write_bytes(CONTENT)
    write_json(receipts / "out.txt.receipt.json", receipt(uri="link/secret.txt"))
    code, document = _json(str(receipts), "--source-root", str(sources), *KEY)
    assert code == 2
    assert document["results"][0]["code"] == "receipt.layout_invalid"


def test_bulk_usage(tmp_path: Path) -> None:
    receipts, sources = _corpus(tmp_path, 1)
    assert _run(str(receipts), *KEY).exit_code == 2  # no --source-root
    result = _run(str(receipts), "--source-root", str(sources), "--source", "x")
    assert result.exit_code == 2
    assert "--source" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _run(str(empty), "--source-root", str(sources))
    assert result.exit_code == 2
    assert "no *.receipt.json" in result.stderr


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from affidavit.cli._batch import Progress

    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    progress = Progress(200, unit=" receipts")  # as verify receipt DIR makes it
    for _ in range(200):
        progress.tick()
    text = tty.getvalue()
    assert text.endswith("\r[##############################] 200/200 receipts\n")
    assert "\r[###############...............] 100/200 receipts" in text
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    quiet = Progress(200, unit=" receipts")
    for _ in range(200):
        quiet.tick()
    assert plain.getvalue() == ""
