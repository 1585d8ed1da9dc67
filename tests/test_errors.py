"""The error tree: families and their codes, specs/error-codes.json, and every raise site.

The codes are the public interface (the CLI, the registry and the vectors all print them), so the
tests here check them both ways: the generated spec lists exactly the families' codes; every code a
raise site names is declared by the family it raises; every declared code is used somewhere.
"""

from __future__ import annotations

import ast
import json
import pickle
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest import errors as attest_errors
from affidavit.registry import errors as registry_errors
from affidavit.specs import read_spec
from affidavit.verify import errors

from tests.conftest import ROOT

CODE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
FAMILIES = [*errors.families(), *attest_errors.families(), *registry_errors.families()]
BY_NAME = {family.__name__: family for family in FAMILIES}
LIBRARY = ("verify", "attest", "registry", "cli")


def _library_files() -> Iterator[Path]:
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name not in {"codes.py", "errors.py"}:
                yield path


def _raise_sites() -> Iterator[tuple[Path, int, str, str]]:
    """(file, line, family name, code) for every ``Family("code", ...)`` call in the library."""
    for path in _library_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name in BY_NAME and name != "UsageError" and isinstance(first, ast.Constant):
                yield path, node.lineno, name, str(first.value)


def test_every_code_is_unique_and_well_formed() -> None:
    seen: dict[str, str] = {}
    for family in FAMILIES:
        for code, entry in family.codes.items():
            assert code == entry.code
            assert code not in seen, f"{code} is declared by {seen[code]} and {family.__name__}"
            seen[code] = family.__name__
            assert CODE.match(code), code
            assert entry.description, code
            assert entry.exit_code in (1, 2, 3), code
    assert len(seen) > 200


def test_error_codes_json_lists_exactly_the_families_codes() -> None:
    listed = {entry["code"]: entry for entry in json.loads(read_spec("error-codes.json"))["codes"]}
    declared = {
        code: (family, entry) for family in FAMILIES for code, entry in family.codes.items()
    }
    assert set(listed) == set(declared), "regenerate with: python tools/gen_error_codes.py"
    for code, (family, entry) in declared.items():
        assert listed[code]["family"] == f"{family.__module__}.{family.__name__}"
        assert listed[code]["exit_code"] == entry.exit_code
        assert listed[code]["description"] == entry.description
        assert listed[code]["http_status"] == registry_errors.status_for(code, entry.exit_code)


def test_generated_file_is_current() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_error_codes.py"), "--check"], check=False
    )
    assert completed.returncode == 0, (
        "specs/error-codes.json is stale: run tools/gen_error_codes.py"
    )


def test_every_raise_site_names_a_code_of_its_family() -> None:
    sites = list(_raise_sites())
    assert len(sites) > 300, "the scan found too few raise sites to be looking at the code"
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {family}({code!r})"
        for path, line, family, code in sites
        if code not in BY_NAME[family].codes
    ]
    assert not wrong, "\n".join(wrong)


def test_every_declared_code_is_used() -> None:
    """No dead codes: each code appears as a string in the library outside the code tables."""
    literals: set[str] = set()
    for path in _library_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
    literals.add("usage.invalid")  # UsageError's one code: the class raises it itself
    unused = sorted(code for family in FAMILIES for code in family.codes if code not in literals)
    assert not unused, f"declared but never raised: {unused}"


def test_a_family_refuses_a_code_it_does_not_declare() -> None:
    with pytest.raises(ValueError, match="not a code of BundleError"):
        errors.BundleError("merkle.root_mismatch", "wrong family")


def test_exit_code_comes_from_the_code() -> None:
    assert errors.BundleError("bundle.malformed", "x").exit_code == 2
    assert errors.BundleError("bundle.hash_mismatch", "x").exit_code == 1
    assert errors.ContractError("pin.revoked", "x").exit_code == 3


def test_error_wire_form() -> None:
    error = errors.ParseError(
        "json.duplicate_key", "duplicate key", line=3, column=4, details={"key": "a"}
    )
    assert error.to_json() == {
        "code": "json.duplicate_key",
        "message": "duplicate key (line 3, column 4)",
        "details": {"line": 3, "column": 4, "key": "a"},
    }
    unreadable = errors.ParseError("io.unreadable", "gone")
    assert unreadable.to_json() == {"code": "io.unreadable", "message": "gone", "details": {}}


@pytest.mark.parametrize(
    "error",
    [
        errors.ParseError("json.syntax", "bad", line=2, column=5),
        errors.BundleError("bundle.hash_mismatch", "bad", details={"index": 1}),
        errors.UsageError("wrong call"),
        attest_errors.LogError("log.integrity", "broken"),
        registry_errors.AuthError("auth.missing", "no key"),
    ],
)
def test_errors_survive_pickling(error: errors.AffidavitError) -> None:
    """Process pools hand errors back pickled: code, message, details and exit code survive."""
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert copy.to_json() == error.to_json()
    assert copy.exit_code == error.exit_code
