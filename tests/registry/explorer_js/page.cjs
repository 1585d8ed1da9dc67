// The explorer's scripts (registry/explorer/subjects.js, explorer.js) loaded in this process as
// the page loads them: one global scope, with the few browser objects they use made here from
// Node's own (WebCrypto, TextEncoder, atob, URLSearchParams) and a small document of elements
// that hold attributes, children and text. Nothing of the scripts is replaced: fetch answers
// from a table of this registry's routes that each test sets (issue 36: a fast harness, without
// Chromium, that Stryker can run per mutant; tests/registry/test_explorer_js.py runs it in
// `make test`). The scripts are read from registry/explorer/ beside this folder, so a Stryker
// sandbox's mutated copies are the ones run.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const ROOT = path.resolve(__dirname, "..", "..", "..");
const fixtures = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures.json"), "utf8"));

class Node {
  constructor() { this.parent = null; }
  replaceWith(...nodes) {
    const siblings = this.parent.children;
    siblings.splice(siblings.indexOf(this), 1, ...nodes);
    for (const node of nodes) node.parent = this.parent;
  }
}

class Text extends Node {
  constructor(text) { super(); this.text = text; }
  get textContent() { return this.text; }
}

class Element extends Node {
  constructor(tag) {
    super();
    this.tag = tag;
    this.attributes = new Map();
    this.children = [];
    this.listeners = {};
    this.value = "";
  }
  set className(value) { this.attributes.set("class", value); }
  get className() { return this.attributes.get("class"); }
  set id(value) { this.attributes.set("id", value); }
  setAttribute(name, value) { this.attributes.set(name, String(value)); }
  getAttribute(name) { return this.attributes.has(name) ? this.attributes.get(name) : null; }
  append(...nodes) {
    for (const node of nodes) {
      const child = typeof node === "string" ? new Text(node) : node;
      child.parent = this;
      this.children.push(child);
    }
  }
  replaceChildren(...nodes) { this.children = []; this.append(...nodes); }
  addEventListener(type, listener) { (this.listeners[type] ||= []).push(listener); }
  get textContent() { return this.children.map((child) => child.textContent).join(""); }
  *walk() {
    yield this;
    for (const child of this.children) if (child instanceof Element) yield* child.walk();
  }
  all(predicate) { return [...this.walk()].filter(predicate); }
}

const body = new Element("body");

function freshDocument() {
  // The elements of registry/explorer/index.html the scripts look up.
  body.replaceChildren();
  for (const [tag, id] of [["div", "app"], ["input", "q"], ["p", "pin-status"],
    ["form", "pin-form"], ["input", "pin-vkey"], ["button", "pin-forget"]]) {
    const node = new Element(tag);
    node.id = id;
    body.append(node);
  }
}

// A browser's createElement refuses a name that is not an element name (DOM §4.5: an
// "InvalidCharacterError" DOMException), so a page that builds an element with no name fails here
// as it would there.
function createElement(tag) {
  if (!/^[A-Za-z][^\s\0\/>]*$/.test(String(tag)))
    throw new DOMException(`'${tag}' is not a valid element name`, "InvalidCharacterError");
  return new Element(String(tag).toLowerCase());
}

const documentListeners = {};
const document = {
  createElement,
  createTextNode: (text) => new Text(text),
  getElementById: (id) => body.all((node) => node.getAttribute("id") === id)[0] || null,
  addEventListener: (type, listener) => { (documentListeners[type] ||= []).push(listener); },
};

class Storage {
  constructor() { this.items = new Map(); }
  getItem(key) { return this.items.has(key) ? this.items.get(key) : null; }
  setItem(key, value) { this.items.set(key, String(value)); }
  removeItem(key) { this.items.delete(key); }
}

