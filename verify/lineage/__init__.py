"""Facts and their lineage: FactHash, derivation links, provenance walks, audits, fact sources and
signatures."""
