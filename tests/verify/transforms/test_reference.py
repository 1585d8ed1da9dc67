"""The seven reference transformations on hand-picked edge cases (RFC 002 §1.4; docs/formats.md
"Declared transformations"), and the chain's byte/text boundary."""

from __future__ import annotations

from typing import Any, cast

import pytest
from affidavit.verify.transforms import reference as ref
from affidavit.verify.transforms.chain import TransformSet, apply_chain, check_name
from affidavit.verify.transforms.reference import RESERVED_ADAPTER_SPECIFIC, RESERVED_REFERENCE

from tests.conftest import raises_code

EMOJI = "\U0001f600"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", ""),
        (b"plain", "plain"),
        (b"a\xffb", "a\ufffdb"),
        (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),  # an encoded surrogate: each byte invalid
        (b"x\xe2\x82", "x\ufffd"),  # truncated three-byte sequence at the end: one U+FFFD
        (b"\xf0\x9f\x98", "\ufffd"),  # truncated four-byte sequence
        (b"\xc0\xaf", "\ufffd\ufffd"),  # overlong
        (EMOJI.encode(), EMOJI),
    ],
)
def test_utf8_replace_invalid(raw: bytes, expected: str) -> None:
    assert ref.utf8_replace_invalid(raw) == expected
    assert apply_chain(["utf8_replace_invalid"], raw) == expected.encode()


def test_utf8_replace_invalid_on_text_is_identity() -> None:
    assert ref.utf8_replace_invalid("a\ufffdb") == "a\ufffdb"
    assert apply_chain(["newline_normalize", "utf8_replace_invalid"], b"a\r\nb") == b"a\nb"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\r\nb", "a\nb"),
        ("a\rb", "a\nb"),
        ("a\r\r\nb", "a\n\nb"),
        ("a\n\rb", "a\n\nb"),
        ("\r\n\r\n", "\n\n"),
        ("a\u2028b\x85c", "a\u2028b\x85c"),  # other line separators untouched
        ("", ""),
        ("no newline", "no newline"),
    ],
)
def test_newline_normalize(text: str, expected: str) -> None:
    assert ref.newline_normalize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  a b \n", "a b"),
        ("\t\r\n a\n\nb \u3000\u00a0\u2028", "a\n\nb"),
        (" \n\t ", ""),
        ("", ""),
        (f" {EMOJI} ", EMOJI),
    ],
)
def test_whitespace_trim(text: str, expected: str) -> None:
    assert ref.whitespace_trim(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  a  \n\tb\t\n", "a\nb\n"),
        ("a \r\nb\r\n", "a\nb\n"),  # CR is whitespace at the end of a line
        ("a\rb", "a\rb"),  # a bare CR inside a line stays (lines are LF-separated)
        (" \n \n", "\n\n"),
        ("", ""),
        ("\u3000x\u00a0", "x"),
    ],
)
def test_line_trim(text: str, expected: str) -> None:
    assert ref.line_trim(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n\nb", "a\nb"),
        ("a\n \t\nb\n", "a\nb"),  # whitespace-only line dropped, final LF dropped
        ("\n\na\n\n\n\nb\n\n", "a\nb"),
        ("", ""),
        ("\n\n", ""),
        ("a", "a"),
        ("a\r\n\r\nb", "a\r\nb"),  # "\r" alone is a blank line
    ],
)
def test_blank_line_drop(text: str, expected: str) -> None:
    assert ref.blank_line_drop(text) == expected


def _blank_run(n: int, filler: str = "") -> str:
    return "a\n" + f"{filler}\n" * n + "b"


