"""Kernel efficiencies as data: the efficiency tables of published kernel-level measurements (tables.py) and the
fraction of its own roofline a kernel reaches at a shape (fractions.py). Each op's expected time on a card is
derived from them on the graph (cards/expected.py)."""
