// What a log entry is about, recomputed in the browser (issue 31: "the browser is a verifier like
// the CLI"). The rules of docs/formats.md §11, as registry/index.py's subjects() applies them to
// the leaf's bytes alone, so the explorer checks what `affidavit lookup` checks
// (registry/clients/lookup.py, lookup.not_about) before it says "verified".
//
// filedUnder(bytes, hasStatement) -> {kind, rows, unsure}:
//   kind    the kind the bytes are (docs/formats.md §11), or null when this page cannot tell;
//   rows    [[field, digest], ...] the leaf is filed under (64 lowercase hex each);
//   unsure  null, or why there may be rows this page cannot recompute (then a claimed field
//           missing from rows is "cannot check", never "verified": fail closed).
// Not recomputed here (unsure): a receipt's rows (§7), a COSE_Sign1 leaf's (§10), and a
// registered statement's subject and issuer; `affidavit lookup` checks those.
"use strict";

const Subjects = (() => {
  const HEX64 = /^[0-9a-f]{64}$/;
  const MAX_DEPTH = 128;        // verify/json/strict.py DEFAULT_MAX_DEPTH
  const MAX_INT_DIGITS = 4300;  // verify/json/strict.py MAX_INT_DIGITS
  const SAFE = 9007199254740991n;
  const CONTRACT_RECORD_TYPE = "affidavit.registry.adapter_entry.v1";  // docs/formats.md §3
  const ENTRY_HASH_FIELDS = ["entry_schema_version", "adapter_id", "adapter_version",
    "contract_hash", "input_schema_hash", "status", "distribution_channel", "published_at",
    "docs_url", "declaration_url", "release_notes", "supersedes", "replaced_by", "publisher_id",
    "publisher_key_id"];  // docs/formats.md §3 "Entry"
  const BUNDLE_KEYS = ["deal_id", "event_hash", "event_id", "event_type", "timestamp"];
  const FINALITY = new Set(["PROOF_READY", "PROOF_VERIFIED", "GO_APPROVED", "AUTO_GO_APPROVED",
    "SETTLED", "PAYOUT_CONFIRMED", "OUTCOME_RECORDED"]);  // docs/formats.md §4
  const HASHED = ["entity", "relation", "value", "scope", "source", "confidence", "ts"];  // §5
  const KNOWN = new Set([...HASHED, "id", "derived_from", "signature"]);
  const SCOPES = new Set(["local", "team", "company", "public"]);
  const VALUE_TYPES = new Set(["string", "text", "number", "boolean", "datetime", "ref", "null"]);
  const STRING_TYPES = new Set(["string", "text", "datetime", "ref"]);
  // Python's \s (str.isspace) is JavaScript's \s plus \x1c-\x1f and \x85 (and not \ufeff, which
  // JavaScript's has: a URI holding one is refused here, never accepted where Python refuses).
  const URI = /^[A-Za-z][A-Za-z0-9+.\-]*:[^\s\x1c-\x1f\x85]+$/;
  const RELATION = /^[A-Za-z][A-Za-z0-9_.\-]*(:[A-Za-z0-9_.\-]+)+$/;
  const TS = /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{1,9})?(Z|\+00:00)$/;
  const B64URL = /^[A-Za-z0-9_\-]+={0,2}$/;
  const IN_TOTO = "application/vnd.in-toto+json";
  const STATEMENT_V1 = "https://in-toto.io/Statement/v1";
  const STATEMENT_URI = /^[A-Za-z][A-Za-z0-9+.\-]*:[^\s\x00-\x1f\x7f\x85]+$/;
  const HEX_DIGEST_LENGTHS = {sha256: 64, sha384: 96, sha512: 128, sha224: 56, sha512_224: 56,
    sha512_256: 64, sha3_224: 56, sha3_256: 64, sha3_384: 96, sha3_512: 128, sha1: 40, md5: 32};
  const enc = new TextEncoder();

  class Unsure extends Error {}   // this page cannot recompute the rule exactly: fail closed
  class Refused extends Error {}  // the rule refuses the leaf, as Python's raises

  // A JSON number as written: integers and floats differ in Python (1 and 1.0).
  class JNum {
    constructor(text) {
      this.text = text;
      this.isInt = /^-?[0-9]+$/.test(text);
      this.value = Number(text);
    }
  }

  // -- strict JSON (docs/formats.md §1 "Strict input"; verify/json/strict.py) -------------------

  function strictJSON(bytes) {
    if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
      throw new Refused("json.bom");
    let s;
    try {
      s = new TextDecoder("utf-8", {fatal: true, ignoreBOM: true}).decode(bytes);
    } catch (e) {
      throw new Refused("json.invalid_utf8");
    }
    let i = 0, depth = 0;
    const fail = (why) => { throw new Refused("json." + why + " at " + i); };
    const ws = () => {
      while (i < s.length && (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r")) i++;
    };
    const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

    function string() {
      i++;  // the opening quote
      let out = "";
      for (;;) {
        if (i >= s.length) fail("syntax");
        const c = s.charCodeAt(i);
        if (c === 0x22) { i++; break; }
        if (c < 0x20) fail("syntax");  // a raw control character (json's strict=True)
        if (c !== 0x5c) { out += s[i++]; continue; }
        const e = s[i + 1];
        const simple = {'"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t"};
        if (e in simple) { out += simple[e]; i += 2; continue; }
        if (e !== "u" || !/^[0-9A-Fa-f]{4}$/.test(s.substr(i + 2, 4))) fail("syntax");
        out += String.fromCharCode(parseInt(s.substr(i + 2, 4), 16));
        i += 6;
      }
      // An unpaired surrogate (only an escape can make one): json.lone_surrogate.
      if (/[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/.test(out))
        fail("lone_surrogate");
      return out;
    }

    function number() {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(s);
      if (!match) fail("syntax");
      i += match[0].length;
      const num = new JNum(match[0]);
      if (num.isInt && match[0].replace("-", "").length > MAX_INT_DIGITS) fail("number_too_large");
      if (!num.isInt && !Number.isFinite(num.value)) fail("non_finite");
      return num;
    }

    function value() {
      ws();
      const c = s[i];
      if (c === "{") {
        if (++depth > MAX_DEPTH) fail("too_deep");
        i++;
        const out = new Map();
        ws();
        if (s[i] === "}") { i++; depth--; return out; }
        for (;;) {
          ws();
          if (s[i] !== '"') fail("syntax");
          const key = string();
          ws();
          if (s[i] !== ":") fail("syntax");
          i++;
          if (out.has(key)) fail("duplicate_key");
          out.set(key, value());
          ws();
          if (s[i] === ",") { i++; continue; }
          if (s[i] === "}") { i++; depth--; return out; }
          fail("syntax");
        }
      }
      if (c === "[") {
        if (++depth > MAX_DEPTH) fail("too_deep");
        i++;
        const out = [];
        ws();
        if (s[i] === "]") { i++; depth--; return out; }
        for (;;) {
          out.push(value());
          ws();
          if (s[i] === ",") { i++; continue; }
          if (s[i] === "]") { i++; depth--; return out; }
          fail("syntax");
        }
      }
      if (c === '"') return string();
      if (c === "-" || (c >= "0" && c <= "9")) return number();
      for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
        if (s.startsWith(word, i)) { i += word.length; return v; }
      }
      fail("syntax");
    }

    const out = value();
    ws();
    if (i !== s.length) fail("trailing_data");
    return out;
  }

  // -- encodings (docs/formats.md §1) ------------------------------------------------------------

  function byCodePoint(a, b) {  // Python's str order
    const x = Array.from(a), y = Array.from(b);
    for (let k = 0; k < Math.min(x.length, y.length); k++) {
      const d = x[k].codePointAt(0) - y[k].codePointAt(0);
      if (d) return d;
    }
    return x.length - y.length;
  }

  function pyString(text) {  // json.dumps(ensure_ascii=True) of a str
    const named = {0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b",
      0x0c: "\\f"};
    let out = '"';
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c in named) out += named[c];
      else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0");
      else out += text[k];
    }
    return out + '"';
  }

  function pyFloat(x) {  // repr(float): the shortest digits, Python's layout
    if (!Number.isFinite(x)) throw new Refused("canonical.non_finite");
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    const [mantissa, exponent] = x.toExponential().split("e");
    const e = Number(exponent);
    const sign = mantissa.startsWith("-") ? "-" : "";
    const digits = mantissa.replace("-", "").replace(".", "");
    if (e < -4 || e >= 16) {
      return sign + digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") + "e"
        + (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
    }
    if (e < 0) return sign + "0." + "0".repeat(-e - 1) + digits;
    return sign + digits.slice(0, e + 1).padEnd(e + 1, "0") + "." + (digits.slice(e + 1) || "0");
  }

  function pyCompact(v) {  // json.dumps(v, sort_keys=True, separators=(",", ":"))
    if (v === null) return "null";
    if (v === true || v === false) return String(v);
    if (typeof v === "string") return pyString(v);
    if (v instanceof JNum) return v.isInt ? BigInt(v.text).toString() : pyFloat(v.value);
    if (Array.isArray(v)) return "[" + v.map(pyCompact).join(",") + "]";
    if (v instanceof Map) {
      return "{" + [...v.keys()].sort(byCodePoint)
        .map((key) => pyString(key) + ":" + pyCompact(v.get(key))).join(",") + "}";
    }
    throw new Unsure("a value with no JSON form");
  }

  function jcs(v) {  // RFC 8785
    if (v === null) return "null";
    if (v === true || v === false) return String(v);
    if (typeof v === "string") return JSON.stringify(v);  // RFC 8785 §3.2.2.2: the same escapes
    if (v instanceof JNum) {
      if (v.isInt && (BigInt(v.text) > SAFE || BigInt(v.text) < -SAFE))
        throw new Refused("canonical.unsafe_integer");
      return String(v.value);  // RFC 8785 §3.2.2.3: ECMAScript's Number serialization
    }
    if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
    if (v instanceof Map) {  // RFC 8785 §3.2.3: keys in UTF-16 code unit order
      return "{" + [...v.keys()].sort().map((key) => JSON.stringify(key) + ":" + jcs(v.get(key)))
        .join(",") + "}";
    }
    throw new Unsure("a value with no JSON form");
  }

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

  async function sha256Hex(bytes) {
    return hex(new Uint8Array(await window.crypto.subtle.digest("SHA-256", bytes)));
  }

  // A name is filed under the SHA-256 of its UTF-8 (docs/formats.md §11); names come from strict
  // JSON, which holds no lone surrogate, so TextEncoder's UTF-8 is Python's.
  const nameDigest = (name) => sha256Hex(enc.encode(name));
  const hashText = (text) => sha256Hex(enc.encode(text));
  const codePoints = (text) => Array.from(text).length;
  const isJNum = (v) => v instanceof JNum;

  // -- the kinds, in registry/index.py's order ----------------------------------------------------

  function falsy(v) {  // Python's truth of a JSON value
    return v === undefined || v === null || v === false || v === ""
      || (v instanceof JNum && v.value === 0) || (Array.isArray(v) && v.length === 0)
      || (v instanceof Map && v.size === 0);
  }

  function sortedList(v) {  // verify/contracts/contract.py _sorted_list, for string lists
    if (falsy(v)) return [];
    if (Array.isArray(v) && v.every((item) => typeof item === "string"))
      return v.slice().sort(byCodePoint);
    throw new Unsure("a contract's field list that is not a list of strings");
  }

  function need(map, key) {  // Python's map[key]: a KeyError is "not this kind"
    if (!map.has(key)) throw new Refused("no " + key);
    return map.get(key);
  }

  async function contract(bytes, doc) {  // docs/formats.md §3 "Publication in the registry's log"
    if (doc.get("record_type") !== CONTRACT_RECORD_TYPE) return null;
    const entry = need(doc, "entry"), declaration = need(doc, "declaration");
    if (!(entry instanceof Map) || !(declaration instanceof Map)) return null;
    const id = need(declaration, "adapter_id"), version = need(declaration, "adapter_version");
    if (typeof id !== "string" || typeof version !== "string") return null;
    const text = (key, fallback) => declaration.has(key) ? declaration.get(key) : fallback;
    const body = new Map([  // docs/formats.md §2 "The two hashes"
      ["adapter_contract_version", text("adapter_contract_version", "1.0.0")],
      ["adapter_id", text("adapter_id", "")],
      ["adapter_version", text("adapter_version", "")],
      ["input_schema_version", text("input_schema_version", "")],
      ["output_fields", sortedList(declaration.get("output_fields"))],
      ["allowed_policy_fields", sortedList(declaration.get("allowed_policy_fields"))],
      ["validator_name", text("validator_name", "")],
      ["validator_version", text("validator_version", "")],
    ]);
    const hashed = new Map(ENTRY_HASH_FIELDS.map((key) => [key, entry.has(key) ? entry.get(key) : ""]));
    return [
      ["contract_hash", await hashText(pyCompact(body))],
      ["entry_hash", await hashText(pyCompact(hashed))],
      ["adapter_id", await nameDigest(id)],
      ["adapter_id@version", await nameDigest(id + "@" + version)],
    ];
  }

  async function bundle(bytes, doc) {  // docs/formats.md §4 "Merkle log": the finality leaf
    if (doc.size !== BUNDLE_KEYS.length || !BUNDLE_KEYS.every((key) => doc.has(key))) return null;
    if (![...doc.values()].every((v) => typeof v === "string")) return null;
    if (!FINALITY.has(doc.get("event_type")) || !HEX64.test(doc.get("event_hash"))) return null;
    const compact = enc.encode(pyCompact(doc));
    if (compact.length !== bytes.length || !compact.every((b, k) => b === bytes[k])) return null;
    return [["event_hash", doc.get("event_hash")], ["deal_id", await nameDigest(doc.get("deal_id"))]];
  }

  async function receipt(bytes, doc) {  // docs/formats.md §7
    if (!doc.has("receipt_version")) return null;
    throw new Unsure("a receipt (docs/formats.md §7): this page does not recompute its hashes");
  }

  function unsafeFloat(num) {  // docs/formats.md §5 "Numbers"
    return !num.isInt && Math.abs(num.value) >= 2 ** 53 && Math.abs(num.value) < 1e21;
  }

  function checkNumbers(v) {  // verify/lineage/facts.py _check_numbers
    if (v instanceof JNum) {
      if (unsafeFloat(v) || (v.isInt && (BigInt(v.text) > SAFE || BigInt(v.text) < -SAFE)))
        throw new Refused("canonical.unsafe_integer");
    } else if (Array.isArray(v)) {
      v.forEach(checkNumbers);
    } else if (v instanceof Map) {
      v.forEach(checkNumbers);
    }
  }

  function uri(v) {
    if (!(typeof v === "string" && codePoints(v) <= 2048 && URI.test(v)))
      throw new Refused("fact.invalid");
  }

  function factValue(value) {  // verify/lineage/facts.py _value
    const bad = () => { throw new Refused("fact.invalid"); };
    if (!(value instanceof Map) || !value.has("type")) bad();
    if (!value.has("v") && value.get("type") !== "null") bad();
    if ([...value.keys()].some((key) => !["type", "v", "interpret_as"].includes(key))) bad();
    const kind = value.get("type"), v = value.has("v") ? value.get("v") : null;
    if (!(typeof kind === "string" && VALUE_TYPES.has(kind))) bad();
    let ok;
    if (STRING_TYPES.has(kind)) ok = typeof v === "string" && codePoints(v) <= 1024 * 1024;
    else if (kind === "number") {
      ok = isJNum(v);
      if (ok && unsafeFloat(v)) throw new Refused("canonical.unsafe_integer");
    } else if (kind === "boolean") ok = v === true || v === false;
    else ok = v === null;
    if (!ok) bad();
    if (value.has("interpret_as") && !["content", "instruction"].includes(value.get("interpret_as")))
      bad();
  }

  function derivedFrom(entries) {  // verify/lineage/facts.py _derived_from
    const bad = () => { throw new Refused("fact.derived_from_malformed"); };
    if (!Array.isArray(entries) || entries.length > 1024) bad();
    const hashes = entries.map((entry) => {
      let candidate = entry instanceof Map ? entry.get("hash") : entry;
      if (entry instanceof Map) {
        const factId = entry.get("fact_id");
        if (factId !== undefined && factId !== null && typeof factId !== "string") candidate = null;
      }
      if (!(typeof candidate === "string" && HEX64.test(candidate))) bad();
      return candidate;
    });
    if (new Set(hashes).size !== hashes.length) bad();
    return hashes;
  }

  function signature(v) {  // verify/lineage/facts.py _signature
    const bad = () => { throw new Refused("fact.invalid"); };
    if (!(v instanceof Map) || v.size !== 3 || !["alg", "key_id", "sig"].every((k) => v.has(k))) bad();
    const keyId = v.get("key_id"), sig = v.get("sig");
    if (v.get("alg") !== "Ed25519") bad();
    if (!(typeof keyId === "string" && codePoints(keyId) > 0 && codePoints(keyId) <= 256)) bad();
    if (!(typeof sig === "string" && codePoints(sig) <= 256 && B64URL.test(sig))) bad();
  }

  async function fact(bytes, doc) {  // docs/formats.md §5: parse_fact, then FactHash
    if (!doc.has("relation") || !doc.has("entity")) return null;
    if (!HASHED.every((key) => doc.has(key))) throw new Refused("fact.invalid");
    for (const [key, v] of doc) if (!KNOWN.has(key)) checkNumbers(v);
    uri(doc.get("entity"));
    uri(doc.get("source"));
    const relation = doc.get("relation"), confidence = doc.get("confidence"), ts = doc.get("ts");
    if (!(typeof relation === "string" && codePoints(relation) <= 2048 && RELATION.test(relation)))
      throw new Refused("fact.invalid");
    if (!SCOPES.has(doc.get("scope"))) throw new Refused("fact.invalid");
    if (!(isJNum(confidence) && confidence.value >= 0 && confidence.value <= 1))
      throw new Refused("fact.invalid");
    if (!(typeof ts === "string" && TS.test(ts))) throw new Refused("fact.invalid");
    const value = doc.get("value");
    factValue(value);
    const id = doc.get("id");
    if (doc.has("id") && !(typeof id === "string" && codePoints(id) > 0 && codePoints(id) <= 2048))
      throw new Refused("fact.invalid");
    const parents = doc.has("derived_from") ? derivedFrom(doc.get("derived_from")) : [];
    if (doc.has("signature")) signature(doc.get("signature"));
    const normal = new Map([["type", value.get("type")],
      ["v", value.has("v") ? value.get("v") : null]]);
    if (value.get("interpret_as") === "instruction") normal.set("interpret_as", "instruction");
    const body = new Map(HASHED.map((key) => [key, key === "value" ? normal : doc.get(key)]));
    return [
      ["fact_hash", await hashText(jcs(body))],
      ...parents.map((parent) => ["derived_from", parent]),
      ["entity", await nameDigest(doc.get("entity"))],
    ];
  }

  function dsseBase64(text) {  // verify/dsse/envelope.py decode_b64
    const bad = () => { throw new Refused("dsse.bad_base64"); };
    if (typeof text !== "string") bad();
    const standard = /^[A-Za-z0-9+/]*={0,2}$/.test(text);
    const urlSafe = /^[A-Za-z0-9_\-]*={0,2}$/.test(text) && !standard;
    if (!standard && !urlSafe) bad();
    const body = text.replace(/=+$/, "");
    if (body.length % 4 === 1 || (text.length !== body.length && text.length % 4)) bad();
    const plain = urlSafe ? body.replace(/-/g, "+").replace(/_/g, "/") : body;
    const binary = atob(plain + "=".repeat((4 - (plain.length % 4)) % 4));
    if (btoa(binary).replace(/=+$/, "") !== plain) bad();
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }

  function text(map, key) {
    if (!map.has(key) || typeof map.get(key) !== "string") throw new Refused("dsse.malformed");
    return map.get(key);
  }

  async function dsse(bytes, doc) {  // docs/formats.md §8: a DSSE envelope of a Statement v1
    if (!doc.has("payloadType")) return null;
    if (bytes.length > 16 * 1024 * 1024) throw new Refused("dsse.too_large");
    const payloadB64 = text(doc, "payload"), payloadType = text(doc, "payloadType");
    const signatures = need(doc, "signatures");
    if (!Array.isArray(signatures) || !signatures.length || signatures.length > 256)
      throw new Refused("dsse.malformed");
    const payload = dsseBase64(payloadB64);
    for (const entry of signatures) {
      if (!(entry instanceof Map)) throw new Refused("dsse.malformed");
      dsseBase64(text(entry, "sig"));
      if (entry.has("keyid")) text(entry, "keyid");
    }
    if (payloadType !== IN_TOTO) throw new Refused("dsse.payload_type_unsupported");
    const statement = strictJSON(payload);  // verify/dsse/statement.py parse_statement
    if (!(statement instanceof Map) || statement.get("_type") !== STATEMENT_V1)
      throw new Refused("statement.wrong_type");
    const subjects = statement.get("subject");
    if (!Array.isArray(subjects) || !subjects.length) throw new Refused("statement.subject_invalid");
    for (const subject of subjects) {
      if (!(subject instanceof Map)) throw new Refused("statement.subject_invalid");
      for (const field of ["name", "uri", "mediaType", "downloadLocation"]) {
        if (subject.has(field) && typeof subject.get(field) !== "string")
          throw new Refused("statement.subject_invalid");
      }
      if (subject.has("annotations") && !(subject.get("annotations") instanceof Map))
        throw new Refused("statement.subject_invalid");
      const digest = need(subject, "digest");
      if (!(digest instanceof Map) || !digest.size) throw new Refused("statement.digest_invalid");
      for (const [algorithm, value] of digest) {
        const length = Object.hasOwn(HEX_DIGEST_LENGTHS, algorithm) ? HEX_DIGEST_LENGTHS[algorithm] : null;
        if (!algorithm || typeof value !== "string" || !value
          || (length !== null && (value.length !== length || !/^[0-9a-f]+$/.test(value))))
          throw new Refused("statement.digest_invalid");
      }
    }
    const predicateType = statement.get("predicateType");
    if (!(typeof predicateType === "string" && STATEMENT_URI.test(predicateType)))
      throw new Refused("statement.predicate_type_invalid");
    if (statement.has("predicate") && !(statement.get("predicate") instanceof Map))
      throw new Refused("statement.predicate_invalid");
    if (subjects.length > 64) return [];  // registry/index.py _MAX_DSSE_SUBJECTS
    const found = [];
    for (const subject of subjects) {
      const sha = subject.get("digest").get("sha256");
      if (typeof sha === "string" && HEX64.test(sha)) found.push(["subject_sha256", sha]);
      const name = subject.has("name") ? subject.get("name") : "";
      if (name) found.push(["subject_name", await nameDigest(name)]);
    }
    return found;
  }

  const READERS = [["contract", contract], ["bundle", bundle], ["receipt", receipt],
    ["fact", fact], ["dsse", dsse]];

  async function filedUnder(bytes, hasStatement) {
    const prefixed = new Uint8Array(bytes.length + 1);
    prefixed.set(bytes, 1);
    const rows = [
      ["leaf_hash", await sha256Hex(prefixed)],  // RFC 9162 §2.1.1: SHA-256(0x00 || data)
      ["data_sha256", await sha256Hex(bytes)],
    ];
    const done = (kind, found, unsure) => ({kind, rows: rows.concat(found), unsure: unsure || null});
    if (bytes.length && bytes[0] === 0xd2)  // COSE_Sign1_Tagged: a Signed Statement? (§10)
      return done(null, [], "a COSE_Sign1 leaf (docs/formats.md §10): this page does not parse COSE");
    if (bytes.length === 32) {  // §10 "The leaf entry": a registration's statement hash
      return done("digest", [["statement_hash", hex(bytes)]], hasStatement
        ? "a registered statement's subject and issuer: this page does not parse COSE" : null);
    }
    if (bytes[0] !== 0x7b) return done("raw", []);
    let doc;
    try {
      doc = strictJSON(bytes);
    } catch (e) {
      if (e instanceof Refused) return done("raw", []);
      throw e;
    }
    if (!(doc instanceof Map)) return done("raw", []);
    for (const [kind, reader] of READERS) {
      let found;
      try {
        found = await reader(bytes, doc);
      } catch (e) {
        if (e instanceof Unsure) return done(null, [], e.message);
        if (e instanceof Refused || e instanceof TypeError || e instanceof RangeError
          || e instanceof DOMException) continue;  // not this kind (as Python's readers)
        throw e;
      }
      if (found !== null) return done(kind, found);
    }
    return done("raw", []);
  }

  // Why the leaf is not filed as the registry says, or null when it is (lookup.not_about:
  // registry/clients/lookup.py _not_about). {cannot: true} when this page cannot tell.
  function notAbout(claim, digest, filed) {
    if (filed.kind === null) return {cannot: true, why: filed.unsure};
    if (claim.kind !== filed.kind)
      return {cannot: false, why: "the leaf is a " + filed.kind + " entry, not a " + claim.kind};
    const fields = new Set(filed.rows.filter(([, d]) => d === digest).map(([f]) => f));
    const missing = claim.matched.filter((field) => !fields.has(field));
    if (!missing.length) return null;
    if (filed.unsure) return {cannot: true, why: filed.unsure};
    return {cannot: false, why: "the leaf holds " + digest + " under "
      + (fields.size ? [...fields].join(", ") : "no field") + ", not " + missing.join(", ")};
  }

  return {filedUnder, notAbout, strictJSON, pyCompact, jcs, pyFloat};
})();
