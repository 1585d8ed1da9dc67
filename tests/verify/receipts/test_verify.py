"""verify_receipt: the steps, the verdict, and one exact code per tamper case."""

from __future__ import annotations

import base64
import copy
import pickle
from typing import Any

import pytest
from affidavit.verify.receipts.verify import verify_receipt
from affidavit.verify.results import Report, Result

from tests.verify.receipts.receipt_fixtures import (
    ADAPTER,
    CONTENT,
    LOSSY,
    OTHER,
    SOURCE,
    forged,
    lossy,
    receipt,
)

TRUSTED = [ADAPTER.public_key]


def _verify(
    document: Any, source: bytes = SOURCE, content: bytes | None = CONTENT, **kw: Any
) -> Result:
    keys = kw.pop("keys", TRUSTED)
    return verify_receipt(document, source, content, kw.pop("chunks", None), keys, **kw)


def _statuses(result: Result) -> dict[str, tuple[str, str | None]]:
    return {step.name: (step.status, step.code) for step in result.steps}


def test_verified() -> None:
    result = _verify(receipt())
    assert result.verdict == "verified"
    assert result.exit_code == 0
    assert [s.name for s in result.steps] == ["signature", "source_hash", "replay", "content_hash"]
    assert all(s.status == "ok" for s in result.steps)
    assert result.code is None
    assert result.subject["transformations"] == list(LOSSY)
    assert result.subject["adapter"] == {"name": "demo-lossy", "version": "1.0.0"}


def test_byte_preserving_verified() -> None:
    assert _verify(receipt(SOURCE, SOURCE, transformations=()), content=SOURCE).verified


def test_edited_field_is_signature_bad() -> None:
    document = copy.deepcopy(receipt())
    document["adapter"]["version"] = "1.0.1"
    result = _verify(document)
    assert result.verdict == "failed"
    assert result.code == "receipt.signature_bad"
    assert _statuses(result)["signature"] == ("failed", "receipt.signature_bad")
    assert result.exit_code == 1


def test_edited_transformations_is_signature_bad() -> None:
    document = copy.deepcopy(receipt())
    document["transformations"] = ["newline_normalize"]
    result = _verify(document)
    assert result.code == "receipt.signature_bad"
    # the replay of the edited claim does not give the content either
    assert _statuses(result)["replay"] == ("failed", "receipt.replay_mismatch")


def test_bad_signature() -> None:
    document = copy.deepcopy(receipt())
    raw = bytearray(base64.b64decode(document["signature"]["sig"]))
    raw[0] ^= 1
    document["signature"]["sig"] = base64.b64encode(bytes(raw)).decode()
    result = _verify(document)
    assert result.code == "receipt.signature_bad"


def test_untrusted_key() -> None:
    result = _verify(receipt(key=OTHER))
    assert result.verdict == "failed"
    assert result.code == "receipt.key_untrusted"
    # trusted, it verifies: only the key was wrong
    assert _verify(receipt(key=OTHER), keys=[ADAPTER.public_key, OTHER.public_key]).verified


def test_no_trusted_key_is_unanchored() -> None:
    result = _verify(receipt(), keys=[])
    assert result.verdict == "unanchored"
    assert result.code == "receipt.unanchored"
    assert _statuses(result)["signature"] == ("not_checked", "receipt.unanchored")
    assert result.exit_code == 1


def test_changed_source() -> None:
    result = _verify(receipt(), source=SOURCE + b" ")
    assert result.code == "receipt.source_mismatch"
    assert _statuses(result)["replay"] == ("not_checked", None)
    step = result.step("source_hash")
    assert step is not None
    assert step.expected["size"] == len(SOURCE)
    assert step.actual["size"] == len(SOURCE) + 1


def test_changed_content() -> None:
    altered = CONTENT.replace(b"second", b"SECOND")
    result = _verify(receipt(), content=altered)
    assert result.code == "receipt.content_mismatch"
    statuses = _statuses(result)
    assert statuses["replay"] == ("ok", None)  # the receipt's claim still replays
    assert statuses["content_hash"] == ("failed", "receipt.content_mismatch")


def test_replay_mismatch() -> None:
    """A signed receipt whose content the declared chain does not produce."""
    half = SOURCE.replace(b"\r\n", b"\n")  # newline_normalize only, whitespace_trim not applied
    result = _verify(forged(SOURCE, half, LOSSY), content=half)
    assert result.verdict == "failed"
    assert result.code == "receipt.replay_mismatch"
    step = result.step("replay")
    assert step is not None
    assert step.details["first_difference"] == 0  # the leading spaces the trim removes


def test_undeclared_transformation_is_replay_mismatch() -> None:
    """Content from newline_normalize + whitespace_trim, but only newline_normalize declared."""
    result = _verify(forged(SOURCE, CONTENT, ("newline_normalize",)))
    assert result.code == "receipt.replay_mismatch"
    assert _statuses(result)["content_hash"] == ("ok", None)


def test_byte_preserving_that_is_not() -> None:
    result = _verify(forged(SOURCE, CONTENT, ()))
    assert result.code == "receipt.replay_mismatch"
    assert "identity" in result.message


def test_unimplemented_transformation_is_not_verified() -> None:
    document = forged(SOURCE, CONTENT, ("newline_normalize", "acme.secret_sauce"))
    result = _verify(document)
    assert result.verdict == "unanchored"
    assert result.code == "transform.unimplemented"
    assert _statuses(result)["replay"] == ("not_checked", "transform.unimplemented")
    assert result.exit_code == 1
    assert not result.verified


