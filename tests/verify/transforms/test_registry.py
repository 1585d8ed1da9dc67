"""Plugins of entry-point group ``affidavit.transforms``: picked up, never allowed to replace a
reference transformation, and a broken one is an error rather than the identity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.plugins import available_transforms, transforms_for
from affidavit.verify.transforms import (
    RESERVED_REFERENCE,
    apply_chain,
)

from tests.conftest import raises_code

_PLUGIN_MODULE = """
def composer_ordering(text):
    return "\\n".join(sorted(text.split("\\n")))

def strip_tool_chrome(text):
    return text.replace("<tool>", "")

NOT_CALLABLE = 42
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake installed distribution on sys.path; the caller writes its entry_points.txt."""
    module = tmp_path / "affidavit_test_plugin_e2.py"
    module.write_text(_PLUGIN_MODULE, encoding="utf-8")
    info = tmp_path / "affidavit_test_plugin_e2-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: affidavit-test-plugin-e2\nVersion: 0.1\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "affidavit_test_plugin_e2", raising=False)
    available_transforms.cache_clear()
    yield info
    available_transforms.cache_clear()


def _entry_points(info: Path, *lines: str) -> None:
    body = "[affidavit.transforms]\n" + "\n".join(lines) + "\n"
    (info / "entry_points.txt").write_text(body, encoding="utf-8")


def test_plugins_are_picked_up(plugin_dir: Path) -> None:
    _entry_points(
        plugin_dir,
        "cursor.composer_ordering = affidavit_test_plugin_e2:composer_ordering",
        "strip_tool_chrome = affidavit_test_plugin_e2:strip_tool_chrome",
    )
    ts = available_transforms()
    assert ts.names()[: len(RESERVED_REFERENCE)] == RESERVED_REFERENCE
    assert "cursor.composer_ordering" in ts.names()
    assert "strip_tool_chrome" in ts.names()
    assert ts.kind("cursor.composer_ordering") == "plugin"
    assert apply_chain(["cursor.composer_ordering"], b"b\na", transforms=ts) == b"a\nb"
    chain = ["strip_tool_chrome", "whitespace_trim"]
    assert apply_chain(chain, b" <tool>x ", transforms=transforms_for) == b"x"
    assert available_transforms() is ts  # cached per process


def test_plugins_are_read_only_when_the_caller_asks(plugin_dir: Path) -> None:
    # A receipt's verdict must not depend on what happens to be installed (issue 22).
    _entry_points(plugin_dir, "cursor.sort = affidavit_test_plugin_e2:composer_ordering")
    with raises_code("transform.unimplemented"):
        apply_chain(["cursor.sort"], b"b\na")
    assert apply_chain(["cursor.sort"], b"b\na", transforms=transforms_for) == b"a\nb"
    assert transforms_for(["line_trim"]).names() == RESERVED_REFERENCE
    _entry_points(plugin_dir, "cursor.broken = affidavit_test_plugin_e2:no_such_attribute")
    available_transforms.cache_clear()
    with raises_code("transform.unimplemented"):  # never loaded: not plugin_invalid
        apply_chain(["cursor.broken"], b"x")


def test_overriding_a_reference_transformation_is_refused(plugin_dir: Path) -> None:
    _entry_points(plugin_dir, "line_trim = affidavit_test_plugin_e2:composer_ordering")
    with raises_code("transform.plugin_conflict"):
        available_transforms()


@pytest.mark.parametrize(
    "line",
    [
        "cursor.broken = affidavit_test_plugin_e2:no_such_attribute",
        "cursor.broken = affidavit_test_plugin_e2_missing:fn",
        "cursor.broken = affidavit_test_plugin_e2:NOT_CALLABLE",
        "Cursor.Bad = affidavit_test_plugin_e2:composer_ordering",
        "unprefixed = affidavit_test_plugin_e2:composer_ordering",
    ],
)
def test_broken_entry_point_is_an_error(plugin_dir: Path, line: str) -> None:
    _entry_points(plugin_dir, line)
    with raises_code("transform.plugin_invalid"):
        available_transforms()
    with raises_code("transform.plugin_invalid"):  # a chain needing plugins fails too
        apply_chain(["cursor.other"], b"x", transforms=transforms_for)


def test_reference_only_chain_does_not_load_plugins(plugin_dir: Path) -> None:
    _entry_points(plugin_dir, "cursor.broken = affidavit_test_plugin_e2:no_such_attribute")
    assert apply_chain(["line_trim"], b" x ", transforms=transforms_for) == b"x"


def test_unimplemented_without_plugin(plugin_dir: Path) -> None:
    _entry_points(plugin_dir)
    with raises_code("transform.unimplemented"):
        apply_chain(["cursor.composer_ordering"], b"x", transforms=transforms_for)
