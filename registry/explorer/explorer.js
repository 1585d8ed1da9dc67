// The Affidavit log explorer (issue 26; docs/transparency.md "The explorer").
//
// Every value shown comes from this registry's JSON routes and is put on the page with
// textContent, never as HTML. Nothing is trusted: the page says "verified" for an entry only when
// it checked what `affidavit lookup` checks (registry/clients/lookup.py; issue 31):
//   1. the checkpoint's Ed25519 signature verifies under the key the reader pinned (a C2SP
//      verifier key in localStorage or in ?vkey=), with WebCrypto (c2sp.org/signed-note);
//   2. the entry's inclusion proof leads from its leaf hash to the checkpoint's root, in a tree
//      of the checkpoint's size (RFC 9162 §2.1.3.2);
//   3. the entry's bytes hash to its leaf hash, SHA-256(0x00 || bytes) (RFC 9162 §2.1.1);
//   4. those bytes are filed under the searched hash, as the kind and in every field the
//      registry says: the index rules of docs/formats.md §11, recomputed here from the bytes
//      alone (subjects.js); the registry's "kind" and "matched" are claims until then.
// Without a pin the checkpoint is checked against the key the registry serves itself and marked
// "not pinned": consistent, never "verified". The pin is the reader's: a key in the link that
// differs from the pinned one is shown as a conflict and not used. Every value of an answer that
// goes into a URL is validated (an index and a cursor are digits, a hash 64 hex) and encoded; an
// answer that is not the documented shape is refused whole, as the CLI refuses it.
"use strict";

const HEX64 = /^[0-9a-f]{64}$/;
const PIN_KEY = "affidavit.explorer.vkey";
const RECENT = 10;
const MAX_QUERY = 1024;
const enc = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Building the page: elements with text only.

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (name === "class") node.className = value;
    else if (name === "href") node.setAttribute("href", safeHref(value));
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function safeHref(value) {
  // Only this registry's own pages: a path starting with one "/" (never "//host" or a scheme).
  const text = String(value);
  return text.startsWith("/") && !text.startsWith("//") ? text : "/";
}

// Stryker disable all: links, fields, badges and the byte preview are rendering; the states they show are decided and tested elsewhere
function searchLink(query, label) {
  return el("a", {href: "/search?q=" + encodeURIComponent(query), class: "hash"}, label || query);
}

function field(name, ...value) {
  return [el("dt", {}, name), el("dd", {}, ...value)];
}

function badge(state, text) {
  return el("span", {class: "badge " + state, "data-state": state}, text);
}

function show(...nodes) {
  const app = document.getElementById("app");
  app.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
}

function preview(bytes) {
  const text = new TextDecoder("utf-8", {fatal: false}).decode(bytes.subarray(0, 2048));
  return text + (bytes.length > 2048 ? "…" : "");
}
// Stryker restore all

// ---------------------------------------------------------------------------------------------
// Bytes, hashes, RFC 9162.