@pytest.mark.parametrize(
    ("blank", "kept"),
    [(1, 1), (2, 2), (3, 2), (4, 2), (5, 2)],
)
@pytest.mark.parametrize("filler", ["", " ", "\t \t", "\u3000"])
def test_whitespace_collapse_internal_runs(blank: int, kept: int, filler: str) -> None:
    # Between two lines: a run of 1..5 blank lines (empty or whitespace only) keeps at most two,
    # and whitespace-only lines are emptied.
    assert ref.whitespace_collapse_internal(_blank_run(blank, filler)) == _blank_run(kept)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("   ", ""),  # whitespace-only text is one blank line: emptied
        ("a  \nb", "a  \nb"),  # trailing spaces on a non-blank line stay
        ("\n\n\nb", "\n\n\nb"),  # three leading LFs: kept (oracle)
        ("\n\n\n\n\nb", "\n\n\nb"),  # five leading LFs become three (oracle)
        ("a\n\n\n", "a\n\n\n"),
        ("a\n\n\n\n\n\n", "a\n\n\n"),
        ("a\r\n\r\n\r\n\r\nb", "a\r\n\n\nb"),  # "\r" lines are whitespace only
    ],
)
def test_whitespace_collapse_internal_edges(text: str, expected: str) -> None:
    assert ref.whitespace_collapse_internal(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\nb\nc", "a b c"),
        ("  a  \n\tb\n\nc\nd", "a b\n\nc d"),
        ("a\n\n\nb", "a\n\nb"),  # break matched once; the leftover "\nb" piece is "b"
        ("a\n\n\n\nb", "a\n\n\n\nb"),  # two breaks: an empty paragraph between
        ("a\n \t \nb", "a\n\nb"),
        ("a\n\u3000\nb", "a b"),  # U+3000 is not a paragraph break, only dropped as blank
        ("", ""),
        ("\n\n", "\n\n"),
        ("a\r\nb", "a b"),
        (f"{EMOJI}\n{EMOJI}", f"{EMOJI} {EMOJI}"),
    ],
)
def test_line_join_spaces(text: str, expected: str) -> None:
    assert ref.line_join_spaces(text) == expected


