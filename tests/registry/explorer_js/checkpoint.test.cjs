// C2SP signed notes and checkpoints in the page (docs/formats.md §6; c2sp.org/signed-note), and
// whose key the page trusts: the key pinned in this browser, else the one key the link names, else
// the registry's own, which is "not pinned" and so never "verified". The notes and keys are made
// by our Python code (verify/crypto/checkpoint.py; fixtures.json).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const {fixtures, reset, registryRoutes, search, digestOf, document} = require("./page.cjs");

const {notes, vkeys} = fixtures;
const DEAL = digestOf(1, "deal_id");
const [BODY, SIGNATURES] = notes.log.split("\n\n");
const lines = BODY.split("\n");
const note = (body, signatures = SIGNATURES) => body + "\n\n" + signatures;
const b64 = (bytes) => Buffer.from(bytes).toString("base64");

test("a checkpoint is read as Python writes it", () => {
  const parsed = parseNote(notes.cosigned);
  assert.equal(parsed.origin, "affidavit-registry");
  assert.equal(parsed.size, BigInt(fixtures.size));
  assert.equal(bytesToHex(parsed.root), fixtures.root);
  assert.equal(parsed.text, BODY + "\n");
  assert.deepEqual(parsed.signatures.map((s) => s.name), ["affidavit-registry", "witness.example/w1"]);
  assert.equal(parsed.signatures[0].keyId.length, 4);
  assert.equal(parsed.signatures[0].signature.length, 64);
  assert.equal(bytesToHex(parsed.signatures[0].keyId), vkeys.log.split("+")[1]);
});

test("a size of 0, and of 20 digits, is read; 21 digits or a leading zero is not", () => {
  assert.equal(parseNote(note([lines[0], "0", lines[2]].join("\n"))).size, 0n);
  assert.equal(parseNote(note([lines[0], "18446744073709551615", lines[2]].join("\n"))).size,
    18446744073709551615n);
  for (const size of ["184467440737095516150", "011", "-1", "1.0", "", " 11", "11 ", "x"]) {
    assert.throws(() => parseNote(note([lines[0], size, lines[2]].join("\n"))), /not a checkpoint/,
      JSON.stringify(size));
  }
});

test("a malformed note or checkpoint is refused", () => {
  const cases = [
    [BODY + "\n" + SIGNATURES, /not a signed note/],  // no blank line before the signatures
    [notes.log.slice(0, -1), /not a signed note/],  // no final newline
    [note(BODY, SIGNATURES.replace("\u2014 ", "- ")), /a malformed signature line/],
    [note(BODY, SIGNATURES.replace("\u2014 ", "\u2014  ")), /a malformed signature line/],
    [note(BODY, SIGNATURES.replace("\n", "  \n")), /a malformed signature line/],
    [note(BODY, "x" + SIGNATURES), /a malformed signature line/],
    [note(BODY, SIGNATURES + "\n"), /a malformed signature line/],  // an empty signature line
    [note(BODY, "\u2014 affidavit-registry " + b64([1, 2, 3, 4]) + "\n"), /a signature line too short/],
    [note(BODY, "\u2014 affidavit-registry AB==\n"), /canonical base64/],
    [note(lines.slice(0, 2).join("\n")), /not a checkpoint/],
    [note([lines[0], lines[1], b64(new Uint8Array(31))].join("\n")), /the root is not 32 bytes/],
    [note([lines[0], lines[1], b64(new Uint8Array(33))].join("\n")), /the root is not 32 bytes/],
    [note([lines[0], lines[1], lines[2].slice(0, -2) + "B="].join("\n")), /canonical base64/],
  ];
  for (const [text, why] of cases) assert.throws(() => parseNote(text), why, JSON.stringify(text));
  // five bytes (a key ID and one byte) is long enough to be read
  assert.equal(parseNote(note(BODY, "\u2014 x " + b64([1, 2, 3, 4, 5]) + "\n")).signatures[0]
    .signature.length, 1);
});