function hexToBytes(hex) {
  if (!/^([0-9a-f]{2})*$/.test(hex)) throw new Error("not lowercase hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function b64ToBytes(text) {
  // Strict: re-encoding must give the text back (docs/formats.md "Notation").
  const binary = atob(text);
  const out = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  if (btoa(binary) !== text) throw new Error("not canonical base64");
  return out;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
}

function equal(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function subtle() {
  if (!window.isSecureContext || !window.crypto || !window.crypto.subtle)
    throw new Error("this browser offers no WebCrypto here (open the explorer over https)");
  return window.crypto.subtle;
}

async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

const leafHash = (data) => sha256(concat(Uint8Array.of(0), data));  // RFC 9162 §2.1.1
const nodeHash = (l, r) => sha256(concat(Uint8Array.of(1), l, r));

// RFC 9162 §2.1.3.2: the root an inclusion proof leads to (BigInt: indexes past 2^31).
async function rootFromInclusion(index, size, leaf, proof) {
  let fn = BigInt(index), sn = BigInt(size) - 1n, r = leaf;
  if (fn > sn) throw new Error("the index is not below the tree size");
  for (const p of proof) {
    if (sn === 0n) throw new Error("the proof is too long");
    if ((fn & 1n) === 1n || fn === sn) {
      r = await nodeHash(p, r);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n; sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the proof is too short");
  return r;
}

// ---------------------------------------------------------------------------------------------
// C2SP signed notes, checkpoints and verifier keys (docs/formats.md §6).

function parseNote(note) {
  const cut = note.lastIndexOf("\n\n");
  if (cut < 0 || !note.endsWith("\n")) throw new Error("not a signed note");
  const text = note.slice(0, cut + 1);
  const signatures = [];
  for (const line of note.slice(cut + 2, -1).split("\n")) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!match) throw new Error("a malformed signature line");
    const raw = b64ToBytes(match[2]);
    if (raw.length < 5) throw new Error("a signature line too short");
    signatures.push({name: match[1], keyId: raw.subarray(0, 4), signature: raw.subarray(4)});
  }
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3 || !/^(0|[1-9][0-9]{0,19})$/.test(lines[1]))
    throw new Error("not a checkpoint");
  const root = b64ToBytes(lines[2]);
  if (root.length !== 32) throw new Error("the root is not 32 bytes");
  return {text, signatures, origin: lines[0], size: BigInt(lines[1]), root};
}

async function keyId(name, publicKey) {
  // SHA-256(name || 0x0A || 0x01 || key)[:4] (signed-note, Ed25519 key type 0x01)
  const digest = await sha256(concat(enc.encode(name), Uint8Array.of(0x0a, 0x01), publicKey));
  return digest.subarray(0, 4);
}

async function parseVkey(vkey) {
  // name+keyid+base64: a name has no "+", the base64 may (c2sp.org/signed-note)
  const parts = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey.trim());
  if (!parts) throw new Error("a verifier key is name+keyid+base64");
  parts.shift();
  const raw = b64ToBytes(parts[2]);
  if (raw.length !== 33 || raw[0] !== 0x01) throw new Error("not an Ed25519 verifier key");
  const key = raw.subarray(1);
  if (bytesToHex(await keyId(parts[0], key)) !== parts[1])
    throw new Error("the key ID does not match the name and key");
  return {name: parts[0], key};
}

async function verifyNote(parsed, name, publicKey) {
  const id = await keyId(name, publicKey);
  const line = parsed.signatures.find((s) => s.name === name && equal(s.keyId, id));
  if (!line) throw new Error("no signature by the key " + name);
  const key = await subtle().importKey("raw", publicKey, {name: "Ed25519"}, false, ["verify"]);
  const ok = await subtle().verify({name: "Ed25519"}, key, line.signature, enc.encode(parsed.text));
  if (!ok) throw new Error("the signature does not verify");
}

// ---------------------------------------------------------------------------------------------
// The registry's JSON, fetched from this origin only.

async function getJSON(path) {
  const response = await fetch(path, {headers: {accept: "application/json"}, credentials: "omit"});
  const body = await response.json();
  if (!response.ok) throw new Error((body && body.code) || "HTTP " + response.status);
  return body;
}

async function getText(path) {
  const response = await fetch(path, {credentials: "omit"});
  if (!response.ok) throw new Error("HTTP " + response.status);
  return response.text();
}

async function leafBytes(index) {
  const leaf = await getJSON("/protocol/merkle/leaf/" + encodeURIComponent(index));
  return b64ToBytes(leaf.leaf_data_b64);
}

// ---------------------------------------------------------------------------------------------
// Trust: the pinned key, or the registry's own marked "not pinned".

function linkKeys() {
  // The distinct verifier keys the link names (?vkey=, any number of times).
  const keys = new URLSearchParams(location.search).getAll("vkey").map((k) => k.trim());
  return [...new Set(keys.filter((k) => k))];
}

async function pinnedKey() {
  // -> {name, key, source, conflict} or null. The pin is the reader's: a key stored in this
  // browser wins, and a key in the link that differs from it is a conflict, shown, never used.
  // Without a stored pin, the link's key is used only when the link names one key.
  const stored = window.localStorage ? localStorage.getItem(PIN_KEY) : null;
  const links = linkKeys();
  if (stored) {
    const others = links.filter((text) => text !== stored.trim());
    const conflict = others.length ? "the link names another key ("
      + others.map((text) => text.split("+")[0]).join(", ") + "): a conflict; it is NOT used,"
      + " the key pinned in this browser is" : null;
    return {...await parseVkey(stored), source: "this browser", conflict};
  }
  if (links.length > 1) throw new Error("the link names " + links.length + " different keys");
  if (!links.length) return null;
  return {...await parseVkey(links[0]), source: "the link (?vkey=)", conflict: null};
}