@pytest.mark.parametrize("blank", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("filler", ["", " ", "\t \t", "\u3000", "\r"])
def test_blank_line_drop_runs(blank: int, filler: str) -> None:
    # Every blank line goes, whatever its whitespace; lines in between stay as they are.
    assert ref.blank_line_drop(_blank_run(blank, filler)) == "a\nb"
    assert ref.blank_line_drop(_blank_run(blank, filler) + "\n" * blank) == "a\nb"


@pytest.mark.parametrize(("blank", "breaks"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
@pytest.mark.parametrize("filler", ["", " ", "\t \t"])
def test_line_join_spaces_runs(blank: int, breaks: int, filler: str) -> None:
    # (oracle) n blank lines of spaces/tabs hold n + 1 LFs, and each paragraph break consumes two
    # (leftmost first, not overlapping): one "\n\n" per break, empty paragraphs included.
    assert ref.line_join_spaces(_blank_run(blank, filler)) == "a" + "\n\n" * breaks + "b"


@pytest.mark.parametrize("blank", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("filler", ["\u3000", "\u00a0", "\r"])
def test_line_join_spaces_other_whitespace_is_no_break(blank: int, filler: str) -> None:
    # (oracle) only spaces and tabs make a paragraph break; a line of other whitespace is blank
    # and dropped, so the paragraph continues.
    assert ref.line_join_spaces(_blank_run(blank, filler)) == "a b"


def test_no_trailing_newline_and_non_bmp() -> None:
    text = f"{EMOJI} a \n\n\n\n {EMOJI}\t"
    assert ref.whitespace_trim(text) == f"{EMOJI} a \n\n\n\n {EMOJI}"
    assert ref.line_trim(text) == f"{EMOJI} a\n\n\n\n{EMOJI}"
    assert ref.blank_line_drop(text) == f"{EMOJI} a \n {EMOJI}\t"
    assert ref.whitespace_collapse_internal(text) == f"{EMOJI} a \n\n\n {EMOJI}\t"
    assert ref.line_join_spaces(text) == f"{EMOJI} a\n\n\n\n{EMOJI}"


def test_chain_order_matters() -> None:
    src = b"a\r\n\r\n\r\n\r\nb  \r\n"
    assert (
        apply_chain(["newline_normalize", "whitespace_collapse_internal"], src) == b"a\n\n\nb  \n"
    )
    assert (
        apply_chain(["whitespace_collapse_internal", "newline_normalize"], src) == b"a\n\n\nb  \n"
    )
    assert apply_chain(["line_trim", "blank_line_drop"], b" x \n\n y ") == b"x\ny"
    assert apply_chain(["blank_line_drop", "line_join_spaces"], b"a\n\nb") == b"a b"
    assert apply_chain(["line_join_spaces", "blank_line_drop"], b"a\n\nb") == b"a\nb"


def test_empty_chain_is_byte_identity() -> None:
    for raw in (b"", b"\xff\xfe", b"a\r\n", b"\xed\xa0\x80"):
        assert apply_chain([], raw) == raw


def test_strict_decode_without_utf8_replace_invalid() -> None:
    with raises_code("transform.not_utf8"):
        apply_chain(["newline_normalize"], b"a\xed\xa0\x80")
    with raises_code("transform.not_utf8"):
        apply_chain(["whitespace_trim"], b"x\xe2\x82")
    with raises_code("transform.not_utf8"):  # utf8_replace_invalid counts only as the first step
        apply_chain(["line_trim", "utf8_replace_invalid"], b"\xff")


@pytest.mark.parametrize("name", RESERVED_ADAPTER_SPECIFIC)
def test_adapter_specific_reserved_names_are_unimplemented(name: str) -> None:
    with raises_code("transform.unimplemented"):
        apply_chain([name], b"abc")
    with raises_code("transform.unimplemented"):  # even after a step that would succeed
        apply_chain(["newline_normalize", name], b"abc")


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Foo",
        "foo",
        "cursor.",
        ".x",
        "a.b.c",
        "cursor.Bad",
        "é.x",
        "-x.y",
        "x-.y",
        "x--y.z",
        "x.a-b",
    ],
)
def test_invalid_names(name: str) -> None:
    with raises_code("transform.name_invalid"):
        apply_chain([name], b"abc")


@pytest.mark.parametrize(
    "name", ["cursor.composer_ordering", "claude-code.tool_order", "cursor_jsonl.x1"]
)
def test_adapter_names_as_rfc_002_spells_them(name: str) -> None:
    check_name(name)  # no error: RFC 002's adapter names include hyphenated ones (claude-code)
    with raises_code("transform.unimplemented"):  # valid, and still never the identity
        apply_chain([name], b"abc")


def test_transform_set_shape() -> None:
    ts = TransformSet.of({"cursor.upper": str.upper})
    assert ts.names() == (*RESERVED_REFERENCE, "cursor.upper")
    assert ts.kind("cursor.upper") == "plugin"
    assert ts.kind("line_trim") == "reference"
    assert ts.missing(["x.a", "line_trim", "x.b", "x.a", "strip_tool_chrome"]) == (
        "x.a",
        "x.b",
        "strip_tool_chrome",
    )
    assert apply_chain(["line_trim", "cursor.upper"], b" a ", transforms=ts) == b"A"
    with raises_code("transform.plugin_conflict"):
        TransformSet.of({"line_trim": str.upper})
    with raises_code("transform.name_invalid"):
        TransformSet.of({"upper": str.upper})


def test_every_set_holds_the_reference_seven_unaltered() -> None:
    # However a set is built, the seven reference names resolve to the reference functions: a
    # replacement is refused, the reference function itself is accepted as a no-op.
    for ts in (TransformSet(), TransformSet.of(), TransformSet({"line_trim": ref.line_trim})):
        assert ts.names() == RESERVED_REFERENCE
        assert all(ts.resolve(n) is getattr(ref, n) for n in RESERVED_REFERENCE)
        assert ts.resolve("strip_tool_chrome") is None
    with raises_code("transform.plugin_conflict"):
        TransformSet({"line_trim": str.strip})
    with raises_code("transform.plugin_invalid"):
        TransformSet({"x.not_callable": cast(Any, 42)})


def test_plugin_misbehaving_is_reported() -> None:
    misbehaving: dict[str, Any] = {"x.boom": lambda t: 1 / 0, "x.bytes": lambda t: t.encode()}
    ts = TransformSet.of(misbehaving)
    with raises_code("transform.plugin_invalid"):
        apply_chain(["x.boom"], b"a", transforms=ts)
    with raises_code("transform.plugin_invalid"):
        apply_chain(["x.bytes"], b"a", transforms=ts)
    surrogate = TransformSet.of({"x.sur": lambda t: "\ud800"})
    with raises_code("transform.plugin_invalid"):
        apply_chain(["x.sur"], b"a", transforms=surrogate)
