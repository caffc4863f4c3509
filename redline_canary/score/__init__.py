"""Matching, numbers, the gate and the history record. Pure: no I/O."""
