"""Differential test: our seven reference transformations against MemPalace 3.11.0's reference
implementations (``mempalace/sources/transforms.py``, the module RFC 002 §9 asks for and §7.3
replays), singly, every ordered pair, every ordered triple on a fixed corpus, and drawn chains of
two and three on generated input rich in the characters where readings differ: CR, LF, tab, VT,
FF, U+001C, U+0085, U+00A0, U+2028, U+2029, U+3000, U+200B (not whitespace), non-BMP, letters, and
invalid UTF-8 (a lone C3, FF, a lone continuation byte, encoded surrogates ED A0 80, truncated and
overlong sequences, a code point above U+10FFFF)."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

import pytest
from affidavit.verify.transforms import reference as ref
from affidavit.verify.transforms.chain import apply_chain
from affidavit.verify.transforms.reference import RESERVED_ADAPTER_SPECIFIC, RESERVED_REFERENCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code
from tests.verify.transforms import oracle as oracle_mod

_ALPHABET = [
    *("\r", "\n", "\t", " ", "\x0b", "\x0c", "\x1c", "\x85"),
    *("\u00a0", "\u2028", "\u2029", "\u3000", "\u200b", "\U0001f600"),
    *("a", "b", "Z", "\u00e9", "\u6f22"),
]
# Line-structure runs, so blank-line runs of every length and CRLF pairs come up often.
_RUNS = ["\r\n", "\n\n", "\n\n\n", "\n\n\n\n", " \n", "\n \t\n", "\n\u3000\n", "\t\r\n", "ab"]
_INVALID = [
    *(b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xed\xbf\xbf"),
    *(b"\xe2\x82", b"\xf0\x9f\x98", b"\xc0\xaf", b"\xf4\x90\x80\x80"),
]

_TEXT = st.lists(st.sampled_from(_ALPHABET + _RUNS), max_size=40).map("".join)
# Bytes: encoded text, sometimes with raw invalid sequences spliced in.
_BYTES = st.lists(
    st.one_of(_TEXT.map(lambda t: t.encode("utf-8")), st.sampled_from(_INVALID)), max_size=6
).map(b"".join)

PAIRS = list(itertools.product(RESERVED_REFERENCE, repeat=2))
TRIPLES = list(itertools.product(RESERVED_REFERENCE, repeat=3))

# A fixed corpus for the exhaustive chains: every edge the unit tests name, as bytes.
CORPUS: tuple[bytes, ...] = tuple(
    s.encode("utf-8") if isinstance(s, str) else s
    for s in (
        "",
        "a",
        "\n",
        " \t ",
        "a\r\nb\rc\n",
        "\r\n\r\n\r\n\r\n",
        "  lead\ttrail \t\n\n\n\n\nnext  \n",
        "a\n\n\nb\n \n \t\n\nc",
        "a\n\u3000\n\u00a0\nb\u2028c\x85d\u2029",
        "p1 l1\np1 l2\n\np2\n\n\n\n\np3\n",
        "\x0b\x0cx\x1c\n\u200b\n",
        "\U0001f600 \r\n\t\U0001f600\r",
        "\n\n\n\n\nb\n\n\n\n",
        b"a\xffb\r\n\xc3\n\n\n\n\xed\xa0\x80 \xe2\x82",
        b"\xf0\x9f\x98\n \xc0\xaf\t\x80\n\n",
    )
)


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


@pytest.fixture(scope="module")
def oracle() -> ModuleType:
    return oracle_mod.oracle_or_skip()


def _assert_same(oracle: ModuleType, names: list[str] | tuple[str, ...], source: bytes) -> None:
    try:
        expected = oracle_mod.oracle_chain(oracle, names, source)
    except UnicodeDecodeError:
        with raises_code("transform.not_utf8"):
            apply_chain(names, source)
        return
    assert apply_chain(names, source) == expected, (names, source)


@pytest.mark.parametrize("name", RESERVED_REFERENCE)
@_settings(150)
@given(text=_TEXT)
def test_single_on_text(oracle: ModuleType, name: str, text: str) -> None:
    ours = getattr(ref, name)(text)
    theirs = oracle.RESERVED_TRANSFORMATIONS[name](
        text.encode() if name == "utf8_replace_invalid" else text
    )
    assert ours == theirs


@pytest.mark.parametrize("name", RESERVED_REFERENCE)
@_settings(150)
@given(source=_BYTES)
def test_single_chain_on_bytes(oracle: ModuleType, name: str, source: bytes) -> None:
    _assert_same(oracle, [name], source)


@pytest.mark.parametrize(("first", "second"), PAIRS)
@_settings(50)
@given(source=_BYTES)
def test_every_ordered_pair(oracle: ModuleType, first: str, second: str, source: bytes) -> None:
    _assert_same(oracle, [first, second], source)


@_settings(1000)
@given(
    names=st.lists(st.sampled_from(RESERVED_REFERENCE), min_size=2, max_size=3),
    source=_BYTES,
)
def test_drawn_chains_of_two_and_three(oracle: ModuleType, names: list[str], source: bytes) -> None:
    _assert_same(oracle, names, source)


@_settings(1000)
@given(
    names=st.lists(st.sampled_from(RESERVED_REFERENCE), min_size=3, max_size=3),
    source=_BYTES,
)
def test_drawn_chains_of_three(oracle: ModuleType, names: list[str], source: bytes) -> None:
    _assert_same(oracle, names, source)


def test_every_chain_up_to_three_on_the_corpus(oracle: ModuleType) -> None:
    # Exhaustive and deterministic: 7 + 49 + 343 chains, each on every corpus entry.
    chains = [(n,) for n in RESERVED_REFERENCE] + PAIRS + TRIPLES
    for names in chains:
        for source in CORPUS:
            _assert_same(oracle, names, source)


def test_oracle_reserved_names_match_the_seed(oracle: ModuleType) -> None:
    # Our reading of RFC 002 §1.4's table (seven with a meaning, six adapter-specific) and the
    # oracle's list are the same thirteen names; the oracle's six are identity shims, which we
    # refuse to replay (transform.unimplemented) rather than pretend.
    assert set(oracle.RESERVED_TRANSFORMATIONS) == set(RESERVED_REFERENCE) | set(
        RESERVED_ADAPTER_SPECIFIC
    )


def test_absent_oracle_skips_or_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    absent = tmp_path / "mempalace-3.11.0-py3-none-any.whl"
    assert oracle_mod.load_oracle(absent) is None
    monkeypatch.delenv("AFFIDAVIT_REQUIRE_ORACLES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="make install-dev"):
        oracle_mod.oracle_or_skip(absent)
    monkeypatch.setenv("AFFIDAVIT_REQUIRE_ORACLES", "1")
    with pytest.raises(pytest.fail.Exception, match="make install-dev"):
        oracle_mod.oracle_or_skip(absent)


def test_a_wheel_other_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "mempalace-3.11.0-py3-none-any.whl"
    other.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: not the pinned wheel
    with pytest.raises(AssertionError, match="not the pinned wheel"):
        oracle_mod.load_oracle(other)
