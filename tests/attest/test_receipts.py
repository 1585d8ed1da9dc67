"""make_receipt: what it signs, and what it refuses to sign (no override)."""

from __future__ import annotations

from affidavit.attest.receipts import make_receipt, sign_receipt_body
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.receipts.format import parse_receipt
from affidavit.verify.receipts.verify import verify_receipt

from tests.conftest import raises_code
from tests.verify.receipts.receipt_fixtures import (
    ADAPTER,
    CONTENT,
    LOSSY,
    SOURCE,
    TS,
    forged,
    receipt,
)


def _make(content: bytes | None = CONTENT, **kw: object) -> dict[str, object]:
    args: dict[str, object] = {
        "adapter": "demo-lossy",
        "adapter_version": "1.0.0",
        "transformations": LOSSY,
        "key": ADAPTER,
        "issued_at": TS,
    }
    args.update(kw)
    return make_receipt(SOURCE, content, **args)  # type: ignore[arg-type]


def test_signs_what_replays() -> None:
    document = _make()
    parsed = parse_receipt(document)
    verify_ed25519(ADAPTER.public_key, parsed.signing_message, parsed.signature.raw)
    assert verify_receipt(document, SOURCE, CONTENT, None, [ADAPTER.public_key]).verified


def test_deterministic() -> None:
    assert _make() == _make()  # Ed25519 is deterministic, the body canonical


def test_issued_at_optional() -> None:
    document = _make(issued_at=None)
    assert "issued_at" not in document
    assert parse_receipt(document).issued_at is None


def test_refuses_replay_mismatch() -> None:
    with raises_code("receipt.replay_mismatch"):
        _make(CONTENT + b"\n")


def test_refuses_undeclared_transformation() -> None:
    with raises_code("receipt.replay_mismatch"):
        _make(transformations=("newline_normalize",))


def test_refuses_byte_preserving_that_changes_bytes() -> None:
    with raises_code("receipt.replay_mismatch"):
        _make(transformations=())
    assert parse_receipt(_make(SOURCE, transformations=())).capability == "byte_preserving"


def test_refuses_unimplemented_transformation() -> None:
    with raises_code("transform.unimplemented") as caught:
        _make(transformations=("newline_normalize", "acme.secret_sauce"))
    assert caught.value.message.startswith("refusing to sign: ")


def test_refuses_bad_name() -> None:
    with raises_code("transform.name_invalid"):
        _make(transformations=("Bad Name",))


def test_chunks() -> None:
    chunks = [CONTENT[:5], CONTENT[5:]]
    with_content = _make(chunks=chunks)
    chunks_only = _make(None, chunks=chunks)
    assert with_content == chunks_only
    assert parse_receipt(chunks_only).chunks is not None
    with raises_code("receipt.chunk_mismatch"):
        _make(chunks=[CONTENT[5:], CONTENT[:5]])


def test_needs_content_or_chunks() -> None:
    with raises_code("usage.invalid"):
        _make(None)


def test_sign_body_without_replay_is_for_tests() -> None:
    """sign_receipt_body signs a lie; the verifier catches it (the signer's refusal is policy)."""
    lie = forged(SOURCE, b"not the content", LOSSY)
    result = verify_receipt(lie, SOURCE, b"not the content", None, [ADAPTER.public_key])
    assert result.code == "receipt.replay_mismatch"
    resigned = sign_receipt_body(receipt(), ADAPTER)  # an existing signature is replaced
    assert resigned == receipt()
