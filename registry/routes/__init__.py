"""The registry's HTTP surfaces, one module per surface (specs/registry-v1.yaml)."""
