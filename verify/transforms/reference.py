"""Reference implementations of the seven reserved transformations with a fixed meaning
(RFC 002 §1.4; docs/formats.md "Declared transformations"): pure functions from text to text.

"Whitespace" is what :meth:`str.isspace` calls whitespace, and lines are separated by LF alone.
Where the seed's one-line meanings leave a choice, the choice is MemPalace 3.11.0's
(``mempalace/sources/transforms.py``); each such point is marked "(oracle)".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

__all__ = [
    "RESERVED_ADAPTER_SPECIFIC",
    "RESERVED_REFERENCE",
    "blank_line_drop",
    "line_join_spaces",
    "line_trim",
    "newline_normalize",
    "reference_transforms",
    "utf8_replace_invalid",
    "whitespace_collapse_internal",
    "whitespace_trim",
]


def utf8_replace_invalid(data: str | bytes) -> str:
    """RFC 002 §1.4 ``utf8_replace_invalid``: undecodable bytes become U+FFFD as
    ``bytes.decode("utf-8", errors="replace")`` gives them (``ED A0 80`` gives three); text,
    already decoded, is returned unchanged."""
    if isinstance(data, str):
        return data
    return bytes(data).decode("utf-8", errors="replace")


def newline_normalize(text: str) -> str:
    """RFC 002 §1.4 ``newline_normalize``: each CRLF, then each remaining bare CR, becomes LF.
    U+0085, U+2028 and U+2029 are left alone."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def whitespace_trim(text: str) -> str:
    """RFC 002 §1.4 ``whitespace_trim``: whitespace removed at both ends of the record (the whole
    text), nowhere else."""
    return text.strip()


def line_trim(text: str) -> str:
    """RFC 002 §1.4 ``line_trim``: each LF-separated line stripped of whitespace at both ends. The
    LFs themselves stay (so a CR before an LF goes, being whitespace at a line's end)."""
    return "\n".join([line.strip() for line in text.split("\n")])


def blank_line_drop(text: str) -> str:
    """RFC 002 §1.4 ``blank_line_drop``: lines that are empty or whitespace only are dropped; the
    others are kept, joined by LF. (oracle) Leading and trailing blank lines go too, and so does a
    final LF (the text ends with its last non-blank line)."""
    return "\n".join([line for line in text.split("\n") if line and not line.isspace()])


# Four or more LFs in a row: three or more blank lines between two lines.
_BLANK_RUN: Final = re.compile("\n\n\n\n+")


def whitespace_collapse_internal(text: str) -> str:
    """RFC 002 §1.4 ``whitespace_collapse_internal``: every run of three or more blank lines
    becomes exactly two.

    (oracle) A blank line is one that is empty or whitespace only, and every whitespace-only line
    is first emptied, wherever it is (even alone). A run is then counted in LFs: four or more LFs
    in a row become three. Between two lines this is "three or more blank lines become two"; at the
    start or the end of the text, where no line closes the run, four or more leading (trailing)
    empty lines become three.
    """
    if "\n" not in text:
        return "" if text.isspace() else text
    lines = ["" if line.isspace() else line for line in text.split("\n")]
    return _BLANK_RUN.sub("\n\n\n", "\n".join(lines))


# (oracle) A paragraph break is a line of spaces and tabs only (or empty), matched left to right
# without overlap: LF, optional spaces/tabs, LF.
_PARAGRAPH_BREAK: Final = re.compile("\n[ \t]*\n")


def line_join_spaces(text: str) -> str:
    """RFC 002 §1.4 ``line_join_spaces``: the lines of each paragraph are joined with single spaces
    and their LFs discarded; paragraphs stay apart.

    (oracle) The text is cut at each paragraph break (LF, spaces/tabs, LF; leftmost first, not
    overlapping). Within a piece, each line is stripped of whitespace, blank lines are dropped and
    the rest joined by one space. Pieces are rejoined with one blank line (two LFs), so a run of
    blank lines becomes one or more "\\n\\n" (one per break matched) and empty pieces survive.
    """
    pieces = _PARAGRAPH_BREAK.split(text)
    out: list[str] = []
    for piece in pieces:
        words = [line.strip() for line in piece.split("\n")]
        out.append(" ".join([w for w in words if w]))
    return "\n\n".join(out)


#: The seven reserved names with a reference implementation, in the seed's table order.
RESERVED_REFERENCE: Final[tuple[str, ...]] = (
    "utf8_replace_invalid",
    "newline_normalize",
    "whitespace_trim",
    "whitespace_collapse_internal",
    "line_trim",
    "line_join_spaces",
    "blank_line_drop",
)

#: The other reserved names of RFC 002 §1.4: their meaning is the adapter's, so only a plugin
#: implements one.
RESERVED_ADAPTER_SPECIFIC: Final[tuple[str, ...]] = (
    "strip_tool_chrome",
    "tool_result_truncate",
    "spellcheck_user",
    "synthesized_marker",
    "speaker_role_assignment",
    "tool_result_omitted",
)


def reference_transforms() -> dict[str, Callable[[str], str]]:
    """The seven reference transformations by name (a new dict each call): each function is
    named after the transformation it implements."""
    functions = (utf8_replace_invalid, newline_normalize, whitespace_trim,
                 whitespace_collapse_internal, line_trim, line_join_spaces,
                 blank_line_drop)  # fmt: skip
    return {fn.__name__: fn for fn in functions}
