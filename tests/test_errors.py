"""The error tree and specs/error-codes.json agree; codes are unique and well-formed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from affidavit.specs import read_spec
from affidavit.verify import errors

from tests.conftest import ROOT

CODE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")


def test_every_class_has_a_unique_well_formed_code() -> None:
    classes = list(errors.all_error_classes())
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes)), "two classes share a code"
    for cls in classes:
        assert CODE.match(cls.code), cls
        assert cls.description, cls
        assert cls.exit_code in (1, 2, 3), cls


def test_error_codes_json_lists_exactly_the_classes() -> None:
    listed = json.loads(read_spec("error-codes.json"))["codes"]
    by_code = {entry["code"]: entry for entry in listed}
    classes = {cls.code: cls for cls in errors.all_error_classes()}
    assert set(by_code) == set(classes), "regenerate with: python tools/gen_error_codes.py"
    for code, cls in classes.items():
        assert by_code[code]["class"] == cls.__name__
        assert by_code[code]["exit_code"] == cls.exit_code
        assert by_code[code]["description"] == cls.description


def test_generated_file_is_current() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_error_codes.py"), "--check"], check=False
    )
    assert completed.returncode == 0, (
        "specs/error-codes.json is stale: run tools/gen_error_codes.py"
    )


def test_exit_codes_follow_the_branch() -> None:
    for cls in errors.all_error_classes():
        if issubclass(cls, errors.VerificationError):
            assert cls.exit_code == 1, cls
        elif issubclass(cls, errors.PolicyRefusal):
            assert cls.exit_code == 3, cls
        else:
            assert cls.exit_code == 2, cls


def test_error_wire_form() -> None:
    error = errors.JsonDuplicateKey("duplicate key", line=3, column=4, details={"key": "a"})
    assert error.to_json() == {
        "code": "json.duplicate_key",
        "message": "duplicate key (line 3, column 4)",
        "details": {"line": 3, "column": 4, "key": "a"},
    }
