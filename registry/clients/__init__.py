"""HTTP clients: the registry's own API and Stigmem nodes."""