test("a verifier key is name+keyid+base64 of 0x01 || an Ed25519 key, its ID recomputed", async () => {
  const parsed = await parseVkey("  " + vkeys.log + "\n");
  assert.equal(parsed.name, "affidavit-registry");
  assert.equal(b64(parsed.key), fixtures.public_key_base64);
  assert.equal((await parseVkey(vkeys.witness)).name, "witness.example/w1");
  const [, name, id, key] = /^([^+]+)\+([0-9a-f]{8})\+(.*)$/.exec(vkeys.log);
  const raw = Buffer.from(key, "base64");
  const cases = [
    [name + "+" + id, /name\+keyid\+base64/],
    [name + "+" + id.toUpperCase() + "+" + key, /name\+keyid\+base64/],
    [name + "+" + id.slice(1) + "+" + key, /name\+keyid\+base64/],
    ["a b+" + id + "+" + key, /name\+keyid\+base64/],
    ["+" + id + "+" + key, /name\+keyid\+base64/],
    [name + "+" + id + "+" + key + " x", /name\+keyid\+base64/],
    [name + "+" + id + "+" + b64(raw.subarray(0, 32)), /not an Ed25519 verifier key/],
    [name + "+" + id + "+" + b64(Buffer.concat([raw, Buffer.of(0)])), /not an Ed25519 verifier key/],
    [name + "+" + id + "+" + b64(Buffer.concat([Buffer.of(2), raw.subarray(1)])), /not an Ed25519 verifier key/],
    ["other-name+" + id + "+" + key, /the key ID does not match/],
    [name + "+" + (id[0] === "0" ? "1" : "0") + id.slice(1) + "+" + key, /the key ID does not match/],
  ];
  for (const [text, why] of cases) await assert.rejects(parseVkey(text), why, text);
});

test("a note verifies only under the key that signed it, by its name and key ID", async () => {
  const log = await parseVkey(vkeys.log), forger = await parseVkey(vkeys.forger);
  const witness = await parseVkey(vkeys.witness);
  await verifyNote(parseNote(notes.log), log.name, log.key);
  await verifyNote(parseNote(notes.cosigned), log.name, log.key);
  await verifyNote(parseNote(notes.cosigned), witness.name, witness.key);
  await verifyNote(parseNote(notes.forged), forger.name, forger.key);
  await assert.rejects(verifyNote(parseNote(notes.forged), log.name, log.key), /no signature by the key affidavit-registry/);
  await assert.rejects(verifyNote(parseNote(notes.log), witness.name, witness.key), /no signature by the key witness/);
  // the log's key under another name: the key ID differs, so no line is its
  await assert.rejects(verifyNote(parseNote(notes.log), "other", log.key), /no signature by the key other/);
  // the right name and key ID, a changed signature or text: it does not verify
  const sig = parseNote(notes.log).signatures[0];
  const changed = Buffer.from(sig.signature); changed[0] ^= 1;
  const line = "\u2014 affidavit-registry " + b64(Buffer.concat([sig.keyId, changed])) + "\n";
  await assert.rejects(verifyNote(parseNote(note(BODY, line)), log.name, log.key), /does not verify/);
  const otherRoot = b64(new Uint8Array(32).fill(7));
  await assert.rejects(verifyNote(parseNote(note([lines[0], lines[1], otherRoot].join("\n"))),
    log.name, log.key), /does not verify/);
  // the log's line (its key ID, its good signature) under another name is not the log's line:
  // a signature is the key's by its name and key ID together (c2sp.org/signed-note)
  const renamed = note(BODY, SIGNATURES.replace("\u2014 affidavit-registry ", "\u2014 witness.example/w1 "));
  assert.notEqual(renamed, notes.log);
  await assert.rejects(verifyNote(parseNote(renamed), log.name, log.key), /no signature by the key affidavit-registry/);
  // the forger's line first, the log's line after: the log's is found
  const both = note(BODY, notes.forged.split("\n\n")[1] + SIGNATURES);
  await verifyNote(parseNote(both), log.name, log.key);
});

