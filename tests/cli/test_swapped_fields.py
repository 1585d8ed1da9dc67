"""Every malformed value is a domain error with a code, never a traceback (issue 35).

Hypothesis swaps one field (any depth, keys included) of a valid bundle, attestation,
transformation receipt, manifest and fact for a value of every JSON type, non-ASCII text, or (the
files are read as bytes) a string holding a byte that is not UTF-8, and runs the command that
verifies it. The command must end with exit 0 (the field decides nothing), 1 (does not verify)
or 2 (one line ``error: <code>: ...`` on stderr), and never raise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.json.canonical import py_compact, sha256_hex
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import budget
from tests.verify.bundles.test_bundle_support import LOG_KEY
from tests.verify.receipts.receipt_fixtures import ADAPTER, CONTENT, SOURCE, receipt

ROOT: Final = Path(__file__).resolve().parents[2]
VECTORS: Final = ROOT / "vectors"
NOT_UTF8: Final = object()  # a string value written with a raw 0xFF byte inside
_MARK: Final = "\u0001not-utf8\u0001"


def _attestation() -> dict[str, Any]:
    body = {"deal_id": "deal-1", "outcome": "accepted", "amount": 12.5}
    return {
        "attestation": body,
        "payload_hash": sha256_hex(py_compact(body)),
        "signature": LOG_KEY.sign_b64(py_compact(body)),
        "algorithm": "Ed25519",
        "public_key_base64": LOG_KEY.public_key.b64,
        "verify_url": "https://example.invalid/verify",
    }


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# kind -> (valid document, argv after the file, files written beside it)
Docs = dict[str, tuple[Any, list[str]]]


def _documents(folder: Path) -> Docs:
    (folder / "src.txt").write_bytes(SOURCE)
    (folder / "out.txt").write_bytes(CONTENT)
    publication = _load(VECTORS / "publication" / "manifest.json")
    fact_line = (VECTORS / "lineage" / "facts.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return {
        "bundle": (
            _load(VECTORS / "bundles" / "stamped-accepted-3.0.0.json"),
            ["verify", "bundle", "{file}", "--public-key-base64", _bundle_key()],
        ),
        "attestation": (
            _attestation(),
            ["verify", "attestation", "{file}", "--public-key-base64", LOG_KEY.public_key.b64],
        ),
        "receipt": (
            receipt(),
            [
                "verify",
                "receipt",
                "{file}",
                "--source",
                str(folder / "src.txt"),
                "--content",
                str(folder / "out.txt"),
                "--public-key-base64",
                ADAPTER.public_key.b64,
            ],
        ),
        "manifest": (
            _load(VECTORS / "publication" / "cases" / "valid.json"),
            [
                "adapter",
                "manifest",
                "verify",
                "{file}",
                "--public-key-base64",
                publication["public_key_base64"],
            ],
        ),
        "fact": (json.loads(fact_line), ["facts", "hash", "{file}"]),
    }


def _bundle_key() -> str:
    manifest = _load(VECTORS / "bundles" / "manifest.json")
    return str(manifest["vectors"][0]["trusted_public_key_base64"])


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "é", "ÿ" * 64, "\u2028", "0" * 64, "A" * 64, "2026-01-01T00:00:00Z"])
    | st.text(max_size=8)
    | st.just(NOT_UTF8)
)
VALUES: Final = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=6,
)


def _swap(document: Any, path: tuple[Any, ...], value: Any, *, key: bool) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if key and isinstance(parent, dict):  # rename the key instead of changing its value
        parent[value if isinstance(value, str) else str(value)] = parent.pop(last)
    else:
        parent[last] = value
    return copy


def _bytes(document: Any) -> bytes:
    def encode(value: Any) -> Any:
        if value is NOT_UTF8:
            return _MARK
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        if isinstance(value, list):
            return [encode(v) for v in value]
        return value

    text = json.dumps(encode(document), ensure_ascii=False).encode("utf-8")
    return text.replace(json.dumps(_MARK).encode(), b'"\xff"')


def _check(argv: list[str], data: bytes, folder: Path) -> None:
    path = folder / "doc.json"
    path.write_bytes(data)
    args = [a.replace("{file}", str(path)) for a in argv]
    result = CliRunner().invoke(affidavit, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.exception,
    )
    assert result.exit_code in (0, 1, 2), (args, result.output)
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output


KINDS: Final = ("attestation", "bundle", "fact", "manifest", "receipt")


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> tuple[Docs, Path]:
    folder = tmp_path_factory.mktemp("swapped")
    return _documents(folder), folder


@pytest.mark.parametrize("kind", KINDS)
def test_the_valid_document_passes(kind: str, documents: tuple[Docs, Path]) -> None:
    docs, folder = documents
    document, argv = docs[kind]
    path = folder / "doc.json"
    path.write_bytes(_bytes(document))
    result = CliRunner().invoke(affidavit, [a.replace("{file}", str(path)) for a in argv])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
@settings(
    max_examples=budget(25, 300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_swapped_field_is_a_domain_error(
    kind: str, documents: tuple[Docs, Path], data: st.DataObject
) -> None:
    docs, folder = documents
    document, argv = docs[kind]
    path = data.draw(st.sampled_from(_paths(document)), label="path")
    value = data.draw(VALUES, label="value")
    key = bool(path) and data.draw(st.booleans(), label="rename key")
    _check(argv, _bytes(_swap(document, path, value, key=key)), folder)


WHOLE: Final[dict[str, Callable[[], bytes]]] = {
    "not utf-8": lambda: b"\xff\xfe{}",
    "empty": lambda: b"",
    "a string": lambda: b'"x"',
    "deep": lambda: b"[" * 200 + b"]" * 200,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("whole", sorted(WHOLE))
def test_a_whole_document_of_another_shape(
    kind: str, whole: str, documents: tuple[Docs, Path]
) -> None:
    docs, folder = documents
    _check(docs[kind][1], WHOLE[whole](), folder)
