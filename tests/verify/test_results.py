"""The one verification outcome (verify/results.py): one verdict rule for every kind of result."""

from __future__ import annotations

import pickle

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify import errors
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    check_checkpoint,
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_verifier_key,
    verifier_key_string,
)
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.results import VERDICT_EXIT, Report, Result, StepResult, StepRun

OK = StepResult.ok("a")
FAILED = StepResult.failed("b", errors.ProofError("merkle.root_mismatch", "another root"))
UNREAD = StepResult.unreadable("c", errors.ParseError("json.non_finite", "NaN"))
NOT_CHECKED = StepResult.not_checked("d", "no key")
SELF = StepResult.self_asserted("e", "only under keys the input carries")


@pytest.mark.parametrize(
    ("steps", "required", "verdict", "code", "message"),
    [
        ((OK,), None, "verified", None, ""),
        ((OK, NOT_CHECKED), None, "unanchored", None, "d: no key"),
        ((OK, NOT_CHECKED), ("a",), "verified", None, ""),
        ((OK, SELF), ("e",), "unanchored", None, "e: only under keys the input carries"),
        ((OK, SELF), ("a",), "verified", None, ""),
        ((NOT_CHECKED, FAILED), ("a",), "failed", "merkle.root_mismatch", "b: another root"),
        ((FAILED, UNREAD), None, "unreadable", "json.non_finite", "NaN"),
    ],
)
def test_the_verdict_is_computed_from_the_steps(
    steps: tuple[StepResult, ...],
    required: tuple[str, ...] | None,
    verdict: str,
    code: str | None,
    message: str,
) -> None:
    result = Result("example", "x", steps, required=required)
    assert (result.verdict, result.code, result.message) == (verdict, code, message)
    assert result.exit_code == VERDICT_EXIT[verdict]
    assert result.verified is (verdict == "verified")
    document = result.to_json()
    assert (document["verdict"], document.get("code")) == (verdict, code)


def test_unanchored_says_what_the_verifier_asked_for() -> None:
    unproven = ("bundle.unanchored", "no tree head signed by a trusted key")
    result = Result("bundle", None, (OK, NOT_CHECKED), {"deal_id": "d"}, ("d",), unproven)
    assert (result.verdict, result.code, result.message) == ("unanchored", *unproven)
    assert result.to_json() == {
        "kind": "bundle", "source": None, "verdict": "unanchored", "verified": False,
        "deal_id": "d", "steps": [{"name": "a", "status": "ok"},
                                  {"name": "d", "status": "not_checked", "message": "no key"}],
        "code": "bundle.unanchored", "message": "no tree head signed by a trusted key",
    }  # fmt: skip


def test_a_report_is_as_bad_as_its_worst_result() -> None:
    results = [Result("x", str(n), (step,)) for n, step in enumerate((OK, NOT_CHECKED, FAILED))]
    verdicts = [Report("x", tuple(results[:n])).verdict for n in range(4)]
    assert verdicts == ["verified", "verified", "unanchored", "failed"]
    missing = Result.unreadable_input("x", "y", errors.ParseError("io.unreadable", "gone"))
    report = Report("x", (results[2], missing))
    assert (report.verdict, report.exit_code) == ("unreadable", 2)
    assert report.summary()["by_code"] == {"io.unreadable": 1, "merkle.root_mismatch": 1}


def test_results_pickle_with_their_subject() -> None:
    result = Result("x", "s", (UNREAD, OK), {"a": [1]}, ("a",), ("x.y", "z"))
    assert pickle.loads(pickle.dumps(result)) == result
    assert pickle.loads(pickle.dumps(UNREAD)).input_error is True


def test_a_step_run_fails_the_step_in_progress() -> None:
    run = StepRun(("parse", "signature", "inclusion"))
    run.passed("parse")
    run.fail(errors.ProofError("merkle.root_mismatch", "another root"))
    statuses = [(s.name, s.status) for s in run.result("x", None).steps]
    assert statuses == [("parse", "ok"), ("signature", "failed"), ("inclusion", "not_checked")]
    unreadable = StepRun(("parse", "signature"))
    unreadable.fail(errors.ParseError("json.non_finite", "NaN"))  # an input error: exit 2
    assert unreadable.result("x", None).verdict == "unreadable"


LOG = derive_test_key("TEST-ONLY affidavit results tests: log key")
ORIGIN = "results.test/log"
VKEY = parse_verifier_key(verifier_key_string(ORIGIN, LOG.public_key))


def _note(body: str) -> str:
    key_id = key_id_c2sp(ORIGIN, LOG.public_key.raw)
    return format_note(body, [note_signature_line(ORIGIN, key_id, LOG.sign(body.encode()))])


def test_checkpoint_steps() -> None:
    note = _note(checkpoint_body(ORIGIN, 5, merkle.leaf_hash(b"r")))
    verified = check_checkpoint(note, [VKEY], source="c.txt")
    assert (verified.kind, verified.verdict, verified.subject["tree_size"]) == (
        "checkpoint", "verified", 5
    )  # fmt: skip
    pinned = check_checkpoint(note, [VKEY], origin="elsewhere")
    assert (pinned.verdict, pinned.code) == ("failed", "checkpoint.origin_mismatch")
    assert pinned.subject == {}
    garbled = check_checkpoint("not a note", [VKEY])
    assert (garbled.verdict, garbled.failed_step.name) == ("unreadable", "note")  # type: ignore[union-attr]
    with pytest.raises(errors.UsageError):
        check_checkpoint(note, [])


def test_inclusion_step() -> None:
    leaves = [merkle.leaf_hash(bytes([n])) for n in range(5)]
    root, proof = merkle.root_of(leaves), merkle.inclusion_proof(leaves, 3)
    assert merkle.check_inclusion(leaves[3], 3, 5, proof, root).verified
    wrong = merkle.check_inclusion(leaves[2], 3, 5, proof, root)
    assert (wrong.verdict, wrong.code, wrong.subject["index"]) == (
        "failed",
        "merkle.root_mismatch",
        3,
    )
