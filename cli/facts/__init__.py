"""``affidavit facts``: record, walk, audit and pull facts."""