async function checkCheckpoint(note) {
  // -> {parsed, pinned: bool, ok: bool, why, by}
  const parsed = parseNote(note);
  let pin;
  try {
    pin = await pinnedKey();
  } catch (e) {
    return {parsed, pinned: true, ok: false, why: "the pinned key is unusable: " + e.message};
  }
  try {
    if (pin) {
      if (pin.name !== parsed.origin)
        return {parsed, pinned: true, ok: false, why: "the pinned key names " + pin.name
          + ", the checkpoint's origin is " + parsed.origin};
      await verifyNote(parsed, pin.name, pin.key);
      return {parsed, pinned: true, ok: true, by: pin.name + " (pinned in " + pin.source + ")"};
    }
    const served = await getJSON("/protocol/merkle/public-key");
    await verifyNote(parsed, parsed.origin, b64ToBytes(served.public_key_base64));
    return {parsed, pinned: false, ok: true, by: "the key this registry serves"};
  } catch (e) {
    return {parsed, pinned: Boolean(pin), ok: false, why: e.message};
  }
}

function checkpointLine(check) {
  if (!check.ok) return badge("bad", "checkpoint NOT verified: " + check.why);
  if (!check.pinned)
    return badge("warn", "checkpoint signature consistent with " + check.by
      + ": NOT PINNED, so not verified (pin the log key you obtained out of band)");
  return badge("good", "checkpoint signature verified under " + check.by);
}

async function showPinStatus() {
  const status = document.getElementById("pin-status");
  try {
    const pin = await pinnedKey();
    status.replaceChildren(pin
      ? badge("good", "pinned: " + pin.name + " (from " + pin.source + ")")
      : badge("warn", "not pinned: nothing can be shown as verified until you pin the log key"));
    if (pin && pin.conflict) status.append(" ", badge("bad", pin.conflict));
  } catch (e) {
    status.replaceChildren(badge("bad", "the pinned key is unusable: " + e.message));
  }
}

function wirePinForm() {
  const form = document.getElementById("pin-form");
  const input = document.getElementById("pin-vkey");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await parseVkey(input.value);
      localStorage.setItem(PIN_KEY, input.value.trim());
      location.reload();
    } catch (e) {
      document.getElementById("pin-status").replaceChildren(badge("bad", e.message));
    }
  });
  document.getElementById("pin-forget").addEventListener("click", () => {
    localStorage.removeItem(PIN_KEY);
    location.reload();
  });
}

// ---------------------------------------------------------------------------------------------
// What a leaf is (a summary of registry/index.py; the registry's "kind" is shown beside it).

// Stryker disable all: what a leaf says, shown beside the verdict (a summary); the verdict's kind is subjects.js's
function decodeJSON(bytes) {
  try {
    return JSON.parse(new TextDecoder("utf-8", {fatal: true}).decode(bytes));
  } catch (e) {
    return undefined;
  }
}

function decodeLeaf(bytes) {
  if (bytes.length && bytes[0] === 0xd2) return {kind: "scitt"};
  if (bytes.length === 32) return {kind: "digest"};
  const doc = decodeJSON(bytes);
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) return {kind: "raw"};
  if (doc.record_type === "affidavit.registry.adapter_entry.v1") return {kind: "contract", doc};
  if ("event_hash" in doc && "deal_id" in doc && "event_type" in doc) return {kind: "bundle", doc};
  if ("receipt_version" in doc) return {kind: "receipt", doc};
  if ("relation" in doc && "entity" in doc) return {kind: "fact", doc};
  if ("payloadType" in doc) return {kind: "dsse", doc};
  return {kind: "raw"};
}

function text(value) {
  return value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
}

function hashValue(value) {
  return HEX64.test(String(value)) ? searchLink(String(value)) : el("code", {}, text(value));
}

