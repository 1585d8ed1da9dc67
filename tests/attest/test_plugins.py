"""affidavit.attest.plugins: the installed plug-ins. Validators (entry-point group
``affidavit.validators``) load lazily, once per name, and a broken or ambiguous one is a load
error; transformations (``affidavit.transforms``) are picked up, never allowed to replace a
reference transformation, and a broken one is an error rather than the identity."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest import plugins
from affidavit.attest.plugins import available_transforms, transforms_for
from affidavit.verify.contracts.validators import (
    BooleanValidator,
    Validator,
    boolean_validator_family,
)
from affidavit.verify.transforms.chain import apply_chain
from affidavit.verify.transforms.reference import RESERVED_REFERENCE

from tests.conftest import raises_code

# -- validators -----------------------------------------------------------------------------


def test_the_declared_entry_point_resolves_to_the_family() -> None:
    points = importlib.metadata.entry_points(
        group="affidavit.validators", name="starter_boolean_validator"
    )
    (point,) = points
    assert point.load() is boolean_validator_family


def test_entry_points_are_loaded_lazily(monkeypatch: pytest.MonkeyPatch) -> None:

    calls: list[str] = []
    real = plugins._entry_points
    monkeypatch.setattr(plugins, "_entry_points", lambda: calls.append("scan") or real())
    registry = plugins.installed_validators()
    assert registry.get("starter_boolean_validator", "1.0.0") is not None
    assert calls == []  # built-in: no metadata scan
    assert registry.get("plugin_only_validator", "1.0.0") is None
    assert registry.get("plugin_only_validator", "2.0.0") is None
    assert calls == ["scan"]  # scanned once per unknown name


def test_ambiguous_entry_points_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twins = [
        importlib.metadata.EntryPoint("dup_validator", "pkg_a:family", "affidavit.validators"),
        importlib.metadata.EntryPoint("dup_validator", "pkg_b:family", "affidavit.validators"),
    ]
    monkeypatch.setattr(plugins, "_entry_points", lambda: twins)
    with raises_code("validator.load_failed"):
        plugins.installed_validators().get("dup_validator", "1.0.0")


def plugin_family() -> list[Validator]:
    """A third-party family, loaded through a (simulated) entry point."""
    return [BooleanValidator("plugin_validator", "2.0.0")]


def _points(*values: str) -> Any:
    return lambda: [
        importlib.metadata.EntryPoint("plugin_validator", value, "affidavit.validators")
        for value in values
    ]


def test_a_plugin_family_loads_through_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:

    monkeypatch.setattr(plugins, "_entry_points", _points(f"{__name__}:plugin_family"))
    registry = plugins.installed_validators()
    assert registry.get("plugin_validator", "2.0.0") is not None
    assert registry.known() == (
        ("plugin_validator", "2.0.0"),
        ("starter_boolean_validator", "1.0.0"),
    )


@pytest.mark.parametrize(
    "target",
    ["no_such_module_anywhere:family", "affidavit.verify.contracts.validators:ENTRY_POINT_GROUP"],
)
def test_a_broken_entry_point_is_a_load_error(monkeypatch: pytest.MonkeyPatch, target: str) -> None:

    monkeypatch.setattr(plugins, "_entry_points", _points(target))
    with raises_code("validator.load_failed"):
        plugins.installed_validators().get("plugin_validator", "1.0.0")


# -- transformations ------------------------------------------------------------------------

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
