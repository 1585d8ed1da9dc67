"""``affidavit log``: the transparency log, its tiles, checkpoints, proofs and monitor."""