function describe(decoded, bytes, entry) {
  const doc = decoded.doc || {};
  const out = [];
  if (decoded.kind === "contract") {
    const e = doc.entry || {}, d = doc.declaration || {};
    const ident = text(e.adapter_id) + "@" + text(e.adapter_version);
    out.push(...field("contract", searchLink(ident, ident)));
    out.push(...field("status", text(e.status)), ...field("channel", text(e.distribution_channel)));
    out.push(...field("contract_hash", hashValue(e.contract_hash)));
    out.push(...field("entry_hash", hashValue(e.entry_hash)));
    out.push(...field("publisher", text(e.publisher_id) + " / " + text(e.publisher_key_id)));
    out.push(...field("published_at", text(e.published_at)));
    out.push(...field("validator", text(d.validator_name) + " " + text(d.validator_version)));
    out.push(...field("output_fields", text((d.output_fields || []).join(", "))));
    for (const [name, value] of Object.entries(d)) {
      if (!(name in e) && !["output_fields", "allowed_policy_fields", "validator_name",
        "validator_version", "input_schema_version", "adapter_contract_version"].includes(name))
        out.push(...field(name, text(value)));
    }
  } else if (decoded.kind === "bundle") {
    out.push(...field("deal", searchLink(text(doc.deal_id))));
    out.push(...field("decision event", text(doc.event_type) + " at " + text(doc.timestamp)));
    out.push(...field("event_hash", hashValue(doc.event_hash)));
    out.push(...field("event_id", text(doc.event_id)));
  } else if (decoded.kind === "receipt") {
    const adapter = doc.adapter || {}, source = doc.source || {}, content = doc.content || {};
    const steps = Array.isArray(doc.transformations) ? doc.transformations : [];
    out.push(...field("adapter", text(adapter.name) + " " + text(adapter.version)));
    out.push(...field("transformations", steps.length
      ? el("ol", {}, steps.map((step) => el("li", {}, text(step)))) : "none (byte preserving)"));
    out.push(...field("capability", text(doc.capability)));
    out.push(...field("source", hashValue(source.sha256), " (" + text(source.size) + " bytes)"));
    out.push(...field("content", hashValue(content.sha256), " (" + text(content.size) + " bytes)"));
    out.push(...field("issued_at", text(doc.issued_at)));
  } else if (decoded.kind === "fact") {
    const value = doc.value || {};
    out.push(...field("entity", searchLink(text(doc.entity))));
    out.push(...field("relation", text(doc.relation)));
    out.push(...field("value", el("code", {}, text(value.v)), " (" + text(value.type) + ")"));
    out.push(...field("source", text(doc.source)), ...field("scope", text(doc.scope)));
    out.push(...field("confidence", text(doc.confidence)), ...field("ts", text(doc.ts)));
    const parents = Array.isArray(doc.derived_from) ? doc.derived_from : [];
    out.push(...field("derived from", parents.length
      ? el("ul", {}, parents.map((p) => el("li", {}, hashValue(p)))) : "nothing"));
  } else if (decoded.kind === "dsse") {
    out.push(...field("payloadType", text(doc.payloadType)));
    let statement;
    try { statement = decodeJSON(b64ToBytes(doc.payload)); } catch (e) { statement = undefined; }
    if (statement && typeof statement === "object") {
      out.push(...field("predicateType", text(statement.predicateType)));
      for (const subject of Array.isArray(statement.subject) ? statement.subject : []) {
        out.push(...field("subject", searchLink(text(subject.name)), " ",
          hashValue((subject.digest || {}).sha256)));
      }
      const decision = statement.predicate && statement.predicate.decision;
      if (decision) out.push(...field("decision", text(decision.action || decision)));
    }
  } else if (decoded.kind === "scitt") {
    out.push(...field("signed statement", bytes.length + " bytes of COSE_Sign1"));
  } else if (decoded.kind === "digest") {
    out.push(...field("statement hash", hashValue(bytesToHex(bytes)),
      " (a registered SCITT statement's SHA-256; its receipt: ",
      el("code", {}, "/entries/" + bytesToHex(bytes)), ")"));
  } else {
    out.push(...field("bytes", bytes.length + ""), ...field("as text", el("pre", {}, preview(bytes))));
  }
  return out;
}
// Stryker restore all

// ---------------------------------------------------------------------------------------------
// One entry, proven.

