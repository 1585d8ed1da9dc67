"""Codes of the lineage room: facts, derivation links, walks, audits and Stigmem records.

Seed 002 §20.6 names four codes without a dotted family; they are kept as the seed spells them.

The family classes that raise them are in :mod:`affidavit.verify.errors`; the exit code is the
code's, not the class's (2 unreadable input, 1 does not verify, 3 refused by policy).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, REFUSED, Code

LINEAGE: Final = (
    Code(
        "derived_from_immutable",
        INPUT,
        "A stored fact's derived_from cannot be changed (seed 002 §20.6.1 rule 4; HTTP 422).",
    ),
    Code(
        "fact.batch_invalid",
        INPUT,
        "Several facts of the input are bad; every one is listed, not only the first.",
    ),
    Code(
        "fact.derived_from_malformed",
        INPUT,
        (
            "A derived_from entry is not a 64-character lowercase hex FactHash (or a {hash, "
            "fact_id} object holding one), or the same hash is listed twice."
        ),
    ),
    Code("fact.input_empty", INPUT, "The input holds no facts (nothing was read)."),
    Code("fact.invalid", INPUT, "The fact does not match the fact schema."),
    Code(
        "fact_not_found",
        INPUT,
        "The provenance walk's root fact is not in the store (seed 002 §20.8; HTTP 404).",
    ),
    Code(
        "graph_depth_exceeded",
        INPUT,
        "Provenance walk depth outside 0..5 (seed 002 §20.6.2; HTTP 400).",
    ),
    Code("lineage.cycle_found", FAILED, "An audit found a cycle in the stored derived_from graph."),
    Code(
        "lineage.derived_from_changed",
        FAILED,
        "An audit found one FactHash stored twice with different derived_from.",
    ),
    Code(
        "lineage.edge_index_mismatch",
        FAILED,
        "A store's derivation edge index disagrees with the derived_from of the stored facts.",
    ),
    Code(
        "lineage.fact_hash_mismatch",
        FAILED,
        "A stored fact's content does not hash to the FactHash it is stored under.",
    ),
    Code(
        "lineage.fact_malformed",
        FAILED,
        "A stored fact cannot be read as a fact (bad JSON or schema) during an audit.",
    ),
    Code(
        "lineage.reference_malformed",
        FAILED,
        "An audit found a stored fact whose derived_from entries are malformed.",
    ),
    Code(
        "lineage.root_forbidden",
        REFUSED,
        (
            "The walk's root fact is in a scope the caller may not read; no data is returned "
            "(seed 002 §20.6.2; HTTP 403)."
        ),
    ),
    Code(
        "lineage.signature_bad",
        FAILED,
        (
            "A fact signature is malformed, made by a key outside the trusted set, or does not "
            "verify over the FactHash."
        ),
    ),
    Code("lineage.store_empty", INPUT, "The fact store holds no facts: there is nothing to audit."),
    Code(
        "lineage.store_invalid",
        INPUT,
        "The fact store cannot be opened or is not a fact store (JSON Lines or SQLite).",
    ),
    Code(
        "provenance_cycle_detected",
        INPUT,
        "The derived_from graph would contain a cycle (seed 002 §20.6.1 rule 2; HTTP 400).",
    ),
    Code("stigmem.cid_mismatch", FAILED, "A node record's cid is not the CID v2 of its content."),
    Code(
        "stigmem.paging_unreliable",
        FAILED,
        "The node's cursor paging may have skipped facts (more than one page was read).",
    ),
    Code(
        "stigmem.record_refused",
        FAILED,
        "A node record cannot be written as a fact (e.g. a number that cannot round-trip)",
    ),
)
