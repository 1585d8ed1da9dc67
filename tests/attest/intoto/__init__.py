"""Tests of affidavit.attest.intoto: Statements, DSSE signing and SLSA VSAs."""
