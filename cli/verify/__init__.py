"""``affidavit verify``: the offline verifier's commands."""
