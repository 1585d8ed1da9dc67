// What the page shows a reader, beyond #verdict's data-verdict: the colour (data-state) of the
// verdict line, of each entry's badge and of the pin's status, which must say the same as the
// verdict; what each card says the registry claimed; which hash is looked up for a query; that
// the page's requests carry no credentials; and that main wires the page together (issue 36:
// each of these was a surviving mutant of registry/explorer/explorer.js).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const {createHash} = require("node:crypto");
const {fixtures, search, digestOf, registryRoutes, reset, requested, requestOptions, document,
  documentListeners} = require("./page.cjs");

const DEAL = digestOf(1, "deal_id");
const lookup = (digest) => "/v1/lookup/" + digest;
const entryOf = (answers, digest, k = 0) => answers[lookup(digest)].entries[k];
const sha = (text) => createHash("sha256").update(text).digest("hex");
const empty = (digest) => ({hash: digest, entries: [], checkpoint: fixtures.notes.log, next_cursor: null});
const states = (node) => node.all((n) => n.getAttribute("data-state") !== null)
  .map((n) => n.getAttribute("data-state"));
const verdictLine = (shown) => shown.app.all((n) => n.getAttribute("id") === "verdict")[0];
const cardNodes = (shown) => shown.app.all((n) => n.tag === "article");

async function load(pathname, search_, {stored = null, answers = registryRoutes()} = {}) {
  // A page load through main, as the browser runs it (DOMContentLoaded).
  reset({pathname, search: search_, stored, answers});
  for (const listener of documentListeners.DOMContentLoaded) await listener();
  return document.getElementById("app");
}

// -- the verdict line and the entries' badges say what the verdict says ------------------------

