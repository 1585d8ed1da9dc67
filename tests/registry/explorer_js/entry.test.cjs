// One entry proven (proveEntry), the registry's answer refused whole unless it is the documented
// shape (parseAnswer; specs/registry-v1.yaml Lookup, as registry/clients/lookup.py refuses it),
// and the page's verdict (searchPage, entryCard): "verified" only when every entry is proven
// under the pinned key and is about the searched hash (docs/formats.md §11).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const {createHash} = require("node:crypto");
const {fixtures, search, digestOf, registryRoutes, reset, requested} = require("./page.cjs");

const DEAL = digestOf(1, "deal_id");
const CONTRACT = digestOf(0, "contract_hash");
const lookup = (digest) => "/v1/lookup/" + digest;
const entryOf = (answers, digest, k = 0) => answers[lookup(digest)].entries[k];
const sha = (text) => createHash("sha256").update(text).digest("hex");

// -- proveEntry ---------------------------------------------------------------------------------

async function prove(digest, {change, vkeys = [fixtures.vkeys.log], k = 0} = {}) {
  const answers = registryRoutes();
  if (change) change(answers);
  const params = new URLSearchParams();
  for (const key of vkeys) params.append("vkey", key);
  reset({search: "?" + params.toString(), answers});
  const answer = parseAnswer(answers[lookup(digest)], 0);
  const check = await checkCheckpoint(answer.checkpoint);
  return proveEntry(answer.entries[k], check, digest);
}

test("an honest entry is good under the pin, warn without one", async () => {
  let proven = await prove(DEAL);
  assert.deepEqual([proven.state, proven.why], ["good", ""]);
  assert.equal(proven.filed.kind, "bundle");
  assert.equal(Buffer.from(proven.bytes).toString("base64"), fixtures.leaves[1].data_b64);
  proven = await prove(DEAL, {vkeys: []});
  assert.deepEqual([proven.state, proven.why], ["warn", "proof consistent, but the log key is not pinned"]);
  proven = await prove(digestOf(10, "leaf_hash"));
  assert.deepEqual([proven.state, proven.bytes, proven.filed.kind], ["good", null, "hash_only"]);
  assert.deepEqual(proven.filed.rows, [["leaf_hash", fixtures.leaves[10].leaf_hash]]);
});

test("bytes that do not hash to the leaf hash are bad", async () => {
  const proven = await prove(DEAL, {change: (a) => {
    a["/protocol/merkle/leaf/1"].leaf_data_b64 = fixtures.leaves[8].data_b64;
  }});
  assert.deepEqual([proven.state, proven.why], ["bad", "its bytes do not hash to its leaf hash"]);
  assert.equal(Buffer.from(proven.bytes).toString("base64"), fixtures.leaves[8].data_b64);
});

test("bytes that cannot be read are bad; only log.no_entry_data means 'by hash only'", async () => {
  let proven = await prove(DEAL, {change: (a) => {
    a["/protocol/merkle/leaf/1"] = {status: 503, body: {code: "registry.unavailable"}};
  }});
  assert.deepEqual([proven.state, proven.why], ["bad", "its bytes could not be read: registry.unavailable"]);
  proven = await prove(DEAL, {change: (a) => {
    a["/protocol/merkle/leaf/1"] = {status: 404, body: {code: "log.no_entry_data"}};
  }});
  // then the leaf hash alone is proven, but a deal name is not a leaf hash: not about it
  assert.equal(proven.state, "bad");
  assert.match(proven.why, /^it is not about this hash: the leaf is a hash_only entry, not a bundle/);
  proven = await prove(DEAL, {change: (a) => {
    a["/protocol/merkle/leaf/1"] = {status: 200, body: {leaf_data_b64: "AB=="}};
  }});
  assert.deepEqual([proven.state, proven.why], ["bad", "its bytes could not be read: not canonical base64"]);
  proven = await prove(DEAL, {change: (a) => {
    a["/protocol/merkle/leaf/1"] = {status: 500, body: {}};
  }});
  assert.deepEqual([proven.state, proven.why], ["bad", "its bytes could not be read: HTTP 500"]);
});

test("a checkpoint that does not verify proves no entry", async () => {
  const proven = await prove(DEAL, {change: (a) => { a[lookup(DEAL)].checkpoint = fixtures.notes.forged; }});
  assert.deepEqual([proven.state, proven.why], ["bad", "the checkpoint is not verified"]);
});

