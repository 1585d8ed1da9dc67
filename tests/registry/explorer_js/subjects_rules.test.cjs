// subjects.js files every leaf under exactly what registry/index.py `subjects` does
// (docs/formats.md §11): the leaves and seeded byte changes of tests/registry/test_explorer_subjects.py,
// with Python's kind and rows (subjects.json, written by make_fixtures.py). Where the page cannot
// recompute a rule (a receipt, a COSE leaf, a contract's odd field list) it says so (kind null).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const {page, fixtures} = require("./page.cjs");

const cases = JSON.parse(fs.readFileSync(path.join(__dirname, "subjects.json"), "utf8"));
const bytesOf = (b64) => new Uint8Array(Buffer.from(b64, "base64"));
const unique = (rows) => [...new Set(rows.map((row) => JSON.stringify(row)))].sort();

const truthy = (v) => !(v === undefined || v === null || v === false || v === "" || v === 0
  || (Array.isArray(v) && !v.length) || (typeof v === "object" && v !== null && !Object.keys(v).length));

function unsureAllowed(data) {
  // Where this page does not recompute a rule: a COSE leaf, a receipt, and a contract whose field
  // list Python sorts but is not a list of strings (verify/contracts/contract.py _sorted_list)
  const text = Buffer.from(data).toString("latin1");
  if (data[0] === 0xd2 || text.includes("receipt_version")) return true;
  let doc;
  try { doc = JSON.parse(Buffer.from(data).toString("utf8")); } catch (e) { return false; }
  const declaration = doc && doc.declaration;
  if (!doc || doc.record_type === undefined || !declaration || typeof declaration !== "object") return false;
  return ["output_fields", "allowed_policy_fields"].some((field) => truthy(declaration[field])
    && !(Array.isArray(declaration[field]) && declaration[field].every((x) => typeof x === "string")));
}

test("every leaf is filed under what registry/index.py files it under", async () => {
  let unsure = 0;
  for (const [n, item] of cases.entries()) {
    const data = bytesOf(item.data_b64);
    const found = await page.Subjects.filedUnder(data, false);
    // a COSE_Sign1 leaf is never recomputed here: "cannot check", whatever Python makes of it
    if (data[0] === 0xd2) assert.equal(found.kind, null, `case ${n}: a COSE leaf`);
    if (found.kind === null) {
      unsure++;
      assert.ok(unsureAllowed(data), `case ${n}: not recomputed`);
      assert.equal(typeof found.unsure, "string", `case ${n}`);
      continue;
    }
    assert.deepEqual({kind: found.kind, rows: unique(found.rows)},
      {kind: item.kind, rows: unique(item.rows)}, `case ${n}`);
    assert.equal(found.unsure, null, `case ${n}`);
  }
  assert.ok(unsure <= cases.length / 20, `${unsure} leaves not recomputed`);
});

// The limits too large to write into subjects.json, on leaves of fixtures.json: a change that
// leaves the hashed body alone keeps every row, and one item past the limit is not the kind.
const leafOf = (index) => new Uint8Array(Buffer.from(fixtures.leaves[index].data_b64, "base64"));
const rowsOf = (index) => fixtures.leaves[index].rows.map(([field, digest]) => [field, digest]);
const jsonLeaf = (doc) => new Uint8Array(Buffer.from(JSON.stringify(doc), "utf8"));
const hex64 = (k) => k.toString(16).padStart(64, "0");

test("a fact names at most 1024 parents (verify/lineage/facts.py _MAX_DERIVED)", async () => {
  const doc = JSON.parse(Buffer.from(leafOf(2)).toString("utf8"));
  const parents = Array.from({length: 1025}, (_, k) => hex64(k));
  let found = await page.Subjects.filedUnder(jsonLeaf({...doc, derived_from: parents.slice(0, 1024)}), false);
  assert.equal(found.kind, "fact");
  const kept = rowsOf(2).filter(([field]) => !["leaf_hash", "data_sha256"].includes(field));
  assert.deepEqual(unique(found.rows.slice(2)), unique([...kept,
    ...parents.slice(0, 1024).map((parent) => ["derived_from", parent])]));
  found = await page.Subjects.filedUnder(jsonLeaf({...doc, derived_from: parents}), false);
  assert.equal(found.kind, "raw");
});

test("a DSSE envelope has at most 256 signatures (verify/dsse/envelope.py MAX_SIGNATURES)", async () => {
  const doc = JSON.parse(Buffer.from(leafOf(4)).toString("utf8"));
  const signatures = Array(257).fill(doc.signatures[0]);
  let found = await page.Subjects.filedUnder(jsonLeaf({...doc, signatures: signatures.slice(0, 256)}), false);
  assert.equal(found.kind, "dsse");
  assert.deepEqual(unique(found.rows.slice(2)), unique(rowsOf(4).slice(2)));
  found = await page.Subjects.filedUnder(jsonLeaf({...doc, signatures}), false);
  assert.equal(found.kind, "raw");
});

test("a fact's text value holds at most 1 MiB code points (verify/lineage/facts.py _MAX_TEXT)", async () => {
  const doc = JSON.parse(Buffer.from(leafOf(2)).toString("utf8"));
  for (const [length, kind] of [[1024 * 1024, "fact"], [1024 * 1024 + 1, "raw"]]) {
    for (const type of ["text", "string"]) {
      const found = await page.Subjects.filedUnder(jsonLeaf({...doc,
        value: {type, v: "\u00e9".repeat(length)}}), false);
      assert.equal(found.kind, kind, `${type} of ${length}`);
    }
  }
});

test("why a leaf is not about the hash names every field it holds it under, and every claimed one", () => {
  const digest = "ab".repeat(32);
  const filed = {kind: "fact", unsure: null, rows: [["leaf_hash", "00"], ["derived_from", digest],
    ["entity", digest]]};
  assert.deepEqual(page.Subjects.notAbout({kind: "fact", matched: ["fact_hash", "subject_name"]},
    digest, filed), {cannot: false, why: "the leaf holds " + digest
    + " under derived_from, entity, not fact_hash, subject_name"});
  assert.equal(page.Subjects.notAbout({kind: "fact", matched: ["entity", "derived_from"]}, digest,
    filed), null);
});
