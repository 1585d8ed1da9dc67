"""Proof bundles: the bundle verifier, its steps (events, inclusion, binding, sidecar, swarm,
adapter replay) and attestations."""
