// subjects.js reads and writes JSON exactly as our Python code does, for the hashes it recomputes
// (docs/formats.md §1, §11): strictJSON refuses what verify/json/strict.py refuses, with the same
// code, and reads the rest to the same value, whose py-compact and RFC 8785 bytes (pyCompact,
// jcs) are verify/json/canonical.py's; pyFloat writes a float as Python's repr does
// (canonical.json, written by make_fixtures.py).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const {page} = require("./page.cjs");

const cases = JSON.parse(fs.readFileSync(path.join(__dirname, "canonical.json"), "utf8"));
const {strictJSON, pyCompact, jcs, pyFloat} = page.Subjects;
const bytesOf = (b64) => new Uint8Array(Buffer.from(b64, "base64"));

function codeOf(run) {
  // the code a refusal names ("json.syntax at 3" -> "json.syntax"), or null when none is thrown
  try {
    run();
    return null;
  } catch (e) {
    assert.equal(e.constructor.name, "Refused", String(e));
    return e.message.split(" at ")[0];
  }
}

test("strict JSON: refused with Python's code, or read to Python's value", () => {
  for (const [n, item] of cases.documents.entries()) {
    const data = bytesOf(item.data_b64);
    const label = `document ${n}: ${JSON.stringify(Buffer.from(data).toString("latin1").slice(0, 80))}`;
    if (item.code !== undefined) {
      // Python's json reads the words NaN and Infinity, then refuses them (json.non_finite); this
      // parser does not know the words (json.syntax): both refuse the document
      const words = /^\[-?(NaN|Infinity)\]$/.test(Buffer.from(data).toString("latin1"));
      assert.equal(codeOf(() => strictJSON(data)), words ? "json.syntax" : item.code, label);
      if (words) assert.equal(item.code, "json.non_finite");
      continue;
    }
    const value = strictJSON(data);
    assert.equal(pyCompact(value), item.py_compact, label);
    if (item.jcs !== undefined) assert.equal(jcs(value), item.jcs, label);
    else assert.equal(codeOf(() => jcs(value)), item.jcs_code, label);
  }
});

test("a float is written as Python's repr writes it", () => {
  for (const [text, repr] of cases.floats) assert.equal(pyFloat(Number(text)), repr, text);
  assert.equal(codeOf(() => pyFloat(Infinity)), "canonical.non_finite");
  assert.equal(codeOf(() => pyFloat(NaN)), "canonical.non_finite");
});