async function proveEntry(entry, check, digest) {
  // -> {state: "good" | "warn" | "bad", why, bytes, filed}
  let bytes;
  try {
    bytes = await leafBytes(entry.index);
  } catch (e) {
    // appended by hash only: the leaf hash is all there is (registry/clients/lookup.py _leaf)
    if (e.message !== "log.no_entry_data")
      return {state: "bad", why: "its bytes could not be read: " + e.message};
    bytes = null;
  }
  try {
    const leaf = bytes === null ? hexToBytes(entry.leaf_hash) : await leafHash(bytes);
    if (bytesToHex(leaf) !== entry.leaf_hash)
      return {state: "bad", why: "its bytes do not hash to its leaf hash", bytes};
    if (!check.ok) return {state: "bad", why: "the checkpoint is not verified", bytes};
    const proof = entry.inclusion_proof;
    if (BigInt(proof.tree_size) !== check.parsed.size)
      return {state: "bad", why: "its proof is for another tree size than the checkpoint", bytes};
    const root = await rootFromInclusion(entry.index, proof.tree_size, leaf,
      proof.hashes.map(hexToBytes));
    if (!equal(root, check.parsed.root))
      return {state: "bad", why: "its inclusion proof leads to another root", bytes};
    // docs/formats.md §11, recomputed from the bytes (lookup.not_about in the CLI)
    const filed = bytes === null
      ? {kind: "hash_only", rows: [["leaf_hash", entry.leaf_hash]], unsure: null}
      : await Subjects.filedUnder(bytes, entry.statement !== undefined);
    const off = Subjects.notAbout(entry, digest, filed);
    if (off && off.cannot)
      return {state: "bad", why: "this page cannot check that it is about this hash ("
        + off.why + "); affidavit lookup can", bytes, filed};
    if (off) return {state: "bad", why: "it is not about this hash: " + off.why, bytes, filed};
    if (!check.pinned)
      return {state: "warn", why: "proof consistent, but the log key is not pinned", bytes, filed};
    return {state: "good", why: "", bytes, filed};
  } catch (e) {
    return {state: "bad", why: e.message, bytes};
  }
}

// The answer of GET /v1/lookup/{hash}, refused whole unless it is the documented shape
// (specs/registry-v1.yaml Lookup), exactly as registry/clients/lookup.py parse_page refuses it.
const INDEX = (value) => Number.isSafeInteger(value) && value >= 0;

function parseAnswer(answer, cursor) {
  const bad = (why) => { throw new Error("the registry's answer is malformed: " + why); };
  if (!answer || typeof answer !== "object" || Array.isArray(answer)) bad("not an object");
  if (!Array.isArray(answer.entries) || typeof answer.checkpoint !== "string")
    bad("entries or checkpoint missing");
  for (const entry of answer.entries) {
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) bad("an entry is not an object");
    const proof = entry.inclusion_proof;
    if (!proof || typeof proof !== "object" || !Array.isArray(entry.matched) || !entry.matched.length)
      bad("an entry lacks inclusion_proof or matched");
    if (!Array.isArray(proof.hashes) || !proof.hashes.every((h) => HEX64.test(h)))
      bad("inclusion_proof.hashes is not a list of 64-hex hashes");
    if (typeof entry.leaf_hash !== "string" || !HEX64.test(entry.leaf_hash)
      || typeof entry.kind !== "string")
      bad("an entry's leaf_hash or kind is malformed");
    if (!entry.matched.every((field) => typeof field === "string"))
      bad("matched is not a list of field names");
    if (!INDEX(entry.index)) bad("index is not a non-negative integer");
    if (!INDEX(proof.tree_size)) bad("inclusion_proof.tree_size is not a non-negative integer");
    if (entry.statement !== undefined && entry.statement !== null) {
      try { b64ToBytes(entry.statement); } catch (e) { bad("an entry's statement is not base64"); }
    } else {
      delete entry.statement;
    }
  }
  const next = answer.next_cursor;
  if (next !== null && next !== undefined) {
    // a cursor goes into a link: digits only, and forward (the CLI: "next_cursor does not move
    // forward")
    if (!INDEX(next)) bad("next_cursor is not a non-negative integer");
    if (next <= cursor) bad("next_cursor does not move forward");
  }
  return {entries: answer.entries, checkpoint: answer.checkpoint,
    nextCursor: next === null || next === undefined ? null : next};
}