const LINES = {
  "verified under the pin": [{}, "verified", "good", ["good", "good"],
    /^verified: 2 entries about this hash, each proven in the log$/],
  "not pinned": [{vkeys: []}, "not-verified", "warn", ["warn", "warn"],
    /^not verified: 2 entries consistent with the registry's own key, which is not pinned$/],
  "one proof wrong": [{change: (a) => { entryOf(a, DEAL, 1).inclusion_proof.hashes[0] = "11".repeat(32); }},
    "not-verified", "bad", ["good", "bad"], /^not verified: 2 entries, see the failures below$/],
  // a proof one hash long is refused by rootFromInclusion (an error, not another root)
  "one proof too long": [{change: (a) => { entryOf(a, DEAL, 1).inclusion_proof.hashes.push("00".repeat(32)); }},
    "not-verified", "bad", ["good", "bad"], /^not verified: 2 entries, see the failures below$/],
  "a forged checkpoint under the pin": [{change: (a) => { a[lookup(DEAL)].checkpoint = fixtures.notes.forged; }},
    "not-verified", "bad", ["bad", "bad"],
    /^not verified: the checkpoint is not verified under the pinned key$/],
  "no entry": [{change: (a) => { a[lookup(DEAL)] = empty(DEAL); }}, "none", "warn", [],
    /^no entry about this hash below size 11 /],
};

for (const [name, [options, verdict, line, cards, text]] of Object.entries(LINES)) {
  test("the verdict line's state is the verdict's: " + name, async () => {
    const shown = await search(DEAL, options);
    assert.equal(shown.verdict, verdict);
    const summary = verdictLine(shown);
    assert.deepEqual(states(summary), [line]);
    assert.match(summary.textContent, text);
    const heads = cardNodes(shown).map((card) => states(card.children[0]));
    assert.deepEqual(heads, cards.map((state) => [state]));
  });
}

test("a proof too long: its card is bad and says why", async () => {
  const shown = await search(DEAL, LINES["one proof too long"][0]);
  assert.equal(shown.cards[1].verdict, "not-verified");
  assert.match(shown.cards[1].text, /not verified: the proof is too long/);
});

// -- the cards: the entry, the registry's claim, what the leaf says -----------------------------

function fields(card) {
  // the card's <dl>: [[dt, dd], ...] as text
  const dl = card.children.find((n) => n.tag === "dl");
  const out = [];
  for (let k = 0; k < dl.children.length; k += 2)
    out.push([dl.children[k].textContent, dl.children[k + 1].textContent]);
  return out;
}

test("a card links to its entry and shows the registry's claim and what the leaf says", async () => {
  const shown = await search(DEAL);
  const [card] = cardNodes(shown);
  const head = card.children[0];
  assert.equal(head.tag, "h3");
  const link = head.all((n) => n.tag === "a")[0];
  assert.equal(link.textContent, "entry #1");
  assert.equal(link.getAttribute("href"), "/search?q=" + fixtures.leaves[1].leaf_hash);
  assert.equal(head.all((n) => n.tag === "span")[0].textContent, "bundle");
  const shownFields = fields(card);
  assert.deepEqual(shownFields.slice(0, 2), [
    ["matched", "deal_id = " + DEAL + " (the registry's claim: a bundle entry, recomputed here from its bytes)"],
    ["leaf hash", fixtures.leaves[1].leaf_hash],
  ]);
  // then what the leaf says (a summary beside the verdict)
  assert.deepEqual(shownFields[2], ["deal", "deal-1"]);
  // a claim of several fields is shown whole (and, not being what the bytes say, not verified)
  const claimed = await search(DEAL, {change: (a) => { entryOf(a, DEAL).matched = ["deal_id", "event_hash"]; }});
  assert.equal(fields(cardNodes(claimed)[0])[0][1],
    "deal_id, event_hash = " + DEAL + " (the registry's claim: a bundle entry, not proven)");
  // an entry appended by its hash only has no bytes to describe
  const hashOnly = await search(digestOf(10, "leaf_hash"));
  assert.deepEqual(fields(cardNodes(hashOnly)[0]).map(([dt]) => dt), ["matched", "leaf hash"]);
});

test("the heading names the hash looked up; a name's note says which hash it is", async () => {
  const shown = await search("deal-1");
  assert.equal(shown.app.children[0].textContent, "Entries about " + DEAL);
  assert.equal(shown.app.children[1].textContent,
    "Not a hash: looking up the SHA-256 of the text deal-1 (how names are filed): " + DEAL);
});

test("a query is a hash only when it is 64 lowercase hex, whole", async () => {
  for (const query of ["ab".repeat(32) + "0", "0" + "ab".repeat(32), "AB".repeat(32) + "0",
    "0" + "AB".repeat(32)]) {
    const shown = await search(query, {change: (a) => { a[lookup(sha(query))] = empty(sha(query)); }});
    assert.equal(requested.find((url) => url.startsWith("/v1/lookup/")), lookup(sha(query)), query);
    assert.equal(shown.verdict, "none", query);
    assert.ok(!shown.text.includes("hashes are lowercase"), query);
  }
  const upper = "AB".repeat(32);
  const shown = await search(upper, {change: (a) => { a[lookup(sha(upper))] = empty(sha(upper)); }});
  assert.match(shown.app.children[1].textContent, / \(hashes are lowercase\)$/);
});

test("a cursor of several digits in the link is the lookup's cursor", async () => {
  for (const cursor of ["12", "999999999999999"]) {
    const answers = registryRoutes();
    answers[lookup(DEAL) + "?cursor=" + cursor] = {...answers[lookup(DEAL)], next_cursor: null};
    await load("/search", "?" + new URLSearchParams({q: DEAL, cursor, vkey: fixtures.vkeys.log}),
      {answers});
    assert.equal(requested.find((url) => url.startsWith("/v1/lookup/")),
      lookup(DEAL) + "?cursor=" + cursor);
  }
});

// -- the pin's status --------------------------------------------------------------------------

test("the pin's status is coloured by what it says", async () => {
  const pinStates = () => states(document.getElementById("pin-status"));
  await search(DEAL, {vkeys: [fixtures.vkeys.log]});
  assert.deepEqual(pinStates(), ["good"]);
  await search(DEAL, {vkeys: []});
  assert.deepEqual(pinStates(), ["warn"]);
  const shown = await search(DEAL, {vkeys: [fixtures.vkeys.witness], stored: fixtures.vkeys.log});
  assert.deepEqual(pinStates(), ["good", "bad"]);
  assert.equal(shown.pin, "pinned: affidavit-registry (from this browser) the link names another"
    + " key (witness.example/w1): a conflict; it is NOT used, the key pinned in this browser is");
  await search(DEAL, {vkeys: [fixtures.vkeys.log, fixtures.vkeys.forger]});
  assert.deepEqual(pinStates(), ["bad"]);
});

test("main wires the pin form: a key typed in is pinned, a bad one is refused in red", async () => {
  await load("/search", "?q=" + DEAL);
  const form = document.getElementById("pin-form");
  const input = document.getElementById("pin-vkey");
  input.value = "not a key";
  await form.listeners.submit[0]({preventDefault: () => {}});
  assert.deepEqual(states(document.getElementById("pin-status")), ["bad"]);
  assert.equal(localStorage.getItem("affidavit.explorer.vkey"), null);
  input.value = fixtures.vkeys.log;
  await form.listeners.submit[0]({preventDefault: () => {}});
  assert.equal(localStorage.getItem("affidavit.explorer.vkey"), fixtures.vkeys.log);
  assert.equal(document.getElementById("pin-forget").listeners.click.length, 1);
});

// -- main, the home page, the requests ---------------------------------------------------------

test("/search without a query asks for one and looks nothing up", async () => {
  const app = await load("/search", "");
  assert.equal(app.textContent, "Type a hash or a name above.");
  assert.ok(!requested.some((url) => url.startsWith("/v1/lookup/")));
});

function homeRoutes() {
  const answers = registryRoutes();
  answers["/tlog/checkpoint"] = {status: 200, body: fixtures.notes.cosigned};
  answers["/protocol/merkle/entries?start=1&end=11"] = {entries: fixtures.leaves.slice(1, 10)
    .map((leaf, k) => ({leaf_index: k + 1, leaf_hash: leaf.leaf_hash, leaf_data_b64: leaf.data_b64}))};
  answers["/protocol/adapter-contracts"] = {contracts: []};
  return answers;
}

test("the home page shows the checkpoint's state; a checkpoint that cannot be read is an error", async () => {
  let app = await load("/", "?vkey=" + encodeURIComponent(fixtures.vkeys.log), {answers: homeRoutes()});
  assert.equal(app.all((n) => n.getAttribute("id") === "verdict").length, 0);
  assert.match(app.textContent, /checkpoint signature verified under affidavit-registry \(pinned in the link/);
  const answers = homeRoutes();
  answers["/tlog/checkpoint"] = {status: 503, body: "down"};
  app = await load("/", "", {answers});
  const verdict = app.all((n) => n.getAttribute("id") === "verdict")[0];
  assert.equal(verdict.getAttribute("data-verdict"), "error");
  assert.equal(verdict.textContent, "Could not read the registry: HTTP 503");
});

test("the page's requests carry no credentials", async () => {
  const made = [];
  await load("/", "", {answers: homeRoutes()});
  made.push(...requestOptions);
  await search(DEAL, {vkeys: []});
  made.push(...requestOptions);
  await search(digestOf(10, "leaf_hash"));
  made.push(...requestOptions);
  assert.ok(made.length >= 8, String(made.length));
  for (const options of made) assert.equal(options && options.credentials, "omit");
});

test("the page's elements hold text only, and their links stay on this registry", () => {
  // every value an answer carries is put on the page as text (explorer.js "Building the page")
  const inner = el("b", {}, "kept");
  const node = el("a", {href: "//evil.example/x", class: "hash", title: null, "data-x": undefined,
    "data-n": 5}, "<img src=x onerror=alert(1)>", null, undefined, false, 0, ["y", ["z"]], inner);
  assert.equal(node.tag, "a");
  assert.equal(node.getAttribute("href"), "/");
  assert.equal(node.className, "hash");
  assert.deepEqual([node.getAttribute("title"), node.getAttribute("data-x"), node.getAttribute("data-n")],
    [null, null, "5"]);
  assert.deepEqual(node.children.map((child) => child.tag || child.textContent),
    ["<img src=x onerror=alert(1)>", "0", "y", "z", "b"]);
  assert.equal(node.children[4], inner);
  assert.equal(node.children.filter((child) => child.tag !== undefined).length, 1);
  assert.equal(el("a", {href: "/search?q=1"}).getAttribute("href"), "/search?q=1");
  assert.equal(el("a", {href: "javascript:alert(1)"}).getAttribute("href"), "/");
  assert.deepEqual([el("p").children, [...el("p").attributes]], [[], []]);
});
