// The verdicts of tests/registry/test_explorer_differential.py (issue 31), here without Chromium:
// the page (explorer.js with subjects.js) is fed the registry's answers of fixtures.json, honest
// and tampered, and must give each case's verdict (#verdict[data-verdict]). Then the pin is the
// reader's: a key in the link that differs from the pinned one is a conflict, never used.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const {createHash} = require("node:crypto");
const {fixtures, search, digestOf} = require("./page.cjs");

const DEAL = digestOf(1, "deal_id");
const lookup = (digest) => "/v1/lookup/" + digest;
const firstProof = (answers, digest) => answers[lookup(digest)].entries[0].inclusion_proof.hashes;
const flip = (hex) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);
const none = (digest) => ({hash: digest, entries: [], checkpoint: fixtures.notes.log, next_cursor: null});
const b64 = (text) => Buffer.from(text, "utf8").toString("base64");

const CASES = {
  "honest contract": [digestOf(0, "contract_hash"), null, "verified"],
  "honest deal name": ["deal-1", null, "verified"],
  "honest fact": [digestOf(2, "fact_hash"), null, "verified"],
  "honest hash only": [digestOf(10, "leaf_hash"), null, "verified"],
  "honest unknown": ["0".repeat(64), (a) => { a[lookup("0".repeat(64))] = none("0".repeat(64)); },
    "none"],
  "relabelled hash": ["deal-99", (a) => {  // the honest answer for deal-1, served for deal-99
    const wanted = createHash("sha256").update("deal-99").digest("hex");
    a[lookup(wanted)] = {...a[lookup(DEAL)], hash: wanted};
  }, "not-verified"],
  "relabelled kind": [digestOf(0, "contract_hash"), (a) => {
    a[lookup(digestOf(0, "contract_hash"))].entries[0].kind = "fact";
  }, "not-verified"],
  "relabelled fields": [digestOf(0, "contract_hash"), (a) => {
    a[lookup(digestOf(0, "contract_hash"))].entries[0].matched = ["entry_hash"];
  }, "not-verified"],
  "wrong leaf": [DEAL, (a) => {
    const leaf = a["/protocol/merkle/leaf/1"];
    leaf.leaf_data_b64 = b64(Buffer.from(leaf.leaf_data_b64, "base64").toString().replace("deal-1", "deal-2"));
  }, "not-verified"],
  "wrong proof": [DEAL, (a) => { const p = firstProof(a, DEAL); p[0] = flip(p[0]); }, "not-verified"],
  "proof too short": [DEAL, (a) => { firstProof(a, DEAL).pop(); }, "not-verified"],
  "proof too long": [DEAL, (a) => { firstProof(a, DEAL).push("00".repeat(32)); }, "not-verified"],
  "cursor injection": [DEAL, (a) => {
    a[lookup(DEAL)].next_cursor = "1&vkey=" + fixtures.vkeys.forger;
  }, "error"],
  "forged checkpoint": [DEAL, (a) => { a[lookup(DEAL)].checkpoint = fixtures.notes.forged; },
    "not-verified"],
};

for (const [name, [query, change, verdict]] of Object.entries(CASES)) {
  test("the page's verdict: " + name, async () => {
    const page = await search(query, {change});
    assert.equal(page.verdict, verdict, page.text);
  });
}

test("a key in the link that differs from the pin is a conflict and not used", async () => {
  const page = await search(DEAL, {vkeys: [fixtures.vkeys.forger], stored: fixtures.vkeys.log,
    change: (a) => { a[lookup(DEAL)].checkpoint = fixtures.notes.forged; }});
  assert.equal(page.verdict, "not-verified");
  assert.match(page.pin, /pinned: affidavit-registry \(from this browser\)/);
  assert.match(page.pin, /conflict/);
  assert.match(page.pin, /NOT used/);
  assert.match(page.text, /checkpoint NOT verified: no signature by the key/);
});