// fetch: this origin's routes, path -> {status, body (JSON or text)}; anything else is a 404.
// Each request's URL is kept in `requested`, and its options in `requestOptions`.
let routes = new Map();
const requested = [];
const requestOptions = [];
async function fetchRoute(url, options) {
  requested.push(url);
  requestOptions.push(options);
  const route = routes.get(url) || {status: 404, body: {code: "test.no_route"}};
  const text = typeof route.body === "string" ? route.body : JSON.stringify(route.body);
  return {
    ok: route.status >= 200 && route.status < 300,
    status: route.status,
    json: async () => JSON.parse(text),
    text: async () => text,
  };
}

const location = {search: "", pathname: "/", reload: () => { location.reloaded = true; }};

Object.assign(globalThis, {
  window: globalThis, document, Node, location, fetch: fetchRoute, isSecureContext: true,
  localStorage: new Storage(),
});

for (const name of ["subjects.js", "explorer.js"]) {
  const file = path.join(ROOT, "registry", "explorer", name);
  vm.runInThisContext(fs.readFileSync(file, "utf8"), {filename: file});
}

// Top-level functions of a script are the global object's; its const bindings are read here.
const page = vm.runInThisContext("({Subjects, leafHash, nodeHash, INDEX})");

function reset({search = "", pathname = "/", stored = null, answers = {}} = {}) {
  // A new page load: the document, the link, what this browser stored, the registry's routes.
  freshDocument();
  location.search = search;
  location.pathname = pathname;
  location.reloaded = false;
  globalThis.localStorage = new Storage();
  if (stored !== null) localStorage.setItem("affidavit.explorer.vkey", stored);
  routes = new Map(Object.entries(answers).map(([url, route]) =>
    [url, route !== null && typeof route === "object" && "status" in route && "body" in route
      ? route : {status: 200, body: route}]));
  requested.length = 0;
  requestOptions.length = 0;
  globalThis.isSecureContext = true;
}

module.exports = {fixtures, page, reset, document, body, Element, requested, requestOptions,
  documentListeners};

// The registry of fixtures.json as routes: every leaf (the hash-only one answers
// log.no_entry_data, as registry/app.py does), the log's public key and each lookup answer.
function registryRoutes() {
  const answers = {"/protocol/merkle/public-key": {public_key_base64: fixtures.public_key_base64}};
  fixtures.leaves.forEach((leaf, index) => {
    answers["/protocol/merkle/leaf/" + index] = leaf.data_b64 === null
      ? {status: 404, body: {code: "log.no_entry_data"}}
      : {leaf_index: index, leaf_hash: leaf.leaf_hash, leaf_data_b64: leaf.data_b64};
  });
  for (const [digest, answer] of Object.entries(fixtures.answers))
    answers["/v1/lookup/" + digest] = structuredClone(answer);
  return answers;
}

// The page at /search?q=QUERY (vkey: the link's keys; stored: the key pinned in this browser);
// change(answers) tampers with the registry's answers first. -> {verdict, app, cards}
async function search(query, {vkeys = [fixtures.vkeys.log], stored = null, change} = {}) {
  const answers = registryRoutes();
  if (change) change(answers);
  const params = new URLSearchParams({q: query});
  for (const key of vkeys) params.append("vkey", key);
  reset({search: "?" + params.toString(), pathname: "/search", stored, answers});
  for (const listener of documentListeners.DOMContentLoaded) await listener();
  const app = document.getElementById("app");
  const verdict = app.all((node) => node.getAttribute("id") === "verdict")[0];
  const cards = app.all((node) => node.tag === "article")
    .map((card) => ({verdict: card.getAttribute("data-verdict"), index: card.getAttribute("data-index"),
      text: card.textContent}));
  return {verdict: verdict.getAttribute("data-verdict"), app, cards, text: app.textContent,
    pin: document.getElementById("pin-status").textContent};
}

// The digest a leaf (by its index in fixtures.leaves) is filed under as `field`.
function digestOf(index, field) {
  return fixtures.leaves[index].rows.find(([name]) => name === field)[1];
}

module.exports.registryRoutes = registryRoutes;
module.exports.search = search;
module.exports.digestOf = digestOf;