test("a proof for another tree size than the checkpoint's is bad", async () => {
  for (const size of [fixtures.size - 1, fixtures.size + 1]) {
    const proven = await prove(DEAL, {change: (a) => {
      const entry = entryOf(a, DEAL);
      entry.inclusion_proof.tree_size = size;
      const other = fixtures.proofs.find((p) => p.index === 1 && p.size === size);
      if (other) entry.inclusion_proof.hashes = other.hashes;
    }});
    assert.deepEqual([proven.state, proven.why], ["bad", "its proof is for another tree size than the checkpoint"]);
  }
});

test("a proof that leads to another root is bad; an index past the size too", async () => {
  let proven = await prove(DEAL, {change: (a) => {
    const hashes = entryOf(a, DEAL).inclusion_proof.hashes;
    hashes[hashes.length - 1] = "11".repeat(32);
  }});
  assert.deepEqual([proven.state, proven.why], ["bad", "its inclusion proof leads to another root"]);
  proven = await prove(DEAL, {change: (a) => { entryOf(a, DEAL).index = fixtures.size; }});
  assert.equal(proven.state, "bad");
});

test("an entry that is not about the searched hash is bad, or 'cannot check' when this page cannot tell", async () => {
  let proven = await prove(CONTRACT, {change: (a) => { entryOf(a, CONTRACT).matched = ["entry_hash"]; }});
  assert.equal(proven.state, "bad");
  assert.match(proven.why, /^it is not about this hash: the leaf holds [0-9a-f]{64} under contract_hash, not entry_hash$/);
  assert.equal(proven.filed.kind, "contract");
  // a receipt: its rows are not recomputed here (Python files it as raw)
  const receipt = digestOf(7, "leaf_hash");
  proven = await prove(receipt);
  assert.equal(proven.state, "bad");
  assert.match(proven.why, /^this page cannot check that it is about this hash \(a receipt .*\); affidavit lookup can$/);
  assert.equal(proven.filed.kind, null);
});

test("a registered statement's subject is 'cannot check', never verified; without a statement it is not about it", async () => {
  const digest = digestOf(5, "statement_hash");
  const subject = "ab".repeat(32);
  const claim = (statement) => (a) => {
    const answer = structuredClone(a[lookup(digest)]);
    answer.hash = subject;
    answer.entries[0].matched = ["subject"];
    if (statement !== undefined) answer.entries[0].statement = statement;
    a[lookup(subject)] = answer;
  };
  let proven = await prove(subject, {change: claim("AAAA")});
  assert.equal(proven.state, "bad");
  assert.match(proven.why, /^this page cannot check .*subject and issuer/);
  proven = await prove(subject, {change: claim(undefined)});
  assert.equal(proven.state, "bad");
  assert.match(proven.why, /^it is not about this hash: the leaf holds [0-9a-f]{64} under no field, not subject$/);
  proven = await prove(subject, {change: claim(null)});
  assert.match(proven.why, /^it is not about this hash/);
  // the statement hash itself, with a statement given: the rows the page computes say it
  proven = await prove(digest, {change: (a) => { entryOf(a, digest).statement = "AAAA"; }});
  assert.equal(proven.state, "good");
});

// -- parseAnswer: the documented shape or nothing ---------------------------------------------

