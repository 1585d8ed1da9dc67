"""One result vocabulary (affidavit.verify.results): the commands print what the results hold.

The CLI keeps no verdict map, no result version and no hand-built result JSON of its own: the
typed results give the ``--json`` document, and cli/render/verdict.py the human report from them
(tests/cli/test_cold_start.py and the bundle vectors compare whole outputs).
"""

from __future__ import annotations

import ast
import json
import pickle
from pathlib import Path

from affidavit.cli.render.verdict import report_blocks
from affidavit.cli.verify import bundle as bundle_cli
from affidavit.verify import errors
from affidavit.verify.anchor.receipt import anchor_result
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.results import (
    RESULT_VERSION,
    VERDICT_EXIT,
    VERDICTS,
    Problem,
    Report,
    Result,
    StepResult,
)

from tests.verify.bundles.test_bundle_support import LOG_KEY, OUTPUTS, edit, stamp

CLI = Path(bundle_cli.__file__).resolve()


def test_one_verdict_to_exit_map() -> None:
    assert dict(VERDICT_EXIT) == {"verified": 0, "unanchored": 1, "failed": 1, "unreadable": 2}
    assert set(VERDICTS) == set(VERDICT_EXIT)
    # The bundle command defines neither map nor version: it uses the results module's.
    names = {
        target.id
        for node in ast.walk(ast.parse(CLI.read_text()))
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert not names & {"RESULT_VERSION", "_EXIT", "_VERDICTS"}


def test_unreadable_input_keeps_its_json_shape() -> None:
    error = errors.ParseError("io.unreadable", "x.json: No such file or directory")
    result = Result.unreadable_input("bundle", "x.json", error)
    assert result.to_json() == {
        "kind": "bundle", "source": "x.json", "verdict": "unreadable", "verified": False,
        "steps": [{"name": "parse", "status": "failed", "code": "io.unreadable",
                   "message": "x.json: No such file or directory"}],
        "code": "io.unreadable", "message": "x.json: No such file or directory",
    }  # fmt: skip
    assert result.exit_code == 2
    assert result.steps[0].to_json() == result.to_json()["steps"][0]


def test_anchor_unreadable_result_keeps_its_wire_form() -> None:
    error = errors.ParseError("io.unreadable", "r.json: No such file or directory")
    step = {"name": "parse", "status": "failed", "code": error.code, "message": error.message}
    assert anchor_result("r.json", (StepResult.unreadable("parse", error),)).to_json() == {
        "kind": "anchor", "source": "r.json", "verdict": "unreadable", "verified": False,
        "anchor_id": None, "anchored_at": None, "tsa_url": None, "sth_digest": None,
        "token": None, "steps": [step],
        "peer": {"fields_present": False, "sth_digest_match": False, "tsa_granted": False,
                 "tsr_present": False},
        "code": error.code, "message": error.message,
    }  # fmt: skip


def test_report_renders_json_and_text_and_exit_code() -> None:
    bundles = stamp({"good": OUTPUTS["accepted"]})
    verifier = BundleVerifier([LOG_KEY.public_key])
    good = verifier.verify(bundles["good"], source="good.json")
    bad = verifier.verify(edit(bundles["good"], lambda b: b.update(deal_id="x")), source="b.json")
    missing = Result.unreadable_input(
        "bundle", "m.json", errors.ParseError("io.unreadable", "gone")
    )
    report = Report("bundle", (good, bad, missing))
    document = report.to_json()
    assert document["verify_result_version"] == RESULT_VERSION
    assert document["summary"] == {"total": 3, "verified": 1, "unanchored": 0, "failed": 1,
                                   "unreadable": 1, "by_code": {"bundle.hash_mismatch": 1,
                                   "io.unreadable": 1}}  # fmt: skip
    assert (report.exit_code, document["verdict"]) == (2, "unreadable")
    blocks = report_blocks(report, detailed=False)
    assert blocks[0] == (
        "b.json: failed\n  failed at bundle_hash: bundle.hash_mismatch: "
        "bundle_hash does not match the bundle",
        False,
    )
    assert blocks[1] == ("error: io.unreadable: m.json: gone", True)
    assert blocks[2] == (
        "3 bundle(s): 1 verified, 1 failed, 1 unreadable\n"
        "by code: bundle.hash_mismatch 1, io.unreadable 1",
        False,
    )
    json.dumps(document)  # plain JSON values only


def test_results_cross_process_boundaries() -> None:
    # --jobs workers send typed results back: every step pickles, details included.
    result = BundleVerifier().verify(stamp({"d": OUTPUTS["review"]})["d"], source="d.json")
    assert pickle.loads(pickle.dumps(result)) == result
    assert pickle.loads(pickle.dumps(StepResult.ok("parse"))).details == {}


def test_problem_names_settings_by_whoever_renders_it() -> None:
    problem = Problem("{require_signed} needs {manifest}", ("require_signed", "manifest"))
    assert str(problem) == "require_signed needs manifest"
    assert (
        problem.render({"require_signed": "--require-signed"}) == "--require-signed needs manifest"
    )
    plain = Problem("a {literal} brace from a file name")
    assert plain.render({"literal": "x"}) == "a {literal} brace from a file name"
