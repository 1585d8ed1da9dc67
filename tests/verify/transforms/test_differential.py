"""Differential test: our seven reference transformations against MemPalace 3.11.0's reference
implementations (``mempalace/sources/transforms.py``, the seed's own §9 module), singly, every
ordered pair, and drawn chains of three, on text and bytes rich in the characters where readings
differ (CR, LF, tab, U+00A0, U+2028, U+3000, non-BMP, invalid UTF-8)."""

from __future__ import annotations

import itertools
from types import ModuleType

import pytest
from affidavit.verify.transforms import RESERVED_REFERENCE, apply_chain
from affidavit.verify.transforms import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code
from tests.verify.transforms.oracle import oracle_chain, oracle_or_skip

_ALPHABET = ["\r", "\n", "\t", " ", "\u00a0", "\u2028", "\u3000", "\U0001f600", "\x85", "a", "b"]
_INVALID = [b"\xff", b"\xed\xa0\x80", b"\xe2\x82", b"\xc0\xaf", b"\xf0\x9f\x98"]

# Text over the alphabet, with a bias toward line-structure runs.
_TEXT = st.lists(
    st.sampled_from([*_ALPHABET, "\r\n", "\n\n\n", " \n", "\n \t\n", "ab"]), max_size=40
).map("".join)
# Bytes: encoded text, sometimes with raw invalid sequences spliced in.
_BYTES = st.lists(
    st.one_of(_TEXT.map(lambda t: t.encode("utf-8")), st.sampled_from(_INVALID)), max_size=6
).map(b"".join)

PAIRS = list(itertools.product(RESERVED_REFERENCE, repeat=2))
_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def oracle() -> ModuleType:
    return oracle_or_skip()


def _assert_same(oracle: ModuleType, names: list[str] | tuple[str, ...], source: bytes) -> None:
    try:
        expected = oracle_chain(oracle, names, source)
    except UnicodeDecodeError:
        with raises_code("transform.not_utf8"):
            apply_chain(names, source)
        return
    assert apply_chain(names, source) == expected, (names, source)


@pytest.mark.parametrize("name", RESERVED_REFERENCE)
@_SETTINGS
@given(text=_TEXT)
def test_single_on_text(oracle: ModuleType, name: str, text: str) -> None:
    ours = getattr(ref, name)(text)
    theirs = oracle.RESERVED_TRANSFORMATIONS[name](
        text.encode() if name == "utf8_replace_invalid" else text
    )
    assert ours == theirs


@pytest.mark.parametrize("name", RESERVED_REFERENCE)
@_SETTINGS
@given(source=_BYTES)
def test_single_chain_on_bytes(oracle: ModuleType, name: str, source: bytes) -> None:
    _assert_same(oracle, [name], source)


@pytest.mark.parametrize(("first", "second"), PAIRS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(source=_BYTES)
def test_every_ordered_pair(oracle: ModuleType, first: str, second: str, source: bytes) -> None:
    _assert_same(oracle, [first, second], source)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(st.sampled_from(RESERVED_REFERENCE), min_size=3, max_size=3),
    source=_BYTES,
)
def test_chains_of_three(oracle: ModuleType, names: list[str], source: bytes) -> None:
    _assert_same(oracle, names, source)


def test_oracle_reserved_names_match_the_seed(oracle: ModuleType) -> None:
    # Our reading of RFC 002 §1.4's table (seven with a meaning, six adapter-specific) and the
    # oracle's list are the same thirteen names; the oracle's six are identity shims, which we
    # refuse to replay (transform.unimplemented) rather than pretend.
    from affidavit.verify.transforms import RESERVED_ADAPTER_SPECIFIC

    assert set(oracle.RESERVED_TRANSFORMATIONS) == set(RESERVED_REFERENCE) | set(
        RESERVED_ADAPTER_SPECIFIC
    )