const MALFORMED = {  // name: [the answer, why it is refused (the reason the page shows)]
  "a number": [(a) => 5, "not an object"],
  "null": [(a) => null, "not an object"],
  "an array": [(a) => [a], "not an object"],
  "no entries": [(a) => ({...a, entries: undefined}), "entries or checkpoint missing"],
  "entries not a list": [(a) => ({...a, entries: {}}), "entries or checkpoint missing"],
  "no checkpoint": [(a) => ({...a, checkpoint: undefined}), "entries or checkpoint missing"],
  "a checkpoint not text": [(a) => ({...a, checkpoint: 5}), "entries or checkpoint missing"],
  "an entry null": [(a) => ({...a, entries: [null]}), "an entry is not an object"],
  "an entry a string": [(a) => ({...a, entries: ["x"]}), "an entry is not an object"],
  "an entry a list": [(a) => ({...a, entries: [[]]}), "an entry is not an object"],
  "no inclusion_proof": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: undefined}]}), "an entry lacks inclusion_proof or matched"],
  "inclusion_proof a string": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: "x"}]}), "an entry lacks inclusion_proof or matched"],
  "no matched": [(a) => ({...a, entries: [{...a.entries[0], matched: undefined}]}), "an entry lacks inclusion_proof or matched"],
  "matched a string": [(a) => ({...a, entries: [{...a.entries[0], matched: "deal_id"}]}), "an entry lacks inclusion_proof or matched"],
  "matched empty": [(a) => ({...a, entries: [{...a.entries[0], matched: []}]}), "an entry lacks inclusion_proof or matched"],
  "matched not text": [(a) => ({...a, entries: [{...a.entries[0], matched: ["deal_id", 5]}]}), "matched is not a list of field names"],
  "hashes missing": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: {tree_size: 11}}]}), "inclusion_proof.hashes is not a list of 64-hex hashes"],
  "a hash in capitals": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: {
    ...a.entries[0].inclusion_proof, hashes: ["AB".repeat(32)]}}]}), "inclusion_proof.hashes is not a list of 64-hex hashes"],
  "a hash too short": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: {
    ...a.entries[0].inclusion_proof, hashes: ["ab".repeat(31)]}}]}), "inclusion_proof.hashes is not a list of 64-hex hashes"],
  "leaf_hash missing": [(a) => ({...a, entries: [{...a.entries[0], leaf_hash: undefined}]}),
    "an entry's leaf_hash or kind is malformed"],
  "leaf_hash a number": [(a) => ({...a, entries: [{...a.entries[0], leaf_hash: 5}]}),
    "an entry's leaf_hash or kind is malformed"],
  "leaf_hash not hex": [(a) => ({...a, entries: [{...a.entries[0], leaf_hash: "x" + a.entries[0].leaf_hash.slice(1)}]}),
    "an entry's leaf_hash or kind is malformed"],
  "kind not text": [(a) => ({...a, entries: [{...a.entries[0], kind: 1}]}),
    "an entry's leaf_hash or kind is malformed"],
  "index negative": [(a) => ({...a, entries: [{...a.entries[0], index: -1}]}), "index is not a non-negative integer"],
  "index a fraction": [(a) => ({...a, entries: [{...a.entries[0], index: 1.5}]}), "index is not a non-negative integer"],
  "index text": [(a) => ({...a, entries: [{...a.entries[0], index: "1"}]}), "index is not a non-negative integer"],
  "index past 2^53": [(a) => ({...a, entries: [{...a.entries[0], index: 2 ** 53}]}), "index is not a non-negative integer"],
  "tree_size negative": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: {
    ...a.entries[0].inclusion_proof, tree_size: -1}}]}), "inclusion_proof.tree_size is not a non-negative integer"],
  "tree_size text": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: {
    ...a.entries[0].inclusion_proof, tree_size: "11"}}]}), "inclusion_proof.tree_size is not a non-negative integer"],
  "a statement not base64": [(a) => ({...a, entries: [{...a.entries[0], statement: "AB=="}]}),
    "an entry's statement is not base64"],
  "a statement a number": [(a) => ({...a, entries: [{...a.entries[0], statement: 5}]}),
    "an entry's statement is not base64"],
  "next_cursor text": [(a) => ({...a, next_cursor: "2"}), "next_cursor is not a non-negative integer"],
  "next_cursor negative": [(a) => ({...a, next_cursor: -1}), "next_cursor is not a non-negative integer"],
  "next_cursor a fraction": [(a) => ({...a, next_cursor: 2.5}), "next_cursor is not a non-negative integer"],
  "next_cursor not forward": [(a) => ({...a, next_cursor: 0}), "next_cursor does not move forward"],
  "a string": [(a) => "x", "not an object"],
  "leaf_hash a list": [(a) => ({...a, entries: [{...a.entries[0], leaf_hash: [a.entries[0].leaf_hash]}]}),
    "an entry's leaf_hash or kind is malformed"],
  "a hash a character long": [(a) => ({...a, entries: [{...a.entries[0], inclusion_proof: {
    ...a.entries[0].inclusion_proof, hashes: ["ab".repeat(32) + "a"]}}]}), "inclusion_proof.hashes is not a list of 64-hex hashes"],
  "leaf_hash a character long": [(a) => ({...a, entries: [{...a.entries[0], leaf_hash: "a" + a.entries[0].leaf_hash}]}),
    "an entry's leaf_hash or kind is malformed"],
};

for (const [name, [make, why]] of Object.entries(MALFORMED)) {
  test("an answer is refused whole: " + name, async () => {
    const honest = registryRoutes()[lookup(DEAL)];
    assert.throws(() => parseAnswer(make(structuredClone(honest)), 0),
      {message: "the registry's answer is malformed: " + why});
    const shown = await search(DEAL, {change: (a) => {
      a[lookup(DEAL)] = {status: 200, body: JSON.stringify(make(a[lookup(DEAL)]))};
    }});
    assert.equal(shown.verdict, "error");
    assert.equal(shown.text, "Could not read the registry: the registry's answer is malformed: " + why);
  });
}