function entryCard(entry, proven, digest) {
  const verified = proven.state === "good";
  const kind = proven.filed && proven.filed.kind ? proven.filed.kind : entry.kind;
  const head = el("h3", {},
    el("a", {href: "/search?q=" + encodeURIComponent(entry.leaf_hash)}, "entry #" + entry.index),
    " ", el("span", {class: "kind"}, kind), " ",
    badge(proven.state, verified ? "verified" : "not verified: " + proven.why));
  const claim = " (the registry's claim: a " + entry.kind + " entry"
    + (verified ? ", recomputed here from its bytes)" : ", not proven)");
  const facts = [
    ...field("matched", entry.matched.join(", ") + " = " + digest, el("span", {class: "muted"}, claim)),
    ...field("leaf hash", hashValue(entry.leaf_hash)),
  ];
  if (proven.bytes) facts.push(...describe(decodeLeaf(proven.bytes), proven.bytes, entry));
  const card = el("article", {class: "entry", "data-verdict": verified ? "verified" : "not-verified",
    "data-index": entry.index}, head, el("dl", {}, facts));
// Stryker disable all: the lineage picture of a verified fact is rendering; it shows no verdict
  const decoded = proven.bytes ? decodeLeaf(proven.bytes) : {kind: ""};
  if (decoded.kind === "fact" && verified) {
    const factHash = entry.matched.includes("fact_hash") ? digest : null;
    if (factHash) {
      const picture = el("img", {src: "/explorer/lineage/" + factHash, alt: "lineage of the fact",
        class: "lineage"});
      picture.addEventListener("error", () => picture.replaceWith(el("p", {class: "muted"},
        "No lineage picture: the fact is not in this registry's public fact store.")));
      card.append(el("h4", {}, "Lineage (this registry's public facts)"), picture,
        el("p", {}, searchLink(factHash, "entries derived from this fact")));
    }
  }
// Stryker restore all
  return card;
}

// ---------------------------------------------------------------------------------------------
// Pages.

async function searchPage(query) {
  document.getElementById("q").value = query;
  if (!query) return show(el("p", {}, "Type a hash or a name above."));
  if (query.length > MAX_QUERY) return show(el("p", {class: "bad"}, "That is too long to search."));
  let digest = query, note = null;
  if (!HEX64.test(query)) {
    digest = bytesToHex(await sha256(enc.encode(query)));
    note = el("p", {class: "muted"}, "Not a hash: looking up the SHA-256 of the text ",
      el("code", {}, query), " (how names are filed): ", el("code", {}, digest),
      /^[0-9A-Fa-f]{64}$/.test(query) ? " (hashes are lowercase)" : "");
  }
  const asked = new URLSearchParams(location.search).get("cursor");
  const cursor = asked && /^[0-9]{1,15}$/.test(asked) ? Number(asked) : 0;
  const path = "/v1/lookup/" + digest + (cursor ? "?cursor=" + encodeURIComponent(cursor) : "");
  const answer = parseAnswer(await getJSON(path), cursor);
  const check = await checkCheckpoint(answer.checkpoint);
  const entries = answer.entries;
  const proven = await Promise.all(entries.map((entry) => proveEntry(entry, check, digest)));
  const count = entries.length + " entr" + (entries.length === 1 ? "y" : "ies");
  const failed = proven.some((p) => p.state === "bad");
  const all = entries.length > 0 && proven.every((p) => p.state === "good");
  // A checkpoint that does not verify proves nothing, not even "no entry" (as the CLI says).
  const verdict = check.pinned && !check.ok ? "not-verified" : !entries.length ? "none"
    : all ? "verified" : "not-verified";
  let line;
  if (check.pinned && !check.ok) {
    line = badge("bad", "not verified: the checkpoint is not verified under the pinned key");
  } else if (!entries.length) {
    line = badge("warn", "no entry about this hash below size " + check.parsed.size
      + " (a lookup proves presence only; absence needs the whole log replayed)");
  } else if (all) {
    line = badge("good", "verified: " + count + " about this hash, each proven in the log");
  } else if (failed) {
    line = badge("bad", "not verified: " + count + ", see the failures below");
  } else {
    line = badge("warn", "not verified: " + count + " consistent with the registry's own key,"
      + " which is not pinned");
  }
  const summary = el("p", {id: "verdict", "data-verdict": verdict}, line);
  const cards = entries.map((entry, i) => entryCard(entry, proven[i], digest));
  // The next page's link: the query and the validated cursor, encoded; a key only as this page's
  // own link named it (never from the answer).
  const next = new URLSearchParams({q: query, cursor: String(answer.nextCursor)});
  for (const key of linkKeys()) next.append("vkey", key);
  const more = answer.nextCursor === null ? null
    : el("p", {}, el("a", {href: "/search?" + next.toString()}, "more entries"));
  show(el("h2", {}, "Entries about ", el("code", {class: "hash"}, digest)), note, summary,
    el("p", {}, checkpointLine(check)), ...cards, more);
}

