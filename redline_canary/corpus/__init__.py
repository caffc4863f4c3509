"""The corpus: markers, rules, the clean twin, publication. Pure: no I/O."""
