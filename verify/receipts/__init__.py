"""Transformation receipts (seed 004 §7): what an adapter did to source bytes, signed, replayable
offline.
"""