// -- whose key: pinnedKey and checkCheckpoint --------------------------------------------------

function at({vkeys: keys = [], stored = null} = {}) {
  const params = new URLSearchParams();
  for (const key of keys) params.append("vkey", key);
  reset({search: "?" + params.toString(), stored, answers: registryRoutes()});
}

test("the pin: this browser's key wins; else the link's one key; else none", async () => {
  at();
  assert.equal(await pinnedKey(), null);
  at({vkeys: ["", "  "]});
  assert.equal(await pinnedKey(), null);
  at({vkeys: [vkeys.log]});
  let pin = await pinnedKey();
  assert.deepEqual([pin.name, pin.source, pin.conflict], ["affidavit-registry", "the link (?vkey=)", null]);
  at({vkeys: [vkeys.log, " " + vkeys.log + " "]});  // the same key twice is one key
  assert.equal((await pinnedKey()).source, "the link (?vkey=)");
  at({vkeys: [vkeys.log, vkeys.forger]});
  await assert.rejects(pinnedKey(), /the link names 2 different keys/);
  at({vkeys: [vkeys.witness, vkeys.forger], stored: vkeys.log});
  pin = await pinnedKey();
  assert.deepEqual([pin.name, pin.source], ["affidavit-registry", "this browser"]);
  assert.match(pin.conflict, /the link names another key \(witness\.example\/w1, affidavit-registry\): a conflict; it is NOT used/);
  at({vkeys: [" " + vkeys.log], stored: vkeys.log + " "});
  assert.equal((await pinnedKey()).conflict, null);
  at({stored: vkeys.log});
  assert.equal((await pinnedKey()).conflict, null);
  at({stored: "not a key"});
  await assert.rejects(pinnedKey(), /name\+keyid\+base64/);
  at({vkeys: ["not a key"]});
  await assert.rejects(pinnedKey(), /name\+keyid\+base64/);
});

test("checkCheckpoint: verified only under the pin; the registry's own key is 'not pinned'", async () => {
  at({vkeys: [vkeys.log]});
  let check = await checkCheckpoint(notes.log);
  assert.deepEqual([check.ok, check.pinned], [true, true]);
  assert.equal(check.by, "affidavit-registry (pinned in the link (?vkey=))");
  assert.equal(bytesToHex(check.parsed.root), fixtures.root);
  at({stored: vkeys.log});
  assert.equal((await checkCheckpoint(notes.cosigned)).by, "affidavit-registry (pinned in this browser)");
  at({vkeys: [vkeys.log]});
  check = await checkCheckpoint(notes.forged);
  assert.deepEqual([check.ok, check.pinned], [false, true]);
  assert.match(check.why, /no signature by the key affidavit-registry/);
  at({vkeys: [vkeys.witness]});  // a key of another name: never the log's
  check = await checkCheckpoint(notes.cosigned);
  assert.deepEqual([check.ok, check.pinned], [false, true]);
  assert.equal(check.why, "the pinned key names witness.example/w1, the checkpoint's origin is affidavit-registry");
  at({vkeys: [vkeys.log, vkeys.forger]});
  check = await checkCheckpoint(notes.log);
  assert.deepEqual([check.ok, check.pinned], [false, true]);
  assert.match(check.why, /^the pinned key is unusable: the link names 2 different keys/);
  at();
  check = await checkCheckpoint(notes.log);
  assert.deepEqual([check.ok, check.pinned, check.by], [true, false, "the key this registry serves"]);
  at();
  check = await checkCheckpoint(notes.forged);
  assert.deepEqual([check.ok, check.pinned], [false, false]);
  // without a pin, the served key must be readable
  reset({answers: {"/protocol/merkle/public-key": {public_key_base64: "AB=="}}});
  check = await checkCheckpoint(notes.log);
  assert.deepEqual([check.ok, check.pinned], [false, false]);
  reset({answers: {"/protocol/merkle/public-key": {status: 500, body: {code: "x.down"}}}});
  check = await checkCheckpoint(notes.log);
  assert.deepEqual([check.ok, check.pinned, check.why], [false, false, "x.down"]);
  await assert.rejects(checkCheckpoint("not a note"), /not a signed note/);
});

