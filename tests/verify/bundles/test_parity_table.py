"""docs/parity.md stays complete and honest.

- every row maps a peer check to tests that exist (file, function, and for parametrized tests a
  parameter id that is generated), so a peer status named in the table always has a test;
- every status, step, result value and flag the pinned peer's source defines (extracted from
  ``aigentsy_verify`` 1.6.3 by pattern, not copied into this file) is named in the table;
- every Affidavit code the table names is a stable code (``specs/error-codes.json``) or a warning
  code the verifier emits;
- every deliberate difference of the differential test points at a row whose relation says why.
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Final, NamedTuple

import aigentsy_verify
import pytest

ROOT: Final = Path(__file__).resolve().parents[3]
TABLE: Final = ROOT / "docs" / "parity.md"
PEER: Final = Path(aigentsy_verify.__file__).resolve().parent
PEER_VERSION: Final = "1.6.3"
RELATIONS: Final = ("same", "stricter", "peer wrong", "looser", "report", "open")
# warning codes (strings in a result's ``warnings``), not error classes
WARNING_CODES: Final = frozenset({"event.actor_label_mismatch", "bundle.actor_keys_self_asserted"})
_NODE: Final = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[([^\]`]+)\])?`")
_ROW: Final = re.compile(r"^\| ([A-Z]-\d{2}) \|")


class Row(NamedTuple):
    """One row of a mapping table: ``| id | check | status | step | code | relation | tests |``."""

    id: str
    cells: tuple[str, ...]

    @property
    def code_cell(self) -> str:
        return self.cells[4]

    @property
    def relation(self) -> str:
        return self.cells[5]

    @property
    def tests(self) -> list[tuple[str, str, str | None]]:
        return [(m[0], m[1], m[2] or None) for m in _NODE.findall(self.cells[6])]


def _split(line: str) -> tuple[str, ...]:
    # a cell may contain "\|" (escaped pipes inside code)
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return tuple(cell.strip() for cell in cells)


@cache
def _text() -> str:
    return TABLE.read_text(encoding="utf-8")


@cache
def _rows() -> tuple[Row, ...]:
    rows = []
    for line in _text().splitlines():
        if _ROW.match(line):
            cells = _split(line)
            rows.append(Row(cells[0], cells))
    return tuple(rows)


def _named() -> set[str]:
    """Every backticked token in the table."""
    return set(re.findall(r"`([^`]+)`", _text()))


# -- the peer's own vocabulary, extracted from its source ------------------------------------------


def _peer(name: str) -> str:
    return (PEER / name).read_text(encoding="utf-8")


def _anchor_relationships() -> set[str]:
    blocks = re.findall(
        r'rec\["anchor_relationship"\] = (\(.*?\)|"[^"]+")', _peer("bundle.py"), re.S
    )
    return {word for block in blocks for word in re.findall(r'"(\w+)"', block)}


def peer_vocabulary() -> dict[str, set[str]]:
    """What the peer can report, by kind (each must be named in the table)."""
    bundle, adapter, cli = _peer("bundle.py"), _peer("adapter.py"), _peer("cli.py")
    level = re.search(r'"verification_level"\] = "(\w+)" if not skipped else "(\w+)"', bundle)
    assert level is not None
    sections = re.search(r"for key in \(([^)]*)\)", _peer("policy_layer.py"))
    assert sections is not None
    return {
        "status constants": set(
            re.findall(r'^(?:STATUS|CONSEQUENCE)_\w+\s*=\s*"([^"]+)"', bundle + adapter, re.M)
        ),
        "steps": set(re.findall(r'result\["steps"\]\["(\w+)"\]', bundle + cli)),
        "in-step diagnostics": set(re.findall(r'"(leaf_binding|consequence_binding)":', bundle)),
        "record strength": set(re.findall(r'rec\["strength"\] = "(\w+)"', bundle)),
        "anchor relationships": _anchor_relationships(),
        "actor signature results": set(re.findall(r'"result": "([\w-]+)"', bundle)),
        "sidecar result fields": set(
            re.findall(
                r'^\s+"(binding_\w+|bindings_checked|signatures_checked|events_signed|'
                r'events_total|actor_ids)":',
                bundle,
                re.M,
            )
        ),
        "merkle types": set(re.findall(r'merkle_type = "(\w+)"', bundle)),
        "verification levels": set(level.groups()),
        "adapter sub-statuses": set(re.findall(r'"(\w+_status)"', adapter)),
        "anchor details": set(re.findall(r'details\["(\w+)"\]', _peer("anchor.py")))
        | set(re.findall(r'^\s+"(\w+)": False,', _peer("anchor.py"), re.M)),
        "policy layer sections": set(re.findall(r'"(\w+)"', sections.group(1)))
        | set(re.findall(r'policy\.get\("(referral_chain)"\)', _peer("policy_layer.py"))),
        "session metrics": set(
            re.findall(r'^\s+"(\w+)": (?:self|round|len)', _peer("session.py"), re.M)
        ),
        "cli flags": set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', cli)),
    }


def test_the_table_is_for_the_pinned_peer() -> None:
    assert aigentsy_verify.__version__ == PEER_VERSION
    assert f"`aigentsy-verify` {PEER_VERSION}" in _text()


@pytest.mark.parametrize("kind", list(peer_vocabulary()))
def test_every_peer_status_is_in_the_table(kind: str) -> None:
    found = peer_vocabulary()[kind]
    assert found, f"the pattern for {kind} found nothing in the peer's source: fix the pattern"
    missing = sorted(found - _named())
    assert not missing, f"peer {kind} missing from docs/parity.md: {missing}"


def test_vocabulary_extraction_finds_what_the_issue_names() -> None:
    """The patterns above really read the peer (a pattern matching nothing would pass silently)."""
    vocabulary = peer_vocabulary()
    assert {"consequence_identity_mismatch", "anchor_ambiguous", "legacy_no_adapter"} <= (
        vocabulary["status constants"]
    )
    assert {"swarm_coverage", "swarm_snapshot", "swarm_decision", "adapter_replay"} <= (
        vocabulary["steps"]
    )
    assert vocabulary["actor signature results"] == {"PASS", "FAIL", "attribution-only"}
    assert "--strict" in vocabulary["cli flags"]


# -- rows ------------------------------------------------------------------------------------------


def test_rows_are_well_formed() -> None:
    rows = _rows()
    assert len(rows) >= 80
    ids = [row.id for row in rows]
    assert len(ids) == len(set(ids)), "row ids repeat"
    for row in rows:
        assert len(row.cells) == 7, f"{row.id}: {len(row.cells)} cells"
        assert row.relation.startswith(RELATIONS), f"{row.id}: relation {row.relation!r}"
        if row.relation.startswith(("stricter", "looser")):
            assert ":" in row.relation or "(" in row.relation, f"{row.id}: say why"


def test_every_row_has_a_test() -> None:
    missing = [row.id for row in _rows() if not row.tests]
    assert not missing, f"rows without a test: {missing}"


# -- tests named in the table exist ---------------------------------------------------------


@cache
def _functions(path: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    }


def _parametrized(function: ast.FunctionDef) -> bool:
    return any("parametrize" in ast.unparse(d) for d in function.decorator_list)


def _known_ids(function: str) -> set[str] | None:
    """The generated parameter ids of the parametrized tests this table leans on most."""
    if function == "test_handmade_case":
        from tests.verify.peer_bundle_cases import adapter_cases, handmade_cases

        return {case.name for case in handmade_cases() + adapter_cases()}
    if function == "test_anchor_receipt":
        from tests.verify.peer_bundle_gen import ANCHOR_RECEIPT_NAMES

        return set(ANCHOR_RECEIPT_NAMES)
    if function == "test_attestation_agrees":
        from tests.verify.crypto.test_peer_primitives import ATTESTATIONS

        return set(ATTESTATIONS)
    if function == "test_peer_compares_key_windows_as_text":
        return {"window_fraction", "window_offset"}
    return None


def _all_nodes() -> list[tuple[str, str, str | None]]:
    return [(m[0], m[1], m[2] or None) for m in _NODE.findall(_text())]


def test_named_tests_exist() -> None:
    nodes = _all_nodes()
    assert len(nodes) > 150
    problems = []
    for path, name, param in nodes:
        if not (ROOT / path).is_file():
            problems.append(f"{path}: no such file")
            continue
        function = _functions(path).get(name)
        if function is None:
            problems.append(f"{path}::{name}: no such test")
            continue
        if param is not None:
            if not _parametrized(function):
                problems.append(f"{path}::{name}[{param}]: the test is not parametrized")
            known = _known_ids(name)
            if known is not None and param not in known:
                problems.append(f"{path}::{name}[{param}]: no such parameter")
    assert not problems, "\n".join(problems)


def test_every_handmade_case_is_in_the_table() -> None:
    """Each bundle the differential writes by hand documents a row (none is there for nothing)."""
    named = {param for _, name, param in _all_nodes() if name == "test_handmade_case"}
    cases = _known_ids("test_handmade_case")
    assert cases is not None
    # random ones cover combinations; these handmade ones are not worth a row of their own
    unlisted = sorted(cases - named)
    assert not unlisted, f"handmade cases no row names: {unlisted}"


# -- codes -----------------------------------------------------------------------------------


def test_named_codes_are_stable_codes() -> None:
    document = json.loads((ROOT / "specs" / "error-codes.json").read_text(encoding="utf-8"))
    codes = {entry["code"] for entry in document["codes"]}
    package = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "verify").rglob("*.py"))
    problems = []
    for row in _rows():
        for token in re.findall(r"`([a-z0-9_]+\.[a-z0-9_]+)`", row.code_cell):
            if token in WARNING_CODES:
                if token not in package:
                    problems.append(f"{row.id}: warning {token} is not emitted by affidavit.verify")
            elif token not in codes:
                problems.append(f"{row.id}: {token} is not in specs/error-codes.json")
    assert not problems, "\n".join(problems)


def test_deliberate_differences_point_at_rows_that_say_why() -> None:
    from tests.verify.bundles.test_peer_differential import DELIBERATE

    relation = {row.id: row.relation for row in _rows()}
    for entry in DELIBERATE:
        assert entry.row in relation, entry
        assert relation[entry.row].startswith(("stricter", "looser", "peer wrong")), (
            f"{entry.row} differs on purpose but its relation is {relation[entry.row]!r}"
        )
