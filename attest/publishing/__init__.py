"""Signing manifest entries and manifests, and keeping them fresh."""
