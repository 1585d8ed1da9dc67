"""Tests of affidavit.verify.dsse: envelopes, signatures, Statements, cross-checks."""