test("the shapes an answer may have are read", () => {
  const honest = registryRoutes()[lookup(DEAL)];
  let parsed = parseAnswer(structuredClone(honest), 0);
  assert.deepEqual([parsed.entries.length, parsed.nextCursor, parsed.checkpoint], [2, null, fixtures.notes.log]);
  const rest = structuredClone(honest);
  delete rest.next_cursor;
  assert.equal(parseAnswer(rest, 0).nextCursor, null);
  parsed = parseAnswer({...structuredClone(honest), next_cursor: 3}, 2);
  assert.equal(parsed.nextCursor, 3);
  assert.throws(() => parseAnswer({...structuredClone(honest), next_cursor: 2}, 2), /does not move forward/);
  const edge = structuredClone(honest);
  edge.entries[0].index = 0;
  edge.entries[0].inclusion_proof.tree_size = 0;
  edge.entries[0].inclusion_proof.hashes = [];
  edge.entries[0].statement = null;
  edge.entries[1].statement = "AAAA";
  parsed = parseAnswer(edge, 0);
  assert.ok(!("statement" in parsed.entries[0]));
  assert.equal(parsed.entries[1].statement, "AAAA");
  assert.deepEqual(parseAnswer({entries: [], checkpoint: ""}, 0).entries, []);
  assert.ok(INDEX_OK(0) && INDEX_OK(2 ** 53 - 1) && !INDEX_OK(-1) && !INDEX_OK(0.5));
});

function INDEX_OK(value) {
  try {
    parseAnswer({entries: [], checkpoint: "", next_cursor: value}, -1);
    return true;
  } catch (e) {
    return false;
  }
}

// -- the page's verdict -------------------------------------------------------------------------