CHUNKS = [CONTENT[:7], CONTENT[7:19], CONTENT[19:]]


def test_chunks_verified() -> None:
    document = receipt(chunks=CHUNKS)
    for content, chunks in ((CONTENT, CHUNKS), (None, CHUNKS), (CONTENT, None)):
        result = _verify(document, content=content, chunks=chunks)
        assert result.verified, result
        assert [s.name for s in result.steps][-2:] == ["chunks", "content_hash"]


def test_chunks_reordered() -> None:
    swapped = [CHUNKS[1], CHUNKS[0], CHUNKS[2]]
    result = _verify(receipt(chunks=CHUNKS), content=None, chunks=swapped)
    assert result.code == "receipt.chunk_mismatch"
    step = result.step("chunks")
    assert step is not None
    assert step.details["index"] == 0
    assert "out of order" in step.message


def test_chunk_altered() -> None:
    altered = [CHUNKS[0], CHUNKS[1].upper(), CHUNKS[2]]
    result = _verify(receipt(chunks=CHUNKS), content=None, chunks=altered)
    assert result.code == "receipt.chunk_mismatch"
    assert _statuses(result)["content_hash"] == ("failed", "receipt.content_mismatch")


def test_chunk_count() -> None:
    result = _verify(
        receipt(chunks=CHUNKS), content=None, chunks=[CHUNKS[0] + CHUNKS[1], CHUNKS[2]]
    )
    assert result.code == "receipt.chunk_mismatch"


def test_chunks_do_not_concatenate_to_content() -> None:
    document = receipt(chunks=CHUNKS)
    result = _verify(document, content=CONTENT, chunks=[CHUNKS[0], CHUNKS[1], CHUNKS[2]])
    assert result.verified
    result = _verify(document, content=CONTENT + b"!", chunks=CHUNKS)
    assert result.code == "receipt.chunk_mismatch"


def test_chunked_receipt_content_changed() -> None:
    result = _verify(receipt(chunks=CHUNKS), content=CONTENT.upper())
    assert result.code == "receipt.content_mismatch"
    assert _statuses(result)["chunks"] == ("not_checked", None)


def test_chunk_boundaries_are_checked_from_content() -> None:
    """Same content, other boundaries: the content cut at the declared sizes must match."""
    other = [CONTENT[:8], CONTENT[8:19], CONTENT[19:]]
    result = _verify(receipt(chunks=CHUNKS), content=None, chunks=other)
    assert result.code == "receipt.chunk_mismatch"
    assert _statuses(result)["content_hash"] == ("ok", None)


def test_chunks_given_for_an_unchunked_receipt() -> None:
    result = _verify(receipt(), content=None, chunks=[CONTENT])
    assert result.code == "receipt.chunk_mismatch"


def test_unreadable() -> None:
    result = _verify({"receipt_version": "1.0.0"})
    assert result.verdict == "unreadable"
    assert result.code == "receipt.malformed"
    assert result.exit_code == 2


def test_no_content_at_all_is_usage() -> None:
    from tests.conftest import raises_code

    with raises_code("usage.invalid"):
        verify_receipt(receipt(), SOURCE, None, None, TRUSTED)


def test_results_pickle_and_report() -> None:
    good = _verify(receipt(), label="a.receipt.json")
    bad = _verify(receipt(), content=b"x", label="b.receipt.json")
    assert pickle.loads(pickle.dumps(bad)) == bad
    report = Report("receipt", (good, bad))
    summary = report.summary()
    assert summary["total"] == 2
    assert summary["verified"] == 1
    assert summary["failed"] == 1
    assert summary["by_code"] == {"receipt.content_mismatch": 1}
    assert (report.exit_code, report.verdict) == (1, "failed")
    document = report.to_json()
    assert document["kind"] == "receipt"
    assert document["results"][0]["verified"] is True
    assert "code" not in document["results"][0]


@pytest.mark.parametrize("flip", range(0, len(CONTENT), 5))
def test_any_content_byte_flip_is_caught(flip: int) -> None:
    altered = bytearray(CONTENT)
    altered[flip] ^= 0x20
    assert _verify(receipt(), content=bytes(altered)).code == "receipt.content_mismatch"


def test_plugin_transformation_replays_when_installed() -> None:
    """The same receipt is unanchored without the plugin and verified with it."""
    from affidavit.verify.transforms.chain import TransformSet

    shout = TransformSet.of({"acme.shout": str.upper})
    document = forged(SOURCE, CONTENT.upper(), (*LOSSY, "acme.shout"))
    assert _verify(document, content=CONTENT.upper()).code == "transform.unimplemented"
    assert _verify(document, content=CONTENT.upper(), transforms=shout).verified


def test_adapter_specific_reserved_name_is_unimplemented() -> None:
    """strip_tool_chrome is reserved but adapter-specific: never replayed as the identity."""
    document = forged(SOURCE, CONTENT, (*LOSSY, "strip_tool_chrome"))
    result = _verify(document)
    assert result.verdict == "unanchored"
    assert result.code == "transform.unimplemented"


def test_source_not_utf8() -> None:
    source = b"\xff" + SOURCE
    document = forged(source, CONTENT, LOSSY)
    result = _verify(document, source=source)
    assert result.verdict == "failed"
    assert result.code == "transform.not_utf8"
    replaced = lossy("\ufffd".encode() + SOURCE)  # U+FFFD is not whitespace: the spaces stay
    document = forged(source, replaced, ("utf8_replace_invalid", *LOSSY))
    assert _verify(document, source=source, content=replaced).verified
