// subjects.js files every leaf under exactly what registry/index.py `subjects` does
// (docs/formats.md §11): the leaves and seeded byte changes of tests/registry/test_explorer_subjects.py,
// with Python's kind and rows (subjects.json, written by make_fixtures.py). Where the page cannot
// recompute a rule (a receipt, a COSE leaf, a contract's odd field list) it says so (kind null).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const {page} = require("./page.cjs");

const cases = JSON.parse(fs.readFileSync(path.join(__dirname, "subjects.json"), "utf8"));
const bytesOf = (b64) => new Uint8Array(Buffer.from(b64, "base64"));
const unique = (rows) => [...new Set(rows.map((row) => JSON.stringify(row)))].sort();

function unsureAllowed(data) {
  const text = Buffer.from(data).toString("latin1");
  return data[0] === 0xd2 || text.includes("receipt_version") || text.includes("record_type");
}

test("every leaf is filed under what registry/index.py files it under", async () => {
  let unsure = 0;
  for (const [n, item] of cases.entries()) {
    const data = bytesOf(item.data_b64);
    const found = await page.Subjects.filedUnder(data, false);
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