test("verified: every entry proven under the pin and about the hash", async () => {
  const shown = await search("deal-1");
  assert.equal(shown.verdict, "verified");
  assert.deepEqual(shown.cards.map((c) => c.verdict), ["verified", "verified"]);
  assert.match(shown.text, /verified: 2 entries about this hash, each proven in the log/);
  assert.match(shown.text, /Not a hash: looking up the SHA-256 of the text deal-1/);
  assert.ok(!/hashes are lowercase/.test(shown.text));
  assert.match(shown.cards[0].text, /^entry #1 bundle verified/);
  assert.match(shown.cards[0].text, /recomputed here from its bytes/);
  const one = await search(CONTRACT);
  assert.match(one.text, /verified: 1 entry about this hash/);
  assert.equal(requested.filter((url) => url.startsWith("/v1/lookup/")).length, 1);
  assert.ok(requested.includes(lookup(CONTRACT)));
});

test("one entry not proven: the page is not verified, and says which", async () => {
  const shown = await search("deal-1", {change: (a) => {
    const hashes = entryOf(a, DEAL, 1).inclusion_proof.hashes;
    hashes[0] = "11".repeat(32);
  }});
  assert.equal(shown.verdict, "not-verified");
  assert.deepEqual(shown.cards.map((c) => c.verdict), ["verified", "not-verified"]);
  assert.match(shown.text, /not verified: 2 entries, see the failures below/);
  assert.match(shown.cards[1].text, /not verified: its inclusion proof leads to another root/);
  assert.match(shown.cards[1].text, /the registry's claim: a dsse entry, not proven/);
});

test("not pinned: consistent, never verified", async () => {
  const shown = await search("deal-1", {vkeys: []});
  assert.equal(shown.verdict, "not-verified");
  assert.deepEqual(shown.cards.map((c) => c.verdict), ["not-verified", "not-verified"]);
  assert.match(shown.text, /not verified: 2 entries consistent with the registry's own key, which is not pinned/);
  assert.match(shown.text, /NOT PINNED/);
});

test("no entry: 'none' under a verified checkpoint, not verified under a bad one", async () => {
  const empty = (checkpoint) => (a) => {
    a[lookup("0".repeat(64))] = {hash: "0".repeat(64), entries: [], checkpoint, next_cursor: null};
  };
  let shown = await search("0".repeat(64), {change: empty(fixtures.notes.log)});
  assert.equal(shown.verdict, "none");
  assert.match(shown.text, /no entry about this hash below size 11 \(a lookup proves presence only/);
  shown = await search("0".repeat(64), {change: empty(fixtures.notes.forged)});
  assert.equal(shown.verdict, "not-verified");
  assert.match(shown.text, /not verified: the checkpoint is not verified under the pinned key/);
  shown = await search("0".repeat(64), {change: empty(fixtures.notes.forged), vkeys: []});
  assert.equal(shown.verdict, "none");
});

test("a bad checkpoint under the pin: not verified, whatever the entries", async () => {
  const shown = await search(DEAL, {change: (a) => { a[lookup(DEAL)].checkpoint = fixtures.notes.forged; }});
  assert.equal(shown.verdict, "not-verified");
  assert.match(shown.text, /not verified: the checkpoint is not verified under the pinned key/);
  assert.deepEqual(shown.cards.map((c) => c.verdict), ["not-verified", "not-verified"]);
});

test("a kind the bytes do not have is shown as the bytes' kind, not the registry's", async () => {
  const shown = await search(CONTRACT, {change: (a) => { entryOf(a, CONTRACT).kind = "fact"; }});
  assert.equal(shown.verdict, "not-verified");
  assert.match(shown.cards[0].text, /^entry #0 contract not verified: it is not about this hash: the leaf is a contract entry, not a fact/);
});

test("the query: empty, too long, a name, a hash in capitals, the cursor from the link", async () => {
  reset({search: "?q=", pathname: "/search", answers: registryRoutes()});
  await searchPage("");
  assert.equal(document.getElementById("app").textContent, "Type a hash or a name above.");
  reset({pathname: "/search", answers: registryRoutes()});
  await searchPage("x".repeat(1025));
  assert.equal(document.getElementById("app").textContent, "That is too long to search.");
  assert.equal(requested.length, 0);
  const capitals = DEAL.toUpperCase();
  let shown = await search(capitals, {change: (a) => {
    a[lookup(sha(capitals))] = {hash: sha(capitals), entries: [], checkpoint: fixtures.notes.log};
  }});
  assert.equal(shown.verdict, "none");
  assert.match(shown.text, /\(hashes are lowercase\)/);
  const long = "y".repeat(1024);
  shown = await search(long, {change: (a) => {
    a[lookup(sha(long))] = {hash: sha(long), entries: [], checkpoint: fixtures.notes.log};
  }});
  assert.equal(shown.verdict, "none");
  // the cursor: digits from the link go into the path, anything else is 0
  for (const [cursor, path] of [["5", lookup(DEAL) + "?cursor=5"], ["x5", lookup(DEAL)],
    ["0", lookup(DEAL)], ["1234567890123456", lookup(DEAL)]]) {
    const answers = registryRoutes();
    answers[lookup(DEAL) + "?cursor=5"] = answers[lookup(DEAL)];
    reset({search: "?" + new URLSearchParams({q: DEAL, cursor, vkey: fixtures.vkeys.log}),
      pathname: "/search", answers});
    await searchPage(DEAL);
    assert.equal(requested[0], path, cursor);
  }
});

test("the next page's link: the query, the cursor, and only the link's own keys", async () => {
  const shown = await search(DEAL, {change: (a) => { a[lookup(DEAL)].next_cursor = 7; }});
  const links = shown.app.all((node) => node.tag === "a" && node.textContent === "more entries");
  assert.equal(links.length, 1);
  assert.equal(links[0].getAttribute("href"), "/search?q=" + DEAL + "&cursor=7&vkey="
    + encodeURIComponent(fixtures.vkeys.log).replace(/%20/g, "+"));
  const none = await search(DEAL);
  assert.equal(none.app.all((node) => node.textContent === "more entries").length, 0);
});

test("links stay on this registry: a path, never another host or scheme", () => {
  assert.equal(safeHref("/search?q=1"), "/search?q=1");
  for (const bad of ["//evil.example/x", "https://evil.example/", "javascript:alert(1)", "search"])
    assert.equal(safeHref(bad), "/", bad);
});

test("home and search are told apart by the path; a failure is the page's 'error'", async () => {
  reset({pathname: "/search", search: "?q=" + DEAL, answers: {}});
  await main();
  const verdict = document.getElementById("app").all((n) => n.getAttribute("id") === "verdict")[0];
  assert.equal(verdict.getAttribute("data-verdict"), "error");
  assert.equal(verdict.textContent, "Could not read the registry: test.no_route");
  assert.ok(requested.includes(lookup(DEAL)));
  reset({pathname: "/", answers: {"/tlog/checkpoint": {status: 200, body: fixtures.notes.log}}});
  await main();
  assert.ok(requested.includes("/tlog/checkpoint"));
  assert.ok(!requested.some((url) => url.startsWith("/v1/lookup/")));
});