test("the checkpoint's line: good when verified under a pin, warn when not pinned, bad when not verified", () => {
  const line = (check) => { const node = checkpointLine(check); return [node.getAttribute("data-state"), node.className, node.textContent]; };
  let [state, cls, text] = line({ok: true, pinned: true, by: "K"});
  assert.deepEqual([state, cls], ["good", "badge good"]);
  assert.equal(text, "checkpoint signature verified under K");
  [state, cls, text] = line({ok: true, pinned: false, by: "K"});
  assert.equal(state, "warn");
  assert.match(text, /^checkpoint signature consistent with K: NOT PINNED, so not verified/);
  [state, , text] = line({ok: false, pinned: false, why: "W"});
  assert.deepEqual([state, text], ["bad", "checkpoint NOT verified: W"]);
  [state] = line({ok: false, pinned: true, why: "W"});
  assert.equal(state, "bad");
});

test("without WebCrypto (no secure context) nothing is verified", async () => {
  at({vkeys: [vkeys.log]});
  globalThis.isSecureContext = false;
  const check = await checkCheckpoint(notes.log);
  assert.deepEqual([check.ok, check.pinned], [false, true]);
  assert.match(check.why, /no WebCrypto here/);
  await assert.rejects(sha256(Uint8Array.of(1)), /no WebCrypto here/);
  globalThis.isSecureContext = true;
});

test("the pin's status: who is pinned, a conflict shown, an unusable pin said", async () => {
  let shown = await search(DEAL, {vkeys: [vkeys.log]});
  assert.equal(shown.pin, "pinned: affidavit-registry (from the link (?vkey=))");
  shown = await search(DEAL, {vkeys: []});
  assert.match(shown.pin, /^not pinned: nothing can be shown as verified until you pin the log key/);
  assert.equal(shown.verdict, "not-verified");
  shown = await search(DEAL, {vkeys: [vkeys.witness], stored: vkeys.log});
  assert.match(shown.pin, /^pinned: affidavit-registry \(from this browser\) the link names another key \(witness\.example\/w1\)/);
  shown = await search(DEAL, {vkeys: [vkeys.log, vkeys.forger]});
  assert.match(shown.pin, /^the pinned key is unusable: the link names 2 different keys/);
  assert.equal(shown.verdict, "not-verified");
});

test("the pin form stores a key only when it is a verifier key; forget removes it", async () => {
  at();
  wirePinForm();
  const form = document.getElementById("pin-form");
  const input = document.getElementById("pin-vkey");
  let prevented = false;
  input.value = "not a key";
  await form.listeners.submit[0]({preventDefault: () => { prevented = true; }});
  assert.ok(prevented);
  assert.equal(localStorage.getItem("affidavit.explorer.vkey"), null);
  assert.equal(location.reloaded, false);
  assert.match(document.getElementById("pin-status").textContent, /name\+keyid\+base64/);
  input.value = "  " + vkeys.log + "\n";
  await form.listeners.submit[0]({preventDefault: () => {}});
  assert.equal(localStorage.getItem("affidavit.explorer.vkey"), vkeys.log);
  assert.equal(location.reloaded, true);
  location.reloaded = false;
  document.getElementById("pin-forget").listeners.click[0]();
  assert.equal(localStorage.getItem("affidavit.explorer.vkey"), null);
  assert.equal(location.reloaded, true);
});