// Stryker disable all: the home page shows the log, recent leaves and the catalogue; its checkpoint line is checkpointLine's
async function homePage() {
  const note = await getText("/tlog/checkpoint");
  const check = await checkCheckpoint(note);
  const witnesses = check.parsed.signatures.filter((s) => s.name !== check.parsed.origin);
  const log = el("section", {id: "log"}, el("h2", {}, "The log"), el("dl", {},
    ...field("origin", check.parsed.origin),
    ...field("size", check.parsed.size.toString() + (check.parsed.size === 1n ? " entry" : " entries")),
    ...field("root", el("code", {class: "hash"}, bytesToHex(check.parsed.root))),
    ...field("checkpoint", checkpointLine(check)),
    ...field("witnesses", witnesses.length
      ? el("ul", {}, witnesses.map((w) => el("li", {}, w.name + " (cosignature shown; "
        + "check it with affidavit verify tlog-proof and your witness keys)")))
      : "no witness has cosigned this checkpoint")));
  const size = Number(check.parsed.size);
  const recent = el("section", {id: "recent"}, el("h2", {}, "Recent entries"));
  if (size > 0) {
    const start = Math.max(0, size - RECENT);
    const page = await getJSON("/protocol/merkle/entries?start=" + start + "&end=" + size);
    const rows = (page.entries || []).slice().reverse().map((item) => {
      const bytes = b64ToBytes(item.leaf_data_b64);
      const decoded = decodeLeaf(bytes);
      return el("tr", {}, el("td", {}, String(item.leaf_index)), el("td", {}, decoded.kind),
        el("td", {}, summaryOf(decoded)), el("td", {}, searchLink(item.leaf_hash, "prove")));
    });
    recent.append(el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "#"),
      el("th", {}, "kind"), el("th", {}, "what"), el("th", {}, ""))), el("tbody", {}, rows)));
  } else {
    recent.append(el("p", {}, "The log is empty."));
  }
  const listed = await getJSON("/protocol/adapter-contracts");
  const catalogue = el("section", {id: "catalogue"}, el("h2", {}, "Contract catalogue"),
    el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "adapter"), el("th", {}, "status"),
      el("th", {}, "contract_hash"))), el("tbody", {}, (listed.contracts || []).map((c) =>
      el("tr", {}, el("td", {}, text(c.adapter_id) + "@" + text(c.adapter_version)),
        el("td", {}, text(c.status)), el("td", {}, hashValue(c.contract_hash)))))));
  show(log, recent, catalogue);
}

function summaryOf(decoded) {
  const doc = decoded.doc || {};
  if (decoded.kind === "contract") {
    const e = doc.entry || {};
    return text(e.adapter_id) + "@" + text(e.adapter_version) + " " + text(e.status);
  }
  if (decoded.kind === "bundle") return text(doc.deal_id) + ": " + text(doc.event_type);
  if (decoded.kind === "receipt") return text((doc.adapter || {}).name) + " receipt";
  if (decoded.kind === "fact") return text(doc.entity) + " " + text(doc.relation);
  if (decoded.kind === "dsse") return text(doc.payloadType);
  return "";
}
// Stryker restore all

async function main() {
  wirePinForm();
  await showPinStatus();
  try {
    if (location.pathname === "/search") {
      await searchPage(new URLSearchParams(location.search).get("q") || "");
    } else {
      await homePage();
    }
  } catch (e) {
    show(el("p", {id: "verdict", class: "bad", "data-verdict": "error"},
      "Could not read the registry: " + e.message));
  }
}

document.addEventListener("DOMContentLoaded", main);
