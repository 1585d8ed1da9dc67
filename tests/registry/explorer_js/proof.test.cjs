// RFC 9162 §2.1.3.2 in the page: rootFromInclusion against the proofs and roots our Python code
// builds (verify/crypto/merkle.py, fixtures.json), and the proof-length checks (issue 36: the red
// team deleted both and all 18 explorer tests passed). A proof cut short can lead to the root
// from an interior node: presented as a leaf appended by its hash only, it must not verify.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const {fixtures, search, page} = require("./page.cjs");

const hex = (h) => hexToBytes(h);
const ZERO = "00".repeat(32);
const leafOf = (index) => hex(fixtures.leaves[index].leaf_hash);

async function root(proof, hashes = proof.hashes, index = proof.index, size = proof.size) {
  return bytesToHex(await rootFromInclusion(index, size, leafOf(index), hashes.map(hex)));
}

test("every proof of every leaf in every tree size leads to Python's root", async () => {
  for (const proof of fixtures.proofs) {
    assert.equal(await root(proof), proof.root, `leaf ${proof.index} of ${proof.size}`);
    // the index and size may come as BigInt or number alike
    assert.equal(bytesToHex(await rootFromInclusion(BigInt(proof.index), BigInt(proof.size),
      leafOf(proof.index), proof.hashes.map(hex))), proof.root);
  }
});

test("a proof one hash short is refused, never a root", async () => {
  for (const proof of fixtures.proofs.filter((p) => p.hashes.length)) {
    await assert.rejects(root(proof, proof.hashes.slice(0, -1)), /the proof is too short/,
      `leaf ${proof.index} of ${proof.size}`);
    await assert.rejects(root(proof, []), /the proof is too short/);
  }
});

test("a proof one hash long is refused, never a root", async () => {
  for (const proof of fixtures.proofs) {
    for (const extra of [ZERO, proof.root, fixtures.leaves[0].leaf_hash]) {
      await assert.rejects(root(proof, [...proof.hashes, extra]), /the proof is too long/,
        `leaf ${proof.index} of ${proof.size}`);
    }
  }
});

test("an index not below the tree size is refused", async () => {
  for (const size of [1, 2, 5, 11]) {
    for (const index of [size, size + 1, size * 2]) {
      await assert.rejects(rootFromInclusion(index, size, leafOf(0), []),
        /the index is not below the tree size/);
    }
  }
  await assert.rejects(rootFromInclusion(0, 0, leafOf(0), []), /not below/);
});

test("a proof with any hash changed leads to another root", async () => {
  for (const proof of fixtures.proofs) {
    for (let k = 0; k < proof.hashes.length; k++) {
      const changed = proof.hashes.slice();
      changed[k] = (changed[k][0] === "0" ? "1" : "0") + changed[k].slice(1);
      assert.notEqual(await root(proof, changed), proof.root);
    }
    // a sibling order swapped (left for right) is another root too
    if (proof.hashes.length) {
      const other = fixtures.proofs.find((p) => p.size === proof.size && p.index !== proof.index
        && p.hashes.length === proof.hashes.length);
      if (other) assert.notEqual(await root(proof, other.hashes), proof.root);
    }
  }
});

test("indexes past 2^53 are exact (BigInt)", async () => {
  // leaf 2^60 of a tree of 2^60 + 1: the proof is the root of the first 2^60 leaves, alone
  const big = 2n ** 60n;
  const r = await rootFromInclusion(big, big + 1n, leafOf(0), [leafOf(1)]);
  assert.equal(bytesToHex(r), bytesToHex(await page.nodeHash(leafOf(1), leafOf(0))));
  await assert.rejects(rootFromInclusion(big + 1n, big + 1n, leafOf(0), []), /not below/);
  await assert.rejects(rootFromInclusion(big - 1n, big + 1n, leafOf(0), [leafOf(1)]),
    /too short/);
});

test("RFC 9162 §2.1.1 hashes: a leaf is SHA-256(0x00 || data), a node SHA-256(0x01 || l || r)", async () => {
  for (const leaf of fixtures.leaves.filter((l) => l.data_b64 !== null)) {
    const data = new Uint8Array(Buffer.from(leaf.data_b64, "base64"));
    assert.equal(bytesToHex(await page.leafHash(data)), leaf.leaf_hash);
  }
  const two = fixtures.proofs.find((p) => p.size === 2 && p.index === 0);
  assert.equal(bytesToHex(await page.nodeHash(leafOf(0), leafOf(1))), two.root);
});

// -- through the page: an interior node shown as a leaf ----------------------------------------

const INTERIOR = fixtures.subtrees["0-8"];
const RIGHT = fixtures.subtrees[`8-${fixtures.size}`];

function interiorAnswer(hashes) {
  // A registry that says the interior node [0, 8) is a leaf appended by its hash only, at
  // index 0, with a proof that is only the right subtree's root: it leads to the real root.
  return (answers) => {
    answers["/v1/lookup/" + INTERIOR] = {
      hash: INTERIOR, checkpoint: fixtures.notes.log, next_cursor: null,
      entries: [{index: 0, leaf_hash: INTERIOR, kind: "hash_only", matched: ["leaf_hash"],
        inclusion_proof: {tree_size: fixtures.size, hashes}}],
    };
    answers["/protocol/merkle/leaf/0"] = {status: 404, body: {code: "log.no_entry_data"}};
  };
}

test("an interior node with a proof cut short does not verify", async () => {
  // the cut proof does lead to the checkpoint's root: only the length check refuses it
  assert.equal(bytesToHex(await page.nodeHash(hex(INTERIOR), hex(RIGHT))), fixtures.root);
  await assert.rejects(rootFromInclusion(0, fixtures.size, hex(INTERIOR), [hex(RIGHT)]),
    /the proof is too short/);
  const shown = await search(INTERIOR, {change: interiorAnswer([RIGHT])});
  assert.equal(shown.verdict, "not-verified");
  assert.equal(shown.cards[0].verdict, "not-verified");
  assert.match(shown.cards[0].text, /the proof is too short/);
});

test("a proof one hash too long does not verify, and says why", async () => {
  const index = 1;
  const digest = fixtures.leaves[index].rows.find(([f]) => f === "deal_id")[1];
  const shown = await search(digest, {change: (answers) => {
    answers["/v1/lookup/" + digest].entries[0].inclusion_proof.hashes.push(ZERO);
  }});
  assert.equal(shown.verdict, "not-verified");
  assert.match(shown.cards[0].text, /the proof is too long/);
});

test("hex and base64 are read strictly", () => {
  assert.deepEqual([...hexToBytes("00ff10")], [0, 255, 16]);
  assert.deepEqual([...hexToBytes("")], []);
  for (const bad of ["0", "abc", "AB", "0g", " 00", "00 ", "0x00"])
    assert.throws(() => hexToBytes(bad), /not lowercase hex/, bad);
  assert.deepEqual([...b64ToBytes("AAE=")], [0, 1]);
  for (const bad of ["AB==", "AAF=", "AAE", "A"])
    assert.throws(() => b64ToBytes(bad), bad);
  assert.equal(bytesToHex(Uint8Array.of(0, 1, 171, 255)), "0001abff");
  assert.ok(equal(Uint8Array.of(1, 2), Uint8Array.of(1, 2)));
  assert.ok(!equal(Uint8Array.of(1, 2), Uint8Array.of(1, 3)));
  assert.ok(!equal(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 3)));
  assert.ok(!equal(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2)));
  assert.deepEqual([...concat(Uint8Array.of(1), Uint8Array.of(), Uint8Array.of(2, 3))], [1, 2, 3]);
});
